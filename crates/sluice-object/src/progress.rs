//! How long operations report progress. Libraries never print: they call a [`Progress`] that the
//! binary renders (or not, when quiet or not on a terminal).

/// Receives progress of a long operation. Called from several threads at once.
pub trait Progress: Sync {
    /// A new phase begins, titled as git titles it ("Receiving objects"), with its total if known.
    fn phase(&self, title: &str, total: Option<u64>);
    /// `count` more items of the current phase are done.
    fn add(&self, count: u64);
    /// `bytes` more bytes were moved in the current phase, for a throughput figure.
    fn add_bytes(&self, bytes: u64);
    /// The current phase is complete.
    fn finish(&self);
}

/// A [`Progress`] that reports nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Discard;

impl Progress for Discard {
    fn phase(&self, _title: &str, _total: Option<u64>) {}
    fn add(&self, _count: u64) {}
    fn add_bytes(&self, _bytes: u64) {}
    fn finish(&self) {}
}
