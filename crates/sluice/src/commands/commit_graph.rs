//! `sluice commit-graph write [--reachable | --stdin-commits | --stdin-packs] [--append]
//! [--split[=<strategy>]] [--[no-]changed-paths]`: the commit-graph of the commits the refs (or the commits or packs
//! named on stdin, or else every pack) hold and reach, whole or as a new layer of a split graph.

use super::Context;
use crate::progress::TerminalProgress;
use anyhow::bail;
use clap::{Args, Subcommand};
use sluice_graph::commit_graph::{
    write_graph, write_split, ChangedPaths, CommitGraphError, GraphCommits, GraphOptions,
    SourceError, SplitOptions, SplitStrategy,
};
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
        /// The commits the refs reach.
        #[arg(long)]
        reachable: bool,
        /// The commits reachable from those named on stdin (ids; tags peeled).
        #[arg(long)]
        stdin_commits: bool,
        /// The commits stored in the packs named on stdin (`pack-<hash>.idx`), and those they
        /// reach.
        #[arg(long)]
        stdin_packs: bool,
        /// Keep the commits of the graph there now.
        #[arg(long)]
        append: bool,
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
        /// Write changed-path Bloom filters (kept by later writes).
        #[arg(long, overrides_with = "no_changed_paths")]
        changed_paths: bool,
        /// Write no changed-path Bloom filters, even if the graph there now has them.
        #[arg(long, overrides_with = "changed_paths")]
        no_changed_paths: bool,
        /// Compute at most this many new filters (`commitGraph.maxNewFilters`); the rest are
        /// left for a later write.
        #[arg(long, value_name = "n", allow_negative_numbers = true)]
        max_new_filters: Option<i64>,
        /// Remove the layers no longer in the chain only where older than this date.
        #[arg(long, value_name = "datetime")]
        expire_time: Option<String>,
    },
    /// Check the commit-graph against the commits it describes.
    Verify {
        /// Show progress even when not on a terminal.
        #[arg(long, overrides_with = "no_progress")]
        progress: bool,
        /// Show no progress.
        #[arg(long)]
        no_progress: bool,
        /// Of a split graph, check the newest layer only.
        #[arg(long)]
        shallow: bool,
    },
}

/// Runs commit-graph.
pub fn run(args: CommitGraphArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    match args.action {
        Action::Verify {
            progress,
            no_progress,
            shallow,
        } => {
            let objects = match &args.object_dir {
                Some(dir) => super::object_dir_db(&repo, &context.cwd, dir)?,
                None => repo.objects().clone(),
            };
            let shown = TerminalProgress::new(crate::progress::enabled(!no_progress, progress));
            let verified = sluice_graph::commit_graph::verify(&objects, shallow, &shown);
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
            stdin_commits,
            stdin_packs,
            append,
            progress,
            no_progress,
            split,
            size_multiple,
            max_commits,
            changed_paths,
            no_changed_paths,
            max_new_filters,
            expire_time,
        } => {
            let expire_time = match expire_time.as_deref() {
                Some(text) => match sluice_maintain::gc::time_of(text) {
                    Ok(time) => Some(time),
                    Err(_) => bail!("malformed expiration date '{text}'"),
                },
                None => None,
            };
            if let Some(dir) = &args.object_dir {
                // Sluice writes the graph of the repository's own object directory only.
                let found = super::object_dir_db(&repo, &context.cwd, dir)?;
                if found.dir() != repo.objects().dir() {
                    bail!("writing the commit-graph of an alternate object directory ({}) is not supported", dir.display());
                }
            }
            if u8::from(reachable) + u8::from(stdin_commits) + u8::from(stdin_packs) > 1 {
                bail!("use at most one of --reachable, --stdin-commits, or --stdin-packs");
            }
            let shown = TerminalProgress::new(crate::progress::enabled(!no_progress, progress));
            let commits = match (reachable, stdin_commits, stdin_packs) {
                (true, ..) => GraphCommits::Reachable,
                (_, true, _) => match GraphCommits::named(repo.hash(), &super::stdin_lines()?) {
                    Ok(commits) => commits,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return Ok(ExitCode::from(1));
                    }
                },
                (_, _, true) => {
                    GraphCommits::packs_named(&repo.objects().pack_dir(), &super::stdin_lines()?)
                }
                _ => GraphCommits::AllPacks,
            };
            // A negative count is no limit, as git takes it.
            let max_new_filters = max_new_filters.and_then(|n| usize::try_from(n).ok());
            let changed_paths = match super::either(changed_paths, no_changed_paths) {
                Some(true) => ChangedPaths::Write,
                Some(false) => ChangedPaths::Skip,
                None => ChangedPaths::AsBefore,
            };
            let written = match split {
                None => {
                    let options = GraphOptions {
                        append,
                        changed_paths,
                        max_new_filters,
                        expire_time,
                    };
                    write_graph(&repo, &commits, &options, &shown)
                }
                Some(strategy) => {
                    let options = SplitOptions {
                        strategy: SplitStrategy::named(&strategy).ok_or_else(|| {
                            anyhow::anyhow!("unrecognized --split argument, {strategy}")
                        })?,
                        size_multiple: size_multiple.max(1),
                        max_commits,
                        changed_paths,
                        max_new_filters,
                        expire_time,
                    };
                    write_split(&repo, &commits, &options, &shown)
                }
            };
            match written {
                Ok(Some(_)) => Ok(ExitCode::SUCCESS),
                Ok(None) => {
                    eprintln!("warning: {}", sluice_graph::commit_graph::DISABLED);
                    Ok(ExitCode::SUCCESS)
                }
                Err(CommitGraphError::Source(SourceError::NoPack(path))) => {
                    let shown = super::shown_path(&repo, &path);
                    eprintln!("error: error adding pack {shown}");
                    Ok(ExitCode::from(1))
                }
                Err(CommitGraphError::Source(e)) => {
                    eprintln!("error: {e}");
                    Ok(ExitCode::from(1))
                }
                Err(e) => Err(e.into()),
            }
        }
    }
}
