//! `sluice fetch-pack`: git's plumbing that receives the objects of some refs from another
//! repository's upload-pack into this one and prints those refs, negotiating with what this
//! repository's refs reach.

use super::remote::{connect, RemoteLines};
use super::Context;
use crate::progress::TerminalProgress;
use clap::Args;
use sluice_client::fetch_pack::{fetch_pack, FetchPackOptions};
use sluice_remote::Remote;
use std::io::Write;
use std::process::ExitCode;

/// `git fetch-pack`'s arguments.
#[derive(Debug, Args)]
pub struct FetchPackArgs {
    /// Fetch all remote refs.
    #[arg(long)]
    all: bool,
    /// The command that runs upload-pack on the other side.
    #[arg(long, value_name = "command")]
    upload_pack: Option<String>,
    /// Keep the received pack (write a `.keep` file beside it).
    #[arg(short = 'k', long)]
    keep: bool,
    /// No progress.
    #[arg(short, long)]
    quiet: bool,
    /// The repository to fetch from (a path or any URL git takes).
    #[arg(value_name = "repository")]
    repository: String,
    /// The refs to fetch, by full name.
    #[arg(value_name = "refs")]
    refs: Vec<String>,
}

/// Runs fetch-pack.
pub fn run(args: FetchPackArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let remote = Remote::resolve(&context.cwd, &args.repository)?;
    let options = context.connect_options(repo.config(), args.upload_pack.as_deref())?;
    let mut connection = connect(&remote, &options)?;
    // Nothing asked for: nothing fetched, which git's fetch-pack says with 1 alone.
    if !args.all && args.refs.is_empty() {
        connection.finish()?;
        return Ok(ExitCode::from(1));
    }
    let show_progress = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let progress = TerminalProgress::new(show_progress);
    let options = FetchPackOptions {
        all: args.all,
        refs: &args.refs,
        keep: args.keep,
        remote_progress: show_progress,
        receive_progress: &progress,
    };
    let lines = RemoteLines::new(repo.config())?;
    let fetched = fetch_pack(&mut connection, &repo, &options, |text| lines.show(text))?;
    connection.finish()?;
    let mut out = std::io::stdout().lock();
    if let (true, Some(report)) = (args.keep, fetched.report) {
        writeln!(out, "{report}")?;
    }
    for remote in fetched.refs {
        writeln!(out, "{} {}", remote.id, remote.name)?;
    }
    Ok(ExitCode::SUCCESS)
}
