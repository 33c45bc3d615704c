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
    #[command(flatten)]
    node: super::store_node::NodeArgs,
    /// With --store: after a push that leaves a repository with more packs than this, the node
    /// maintains it in the background (`sluice store maintain`); 0: never.
    #[arg(long, value_name = "packs", default_value_t = 16, requires = "store")]
    maintain_after_packs: usize,
    /// The directory whose repositories are served.
    #[arg(value_name = "dir", conflicts_with = "store")]
    base: Option<PathBuf>,
}

type FrontEnd = fn(TcpListener, Arc<dyn Storage>, ServerOptions, &Shutdown) -> std::io::Result<()>;

/// Where the repositories `args` names live: a store, or a directory.
fn storage(args: &ServeArgs, context: &Context) -> anyhow::Result<Arc<dyn Storage>> {
    let default_cache = format!("sluice-cache-{}", std::process::id());
    if let Some(mut node) = args.node.node(context, &default_cache)? {
        if args.maintain_after_packs > 0 {
            node = node.with_maintenance_after(args.maintain_after_packs);
        }
        return Ok(Arc::new(args.node.storage(node)));
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
