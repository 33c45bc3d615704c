//! Receiving a pack from a stream on two threads. A writer thread copies the stream into the
//! pack file as fast as it arrives; the scanner reads the file right behind it (waiting when it
//! catches up), so inflation overlaps the transfer. When the stream ends while the scanner is
//! still in the first half, the writer thread goes on to scan the second half, as for a pack
//! file (see `scan::scan_file`).

use super::input::WrittenHash;
use super::IndexError;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::sync::{Condvar, Mutex};

/// What the writer has done so far.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    /// Bytes in the file.
    pub(crate) written: u64,
    /// The stream ended (or failed).
    pub(crate) done: bool,
    /// Why the stream failed.
    pub(crate) error: Option<String>,
    /// The scanner needs no more: stop reading and writing.
    pub(crate) stop: bool,
}

/// Shared between the writer and the scanner.
#[derive(Debug, Default)]
pub(crate) struct Growth {
    pub(crate) state: Mutex<Progress>,
    pub(crate) changed: Condvar,
}

impl Growth {
    fn lock(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Copies `input` into `file` until the stream ends, `limit` is passed, or the scanner
    /// says stop, hashing what it writes into `hash`. Returns the final length.
    pub(crate) fn copy(
        &self,
        input: &mut dyn Read,
        file: &File,
        limit: Option<u64>,
        hash: &mut WrittenHash,
        stop_at_trailer: bool,
    ) -> Result<u64, IndexError> {
        let mut buf = vec![0u8; 1 << 20];
        let mut at = 0u64;
        let finish = |error: Option<String>| {
            let mut state = self.lock();
            state.done = true;
            state.error = error;
            self.changed.notify_all();
        };
        loop {
            let n = match input.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    finish(Some(e.to_string()));
                    return Err(IndexError::Io {
                        context: "reading the pack",
                        source: e,
                    });
                }
            };
            if let Some(limit) = limit {
                if at + n as u64 > limit {
                    let error = IndexError::TooLarge { limit };
                    finish(Some(error.to_string()));
                    return Err(error);
                }
            }
            // Write under the lock, so that a scanner that says stop never races a write.
            let mut state = self.lock();
            if state.stop {
                return Ok(at);
            }
            if let Err(e) = file.write_all_at(&buf[..n], at) {
                drop(state);
                finish(Some(e.to_string()));
                return Err(IndexError::Io {
                    context: "writing the pack",
                    source: e,
                });
            }
            at += n as u64;
            state.written = at;
            self.changed.notify_all();
            drop(state);
            hash.update(&buf[..n]);
            // A stream that stays open after the pack (a push: the client waits for the
            // report) is not read further once what arrived ends as a pack does.
            if stop_at_trailer && at >= 32 && hash.ends_pack() {
                break;
            }
        }
        finish(None);
        Ok(at)
    }

    /// Tells the writer to stop; returns how much it had written.
    pub(crate) fn stop(&self) -> u64 {
        let mut state = self.lock();
        state.stop = true;
        state.written
    }
}

/// The scanner's view of the file: reads block until the writer has written that far.
pub(crate) struct GrowingReader<'a> {
    pub(crate) file: &'a File,
    pub(crate) growth: &'a Growth,
    pub(crate) pos: u64,
}

impl Read for GrowingReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = {
            let mut state = self.growth.lock();
            loop {
                if state.written > self.pos {
                    break state.written - self.pos;
                }
                if state.done {
                    if let Some(error) = &state.error {
                        return Err(io::Error::other(error.clone()));
                    }
                    return Ok(0);
                }
                state = self
                    .growth
                    .changed
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner());
            }
        };
        let want = buf.len().min(available as usize);
        let n = self.file.read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}
