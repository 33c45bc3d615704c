//! `sluice commit-graph write --reachable`: the commit-graph of every commit the refs reach.

use super::Context;
use crate::progress::TerminalProgress;
use anyhow::{anyhow, bail};
use clap::{Args, Subcommand};
use std::process::ExitCode;

/// `git commit-graph`'s arguments.
#[derive(Debug, Args)]
pub struct CommitGraphArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Write the commit-graph file.
    Write {
        /// The commits the refs reach (the only source this version reads).
        #[arg(long)]
        reachable: bool,
        /// Show progress even when not on a terminal.
        #[arg(long, overrides_with = "no_progress")]
        progress: bool,
        /// Show no progress.
        #[arg(long)]
        no_progress: bool,
    },
}

/// Runs commit-graph.
pub fn run(args: CommitGraphArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context
        .repository()?
        .ok_or_else(|| anyhow!("not a git repository (or any of the parent directories): .git"))?;
    let Action::Write {
        reachable,
        progress,
        no_progress,
    } = args.action;
    if !reachable {
        bail!("commit-graph write: only --reachable is supported");
    }
    let shown = TerminalProgress::new(crate::progress::enabled(!no_progress, progress));
    sluice_odb::commit_graph::write_reachable(&repo, &shown)?;
    Ok(ExitCode::SUCCESS)
}
