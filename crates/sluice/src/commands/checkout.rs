//! `sluice checkout [-f] [-b|-B <new-branch> | --orphan <new-branch> | --detach] [-t|--no-track]
//! [<branch>|<commit>]`: switch the work tree, index and HEAD to a branch or commit, making
//! the branch first where asked, as git's checkout does.

use super::Context;
use crate::progress::TerminalProgress;
use anyhow::bail;
use sluice_checkout::new_branch::{self, Asked, Tracking};
use sluice_checkout::revision::{
    checkout_name, move_head, resolve, HeadMove, HeadMoved, Resolved, RevisionError,
};
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

/// What the command line asks to check out, or what was said instead.
enum Chosen {
    /// The name given (for the reflog) and what it resolved to (boxed: the other is small).
    Target(String, Box<Resolved>),
    /// Nothing to switch to: said, with this exit code.
    Said(ExitCode),
    /// Files to restore from the index, or from a commit's tree; `counted`: git says how
    /// many (without `--`).
    Paths {
        /// The pathspecs.
        specs: Vec<String>,
        /// Whether the count is said.
        counted: bool,
        /// The tree they come from (`None`: the index).
        from: Option<sluice_object::ObjectId>,
    },
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
    let (given, target) = match chosen(&args, &repo)? {
        Chosen::Target(given, target) => (given, target),
        Chosen::Said(code) => return Ok(code),
        Chosen::Paths {
            specs,
            counted,
            from,
        } => return restore_paths(&args, context, &repo, (&specs, counted, from)),
    };
    if let Some(code) = switch_to(&args, context, &repo, &target)? {
        return Ok(code);
    }
    if let Some(warning) = target.new_branch.as_ref().and_then(|b| b.warning.as_ref()) {
        eprintln!("warning: {warning}");
    }
    let moved = move_head(&repo, &target, &given)?;
    let upstream = (target.new_branch.as_ref()).and_then(|branch| branch.upstream.as_ref());
    if let (Some(up), false) = (upstream, args.quiet) {
        // git prints this line on standard output, once the branch is made.
        let rebasing = ["", " by rebasing"][usize::from(up.rebasing)];
        let name = target.branch.as_deref().unwrap_or_default();
        let name = name.trim_start_matches("refs/heads/");
        println!("branch '{name}' set up to track '{}'{rebasing}.", up.shown);
    }
    if args.quiet {
        return Ok(ExitCode::SUCCESS);
    }
    say_moved(&repo, moved, (&given, args.detach))?;
    Ok(ExitCode::SUCCESS)
}

/// What `args` ask to check out: the branch `-b`/`-B`/`--track` makes, the commit `--detach`
/// detaches at, or the branch or commit named (refused in git's words where it names
/// nothing); with no name at all, where the branch stands, as git says it.
fn chosen(args: &CheckoutArgs, repo: &sluice_repo::Repository) -> anyhow::Result<Chosen> {
    if !args.paths.is_empty() || !args.more.is_empty() {
        // `<tree-ish> [--] <pathspec>…` where the first names a commit (or `--` follows it),
        // else every name is a pathspec of the index.
        let tree = match &args.target {
            Some(name) if !args.paths.is_empty() || resolve(repo, name).is_ok() => {
                let named = sluice_repo::revision::resolve(repo, name)
                    .ok_or_else(|| anyhow::anyhow!("invalid reference: {name}"))?;
                Some(commit_tree(repo.objects(), &named.id)?)
            }
            _ => None,
        };
        let names = args.target.iter().filter(|_| tree.is_none());
        let specs = names.chain(&args.more).chain(&args.paths).cloned();
        return Ok(Chosen::Paths {
            specs: specs.collect(),
            counted: args.paths.is_empty(),
            from: tree,
        });
    }
    if let Some(asked) = args.new_branch()? {
        let target = new_branch::plan(repo, &asked)?;
        return Ok(Chosen::Target(asked.name, Box::new(target)));
    }
    let Some(name) = args.target.as_deref() else {
        if args.detach {
            let target = Box::new(detached_at(repo, "HEAD")?);
            return Ok(Chosen::Target("HEAD".to_owned(), target));
        }
        report_standing(repo)?;
        return Ok(Chosen::Said(ExitCode::SUCCESS));
    };
    if args.detach {
        return Ok(Chosen::Target(
            name.to_owned(),
            Box::new(detached_at(repo, name)?),
        ));
    }
    // `-` is git's `@{-1}`: where the last checkout came from, named as it was then.
    let resolved = checkout_name(repo, name).map(|given| {
        let target = resolve(repo, &given);
        (given, target)
    });
    match resolved {
        Some((given, Ok(target))) => Ok(Chosen::Target(given, Box::new(target))),
        Some((_, Err(e))) if !matches!(e, RevisionError::Invalid { .. }) => Err(e.into()),
        // What names no commit git takes as a path, restored from the index (naming no file,
        // refused there in git's words).
        _ => Ok(Chosen::Paths {
            specs: vec![name.to_owned()],
            counted: true,
            from: None,
        }),
    }
}

/// `checkout [--] <pathspec>…`: the index's version of the files written over the work
/// tree's; git's words for pathspecs that match nothing (then nothing is written, exit 1), and
/// without `--` for how many files were written.
fn restore_paths(
    args: &CheckoutArgs,
    context: &Context,
    repo: &sluice_repo::Repository,
    (specs, counted, from): (&[String], bool, Option<sluice_object::ObjectId>),
) -> anyhow::Result<ExitCode> {
    let prefix = prefix_of(repo, &context.cwd);
    let mut options = CheckoutOptions::from_config(repo.config())?;
    options.write.cancel = context.cancel.clone();
    let progress = TerminalProgress::new(false);
    let asked = (prefix.as_str(), specs);
    let done = match &from {
        Some(tree) => sluice_checkout::checkout_paths_from(repo, tree, asked, &options, &progress)?,
        None => sluice_checkout::checkout_paths(repo, asked, &options, &progress)?,
    };
    for spec in &done.unmatched {
        eprintln!("error: pathspec '{spec}' did not match any file(s) known to git");
    }
    if !done.unmatched.is_empty() {
        return Ok(ExitCode::from(1));
    }
    if counted && !args.quiet {
        let paths = ["paths", "path"][usize::from(done.written == 1)];
        let source = match &from {
            Some(tree) => sluice_repo::abbrev::abbreviate(repo, tree),
            None => "the index".to_owned(),
        };
        eprintln!("Updated {} {paths} from {source}", done.written);
    }
    Ok(ExitCode::SUCCESS)
}

/// Where `cwd` is below the top of the work tree (empty at the top), as git's pathspecs are
/// taken from.
fn prefix_of(repo: &sluice_repo::Repository, cwd: &std::path::Path) -> String {
    let top = repo.work_tree().unwrap_or(repo.git_dir());
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_owned());
    let top = std::fs::canonicalize(top).unwrap_or_else(|_| top.to_owned());
    let prefix = cwd.strip_prefix(&top).unwrap_or(std::path::Path::new(""));
    prefix.to_string_lossy().into_owned()
}

/// `--detach [<commit>]`: the commit, however it is named (a branch too).
fn detached_at(repo: &sluice_repo::Repository, name: &str) -> anyhow::Result<Resolved> {
    let id = sluice_repo::revision::resolve(repo, name)
        .and_then(|named| repo.objects().peel_to_commit(named.id));
    let Some(id) = id else {
        bail!("git checkout: --detach does not take a path argument '{name}'");
    };
    Ok(Resolved {
        id,
        branch: None,
        new_branch: None,
    })
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
    if let Some(start) = args.target.as_deref() {
        let target = detached_at(repo, start)?;
        if let Some(code) = switch_to(args, context, repo, &target)? {
            return Ok(code);
        }
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
        Err(e @ (CheckoutError::LocalChanges(_) | CheckoutError::Untracked(_))) => {
            eprintln!("error: {e}");
            Ok(Some(ExitCode::from(1)))
        }
        Err(e) => Err(e.into()),
    }
}

/// git's words for where `HEAD` went (and, on a branch, where it stands against its
/// upstream); `--detach` earns no advice.
fn say_moved(
    repo: &sluice_repo::Repository,
    moved: HeadMove,
    (given, detach): (&str, bool),
) -> anyhow::Result<()> {
    let abbrev = |id| sluice_repo::abbrev::abbreviate(repo, id);
    if let Some((id, subject)) = &moved.left {
        eprintln!("Previous HEAD position was {} {subject}", abbrev(id));
    }
    match &moved.to {
        HeadMoved::Branch {
            name,
            reset: true,
            already: true,
            ..
        } => eprintln!("Reset branch '{name}'"),
        HeadMoved::Branch {
            name, reset: true, ..
        } => eprintln!("Switched to and reset branch '{name}'"),
        HeadMoved::Branch {
            name,
            created: true,
            ..
        } => eprintln!("Switched to a new branch '{name}'"),
        HeadMoved::Branch {
            name,
            already: true,
            ..
        } => eprintln!("Already on '{name}'"),
        HeadMoved::Branch { name, .. } => eprintln!("Switched to branch '{name}'"),
        HeadMoved::Detached { id, subject } => {
            let advice = repo.config().get_bool("advice.detachedhead")?;
            if moved.was_on_branch && !detach && advice.unwrap_or(true) {
                eprint!("{}", detached_advice(given));
            }
            eprintln!("HEAD is now at {} {subject}", abbrev(id))
        }
    }
    if let HeadMoved::Branch { name, .. } = &moved.to {
        report_standing_of(repo, name)?;
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

/// git's advice on leaving a branch for a detached `HEAD` (`advice.detachedHead`), word for word
/// as git 2.39 and 2.47 print it.
pub(super) fn detached_advice(target: &str) -> String {
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
