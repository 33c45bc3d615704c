//! `sluice checkout [-f] [-b|-B <new-branch> | --orphan <new-branch> | --detach] [-t|--no-track]
//! [<branch>|<commit>]`: switch the work tree, index and HEAD to a branch or commit, making
//! the branch first where asked, as git's checkout does.

use super::Context;
use crate::progress::TerminalProgress;
use sluice_checkout::choose::{self, choose, Choice, Names, Restore};
use sluice_checkout::new_branch::{self, Asked, Tracking};
use sluice_checkout::report;
use sluice_checkout::revision::{move_head, HeadMoved, Resolved, RevisionError};
use sluice_checkout::{commit_tree, switch, CheckoutError, CheckoutOptions};
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
    if repo.work_tree().is_none() {
        return Err(CheckoutError::Bare.into());
    }
    if let Some(name) = &args.orphan {
        return orphan(&args, context, &repo, name);
    }
    let names = Names {
        target: args.target.as_deref(),
        more: &args.more,
        paths: &args.paths,
        detach: args.detach,
        new_branch: args.new_branch()?,
        ignore_other_worktrees: args.ignore_other_worktrees,
        guess: match super::either(args.guess, args.no_guess) {
            Some(given) => given,
            None => repo.config().get_bool("checkout.guess")?.unwrap_or(true),
        },
    };
    let (given, target) = match choose(&repo, names)? {
        Choice::Switch(given, target) => (given, target),
        Choice::Standing => {
            report_standing(&repo)?;
            return Ok(ExitCode::SUCCESS);
        }
        Choice::Restore(asked) => return restore_paths(&args, context, &repo, &asked),
    };
    if let Some(code) = switch_to(&args, context, &repo, &target)? {
        return Ok(code);
    }
    // git's `-b <name>` with no start point skips the switch, and so the list.
    if args.new_branch.is_none() || args.target.is_some() {
        list_local_changes(&args, &repo, &target.id)?;
    }
    if let Some(warning) = target.new_branch.as_ref().and_then(|b| b.warning.as_ref()) {
        eprintln!("warning: {warning}");
    }
    let moved = move_head(&repo, &target, &given)?;
    let upstream = (target.new_branch.as_ref()).and_then(|branch| branch.upstream.as_ref());
    if let (Some(up), false) = (upstream, args.quiet) {
        // git prints this line on standard output, once the branch is made.
        let name = target.branch.as_deref().unwrap_or_default();
        println!("{}", report::tracking_set_up(name, up));
    }
    if args.quiet {
        return Ok(ExitCode::SUCCESS);
    }
    eprint!(
        "{}",
        report::head_moved(&repo, &moved, (&given, args.detach))?
    );
    if let HeadMoved::Branch { name, .. } = &moved.to {
        report_standing_of(&repo, name)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `checkout [--] <pathspec>…`: git's words for pathspecs that match nothing (then nothing is
/// written, exit 1), and without `--` for how many files were written.
fn restore_paths(
    args: &CheckoutArgs,
    context: &Context,
    repo: &sluice_repo::Repository,
    asked: &Restore,
) -> anyhow::Result<ExitCode> {
    let mut options = CheckoutOptions::from_config(repo.config())?;
    options.write.cancel = context.cancel.clone();
    let progress = TerminalProgress::new(false);
    let done = choose::restore(repo, &context.cwd, asked, &options, &progress)?;
    for spec in &done.unmatched {
        eprintln!("error: pathspec '{spec}' did not match any file(s) known to git");
    }
    if !done.unmatched.is_empty() {
        return Ok(ExitCode::from(1));
    }
    if asked.counted && !args.quiet {
        eprintln!(
            "{}",
            report::restored(repo, done.written, asked.from.as_ref())
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--orphan <name> [<start>]`: the work tree and index switched to the start where one is
/// given, then `HEAD` names the unborn branch.
fn orphan(
    args: &CheckoutArgs,
    context: &Context,
    repo: &sluice_repo::Repository,
    name: &str,
) -> anyhow::Result<ExitCode> {
    let branch = new_branch::orphan(repo, name)?;
    let mut start = current_commit(repo);
    if let Some(given) = args.target.as_deref() {
        let target = choose::orphan_start(repo, given, name)?;
        if let Some(code) = switch_to(args, context, repo, &target)? {
            return Ok(code);
        }
        start = Some(target.id);
    }
    if let Some(start) = start {
        list_local_changes(args, repo, &start)?;
    }
    sluice_checkout::revision::orphan_head(repo, &branch)?;
    if !args.quiet {
        eprintln!("Switched to a new branch '{name}'");
    }
    Ok(ExitCode::SUCCESS)
}

/// The work tree and index switched to `target`'s tree; `Some(1)` where local changes stop
/// it, said in git's words.
fn switch_to(
    args: &CheckoutArgs,
    context: &Context,
    repo: &sluice_repo::Repository,
    target: &Resolved,
) -> anyhow::Result<Option<ExitCode>> {
    let tree = commit_tree(repo.objects(), &target.id)?;
    sluice_client::promised::fetch_blobs_of_tree(&context.cwd, repo, &tree)?;
    let mut options = CheckoutOptions::from_config(repo.config())?;
    options.write.cancel = context.cancel.clone();
    let show = !args.quiet && !args.no_progress;
    let progress =
        TerminalProgress::new(crate::progress::enabled(show, args.progress && !args.quiet));
    match switch(repo, &tree, args.force, &options, &progress) {
        Ok(_) => Ok(None),
        Err(e @ (CheckoutError::LocalChanges(_) | CheckoutError::Untracked { .. })) => {
            eprintln!("error: {e}");
            Ok(Some(ExitCode::from(1)))
        }
        Err(e) => Err(e.into()),
    }
}

/// The commit `HEAD` is at (none on an unborn branch).
fn current_commit(repo: &sluice_repo::Repository) -> Option<sluice_object::ObjectId> {
    repo.refs().resolve("HEAD").ok().and_then(|(_, id)| id)
}

/// What the switch to `commit` carried over, listed on standard output as git lists it after
/// a switch (`M\tb`), but not under `-q` or `-f` (which carries nothing over).
fn list_local_changes(
    args: &CheckoutArgs,
    repo: &sluice_repo::Repository,
    commit: &sluice_object::ObjectId,
) -> anyhow::Result<()> {
    if args.quiet || args.force {
        return Ok(());
    }
    let tree = commit_tree(repo.objects(), commit)?;
    let options = CheckoutOptions::from_config(repo.config())?;
    let fully = (repo.config().get_bool("core.quotepath")?).unwrap_or(true);
    for (status, path) in sluice_checkout::local_changes(repo, &tree, &options)? {
        println!("{status}\t{}", sluice_object::c_quote::path(&path, fully));
    }
    Ok(())
}

/// Where the branch `HEAD` is on stands against its upstream (`checkout` with no name).
fn report_standing(repo: &sluice_repo::Repository) -> anyhow::Result<()> {
    if let Ok((head, _)) = repo.refs().resolve("HEAD") {
        if let Some(branch) = head.strip_prefix("refs/heads/") {
            report_standing_of(repo, branch)?;
        }
    }
    Ok(())
}

/// Where `branch` stands against its upstream, as git says it on standard output.
fn report_standing_of(repo: &sluice_repo::Repository, branch: &str) -> anyhow::Result<()> {
    if let Some(upstream) = sluice_client::upstream::standing(repo, branch) {
        let hints = repo
            .config()
            .get_bool("advice.statushints")?
            .unwrap_or(true);
        print!("{}", upstream.report(hints));
    }
    Ok(())
}
