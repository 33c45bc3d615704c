//! The options of a node serving a store's repositories, shared by `serve --store` (one
//! process for every request) and `upload-pack --store`, `receive-pack --store` (one process
//! per request, as ssh runs them, all on one cache).

use super::Context;
use clap::Args;
use sluice_store::{BundleUris, Node, ObjectStorage};
use std::path::PathBuf;
use std::sync::Arc;

/// Where the repositories are when they live in a store.
#[derive(Debug, Args)]
pub struct NodeArgs {
    /// Serve the repositories of this store (`s3://<bucket>/<prefix>`; a request's path is a
    /// repository's name there), many nodes on one store; credentials and endpoint from the
    /// standard `AWS_*` variables.
    #[arg(long, value_name = "url")]
    store: Option<String>,
    /// With --store: where this node caches packs (safe to wipe at any moment: a push in flight
    /// may fail, unacknowledged; nothing is lost). Processes may share one.
    #[arg(long, value_name = "dir", requires = "store")]
    cache_dir: Option<PathBuf>,
    /// With --store: the most bytes of packs the cache keeps; the oldest that no repository's
    /// current generation needs go first (none by default).
    #[arg(long, value_name = "bytes", requires = "store")]
    cache_size: Option<u64>,
    /// With --store: answer protocol v2's bundle-uri with the store's bundles (`sluice store
    /// maintain` writes them): alone, as pre-signed URLs (the store's credentials sign them);
    /// with a value, under that base URL, where the store's keys are readable
    /// (`http://<endpoint>/<bucket>`, or a CDN in front of it).
    #[arg(long, value_name = "url", requires = "store", num_args = 0..=1, require_equals = true,
          default_missing_value = "")]
    bundle_uri: Option<String>,
    /// With --store: the hooks every push runs (pre-receive, update, post-receive,
    /// post-update, reference-transaction), as a repository's `core.hooksPath`.
    #[arg(long, value_name = "dir", requires = "store")]
    hooks: Option<PathBuf>,
    /// With --store: read packs of at least this many bytes in ranges, as requests need them
    /// (ranged GETs), rather than downloading them whole first (a fetch that reads a few
    /// objects of a large pack then costs a few requests).
    #[arg(long, value_name = "bytes", requires = "store")]
    read_ranges_above: Option<u64>,
}

impl NodeArgs {
    /// The node `--store` asks for, if any: its cache in `--cache-dir`, else in `default_cache`
    /// under the temporary directory.
    pub fn node(&self, context: &Context, default_cache: &str) -> anyhow::Result<Option<Node>> {
        let Some(url) = &self.store else {
            return Ok(None);
        };
        let bucket = sluice_store::Bucket::open(&url.parse()?)?;
        let cache = match &self.cache_dir {
            Some(dir) => context.cwd.join(dir),
            None => std::env::temp_dir().join(default_cache),
        };
        let mut node = Node::new(bucket, cache);
        if let Some(hooks) = &self.hooks {
            node = node.with_hooks(context.cwd.join(hooks));
        }
        if let Some(bytes) = self.cache_size {
            node = node.with_cache_limit(bytes);
        }
        if let Some(bytes) = self.read_ranges_above {
            node = node.with_ranged_reads(bytes);
        }
        Ok(Some(node))
    }

    /// `node` as the storage the server opens repositories through.
    pub fn storage(&self, node: Node) -> ObjectStorage {
        let bundle_uris = self.bundle_uri.as_deref().map(|base| match base {
            "" => BundleUris::Presigned,
            base => BundleUris::Public(base.to_owned()),
        });
        ObjectStorage::new(Arc::new(node), bundle_uris)
    }
}
