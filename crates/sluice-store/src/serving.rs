//! The store behind the storage seam ([`sluice_repo::storage`]): what a server opens for a
//! request is one generation pinned on this node, as a bare repository in its cache; a push is
//! received into a private copy of that generation and its refs are committed to the manifest
//! by the [`RefGate`] before they move there; the bundle list and the shared tier of the pack
//! cache come from the store.

use crate::{shared_presigned, Bucket, Node, Pinned, StoreError, Workspace};
use sluice_repo::storage::{
    Counter, GateRefused, Purpose, RefChange, RefGate, Served, SharedPacks, Storage, StorageError,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Every repository of a store, served through one node's cache.
#[derive(Debug, Clone)]
pub struct ObjectStorage {
    node: Arc<Node>,
    bundle_uris: Option<BundleUris>,
}

/// How a node hands out its bundles' URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundleUris {
    /// Under this base URL, where the store's keys are public (or a CDN in front of it): the
    /// same list on every node for one generation.
    Public(String),
    /// Pre-signed GETs, valid for 90 minutes (the store's credentials sign them).
    Presigned,
}

/// How long a pre-signed bundle URL is valid: over an hour, as a clone may start its download
/// late, and less than the sweep's default grace, so a listed bundle outlives its URLs.
const PRESIGNED_FOR: std::time::Duration = std::time::Duration::from_secs(5400);

/// How long a pre-signed URL handed out stays valid at least: a list signed earlier whose URLs
/// expire sooner is signed anew.
const VALID_AT_LEAST: std::time::Duration = std::time::Duration::from_secs(3600);

impl ObjectStorage {
    /// The store `node` serves, advertising its bundles as `bundle_uris` says (none: no
    /// bundle-uri advertised).
    pub fn new(node: Arc<Node>, bundle_uris: Option<BundleUris>) -> ObjectStorage {
        ObjectStorage { node, bundle_uris }
    }

    /// The node.
    pub fn node(&self) -> &Arc<Node> {
        &self.node
    }

    fn open_for_push(&self, path: &str, pinned: Arc<Pinned>) -> Result<Served, StorageError> {
        let workspace = (self.node)
            .workspace(&pinned)
            .map_err(|e| failed(path, e))?;
        let repo = (self.node)
            .open_dir(workspace.dir())
            .map_err(|e| failed(path, e))?;
        let gate = StoreGate {
            node: Arc::clone(&self.node),
            pinned,
            workspace,
        };
        Ok(Served {
            gate: Some(Arc::new(gate)),
            ..Served::local(repo)
        })
    }
}

impl Storage for ObjectStorage {
    fn describe(&self) -> String {
        format!("{:?}", self.node.bucket())
    }

    fn open(&self, path: &str, purpose: Purpose) -> Result<Served, StorageError> {
        let name = path.trim_matches('/');
        let pinned = self.node.pin(name).map_err(|e| failed(path, e))?;
        let pinned = pinned.ok_or_else(|| StorageError::NoRepository {
            path: path.to_owned(),
        })?;
        if purpose == Purpose::Push {
            return self.open_for_push(path, pinned);
        }
        let repo = (self.node)
            .open_dir(&pinned.dir)
            .map_err(|e| failed(path, e))?;
        let bundles = match &self.bundle_uris {
            Some(uris) => Some(Arc::new(bundle_list(uris, &pinned, &self.node)?)),
            None => None,
        };
        let manifest = &pinned.manifest;
        let generation = format!("{}-{}", manifest.generation, manifest.transaction);
        Ok(Served {
            repo,
            gate: None,
            bundles,
            shared_as: Some(format!("{}@{generation}", pinned.repo.folder())),
            earlier_tips: Arc::clone(&pinned.earlier_tips),
            held: Some(pinned),
        })
    }

    fn shared_packs(&self) -> Option<Arc<dyn SharedPacks>> {
        Some(Arc::new(StorePacks {
            bucket: self.node.bucket().clone(),
        }))
    }

    fn counters(&self) -> Vec<Counter> {
        let counts = self.node.bucket().counts();
        let counter = |name, help, count: &std::sync::atomic::AtomicU64| Counter {
            name,
            help,
            value: count.load(Ordering::Relaxed),
        };
        vec![
            counter("store_gets", "GETs sent to the store", &counts.gets),
            counter(
                "store_puts",
                "PUTs sent to the store (an upload in parts counted once)",
                &counts.puts,
            ),
            counter(
                "store_other_requests",
                "LISTs and DELETEs sent to the store",
                &counts.others,
            ),
            counter(
                "store_received_bytes",
                "Bytes downloaded from the store",
                &counts.bytes_in,
            ),
            counter(
                "store_sent_bytes",
                "Bytes uploaded to the store",
                &counts.bytes_out,
            ),
            counter(
                "store_not_modified",
                "Manifest reads that found this node up to date",
                &counts.not_modified,
            ),
            counter(
                "store_manifest_conflicts",
                "Manifest writes another writer won (then retried or refused)",
                &counts.conflicts,
            ),
            counter(
                "store_manifest_retries",
                "Manifest commits tried again after a conflict or a write whose outcome was lost",
                &counts.retries,
            ),
        ]
    }

    fn stop(&self) {
        self.node.stop_background();
    }
}

/// The bundle list of one generation, as `bundle.*` keys (git-config's `bundle.<id>.*`),
/// made from the manifest alone: with a public base, every node gives the same list for one
/// generation, and pre-signed, every node gives the list the first one signed and stored. An
/// empty list when the store has no bundle yet (or cannot sign its URLs).
fn bundle_list(
    uris: &BundleUris,
    pinned: &Pinned,
    node: &Node,
) -> Result<Vec<(String, String)>, StorageError> {
    if pinned.manifest.bundles.is_empty() {
        return Ok(Vec::new());
    }
    let mut list = vec![
        ("bundle.version".to_owned(), "1".to_owned()),
        ("bundle.mode".to_owned(), "all".to_owned()),
        ("bundle.heuristic".to_owned(), "creationToken".to_owned()),
    ];
    let keys: Vec<String> = (pinned.manifest.bundles.iter())
        .map(|(name, _)| crate::bundle_key(&pinned.repo, name))
        .collect();
    let uris: Vec<String> = match uris {
        BundleUris::Public(base) => (keys.iter())
            .map(|key| {
                let base = base.trim_end_matches('/');
                format!("{base}/{}", node.bucket().full_key(key))
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
            match shared.map_err(|e| failed(pinned.repo.folder(), e))? {
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

fn failed(path: &str, e: StoreError) -> StorageError {
    StorageError::Failed {
        path: path.to_owned(),
        source: Box::new(e),
    }
}

/// A push into a store: received into a private copy of the generation it was pinned to,
/// committed to the manifest by the node.
struct StoreGate {
    node: Arc<Node>,
    pinned: Arc<Pinned>,
    workspace: Workspace,
}

impl RefGate for StoreGate {
    fn commit(&self, changes: &[RefChange]) -> Result<(), GateRefused> {
        (self.node)
            .commit_push(&self.pinned, &self.workspace, changes)
            .map(|_| ())
    }

    fn serving_dir(&self) -> Option<PathBuf> {
        // The warm-up counts a full clone, which would read every ranged pack whole: a node
        // that reads in ranges leaves that to the first clone that needs it.
        if self.node.reads_ranges() {
            return None;
        }
        let name = self.pinned.repo.folder();
        Some(self.node.pin(name).ok()??.dir.clone())
    }
}

/// The pack cache's shared tier in a store: `<repository>/pack-cache/<name>`, what one node
/// served twice, for every node to copy (the sweep removes entries by age).
#[derive(Debug)]
struct StorePacks {
    bucket: Bucket,
}

impl StorePacks {
    /// The key of `name` for the repository and generation `scope` (`<name>@<generation>`).
    fn key(scope: &str, name: &str) -> String {
        let folder = scope.split('@').next().unwrap_or(scope);
        format!("{folder}/{}{name}", crate::PACK_CACHE)
    }
}

impl SharedPacks for StorePacks {
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
