//! Read-only file maps: the one place this crate uses `unsafe`.
#![allow(unsafe_code)]

use memmap2::Mmap;
use std::fs::File;
use std::io;

/// Maps `file` read-only.
///
/// Packs and their indexes, and index files, are immutable once named (git writes them under
/// a temporary name or a lock file and renames), so the contract of `Mmap::map` (the file is
/// not modified while mapped) holds for every repository that follows git's rules. An empty
/// file is not mapped (mmap refuses zero lengths); callers get an empty slice instead.
pub fn map(file: &File) -> io::Result<Mapped> {
    if file.metadata()?.len() == 0 {
        return Ok(Mapped::Empty);
    }
    // SAFETY: see above; the map is read-only and lives as long as `Mapped`.
    let map = unsafe { Mmap::map(file)? };
    Ok(Mapped::Map(map))
}

/// A mapped file, or nothing for an empty one.
#[derive(Debug)]
pub enum Mapped {
    /// A file with bytes.
    Map(Mmap),
    /// An empty file.
    Empty,
}

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        match self {
            Mapped::Map(map) => map,
            Mapped::Empty => &[],
        }
    }
}
