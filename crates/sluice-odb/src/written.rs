//! How many times this process has changed an object directory: installed or removed a pack
//! file, or stored loose objects beside a view that cannot know of them.
//!
//! A repository handle keeps the view of its objects it opened; comparing this count with the
//! count its view was made at tells it, for the price of one atomic load, whether the process
//! has written since, so that it opens a fresh view instead of every caller reopening by hand.
//! Another process's writes are found on a miss instead (see `ObjectDb::read_after_rescan`):
//! a view that changed under a running walk would renumber its packs.

use std::sync::atomic::{AtomicU64, Ordering};

static WRITES: AtomicU64 = AtomicU64::new(0);

/// Records that an object directory changed (a file committed into it, or packs removed).
pub fn note_written() {
    WRITES.fetch_add(1, Ordering::Release);
}

/// The number of changes recorded so far in this process.
pub fn writes() -> u64 {
    WRITES.load(Ordering::Acquire)
}
