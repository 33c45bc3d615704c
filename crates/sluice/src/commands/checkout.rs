//! `sluice checkout [-f] [-b|-B <new-branch> | --orphan <new-branch> | --detach] [-t|--no-track]
//! [<branch>|<commit>]`: switch the work tree, index and HEAD to a branch or commit, making
//! the branch first where asked, as git's checkout does.

use super::Context;
use crate::progress::TerminalProgress;
use sluice_checkout::choose::Names;
use sluice_checkout::command::{run_checkout, CheckedOut, CheckoutHost, CheckoutRequest};
use sluice_checkout::new_branch::{self, Asked, Tracking};
use sluice_checkout::revision::RevisionError;
use sluice_object::ObjectId;
use sluice_odb::ConfigError;
use sluice_repo::sparse::SparseCone;
use sluice_repo::Repository;
use std::process::ExitCode;

/// Arguments of `checkout`.
#[derive(Debug, clap::Args)]
pub struct CheckoutArgs {
    /// Throw away local changes.
    #[arg(short = 'f', long)]
    pub force: bool,
    /// Quiet: no messages, no progress.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Show progress even when stderr is not a terminal.
    #[arg(long, overrides_with = "no_progress")]
    pub progress: bool,
    /// Never show progress.
    #[arg(long, overrides_with = "progress")]
    pub no_progress: bool,
    /// Make the branch <new-branch> at the start point and check it out.
    #[arg(short = 'b', value_name = "new-branch", conflicts_with_all = ["reset_branch", "orphan"])]
    pub new_branch: Option<String>,
    /// As `-b`, but a branch of that name is reset to the start point.
    #[arg(short = 'B', value_name = "new-branch", conflicts_with = "orphan")]
    pub reset_branch: Option<String>,
    /// A new branch with no commit yet: `HEAD` names it, the work tree and index stay.
    #[arg(long, value_name = "new-branch")]
    pub orphan: Option<String>,
    /// Detach `HEAD` at the commit, even where it names a branch.
    #[arg(long, conflicts_with_all = ["new_branch", "reset_branch", "orphan"])]
    pub detach: bool,
    /// The new branch tracks its start point; alone, make the branch a remote's one names.
    #[arg(short = 't', long, overrides_with = "no_track")]
    pub track: bool,
    /// The new branch tracks nothing, whatever `branch.autoSetupMerge` says.
    #[arg(long, overrides_with = "track")]
    pub no_track: bool,
    /// Switch to a branch even where another worktree has it checked out.
    #[arg(long)]
    pub ignore_other_worktrees: bool,
    /// A name that is only a remote's branch makes a local branch there (`checkout.guess`).
    #[arg(long, overrides_with = "no_guess")]
    pub guess: bool,
    /// A name that is only a remote's branch is no branch to switch to.
    #[arg(long, overrides_with = "guess")]
    pub no_guess: bool,
    /// The branch or commit to check out (`-`: the one before the last checkout), or where
    /// the new branch starts; or, where it names neither, a file to restore from the index.
    #[arg(value_name = "branch|commit")]
    pub target: Option<String>,
    /// More files to restore from the index.
    #[arg(value_name = "pathspec")]
    pub more: Vec<String>,
    /// The files (or directories) to restore from the index, after `--`.
    #[arg(last = true, value_name = "pathspec")]
    pub paths: Vec<String>,
}

impl CheckoutArgs {
    fn tracking(&self) -> Tracking {
        match (self.track, self.no_track) {
            (true, _) => Tracking::Track,
            (_, true) => Tracking::NoTrack,
            _ => Tracking::Configured,
        }
    }

    /// The branch `-b`, `-B` or `--track` alone makes, as `-b`/`-B` would ask for it.
    fn new_branch(&self) -> Result<Option<Asked>, RevisionError> {
        let (name, reset) = match (&self.new_branch, &self.reset_branch) {
            (Some(name), _) => (name.clone(), false),
            (_, Some(name)) => (name.clone(), true),
            _ if self.track => {
                let start = self.target.as_deref().unwrap_or_default();
                (new_branch::tracked_name(start)?, false)
            }
            _ => return Ok(None),
        };
        Ok(Some(Asked {
            name,
            start: self.target.clone(),
            reset,
            tracking: self.tracking(),
        }))
    }
}

/// Runs `checkout`.
pub fn run(args: CheckoutArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let guess = match super::either(args.guess, args.no_guess) {
        Some(given) => given,
        None => repo.config().get_bool("checkout.guess")?.unwrap_or(true),
    };
    let request = CheckoutRequest {
        names: Names {
            target: args.target.as_deref(),
            more: &args.more,
            paths: &args.paths,
            detach: args.detach,
            new_branch: args.new_branch()?,
            ignore_other_worktrees: args.ignore_other_worktrees,
            guess,
        },
        orphan: args.orphan.as_deref(),
        force: args.force,
        quiet: args.quiet,
        new_branch_alone: args.new_branch.is_some() && args.target.is_none(),
        cwd: &context.cwd,
        cancel: context.cancel.clone(),
    };
    let show = !args.quiet && !args.no_progress;
    let progress =
        TerminalProgress::new(crate::progress::enabled(show, args.progress && !args.quiet));
    let host = Terminal { context };
    Ok(match run_checkout(&repo, request, &progress, &host)? {
        CheckedOut::Done => ExitCode::SUCCESS,
        CheckedOut::Refused => ExitCode::from(1),
    })
}

/// The checkout's words on standard output and error, and what it needs of the client: the
/// blobs a partial clone lacks, a branch's standing against its upstream.
struct Terminal<'a> {
    context: &'a Context,
}

impl CheckoutHost for Terminal<'_> {
    fn out(&self, text: &str) {
        print!("{text}");
    }

    fn err(&self, text: &str) {
        eprint!("{text}");
    }

    fn fetch_missing_blobs(
        &self,
        repo: &Repository,
        wanted: (&ObjectId, Option<&SparseCone>),
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        Ok(sluice_client::promised::fetch_blobs_of_tree(
            &self.context.cwd,
            repo,
            wanted,
            &self.context.cancel,
        )?)
    }

    fn standing(&self, repo: &Repository, branch: &str) -> Result<Option<String>, ConfigError> {
        let Some(upstream) = sluice_client::upstream::standing(repo, branch) else {
            return Ok(None);
        };
        let hints = repo.config().get_bool("advice.statushints")?;
        Ok(Some(upstream.report(hints.unwrap_or(true))))
    }
}
