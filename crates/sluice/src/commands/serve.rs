//! `sluice serve`: one process serving every repository under a directory to fetching clients
//! over smart HTTP and git://. SIGTERM or SIGINT stops accepting and lets running requests
//! finish; a second signal exits at once.

use super::upload_pack::PackCacheArgs;
use super::Context;
use crate::cleanup;
use crate::log::LogFormat;
use anyhow::{anyhow, bail};
use clap::Args;
use sluice_repo::storage::{LocalDisk, Storage};
use sluice_serve::{serve_git, serve_http, tls_config, Credentials};
use sluice_serve::{ServerOptions, Shutdown};
use sluice_store::{BundleUris, ObjectStorage};
use std::io::Write;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// `sluice serve`'s arguments.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address for smart HTTP, or `off`; port 0 picks a free port.
    #[arg(long, value_name = "addr", default_value = "127.0.0.1:8080")]
    http: String,
    /// Address for git://, or `off`; port 0 picks a free port.
    #[arg(long, value_name = "addr", default_value = "127.0.0.1:9418")]
    git: String,
    /// Connections served at once, per front end.
    #[arg(long, value_name = "n", default_value_t = 64)]
    max_connections: usize,
    /// Seconds a client may stay silent.
    #[arg(long, value_name = "seconds", default_value_t = 60)]
    timeout: u64,
    /// Seconds a connection may last, however busy.
    #[arg(long, value_name = "seconds", default_value_t = 3600)]
    max_request_time: u64,
    /// The most bytes one HTTP request body may carry, gzip undone (git's http.maxRequestBuffer).
    #[arg(long, value_name = "bytes", default_value_t = 10 << 20)]
    max_request_size: u64,
    /// Pushes over HTTP from the users of this htpasswd file (bcrypt entries, `htpasswd -B`);
    /// without it, a repository takes pushes over HTTP only where `http.receivepack` is true.
    #[arg(long, value_name = "file")]
    auth_file: Option<PathBuf>,
    /// Serve HTTP under TLS with this PEM certificate chain (and --tls-key).
    #[arg(long, value_name = "file", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "file", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Serve pushes over git:// (`receive-pack`), as git daemon's --enable (or a repository's
    /// `daemon.receivepack`).
    #[arg(long, value_name = "service", value_parser = ["receive-pack"])]
    enable: Vec<String>,
    /// How the log on standard error is written: one line per request, as text or JSON.
    #[arg(long, value_name = "format", value_enum, default_value_t)]
    log_format: LogFormat,
    #[command(flatten)]
    cache: PackCacheArgs,
    /// Serve every repository of this store (`s3://<bucket>/<prefix>`), many nodes on one
    /// store; credentials and endpoint from the standard `AWS_*` variables.
    #[arg(long, value_name = "url", conflicts_with = "base")]
    store: Option<String>,
    /// With --store: where this node caches packs (safe to wipe at any moment: a push in flight
    /// may fail, unacknowledged; nothing is lost).
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
    /// With --store: after a push that leaves a repository with more packs than this, the node
    /// maintains it in the background (`sluice store maintain`); 0: never.
    #[arg(long, value_name = "packs", default_value_t = 16, requires = "store")]
    maintain_after_packs: usize,
    /// The directory whose repositories are served.
    #[arg(value_name = "dir")]
    base: Option<PathBuf>,
}

type FrontEnd = fn(TcpListener, Arc<dyn Storage>, ServerOptions, &Shutdown) -> std::io::Result<()>;

/// Where the repositories `args` names live: a store, or a directory.
fn storage(args: &ServeArgs, context: &Context) -> anyhow::Result<Arc<dyn Storage>> {
    if let Some(url) = &args.store {
        let bucket = sluice_store::Bucket::open(&url.parse()?)?;
        let cache = match &args.cache_dir {
            Some(dir) => context.cwd.join(dir),
            None => std::env::temp_dir().join(format!("sluice-cache-{}", std::process::id())),
        };
        let mut node = sluice_store::Node::new(bucket, cache);
        if let Some(hooks) = &args.hooks {
            node = node.with_hooks(context.cwd.join(hooks));
        }
        if let Some(bytes) = args.cache_size {
            node = node.with_cache_limit(bytes);
        }
        if args.maintain_after_packs > 0 {
            node = node.with_maintenance_after(args.maintain_after_packs);
        }
        let node = Arc::new(node);
        let bundle_uris = args.bundle_uri.as_deref().map(|base| match base {
            "" => BundleUris::Presigned,
            base => BundleUris::Public(base.to_owned()),
        });
        return Ok(Arc::new(ObjectStorage::new(node, bundle_uris)));
    }
    let base = (context.cwd).join(args.base.clone().unwrap_or_else(|| PathBuf::from(".")));
    let base = base
        .canonicalize()
        .map_err(|e| anyhow!("cannot serve '{}': {e}", base.display()))?;
    Ok(Arc::new(LocalDisk::new(base)))
}

/// Runs the server until it is stopped by a signal.
pub fn run(args: ServeArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let base = storage(&args, context)?;
    let memory = Arc::new(sluice_serve::ServerMemory::new());
    memory.metrics.watch_storage(Arc::clone(&base));
    let pack_cache = args.cache.open(context)?;
    if let Some(cache) = &pack_cache {
        memory.metrics.watch_pack_cache(Arc::clone(cache));
        if let Some(shared) = base.shared_packs() {
            cache.share_with(shared);
        }
    }
    crate::log::init(args.log_format);
    let http = ["http", "https"][usize::from(args.tls_cert.is_some())];
    let mut front_ends: Vec<(TcpListener, &str, FrontEnd)> = Vec::new();
    for (addr, scheme, front_end) in [
        (&args.http, http, serve_http as FrontEnd),
        (&args.git, "git", serve_git as FrontEnd),
    ] {
        if addr == "off" {
            continue;
        }
        let listener =
            TcpListener::bind(addr).map_err(|e| anyhow!("cannot listen on {addr}: {e}"))?;
        front_ends.push((listener, scheme, front_end));
    }
    if front_ends.is_empty() {
        bail!("nothing to serve: both --http and --git are off");
    }
    let options = ServerOptions {
        max_connections: args.max_connections.max(1),
        idle_timeout: Duration::from_secs(args.timeout.max(1)),
        max_connection_time: Duration::from_secs(args.max_request_time.max(1)),
        max_request_bytes: args.max_request_size,
        pack_cache,
        credentials: (args.auth_file.as_ref())
            .map(|file| Credentials::load(&context.cwd.join(file)).map(Arc::new))
            .transpose()?,
        tls: match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => {
                Some(tls_config(&context.cwd.join(cert), &context.cwd.join(key))?)
            }
            _ => None,
        },
        git_receive_pack: !args.enable.is_empty(),
        memory,
    };
    let shutdown = Shutdown::new();
    let addresses = front_ends
        .iter()
        .map(|(l, _, _)| l.local_addr())
        .collect::<Result<Vec<_>, _>>()?;
    let stopper = shutdown.clone();
    let stop_addresses = addresses.clone();
    // Before the addresses are announced: whoever reads them may signal at once.
    cleanup::on_signal_stop(move || {
        eprintln!("sluice serve: stopping; waiting for running requests");
        stopper.stop(&stop_addresses);
    });
    let mut out = std::io::stdout().lock();
    for ((_, scheme, _), address) in front_ends.iter().zip(&addresses) {
        writeln!(out, "Serving {} on {scheme}://{address}", base.describe())?;
    }
    out.flush()?;
    drop(out);
    std::thread::scope(|scope| {
        let running: Vec<_> = front_ends
            .into_iter()
            .map(|(listener, _, front_end)| {
                let (base, shutdown) = (base.clone(), &shutdown);
                let options = options.clone();
                scope.spawn(move || front_end(listener, base, options, shutdown))
            })
            .collect();
        for front_end in running {
            front_end
                .join()
                .map_err(|_| anyhow!("a front end panicked"))??;
        }
        // A node's maintenance after pushes stops too, giving its lease back: other nodes
        // need not wait for it to expire.
        base.stop();
        Ok(ExitCode::SUCCESS)
    })
}
