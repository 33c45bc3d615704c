//! `sluice upload-pack`: serves one fetch or clone over standard input and output, wherever git
//! runs `git-upload-pack` (`git clone --upload-pack`, ssh, a CGI or daemon front end).

use super::Context;
use anyhow::anyhow;
use clap::Args;
use sluice_odb::Repository;
use sluice_serve::{upload_pack, Protocol, UploadPackOptions};
use std::path::PathBuf;
use std::process::ExitCode;

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
    /// The repository.
    #[arg(value_name = "directory")]
    repository: PathBuf,
}

/// Runs upload-pack.
pub fn run(args: UploadPackArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let path = context.cwd.join(&args.repository);
    let mut repo = Repository::open_served(&path, args.strict).map_err(|_| {
        anyhow!(
            "'{}' does not appear to be a git repository",
            args.repository.display()
        )
    })?;
    for item in &context.overrides {
        repo.config_mut().set_parameter(item)?;
    }
    let protocol = std::env::var("GIT_PROTOCOL")
        .map(|v| Protocol::from_git_protocol(&v))
        .unwrap_or_default();
    let options = UploadPackOptions {
        protocol,
        stateless_rpc: args.stateless_rpc,
        advertise_refs: args.advertise_refs,
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
