//! Where the served repositories are: directories under one base on this machine, or a store
//! shared by many nodes. A request names a path; what it gets is a [`Repository`] that
//! upload-pack and receive-pack serve the same way whatever is behind it, and, for a push into
//! a store, the gate that commits its refs there before the client is told `ok`.

use crate::receive_pack::RefGate;
use crate::request_error::RequestError;
use crate::ServeError;
use sluice_repo::Repository;
use sluice_store::{Node, Pinned, RefChange, Workspace};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Where the served repositories are.
#[derive(Debug, Clone)]
pub enum Repositories {
    /// Every repository under this directory.
    Local(PathBuf),
    /// Every repository of a store, through this node's cache.
    Stored {
        /// The node.
        node: Arc<Node>,
        /// Where clients download the store's bundles from (`--bundle-uri`): the base URL
        /// under which the store's keys are public. None: no bundle-uri advertised.
        bundle_base: Option<String>,
    },
}

/// What a request is served from.
pub(crate) struct Opened {
    /// The repository (for a store: one generation, pinned for the whole request).
    pub(crate) repo: Repository,
    /// For a push into a store: what commits its refs there.
    pub(crate) gate: Option<Arc<dyn RefGate>>,
    /// The bundle list protocol v2's `bundle-uri` answers with, if any (`key=value`).
    pub(crate) bundles: Option<Arc<Vec<(String, String)>>>,
}

impl Repositories {
    /// What to describe the served repositories as (the directory, or the store).
    pub fn describe(&self) -> String {
        match self {
            Repositories::Local(base) => base.display().to_string(),
            Repositories::Stored { node, .. } => format!("{:?}", node.bucket()),
        }
    }

    /// Opens the repository `path` names, for a push when `push`. A path that names none, or
    /// that climbs out of the served directory, is [`RequestError::NoRepository`] or
    /// [`RequestError::OutsideServedDir`].
    pub(crate) fn open(&self, path: &str, push: bool) -> Result<Opened, ServeError> {
        let none = || RequestError::NoRepository {
            path: path.to_owned(),
        };
        match self {
            Repositories::Local(base) => {
                let dir = resolve_path(base, path)?;
                let repo = Repository::open_served(&dir, false).map_err(|_| none())?;
                Ok(Opened {
                    repo,
                    gate: None,
                    bundles: None,
                })
            }
            Repositories::Stored { node, bundle_base } => {
                let name = path.trim_matches('/');
                let pinned = node.pin(name).map_err(|e| store_error(path, e))?;
                let pinned = pinned.ok_or_else(none)?;
                if !push {
                    let repo = Repository::open_served(&pinned.dir, true)?;
                    let bundles =
                        (bundle_base.as_deref()).map(|base| Arc::new(bundle_list(base, &pinned)));
                    return Ok(Opened {
                        repo,
                        gate: None,
                        bundles,
                    });
                }
                let workspace = node.workspace(&pinned).map_err(|e| store_error(path, e))?;
                let repo = Repository::open_served(workspace.dir(), true)?;
                let gate = StoreGate {
                    node: Arc::clone(node),
                    pinned,
                    workspace,
                };
                Ok(Opened {
                    repo,
                    gate: Some(Arc::new(gate)),
                    bundles: None,
                })
            }
        }
    }
}

/// The bundle list of one generation, as `bundle.*` keys (git-config's `bundle.<id>.*`):
/// every node gives the same list for one generation, since it is made from the manifest
/// alone. An empty list when the store has no bundle yet.
fn bundle_list(base: &str, pinned: &Pinned) -> Vec<(String, String)> {
    if pinned.manifest.bundles.is_empty() {
        return Vec::new();
    }
    let mut list = vec![
        ("bundle.version".to_owned(), "1".to_owned()),
        ("bundle.mode".to_owned(), "all".to_owned()),
        ("bundle.heuristic".to_owned(), "creationToken".to_owned()),
    ];
    for (name, token) in &pinned.manifest.bundles {
        let key = sluice_store::bundle_key(&pinned.repo, name);
        let uri = format!("{}/{key}", base.trim_end_matches('/'));
        list.push((format!("bundle.{name}.uri"), uri));
        // Keys as git's config hands them over: lower case (git's client matches them so).
        list.push((format!("bundle.{name}.creationtoken"), token.to_string()));
    }
    list
}

fn store_error(path: &str, e: sluice_store::StoreError) -> ServeError {
    RequestError::Store {
        path: path.to_owned(),
        source: Box::new(e),
    }
    .into()
}

/// The repository a request path names under `base`, refusing any path that leaves it.
pub fn resolve_path(base: &Path, requested: &str) -> Result<PathBuf, ServeError> {
    let relative = requested.trim_start_matches('/');
    let mut path = base.to_owned();
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(part) => path.push(part),
            Component::CurDir => {}
            _ => {
                return Err(RequestError::OutsideServedDir {
                    requested: requested.to_owned(),
                }
                .into())
            }
        }
    }
    Ok(path)
}

/// A push into a store: received into a private copy of the generation it was pinned to,
/// committed to the manifest by the node.
struct StoreGate {
    node: Arc<Node>,
    pinned: Arc<Pinned>,
    workspace: Workspace,
}

impl RefGate for StoreGate {
    fn commit(&self, changes: &[RefChange]) -> Result<(), String> {
        (self.node)
            .commit_push(&self.pinned, &self.workspace, changes)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn serving_dir(&self) -> Option<PathBuf> {
        let name = self.pinned.repo.folder();
        Some(self.node.pin(name).ok()??.dir.clone())
    }
}
