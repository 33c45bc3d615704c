//! The storage seam: where served repositories live, and how a push's refs land there.
//!
//! A server asks a [`Storage`] for the repository a request names and gets the same thing
//! whatever is behind it: a [`Repository`] that upload-pack and receive-pack read as they read
//! any, held in one state for the whole request. [`LocalDisk`] is a directory of repositories
//! on this machine. Object storage shared by many nodes (`sluice_store`) is the other
//! implementation: there the repository is one generation of the store materialised in the
//! node's cache, a push is received into a private copy of it, and its refs move only once the
//! [`RefGate`] has committed them to the store (the one atomic step, a compare-and-swap of the
//! manifest). The server never learns which one it serves.

use crate::{RepoError, Repository};
use sluice_object::ObjectId;
use std::any::Any;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Where served repositories live.
pub trait Storage: Send + Sync + std::fmt::Debug {
    /// What the served repositories are, for the server's first words (a directory, a store).
    fn describe(&self) -> String;

    /// The repository `path` names, for `purpose`, held in one state until the [`Served`] is
    /// dropped.
    fn open(&self, path: &str, purpose: Purpose) -> Result<Served, StorageError>;

    /// The tier of generated packs that every node on this storage shares, if there is one.
    fn shared_packs(&self) -> Option<Arc<dyn SharedPacks>> {
        None
    }

    /// The storage's own counters, read at each scrape of the server's metrics.
    fn counters(&self) -> Vec<Counter> {
        Vec::new()
    }

    /// Ends the storage's background work (a node's maintenance after pushes), waiting for it:
    /// the server calls it once its requests are done.
    fn stop(&self) {}
}

/// What a request opens a repository for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Refs and objects only read (upload-pack, the advertisement of a push).
    Read,
    /// A push: objects received, refs moved.
    Push,
}

/// A repository opened for one request.
pub struct Served {
    /// The repository the request reads (and a push writes).
    pub repo: Repository,
    /// For a push whose refs are committed elsewhere first: what commits them.
    pub gate: Option<Arc<dyn RefGate>>,
    /// The bundle list protocol v2's `bundle-uri` answers with (`key=value`), if any.
    pub bundles: Option<Arc<Vec<(String, String)>>>,
    /// The name (with its state, as `<name>@<state>`) the request's packs are shared under
    /// in [`Storage::shared_packs`].
    pub shared_as: Option<String>,
    /// What keeps the repository's state for the whole request (a pinned generation).
    pub held: Option<Arc<dyn Any + Send + Sync>>,
    /// Tips that recent states advertised and this one no longer has: a stateless request
    /// (smart HTTP, whose refs another request showed, maybe from an earlier state on another
    /// node) may still want them. Their objects are kept as long as they are listed.
    pub earlier_tips: Arc<[ObjectId]>,
}

impl Served {
    /// A repository of this machine, held by nothing but itself.
    pub fn local(repo: Repository) -> Served {
        Served {
            repo,
            gate: None,
            bundles: None,
            shared_as: None,
            held: None,
            earlier_tips: Arc::default(),
        }
    }
}

impl std::fmt::Debug for Served {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Served")
            .field("repo", &self.repo.git_dir())
            .field("gated", &self.gate.is_some())
            .field("shared_as", &self.shared_as)
            .finish()
    }
}

/// One ref a push moves, as the storage's commit sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefChange {
    /// The ref.
    pub name: String,
    /// What the client expects it to be (`None`: absent).
    pub old: Option<ObjectId>,
    /// What it becomes (`None`: deleted).
    pub new: Option<ObjectId>,
}

/// What must accept a push's ref updates before they are applied and reported `ok`: a store
/// shared by many nodes commits them to its manifest. Called once per transaction (each ref,
/// or all at once when atomic), after the objects are in, with the refs locked where the push
/// was received.
pub trait RefGate: Send + Sync {
    /// Commits `changes`, or says why not, which the client is told.
    fn commit(&self, changes: &[RefChange]) -> Result<(), GateRefused>;

    /// After a push that moved refs: the repository that now serves them (the new state),
    /// for the warm-up that readies the next clone's pack.
    fn serving_dir(&self) -> Option<PathBuf>;
}

impl std::fmt::Debug for dyn RefGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RefGate")
    }
}

/// Why a [`RefGate`] did not commit a push's refs.
#[derive(Debug, thiserror::Error)]
pub enum GateRefused {
    /// A ref is no longer what the client saw: another push landed first.
    #[error("cannot lock ref '{name}': is at {current} but expected {expected}")]
    Moved {
        /// The ref.
        name: String,
        /// What it is now (the null id: absent).
        current: ObjectId,
        /// What the client expected.
        expected: ObjectId,
    },
    /// The storage failed.
    #[error(transparent)]
    Failed(Box<dyn std::error::Error + Send + Sync>),
}

/// A tier of generated packs every node shares (a store): what one node made, the others
/// copy.
pub trait SharedPacks: Send + Sync + std::fmt::Debug {
    /// Copies the shared entry `name` of `scope` (a repository) to `dest`; false when there is
    /// none (or it could not be read).
    fn fetch(&self, scope: &str, name: &str, dest: &Path) -> bool;
    /// Offers the local entry at `file` as `name` of `scope` (in the background: a failure
    /// only means the others make it too).
    fn offer(&self, scope: &str, name: &str, file: &Path);
}

/// A counter a storage keeps (requests to a store, bytes, conflicts), as the server's metrics
/// show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counter {
    /// The metric's name.
    pub name: &'static str,
    /// What it counts.
    pub help: &'static str,
    /// Its value.
    pub value: u64,
}

/// Why a storage could not open a repository.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// A path that holds no repository.
    #[error("'{path}': no repository")]
    NoRepository {
        /// The path asked for.
        path: String,
    },
    /// A path that climbs out of the served directory.
    #[error("'{requested}': path outside the served directory")]
    OutsideBase {
        /// The path asked for.
        requested: String,
    },
    /// The repository is there but could not be opened.
    #[error(transparent)]
    Open(#[from] RepoError),
    /// The storage behind the repository failed.
    #[error("'{path}': {source}")]
    Failed {
        /// The path asked for.
        path: String,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Every repository under one directory of this machine.
#[derive(Debug, Clone)]
pub struct LocalDisk {
    base: PathBuf,
}

impl LocalDisk {
    /// The repositories under `base`.
    pub fn new(base: PathBuf) -> LocalDisk {
        LocalDisk { base }
    }

    /// The directory a request path names under the base, refusing any path that leaves it.
    pub fn resolve(&self, requested: &str) -> Result<PathBuf, StorageError> {
        let relative = requested.trim_start_matches('/');
        let mut path = self.base.clone();
        for component in Path::new(relative).components() {
            match component {
                Component::Normal(part) => path.push(part),
                Component::CurDir => {}
                _ => {
                    return Err(StorageError::OutsideBase {
                        requested: requested.to_owned(),
                    })
                }
            }
        }
        Ok(path)
    }
}

impl Storage for LocalDisk {
    fn describe(&self) -> String {
        self.base.display().to_string()
    }

    fn open(&self, path: &str, _purpose: Purpose) -> Result<Served, StorageError> {
        let dir = self.resolve(path)?;
        // As git's `enter_repo`: `path`, `path/.git`, `path.git` and so on.
        let repo =
            Repository::open_served(&dir, false).map_err(|_| StorageError::NoRepository {
                path: path.to_owned(),
            })?;
        Ok(Served::local(repo))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_climbs_out_of_the_base_is_refused() {
        let disk = LocalDisk::new(PathBuf::from("/srv/git"));
        for bad in ["../etc", "a/../../b", "/a/../..", "a/.."] {
            assert!(
                matches!(disk.resolve(bad), Err(StorageError::OutsideBase { .. })),
                "{bad}"
            );
        }
        let inside = disk.resolve("/team/./project.git").unwrap();
        assert_eq!(inside, Path::new("/srv/git/team/project.git"));
    }

    #[test]
    fn a_directory_without_a_repository_is_no_repository() {
        let base = tempfile::tempdir().unwrap();
        std::fs::create_dir(base.path().join("empty")).unwrap();
        let disk = LocalDisk::new(base.path().to_owned());
        let opened = disk.open("empty", Purpose::Read);
        assert!(matches!(opened, Err(StorageError::NoRepository { path }) if path == "empty"));
    }
}
