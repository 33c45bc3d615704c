//! `sluice upload-pack`: serves one fetch or clone over standard input and output, wherever git
//! runs `git-upload-pack` (`git clone --upload-pack`, ssh, a CGI or daemon front end).

use super::Context;
use anyhow::anyhow;
use clap::Args;
use sluice_odb::{RepoError, Repository};
use sluice_serve::{upload_pack, AccessLog, PackCache, Protocol, UploadPackOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// `git upload-pack`'s arguments.
#[derive(Debug, Args)]
pub struct UploadPackArgs {
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
    #[command(flatten)]
    cache: PackCacheArgs,
    /// The repository.
    #[arg(value_name = "directory")]
    repository: PathBuf,
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
        let log: AccessLog = Arc::new(|line: &str| eprintln!("{line}"));
        let cache = PackCache::new(&dir, self.pack_cache_size, log)
            .map_err(|e| anyhow!("cannot use '{}' as pack cache: {e}", dir.display()))?;
        Ok(Some(Arc::new(cache)))
    }
}

/// Runs upload-pack.
pub fn run(args: UploadPackArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let path = context.cwd.join(&args.repository);
    let shown = args.repository.display();
    let repo = Repository::open_served(&path, args.strict).map_err(|e| match e {
        RepoError::Unsupported(_) => anyhow!("'{shown}': {e}, which Sluice does not support yet"),
        _ => anyhow!("'{shown}' does not appear to be a git repository"),
    })?;
    let protocol = std::env::var("GIT_PROTOCOL")
        .map(|v| Protocol::from_git_protocol(&v))
        .unwrap_or_default();
    let options = UploadPackOptions {
        protocol,
        stateless_rpc: args.stateless_rpc,
        advertise_refs: args.advertise_refs,
        pack_cache: args.cache.open(context)?,
    };
    let input = std::io::stdin().lock();
    let output = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout());
    match upload_pack(&repo, input, output, &options) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // The client hung up: nothing to report to anyone.
        Err(sluice_serve::ServeError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(ExitCode::from(128))
        }
        Err(e) => Err(e.into()),
    }
}
