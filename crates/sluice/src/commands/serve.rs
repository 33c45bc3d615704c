//! `sluice serve`: one process serving every repository under a directory to fetching clients.
//! This version speaks git:// (`git daemon`'s protocol); smart HTTP is not built yet, so
//! `--http` other than `off` is refused rather than silently ignored.

use super::Context;
use anyhow::{anyhow, bail};
use clap::Args;
use sluice_serve::{serve_git, DaemonOptions};
use std::io::Write;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// `sluice serve`'s arguments.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address for smart HTTP, or `off` (HTTP is not available yet).
    #[arg(long, value_name = "addr", default_value = "off")]
    http: String,
    /// Address for git://, or `off`; port 0 picks a free port.
    #[arg(long, value_name = "addr", default_value = "127.0.0.1:9418")]
    git: String,
    /// Connections served at once.
    #[arg(long, value_name = "n", default_value_t = 64)]
    max_connections: usize,
    /// Seconds a client may stay silent.
    #[arg(long, value_name = "seconds", default_value_t = 60)]
    timeout: u64,
    /// The directory whose repositories are served.
    #[arg(value_name = "dir")]
    base: Option<PathBuf>,
}

/// Runs the server until it is killed.
pub fn run(args: ServeArgs, context: &Context) -> anyhow::Result<ExitCode> {
    if args.http != "off" {
        bail!("smart HTTP is not supported yet; use --http off");
    }
    if args.git == "off" {
        bail!("nothing to serve: both --http and --git are off");
    }
    let base = context
        .cwd
        .join(args.base.unwrap_or_else(|| PathBuf::from(".")));
    let base = base
        .canonicalize()
        .map_err(|e| anyhow!("cannot serve '{}': {e}", base.display()))?;
    let listener =
        TcpListener::bind(&args.git).map_err(|e| anyhow!("cannot listen on {}: {e}", args.git))?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "Serving {} on git://{}",
        base.display(),
        listener.local_addr()?
    )?;
    out.flush()?;
    drop(out);
    let log: Arc<dyn Fn(&str) + Send + Sync> = Arc::new(|line: &str| eprintln!("{line}"));
    let options = DaemonOptions {
        max_connections: args.max_connections.max(1),
        idle_timeout: std::time::Duration::from_secs(args.timeout.max(1)),
    };
    serve_git(listener, base, options, log)?;
    Ok(ExitCode::SUCCESS)
}
