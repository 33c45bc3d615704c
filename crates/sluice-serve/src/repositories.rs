//! Where the served repositories are: directories under one base on this machine, or a store
//! shared by many nodes. A request names a path; what it gets is a [`Repository`] that
//! upload-pack and receive-pack serve the same way whatever is behind it, and, for a push into
//! a store, the gate that commits its refs there before the client is told `ok`.

use crate::receive_pack::RefGate;
use crate::request_error::RequestError;
use crate::ServeError;
use sluice_repo::Repository;
use sluice_store::{shared_presigned, Node, Pinned, PushRefused, RefChange, Workspace};
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
        /// Where clients download the store's bundles from (`--bundle-uri`); none: no
        /// bundle-uri advertised.
        bundle_uris: Option<BundleUris>,
    },
}

/// How a node hands out its bundles' URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundleUris {
    /// Under this base URL, where the store's keys are public (or a CDN in front of it): the
    /// same list on every node for one generation.
    Public(String),
    /// Pre-signed GETs, valid for two hours (the store's credentials sign them).
    Presigned,
}

/// How long a pre-signed bundle URL is valid: over an hour, as a clone may start its download
/// late, and less than the sweep's default grace, so a listed bundle outlives its URLs.
const PRESIGNED_FOR: std::time::Duration = std::time::Duration::from_secs(5400);

/// How long a pre-signed URL handed out stays valid at least: a list signed earlier whose URLs
/// expire sooner is signed anew.
const VALID_AT_LEAST: std::time::Duration = std::time::Duration::from_secs(3600);

/// What a request is served from.
pub(crate) struct Opened {
    /// The repository (for a store: one generation, pinned for the whole request).
    pub(crate) repo: Repository,
    /// For a push into a store: what commits its refs there.
    pub(crate) gate: Option<Arc<dyn RefGate>>,
    /// The bundle list protocol v2's `bundle-uri` answers with, if any (`key=value`).
    pub(crate) bundles: Option<Arc<Vec<(String, String)>>>,
    /// For a store's repository: the name and generation its packs are shared under.
    pub(crate) shared_as: Option<String>,
    /// For a store's repository: the generation, held for the whole request so that its
    /// directory stays.
    pub(crate) _pinned: Option<Arc<Pinned>>,
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
                    shared_as: None,
                    _pinned: None,
                })
            }
            Repositories::Stored { node, bundle_uris } => {
                let name = path.trim_matches('/');
                let pinned = node.pin(name).map_err(|e| store_error(path, e))?;
                let pinned = pinned.ok_or_else(none)?;
                if !push {
                    let repo = Repository::open_served(&pinned.dir, true)?;
                    let bundles = match bundle_uris {
                        Some(uris) => Some(Arc::new(bundle_list(uris, &pinned, node)?)),
                        None => None,
                    };
                    let manifest = &pinned.manifest;
                    let generation = format!("{}-{}", manifest.generation, manifest.transaction);
                    return Ok(Opened {
                        repo,
                        gate: None,
                        bundles,
                        shared_as: Some(format!("{}@{generation}", pinned.repo.folder())),
                        _pinned: Some(pinned),
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
                    shared_as: None,
                    _pinned: None,
                })
            }
        }
    }
}

/// The bundle list of one generation, as `bundle.*` keys (git-config's `bundle.<id>.*`),
/// made from the manifest alone: with a public base, every node gives the same list for one
/// generation, and pre-signed, every node gives the list the first one signed and stored. An empty list when the store has no bundle yet (or cannot sign its URLs).
fn bundle_list(
    uris: &BundleUris,
    pinned: &Pinned,
    node: &Node,
) -> Result<Vec<(String, String)>, ServeError> {
    if pinned.manifest.bundles.is_empty() {
        return Ok(Vec::new());
    }
    let mut list = vec![
        ("bundle.version".to_owned(), "1".to_owned()),
        ("bundle.mode".to_owned(), "all".to_owned()),
        ("bundle.heuristic".to_owned(), "creationToken".to_owned()),
    ];
    let keys: Vec<String> = (pinned.manifest.bundles.iter())
        .map(|(name, _)| sluice_store::bundle_key(&pinned.repo, name))
        .collect();
    let uris: Vec<String> = match uris {
        BundleUris::Public(base) => (keys.iter())
            .map(|key| {
                format!(
                    "{}/{}",
                    base.trim_end_matches('/'),
                    node.bucket().full_key(key)
                )
            })
            .collect(),
        // The list the first node signed for this generation, the same from every node.
        BundleUris::Presigned => {
            let generation = pinned.manifest.generation;
            let shared = shared_presigned(
                &pinned.repo,
                generation,
                &keys,
                PRESIGNED_FOR,
                VALID_AT_LEAST,
            );
            match shared.map_err(|e| store_error(pinned.repo.folder(), e))? {
                Some(urls) => urls,
                None => return Ok(Vec::new()),
            }
        }
    };
    for ((name, token), uri) in pinned.manifest.bundles.iter().zip(uris) {
        list.push((format!("bundle.{name}.uri"), uri));
        // Keys as git's config hands them over: lower case (git's client matches them so).
        list.push((format!("bundle.{name}.creationtoken"), token.to_string()));
    }
    Ok(list)
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
    fn commit(&self, changes: &[RefChange]) -> Result<(), PushRefused> {
        (self.node)
            .commit_push(&self.pinned, &self.workspace, changes)
            .map(|_| ())
    }

    fn serving_dir(&self) -> Option<PathBuf> {
        let name = self.pinned.repo.folder();
        Some(self.node.pin(name).ok()??.dir.clone())
    }
}

/// The pack cache's shared tier in a store: `<repository>/pack-cache/<name>`, what one node
/// served twice, for every node to copy (the sweep removes entries by age).
#[derive(Debug)]
pub struct StorePacks {
    bucket: sluice_store::Bucket,
}

impl StorePacks {
    /// The tier in `bucket`.
    pub fn new(bucket: sluice_store::Bucket) -> StorePacks {
        StorePacks { bucket }
    }

    /// The key of `name` for the repository and generation `scope` (`<name>@<generation>`).
    fn key(scope: &str, name: &str) -> String {
        let folder = scope.split('@').next().unwrap_or(scope);
        format!("{folder}/{}{name}", sluice_store::PACK_CACHE)
    }
}

impl crate::pack_cache::SharedPacks for StorePacks {
    fn fetch(&self, scope: &str, name: &str, dest: &Path) -> bool {
        self.bucket.download(&Self::key(scope, name), dest).is_ok()
    }

    fn offer(&self, scope: &str, name: &str, file: &Path) {
        // A copy, so the local cache may evict the file meanwhile.
        let Ok(bytes) = std::fs::read(file) else {
            return;
        };
        let (bucket, key) = (self.bucket.clone(), Self::key(scope, name));
        std::thread::spawn(move || {
            let _ = bucket.put_immutable(&key, bytes);
        });
    }
}
