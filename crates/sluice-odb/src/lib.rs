//! A git repository on disk (`gitrepository-layout`): finding it, its configuration, and its
//! object database of loose objects, packs and alternates.
//!
//! Existence checks for loose objects go through a lazy cache of the fan-out directories: the
//! first question about `objects/ab/…` reads that one directory, later questions are answered
//! from memory. One `stat` per object costs a network round trip on NFS, and filling the whole
//! cache up front costs more than it saves on a fast disk with many loose objects (git mailing
//! list, 2018); reading each directory on first use keeps the cost proportional to the lookups.
//!
//! ```no_run
//! let repo = sluice_odb::Repository::discover(std::path::Path::new("."))?;
//! let head_tree_exists = repo.objects().contains(&repo.hash().null_id());
//! # Ok::<(), sluice_odb::RepoError>(())
//! ```
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod abbrev;
pub mod ancestry;
pub mod bitmap;
mod chunk_file;
pub mod commit_graph;
pub mod config;
pub mod date;
pub mod fsck;
pub mod init;
mod located;
pub mod lockfile;
mod loose;
pub mod midx;
pub mod mmap;
pub mod mtimes;
mod odb;
mod pack;
mod pack_order;
pub mod pack_store;
pub mod quarantine;
pub mod refs;
mod repository;
pub mod revision;
pub mod roots;
pub mod server_info;
pub mod shallow;
mod stream;
pub mod tempfiles;
#[cfg(test)]
mod test_git;
pub mod walk;

pub use config::{Config, ConfigError, ConfigFile, ConfigKey};
pub use located::PackedObject;
pub use lockfile::{write_locked, write_locked_with, LockError};
pub use loose::{LooseFile, LooseObjectCache, LooseObjects};
pub use odb::{ObjectContent, ObjectDb, OdbError};
pub use pack::{Pack, RawEntry};
pub use refs::{
    Expected, Peeled, RefError, RefTarget, RefUpdate, Refs, Transaction, TransactionError,
};
pub use repository::{RepoError, Repository};
pub use roots::{Roots, RootsError};
pub use walk::{
    traverse_objects, walk_objects, KnownObjects, Located, ObjectFilter, WalkCores, WalkError,
    WalkRequest, Walked, WalkedObject,
};
