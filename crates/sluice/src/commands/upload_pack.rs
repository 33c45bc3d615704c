//! `sluice upload-pack` and `sluice receive-pack`: one fetch, or one push, over standard input
//! and output, wherever git runs `git-upload-pack` or `git-receive-pack` (ssh, CGI, daemon),
//! of a repository on this machine or, with `--store`, of a store's (the name its path gives).

use super::Context;
use anyhow::anyhow;
use clap::Args;
use sluice_repo::storage::{Purpose, Served, Storage, StorageError};
use sluice_repo::{RepoError, Repository};
use sluice_serve::receive_pack::{receive_pack, ReceivePackOptions};
use sluice_serve::{upload_pack, PackCache, Protocol, UploadPackOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// `git upload-pack`'s arguments.
#[derive(Debug, Args)]
pub struct UploadPackArgs {
    #[command(flatten)]
    service: ServiceArgs,
    #[command(flatten)]
    cache: PackCacheArgs,
}

/// The arguments `git upload-pack` and `git receive-pack` share.
#[derive(Debug, Args)]
pub struct ServiceArgs {
    /// Use only <directory> itself, without trying <directory>/.git or <directory>.git.
    #[arg(long)]
    strict: bool,
    /// Accepted for compatibility; a front end bounds the time of a request.
    #[arg(long, value_name = "n")]
    timeout: Option<u64>,
    /// Serve one request and its response (smart HTTP).
    #[arg(long)]
    stateless_rpc: bool,
    /// Only advertise the refs, then exit.
    #[arg(long, alias = "http-backend-info-refs")]
    advertise_refs: bool,
    /// The repository (with --store: its name in the store).
    #[arg(value_name = "directory")]
    repository: PathBuf,
    #[command(flatten)]
    node: super::store_node::NodeArgs,
}

impl ServiceArgs {
    /// The repository to serve (held for the whole request), and the storage it comes from
    /// (none: this machine's disk); refused with git's words.
    fn open(
        &self,
        context: &Context,
        purpose: Purpose,
    ) -> anyhow::Result<(Served, Option<Arc<dyn Storage>>)> {
        let dir = self.repository.display();
        let not_a_repository = || anyhow!("'{dir}' does not appear to be a git repository");
        // Shared by every such process: a cache per process would download a repository's
        // packs for each request.
        if let Some(node) = self.node.node(context, "sluice-store-cache")? {
            let storage: Arc<dyn Storage> = Arc::new(self.node.storage(node));
            let name = self.repository.to_string_lossy();
            return match storage.open(&name, purpose) {
                Ok(served) => Ok((served, Some(storage))),
                Err(StorageError::NoRepository { .. }) => Err(not_a_repository()),
                Err(e) => Err(e.into()),
            };
        }
        let path = context.cwd.join(&self.repository);
        let repo = Repository::open_served(&path, self.strict).map_err(|e| match e {
            RepoError::Unsupported(_) => anyhow!("'{dir}': {e}, which Sluice does not support yet"),
            _ => not_a_repository(),
        })?;
        Ok((Served::local(repo), None))
    }
}

/// The pack cache's options, shared by `upload-pack` and `serve`.
#[derive(Debug, Args)]
pub struct PackCacheArgs {
    /// Keep generated packs in this directory and serve identical requests from it.
    #[arg(long, value_name = "dir")]
    pack_cache: Option<PathBuf>,
    /// The most bytes the pack cache holds; the least recently used packs go first.
    #[arg(long, value_name = "bytes", default_value_t = 1 << 30)]
    pack_cache_size: u64,
}

impl PackCacheArgs {
    /// The cache asked for, logging its hits and misses to standard error.
    pub fn open(&self, context: &Context) -> anyhow::Result<Option<Arc<PackCache>>> {
        let Some(dir) = &self.pack_cache else {
            return Ok(None);
        };
        let dir = context.cwd.join(dir);
        crate::log::init(crate::log::LogFormat::Text);
        let cache = PackCache::new(&dir, self.pack_cache_size)
            .map_err(|e| anyhow!("cannot use '{}' as pack cache: {e}", dir.display()))?;
        Ok(Some(Arc::new(cache)))
    }
}

/// Runs receive-pack.
pub fn receive(args: ServiceArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let (served, _) = args.open(context, Purpose::Push)?;
    let options = ReceivePackOptions {
        stateless_rpc: args.stateless_rpc,
        advertise_refs: args.advertise_refs,
        // A store's: its refs land there first.
        gate: served.gate.clone(),
        // One push per process: no server to remember anything for.
        ..ReceivePackOptions::default()
    };
    let output = std::io::BufWriter::new(std::io::stdout());
    let input = std::io::stdin().lock();
    let unrelayed = receive_pack(&served.repo, input, output, &options)?;
    for line in unrelayed {
        eprintln!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs upload-pack.
pub fn run(args: UploadPackArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let (served, storage) = args.service.open(context, Purpose::Read)?;
    let pack_cache = args.cache.open(context)?;
    if let (Some(cache), Some(storage)) = (&pack_cache, &storage) {
        if let Some(shared) = storage.shared_packs() {
            cache.share_with(shared);
        }
    }
    let protocol = std::env::var("GIT_PROTOCOL")
        .map(|v| Protocol::from_git_protocol(&v))
        .unwrap_or_default();
    let options = UploadPackOptions {
        protocol,
        stateless_rpc: args.service.stateless_rpc,
        advertise_refs: args.service.advertise_refs,
        pack_cache,
        bundles: served.bundles.clone(),
        shared_as: served.shared_as.clone(),
        earlier_tips: served.earlier_tips.clone(),
        // One request per process: nothing to remember.
        ..UploadPackOptions::default()
    };
    let input = std::io::stdin().lock();
    let output = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout());
    match upload_pack(&served.repo, input, output, &options) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // The client hung up: nothing to report to anyone.
        Err(sluice_serve::ServeError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(ExitCode::from(128))
        }
        Err(e) => Err(e.into()),
    }
}
