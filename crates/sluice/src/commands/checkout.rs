//! `sluice checkout [-f] <commit>`: switch the work tree, index and HEAD to a branch or commit.

use super::Context;
use crate::progress::TerminalProgress;
use anyhow::bail;
use sluice_checkout::revision::{checkout_name, move_head, resolve, HeadMoved, RevisionError};
use sluice_checkout::{commit_tree, switch, CheckoutError, CheckoutOptions};
use sluice_client::upstream::{Standing, Upstream};
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
    /// The branch or commit to check out (`-`: the one before the last checkout).
    #[arg(value_name = "branch|commit")]
    pub target: String,
}

/// Runs `checkout`.
pub fn run(args: CheckoutArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    if repo.work_tree().is_none() {
        return Err(CheckoutError::Bare.into());
    }
    // `-` is git's `@{-1}`: where the last checkout came from, named as it was then.
    let resolved = checkout_name(&repo, &args.target).map(|given| {
        let target = resolve(&repo, &given);
        (given, target)
    });
    let (given, target) = match resolved {
        Some((given, Ok(target))) => (given, target),
        Some((_, Err(e))) if !matches!(e, RevisionError::Invalid { .. }) => return Err(e.into()),
        // What names no commit git takes as a path: it checks out files, which Sluice does
        // not, and says so in git's words when no file has that name.
        _ if sluice_checkout::names_a_path(&repo, &args.target)? => {
            bail!(
                "'{}' is a path: sluice checkout switches branches and commits only",
                args.target
            )
        }
        _ => {
            let name = &args.target;
            eprintln!("error: pathspec '{name}' did not match any file(s) known to git");
            return Ok(ExitCode::from(1));
        }
    };
    let tree = commit_tree(repo.objects(), &target.id)?;
    sluice_client::promised::fetch_blobs_of_tree(&context.cwd, &repo, &tree)?;
    let mut options = CheckoutOptions::from_config(repo.config())?;
    options.write.cancel = context.cancel.clone();
    let show = !args.quiet && !args.no_progress;
    let progress =
        TerminalProgress::new(crate::progress::enabled(show, args.progress && !args.quiet));
    match switch(&repo, &tree, args.force, &options, &progress) {
        Ok(_) => {}
        Err(e @ (CheckoutError::LocalChanges(_) | CheckoutError::Untracked(_))) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(1));
        }
        Err(e) => return Err(e.into()),
    }
    let moved = move_head(&repo, &target, &given)?;
    if let (Some(from), false) = (&target.created_from, args.quiet) {
        // git prints this line on standard output, once the branch is made.
        let rebasing = ["", " by rebasing"][usize::from(from.rebasing)];
        println!(
            "branch '{given}' set up to track '{}/{given}'{rebasing}.",
            from.remote
        );
    }
    if args.quiet {
        return Ok(ExitCode::SUCCESS);
    }
    let abbrev = |id| sluice_repo::abbrev::abbreviate(&repo, id);
    let branch = match &moved.to {
        HeadMoved::Branch { name, .. } => Some(name.clone()),
        HeadMoved::Detached { .. } => None,
    };
    if let Some((id, subject)) = &moved.left {
        eprintln!("Previous HEAD position was {} {subject}", abbrev(id));
    }
    match moved.to {
        HeadMoved::Branch {
            name,
            created: true,
            ..
        } => {
            eprintln!("Switched to a new branch '{name}'")
        }
        HeadMoved::Branch {
            name,
            already: true,
            ..
        } => eprintln!("Already on '{name}'"),
        HeadMoved::Branch { name, .. } => eprintln!("Switched to branch '{name}'"),
        HeadMoved::Detached { id, subject } => {
            let advice = repo.config().get_bool("advice.detachedhead")?;
            if moved.was_on_branch && advice.unwrap_or(true) {
                eprint!("{}", detached_advice(&given));
            }
            eprintln!("HEAD is now at {} {subject}", abbrev(&id))
        }
    }
    if let Some(branch) = branch {
        if let Some(upstream) = sluice_client::upstream::standing(&repo, &branch) {
            let hints = repo
                .config()
                .get_bool("advice.statushints")?
                .unwrap_or(true);
            // git prints it on standard output.
            print!("{}", standing_report(&upstream, hints));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// git's words for where a branch stands against its upstream, with the hints of
/// `advice.statusHints` (the diverged one as git 2.47 words it).
fn standing_report(upstream: &Upstream, hints: bool) -> String {
    let base = &upstream.shown;
    let commits = |n: usize| if n == 1 { "commit" } else { "commits" };
    let (report, hint) = match upstream.standing {
        Standing::Gone => (
            format!("Your branch is based on '{base}', but the upstream is gone.\n"),
            "  (use \"git branch --unset-upstream\" to fixup)\n",
        ),
        Standing::UpToDate => (format!("Your branch is up to date with '{base}'.\n"), ""),
        Standing::Ahead(n) => (
            format!("Your branch is ahead of '{base}' by {n} {}.\n", commits(n)),
            "  (use \"git push\" to publish your local commits)\n",
        ),
        Standing::Behind(n) => (
            format!(
                "Your branch is behind '{base}' by {n} {}, and can be fast-forwarded.\n",
                commits(n)
            ),
            "  (use \"git pull\" to update your local branch)\n",
        ),
        Standing::Diverged(ours, theirs) => (
            format!(
                "Your branch and '{base}' have diverged,\nand have {ours} and {theirs} different {} each, respectively.\n",
                commits(ours + theirs)
            ),
            "  (use \"git pull\" if you want to integrate the remote branch with yours)\n",
        ),
    };
    match hints {
        true => report + hint,
        false => report,
    }
}

/// git's advice on leaving a branch for a detached `HEAD` (`advice.detachedHead`), word for word
/// as git 2.39 and 2.47 print it.
fn detached_advice(target: &str) -> String {
    format!(
        "Note: switching to '{target}'.

You are in 'detached HEAD' state. You can look around, make experimental
changes and commit them, and you can discard any commits you make in this
state without impacting any branches by switching back to a branch.

If you want to create a new branch to retain commits you create, you may
do so (now or later) by using -c with the switch command. Example:

  git switch -c <new-branch-name>

Or undo this operation with:

  git switch -

Turn off this advice by setting config variable advice.detachedHead to false

"
    )
}
