//! A git object database on disk (`gitrepository-layout`'s `objects/`): loose objects, packs
//! and alternates, the pack store that receives packs into it, the multi-pack-index, fsck's
//! checks of objects, and the configuration format their settings come from. The repository
//! around it (refs, `HEAD`, worktrees) is `sluice-repo`; walks and reachability indexes are
//! `sluice-graph`.
//!
//! Existence checks for loose objects go through a lazy cache of the fan-out directories: the
//! first question about `objects/ab/…` reads that one directory, later questions are answered
//! from memory. One `stat` per object costs a network round trip on NFS, and filling the whole
//! cache up front costs more than it saves on a fast disk with many loose objects (git mailing
//! list, 2018); reading each directory on first use keeps the cost proportional to the lookups.
//!
//! ```no_run
//! let hash = sluice_object::HashKind::Sha1;
//! let objects = sluice_odb::ObjectDb::open(std::path::Path::new(".git/objects"), hash)?;
//! let null_is_there = objects.contains(&hash.null_id());
//! # Ok::<(), sluice_odb::OdbError>(())
//! ```
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod alternates;
pub mod chunk_file;
pub mod config;
pub mod fsck;
mod located;
pub mod lockfile;
mod loose;
pub mod midx;
pub mod midx_maintain;
pub mod mmap;
pub mod mtimes;
mod odb;
mod pack;
mod pack_order;
pub mod pack_store;
pub mod quarantine;
pub mod ranged;
mod stream;
pub mod tempfiles;
#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub mod testing;
pub mod written;

pub use config::{Config, ConfigError, ConfigFile, ConfigKey};
pub use located::PackedObject;
pub use lockfile::{write_locked, write_locked_with, LockError};
pub use loose::{LooseFile, LooseObjectCache, LooseObjects};
pub use odb::{pack_dir, ObjectContent, ObjectDb, OdbError};
pub use pack::{Pack, RawEntry};
