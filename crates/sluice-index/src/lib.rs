//! The index file (`gitformat-index`): a sorted list of entries with the stat data git uses to
//! tell whether a file changed, and extensions, of which Sluice writes `TREE` (the cache tree,
//! so that the next commit or status need not rehash unchanged directories).
//!
//! Versions 2, 3 and 4 are read; 2 is written, or 3 when an entry needs extended flags, as git
//! does by default.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod alive;
mod entry;
mod read;
mod tree_ext;
pub mod wildmatch;
mod write;

pub use entry::{IndexEntry, Stat};
pub use read::read_index;
pub use tree_ext::CacheTree;
pub use write::{write_index, write_index_to};

use sluice_object::HashKind;

/// Why an index file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum IndexFileError {
    /// Not an index file.
    #[error("index file has a bad signature")]
    Signature,
    /// A version other than 2, 3 or 4.
    #[error("index file version {0} is not supported")]
    Version(u32),
    /// The file ends inside an entry or extension.
    #[error("index file is truncated at byte {offset}")]
    Truncated {
        /// Where it ran out.
        offset: usize,
    },
    /// An entry is malformed.
    #[error("index entry {index} is corrupt: {why}")]
    Entry {
        /// Which entry.
        index: usize,
        /// Why.
        why: &'static str,
    },
    /// The trailing checksum does not match.
    #[error("index file checksum mismatch")]
    Checksum,
    /// An extension git requires us to understand (signature starting with A-Z is optional).
    #[error("index uses extension '{0}', which Sluice does not support")]
    RequiredExtension(String),
    /// The cache tree extension is malformed.
    #[error("index TREE extension is corrupt")]
    CacheTree,
    /// Another extension Sluice reads is malformed.
    #[error("index {0} extension is corrupt")]
    Extension(&'static str),
}

/// An index in memory.
#[derive(Debug, Clone, Default)]
pub struct Index {
    /// The version read (2, 3 or 4); writing picks 2 or 3 itself.
    pub version: u32,
    /// Entries in index order: by path bytes, then stage.
    pub entries: Vec<IndexEntry>,
    /// The cache tree, when present and valid.
    pub tree: Option<CacheTree>,
    /// Other optional extensions, kept verbatim: (signature, data).
    pub extensions: Vec<([u8; 4], Vec<u8>)>,
    /// The hash function of the ids.
    pub hash: HashKind,
}

impl Index {
    /// Sorts entries into index order.
    pub fn sort(&mut self) {
        self.entries
            .sort_by(|a, b| a.path.cmp(&b.path).then(a.stage().cmp(&b.stage())));
    }

    /// Finds the stage-0 entry for `path`.
    pub fn find(&self, path: &[u8]) -> Option<&IndexEntry> {
        self.entries
            .binary_search_by(|e| e.path.as_slice().cmp(path).then(e.stage().cmp(&0)))
            .ok()
            .map(|i| &self.entries[i])
    }
}
