//! Repositories in object storage, shared by many serving nodes.
//!
//! A stored repository is immutable packs (named by their content, with their `.idx`, `.rev`
//! and bitmap; after a node's geometric roll, a multi-pack-index with its bitmap over them) and
//! one manifest: the generation, HEAD, the refs and the live packs. The
//! manifest is the only object that changes and the only commit point: every write of it is
//! conditional on the version just read ([`StoredRepo::commit`]), so of two racing pushes
//! exactly one lands and the other is told, as git tells a push that lost a race.
//!
//! A node serves from a cache on its own disk ([`Node`]): each request reads the manifest (a
//! conditional GET, one request that moves nothing when the node is up to date), and serves
//! that generation, materialised as an ordinary bare repository of hard links to the cached
//! packs, through the same upload-pack and receive-pack as a repository on disk. A push is
//! received into a private copy of it; its pack is uploaded and the manifest committed before
//! the client is told `ok` ([`Node::commit_push`]). The cache can be wiped at any moment.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod bucket;
mod bundle;
mod cache;
mod coverage;
mod export;
mod fsck;
mod gc;
mod held;
mod import;
mod increment;
mod lease;
mod local;
mod location;
mod maintain;
pub mod manifest;
mod midx;
mod node;
mod ranged;
mod ref_snapshot;
mod scratch;
mod serving;
mod signed;
mod stored;

#[cfg(test)]
mod commit_tests;
#[cfg(test)]
mod push_tests;

pub use bucket::{Bucket, Fetched, RequestCounts, Version, Versioned, WriteRefused};
pub use export::export;
pub use fsck::{fsck, Checked};
pub use gc::{gc, Swept};
pub use import::import;
pub use increment::bundle_increment;
pub use lease::Lease;
pub use location::{Backend, StoreUrl};
pub use maintain::{bundle_key, maintain, maintain_on, Compaction, Maintained};
pub use manifest::{Manifest, PackEntry, RefSnapshot};
pub use node::{Node, Pinned, Workspace};
pub use scratch::Scratch;
pub use serving::{BundleUris, ObjectStorage};
pub use signed::shared_presigned;
pub use stored::{transaction_id, Read, StoredRepo};

use std::path::{Path, PathBuf};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL is not a store's.
    #[error("bad store URL '{url}': {why}")]
    BadUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// The store client could not be configured (credentials, region, endpoint).
    #[error("cannot use bucket '{bucket}': {source}")]
    Configure {
        /// The bucket.
        bucket: String,
        /// Why.
        source: object_store::Error,
    },
    /// The runtime that drives the store's client could not start.
    #[error("cannot start the store client: {0}")]
    Runtime(std::io::Error),
    /// A request to the store failed.
    #[error("{method} {key}: {source}")]
    Request {
        /// GET, PUT, LIST or DELETE.
        method: &'static str,
        /// The object's key.
        key: String,
        /// Why.
        source: Box<object_store::Error>,
    },
    /// A local file could not be read or written.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A repository name that could step out of the store's prefix, or is empty.
    #[error("'{0}' is not a repository name")]
    BadName(String),
    /// The repository is already in the store.
    #[error("'{0}' already exists in the store")]
    Exists(String),
    /// There is no such repository in the store.
    #[error("'{0}' is not a repository in the store")]
    NoRepository(String),
    /// A destination that must be new is not.
    #[error("destination path '{}' already exists and is not an empty directory", .0.display())]
    DestinationExists(PathBuf),
    /// The manifest cannot be read.
    #[error("the manifest of '{repo}': {source}")]
    Manifest {
        /// The repository.
        repo: String,
        /// What is wrong with it.
        source: manifest::ManifestError,
    },
    /// Another node holds the repository's maintenance lease (until this Unix time).
    #[error("'{0}' is being maintained by another node (its lease runs to {1})")]
    Leased(String, u64),
    /// A ref a push moves, or an object maintenance would replace, is in none of the packs
    /// the next generation would have (a pack lost with the node's cache, which may be wiped
    /// at any moment, before it reached the store).
    #[error("object {0} would be in no pack of the store: nothing committed")]
    NotStored(sluice_object::ObjectId),
    /// Other writers kept winning: the commit was given up.
    #[error("the manifest of '{0}' kept changing; gave up")]
    Contended(String),
    /// The local repository.
    #[error(transparent)]
    Repo(#[from] sluice_repo::RepoError),
    /// Its refs.
    #[error(transparent)]
    Ref(#[from] sluice_repo::RefError),
    /// Making a repository.
    #[error(transparent)]
    Init(#[from] sluice_repo::init::InitError),
    /// Its objects.
    #[error(transparent)]
    Odb(#[from] sluice_odb::OdbError),
    /// Its configuration.
    #[error(transparent)]
    Config(#[from] sluice_odb::config::ConfigError),
    /// The staging repository's alternates could not be written.
    #[error(transparent)]
    Alternates(#[from] sluice_odb::alternates::AlternatesError),
    /// Walking what an incremental bundle holds.
    #[error(transparent)]
    Walk(Box<sluice_graph::WalkError>),
    /// Writing the pack of an import, or of a push's loose objects.
    #[error(transparent)]
    Repack(#[from] sluice_generate::RepackError),
}

impl StoreError {
    fn request(
        method: &'static str,
        key: &object_store::path::Path,
        e: object_store::Error,
    ) -> Self {
        StoreError::Request {
            method,
            key: key.to_string(),
            source: Box::new(e),
        }
    }

    fn file(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
        move |source| StoreError::File {
            path: path.to_owned(),
            source,
        }
    }
}

/// Where, in a repository's folder, nodes share the packs they generated (`<name>`s of the
/// pack cache), removed by age by the sweep.
pub const PACK_CACHE: &str = "pack-cache/";

/// A name beside `path` for a file written then renamed onto it.
/// The time now, in seconds since the Unix epoch: what manifests and leases record.
pub(crate) fn unix_now() -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map(|d| d.as_secs()).unwrap_or_default()
}

fn temporary_beside(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = format!(".tmp-{}-{}", transaction_id(), name.unwrap_or_default());
    path.with_file_name(name)
}

/// A store's failure, as a push's gate says it (the client is told, the ref stays).
impl From<StoreError> for sluice_repo::storage::GateRefused {
    fn from(e: StoreError) -> Self {
        sluice_repo::storage::GateRefused::Failed(Box::new(e))
    }
}
