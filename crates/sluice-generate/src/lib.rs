//! Pack generation: the objects a walk counted (see `sluice_graph::walk_objects`, with bitmaps
//! where the repository has them) written as one pack, every stored entry that the receiver
//! can take copied as it is, the rest searched for a delta base on all cores or sent whole.
//! upload-pack calls it for fetches and clones, repack for the repository's own packs, and push
//! will for the packs it sends; each says with [`PackOptions`] what the receiver accepts.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod bitmap_choice;
mod checksum_memo;
mod cruft;
mod delta_search;
mod filtered;
mod geometric;
mod incremental;
mod islands;
mod left_alone;
mod midx_bitmap;
mod midx_repack;
pub mod pack_objects;
pub mod packfile_uris;
mod place;
mod promisor;
mod repack;
mod split;
mod stats;
mod stored;
mod tips;
mod verbatim;
mod window_plan;
mod window_search;
mod write;

#[cfg(test)]
mod cancel_tests;

pub use bitmap_choice::{
    local_bitmap, writes_bitmaps, BitmapChoice, BitmapChoiceError, RepackBitmap,
};
pub use checksum_memo::{ChecksumMemo, MemoryMemo};
pub use filtered::FilterOut;
pub use geometric::{repack_geometric, repack_geometric_with_midx, GeometricOptions, Rolled};
pub use incremental::{pack_loose_objects, repack_loose, LOOSE_BATCH};
pub use islands::{mark as mark_islands, IslandError, IslandRules, Islands, Marked, MAX_CAPTURES};
pub use midx_bitmap::{
    largest_pack, read_refs_snapshot, write_midx_bitmap, write_midx_bitmap_of, MidxBitmap,
    RefsSnapshotError,
};
pub use midx_repack::repack_midx;
pub use repack::{
    pack_files, repack_all, repack_all_with, CruftOptions, RepackError, RepackOptions, Repacked,
    RECENT_PACK,
};
pub use split::PackSizeLimit;
pub use stats::PackStats;
pub use stored::{write_stored, write_stored_at, write_stored_packs, StoredAs};
pub use window_search::{GivenLimits, Reuse, SearchLimits, MAX_DEPTH};
pub use write::{write_pack, write_pack_indexed, write_pack_remembered, IndexedPack, PackOptions};

use sluice_object::ObjectId;
use std::path::PathBuf;

/// Why a pack could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// Writing the pack failed (for a server: often, the client went away).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Reading an object to send failed.
    #[error(transparent)]
    Odb(#[from] sluice_odb::OdbError),
    /// More objects than a pack's header can count.
    #[error("too many objects for one pack: {count}")]
    TooManyObjects {
        /// How many were counted.
        count: usize,
    },
    /// The objects to pack could not be walked.
    #[error(transparent)]
    Walk(Box<sluice_graph::WalkError>),
    /// A pack named on the input (`--stdin-packs`) is not in the repository.
    #[error("could not find pack '{0}'")]
    NoSuchPack(String),
    /// An object the walk counted is not in the repository.
    #[error("missing object {0}")]
    MissingObject(ObjectId),
    /// A pack whose checksum was remembered could not be copied as it was then (a stored
    /// entry turned out damaged): the response stops before its trailer, and the memo forgets
    /// it.
    #[error("the stored packs changed while being sent; try again")]
    StoredPacksChanged,
    /// An entry of a pack being copied whole does not match the CRC32 its index records.
    #[error("{}: the entry of {id} at offset {offset} does not match its CRC32: the pack is damaged", pack.display())]
    DamagedEntry {
        /// The stored pack.
        pack: PathBuf,
        /// Where the entry starts.
        offset: u64,
        /// Its object.
        id: ObjectId,
    },
    /// The caller asked the generation to stop.
    #[error("interrupted")]
    Cancelled(#[from] sluice_object::cancel::Cancelled),
    /// The delta islands' configuration cannot be used.
    #[error(transparent)]
    Islands(#[from] IslandError),
    /// A stored ofs-delta points at an offset where no entry starts: the pack is corrupt.
    #[error("{}: ofs-delta at {offset} has no base entry", pack.display())]
    NoBaseEntry {
        /// The stored pack.
        pack: PathBuf,
        /// The delta's offset in it.
        offset: u64,
    },
}
