//! The pack format (`gitformat-pack`): entry headers, deltas, `.idx` (v1, v2) and `.rev` files,
//! and [`PackIndexer`], the engine of `index-pack`.
//!
//! Everything here treats its input as hostile: sizes are checked before they size an
//! allocation, delta copies are bounds-checked, ofs-deltas must point at an earlier entry and
//! ref-delta cycles end as unresolved deltas, never as a hang.
//!
//! ```no_run
//! use sluice_pack::{IndexOptions, PackIndexer, PackSource, IdxWriteOptions};
//! let file = std::fs::File::open("pack-1234.pack")?;
//! let pack = PackIndexer::new(IndexOptions::default()).index(PackSource::File(&file))?;
//! let order = pack.index_order();
//! let mut idx = Vec::new();
//! pack.write_idx(&order, &IdxWriteOptions::default(), &mut idx)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod delta;
pub mod delta_encode;
pub mod entry;
pub mod idx;
mod indexer;
pub mod inflate;
mod listing;
pub mod rev;
pub mod writer;

pub use idx::{IdxEntry, IdxError, IdxParts, IdxWriteOptions, IndexVersionError, PackIndex};
pub use indexer::{
    ArrivingPack, DeltaInfo, IndexError, IndexOptions, IndexOrder, IndexedPack, LinkCheck,
    LookupError, ObjectCheck, ObjectLookup, PackIndexer, PackSource, PackedObject,
};
pub use listing::Listing;
pub use writer::PackWriter;
