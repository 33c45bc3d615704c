//! `sluice commit-graph write --reachable [--split[=<strategy>]]`: the commit-graph of every
//! commit the refs reach, whole or as a new layer of a split graph.

use super::Context;
use crate::progress::TerminalProgress;
use anyhow::bail;
use clap::{Args, Subcommand};
use sluice_graph::commit_graph::{SplitOptions, SplitStrategy};
use std::process::ExitCode;

/// `git commit-graph`'s arguments.
#[derive(Debug, Args)]
pub struct CommitGraphArgs {
    /// The object directory (default: the repository's), as git's fsck passes it.
    #[arg(long, value_name = "dir", global = true)]
    object_dir: Option<std::path::PathBuf>,
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
        /// Write a layer of a split graph (`no-merge`: never merge layers; `replace`: one
        /// layer of everything).
        #[arg(long, value_name = "strategy", num_args = 0..=1, require_equals = true)]
        #[arg(default_missing_value = "")]
        split: Option<String>,
        /// Merge a layer while it holds at most this many times the new commits (2).
        #[arg(long, value_name = "n", default_value_t = 2)]
        size_multiple: usize,
        /// Merge the layer below when the new one would hold more commits than this.
        #[arg(long, value_name = "n")]
        max_commits: Option<usize>,
    },
    /// Check the commit-graph against the commits it describes.
    Verify {
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
    let repo = context.require_repository()?;
    match args.action {
        Action::Verify {
            progress,
            no_progress,
        } => {
            let objects = match &args.object_dir {
                Some(dir) => sluice_odb::ObjectDb::open(&context.cwd.join(dir), repo.hash())?,
                None => repo.objects().clone(),
            };
            let shown = TerminalProgress::new(crate::progress::enabled(!no_progress, progress));
            let verified = sluice_graph::commit_graph::verify(&objects, &shown);
            // git's words alone, each on a line, as its verify reports them.
            verified.problems.iter().for_each(|p| eprintln!("{p}"));
            Ok(ExitCode::from(
                match (verified.problems.len(), verified.checksums_only) {
                    (0, _) => 0,
                    (_, true) => 2,
                    (_, false) => 1,
                },
            ))
        }
        Action::Write {
            reachable,
            progress,
            no_progress,
            split,
            size_multiple,
            max_commits,
        } => {
            if !reachable {
                bail!("commit-graph write: only --reachable is supported");
            }
            let shown = TerminalProgress::new(crate::progress::enabled(!no_progress, progress));
            write(&repo, split, (size_multiple, max_commits), &shown)
        }
    }
}

/// `write --reachable`, whole or as a layer of a split graph.
fn write(
    repo: &sluice_repo::Repository,
    split: Option<String>,
    (size_multiple, max_commits): (usize, Option<usize>),
    shown: &TerminalProgress,
) -> anyhow::Result<ExitCode> {
    let Some(strategy) = split else {
        sluice_graph::commit_graph::write_reachable(repo, shown)?;
        return Ok(ExitCode::SUCCESS);
    };
    let strategy = match strategy.as_str() {
        "" => SplitStrategy::Merge,
        "no-merge" => SplitStrategy::NoMerge,
        "replace" => SplitStrategy::Replace,
        other => bail!("unrecognized --split argument, {other}"),
    };
    let options = SplitOptions {
        strategy,
        size_multiple: size_multiple.max(1),
        max_commits,
    };
    sluice_graph::commit_graph::write_split(repo, &options, shown)?;
    Ok(ExitCode::SUCCESS)
}
