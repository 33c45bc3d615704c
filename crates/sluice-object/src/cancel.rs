//! Asking a long operation to stop. The caller keeps a [`Cancel`] and passes a clone in; the
//! operation looks at it between units of work (a commit walked, an object written, a file
//! checked out, a buffer of a pack read) and stops with [`Cancelled`], removing what it has
//! written as its own failures do. A signal handler can only set the flag: the rest happens on
//! the working threads, which know their files.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A flag shared by whoever may ask an operation to stop and the operation itself. The
/// default is never set, unless a clone of it is.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag not set yet.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Asks every operation holding a clone of this flag to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether stopping was asked for.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Cancelled)` once stopping was asked for: the check between two units of work.
    pub fn check(&self) -> Result<(), Cancelled> {
        match self.is_cancelled() {
            true => Err(Cancelled),
            false => Ok(()),
        }
    }

    /// The flag itself, for code that takes a plain `AtomicBool` (the pack indexer).
    pub fn flag(&self) -> &AtomicBool {
        &self.0
    }

    /// `reader`, checking this flag before every read: a transfer stops at the next buffer.
    pub fn reader<R: std::io::Read>(&self, reader: R) -> CancelRead<R> {
        CancelRead {
            inner: reader,
            cancel: self.clone(),
        }
    }
}

/// The operation stopped because it was asked to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted")]
pub struct Cancelled;

impl Cancelled {
    /// Whether `error`, or an error it was caused by (an I/O error carrying one among them),
    /// is a [`Cancelled`].
    pub fn is_cause_of(error: &(dyn std::error::Error + 'static)) -> bool {
        let mut next = Some(error);
        while let Some(error) = next {
            if error.is::<Cancelled>() {
                return true;
            }
            let carried = error
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref());
            if carried.is_some_and(|inner| inner.is::<Cancelled>()) {
                return true;
            }
            next = error.source();
        }
        false
    }
}

impl From<Cancelled> for std::io::Error {
    fn from(cancelled: Cancelled) -> Self {
        std::io::Error::other(cancelled)
    }
}

/// A reader that fails with [`Cancelled`] (inside an I/O error) once its flag is set.
#[derive(Debug)]
pub struct CancelRead<R> {
    inner: R,
    cancel: Cancel,
}

impl<R: std::io::Read> std::io::Read for CancelRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.cancel.check()?;
        self.inner.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_set_flag_stops_the_reader_and_is_found_in_the_error() {
        let cancel = Cancel::new();
        let mut reader = cancel.reader(&b"some bytes"[..]);
        let mut first = [0u8; 4];
        reader.read_exact(&mut first).unwrap();
        cancel.clone().cancel();
        let error = reader.read(&mut first).unwrap_err();
        assert!(Cancelled::is_cause_of(&error));
        assert!(Cancel::default().check().is_ok());
    }
}
