//! `git checkout` as the command runs it: what its names ask for ([`crate::choose`]), the work
//! tree and index switched before `HEAD` moves (so that a refused switch leaves `HEAD` where
//! it was), and git's words around it, in git's order: the local changes carried over on
//! standard output, the branch's upstream, where `HEAD` went, where the branch stands.

use crate::choose::{self, choose, Choice, Names, Restore};
use crate::report;
use crate::revision::{move_head, orphan_head, HeadMoved, Resolved, RevisionError};
use crate::{commit_tree, local_changes, switch, CheckoutError, CheckoutOptions};
use sluice_object::cancel::Cancel;
use sluice_object::progress::{Discard, Progress};
use sluice_object::ObjectId;
use sluice_odb::ConfigError;
use sluice_repo::sparse::SparseCone;
use sluice_repo::Repository;
use std::path::Path;

/// Why the command stopped.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The checkout itself failed.
    #[error(transparent)]
    Checkout(#[from] CheckoutError),
    /// A name could not be resolved or `HEAD` could not be moved.
    #[error(transparent)]
    Revision(#[from] RevisionError),
    /// A setting has a value git refuses (kept in the chain of causes, where the command
    /// line finds it to say it as git does).
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// What the host was asked to do failed (the blobs a partial clone lacks).
    #[error(transparent)]
    Host(Box<dyn std::error::Error + Send + Sync>),
}

/// A checkout's command line, its options merged.
pub struct CheckoutRequest<'a> {
    /// The names, as git reads them.
    pub names: Names<'a>,
    /// `--orphan <name>`: the unborn branch, its start (if any) `names.target`.
    pub orphan: Option<&'a str>,
    /// `-f`: local changes are thrown away.
    pub force: bool,
    /// `-q`.
    pub quiet: bool,
    /// `-b <name>` with no start point: git skips the switch, and so the list of changes.
    pub new_branch_alone: bool,
    /// Where pathspecs are taken from.
    pub cwd: &'a Path,
    /// Stops the writing of files.
    pub cancel: Cancel,
}

/// What the command's host does for it: its words, and what needs a higher floor.
pub trait CheckoutHost {
    /// Text for standard output, as it is.
    fn out(&self, text: &str);

    /// Text for standard error, as it is.
    fn err(&self, text: &str);

    /// In a partial clone, fetches the blobs of the tree the repository lacks (only those
    /// inside the sparse checkout's cone, when there is one).
    fn fetch_missing_blobs(
        &self,
        repo: &Repository,
        wanted: (&ObjectId, Option<&SparseCone>),
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>>;

    /// Where the local branch `branch` stands against its upstream, as git says it; `None`
    /// without one.
    fn standing(&self, repo: &Repository, branch: &str) -> Result<Option<String>, ConfigError>;
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckedOut {
    /// Done.
    Done,
    /// Refused as git refuses it, said to the host (git's exit code 1): local changes in the
    /// way, or pathspecs that match nothing.
    Refused,
}

/// Runs `checkout` in `repo`; `progress` shows the switch.
pub fn run_checkout(
    repo: &Repository,
    request: CheckoutRequest<'_>,
    progress: &dyn Progress,
    host: &dyn CheckoutHost,
) -> Result<CheckedOut, CommandError> {
    if repo.work_tree().is_none() {
        return Err(CheckoutError::Bare.into());
    }
    let CheckoutRequest {
        names,
        orphan,
        force,
        quiet,
        new_branch_alone,
        cwd,
        cancel,
    } = request;
    let run = Run {
        repo,
        force,
        quiet,
        cwd,
        cancel,
        progress,
        host,
    };
    if let Some(name) = orphan {
        return run.orphan(name, names.target);
    }
    let detach = names.detach;
    let (given, target) = match choose(repo, names)? {
        Choice::Switch(given, target) => (given, target),
        Choice::Standing => {
            run.standing_of_head()?;
            return Ok(CheckedOut::Done);
        }
        Choice::Restore(asked) => return run.restore_paths(&asked),
    };
    if let Some(refused) = run.switch_to(&target)? {
        return Ok(refused);
    }
    if !new_branch_alone {
        run.list_local_changes(&target.id)?;
    }
    if let Some(warning) = target.new_branch.as_ref().and_then(|b| b.warning.as_ref()) {
        host.err(&format!("warning: {warning}\n"));
    }
    let moved = move_head(repo, &target, &given)?;
    let upstream = (target.new_branch.as_ref()).and_then(|branch| branch.upstream.as_ref());
    if let (Some(up), false) = (upstream, quiet) {
        // git prints this line on standard output, once the branch is made.
        let name = target.branch.as_deref().unwrap_or_default();
        host.out(&format!("{}\n", report::tracking_set_up(name, up)));
    }
    if quiet {
        return Ok(CheckedOut::Done);
    }
    host.err(&report::head_moved(repo, &moved, (&given, detach))?);
    if let HeadMoved::Branch { name, .. } = &moved.to {
        run.standing_of(name)?;
    }
    Ok(CheckedOut::Done)
}

/// One run of the command.
struct Run<'a> {
    repo: &'a Repository,
    force: bool,
    quiet: bool,
    cwd: &'a Path,
    cancel: Cancel,
    progress: &'a dyn Progress,
    host: &'a dyn CheckoutHost,
}

impl Run<'_> {
    /// `checkout [--] <pathspec>…`: git's words for pathspecs that match nothing (then
    /// nothing is written), and without `--` for how many files were written.
    fn restore_paths(&self, asked: &Restore) -> Result<CheckedOut, CommandError> {
        let options = self.options()?;
        let done = choose::restore(self.repo, self.cwd, asked, &options, &Discard)?;
        for spec in &done.unmatched {
            let line = format!("error: pathspec '{spec}' did not match any file(s) known to git\n");
            self.host.err(&line);
        }
        if !done.unmatched.is_empty() {
            return Ok(CheckedOut::Refused);
        }
        if asked.counted && !self.quiet {
            let said = report::restored(self.repo, done.written, asked.from.as_ref());
            self.host.err(&format!("{said}\n"));
        }
        Ok(CheckedOut::Done)
    }

    /// `--orphan <name> [<start>]`: the work tree and index switched to the start where one
    /// is given, then `HEAD` names the unborn branch.
    fn orphan(&self, name: &str, start_at: Option<&str>) -> Result<CheckedOut, CommandError> {
        let repo = self.repo;
        let branch = crate::new_branch::orphan(repo, name)?;
        let mut start = repo.refs().resolve("HEAD").ok().and_then(|(_, id)| id);
        if let Some(given) = start_at {
            let target = choose::orphan_start(repo, given, name)?;
            if let Some(refused) = self.switch_to(&target)? {
                return Ok(refused);
            }
            start = Some(target.id);
        }
        if let Some(start) = start {
            self.list_local_changes(&start)?;
        }
        orphan_head(repo, &branch)?;
        if !self.quiet {
            self.host
                .err(&format!("Switched to a new branch '{name}'\n"));
        }
        Ok(CheckedOut::Done)
    }

    /// The work tree and index switched to `target`'s tree; `Some(Refused)` where local
    /// changes stop it, said in git's words.
    fn switch_to(&self, target: &Resolved) -> Result<Option<CheckedOut>, CommandError> {
        let tree = commit_tree(self.repo.objects(), &target.id)?;
        // The sparse checkout's cone, read (and refused if it is no cone) before any fetch: a
        // restore of paths goes by the index's skip-worktree bits alone and needs none.
        let mut options = self.options()?;
        options.sparse = SparseCone::of(self.repo).map_err(CheckoutError::from)?;
        let wanted = (&tree, options.sparse.as_ref());
        (self.host.fetch_missing_blobs(self.repo, wanted)).map_err(CommandError::Host)?;
        match switch(self.repo, &tree, self.force, &options, self.progress) {
            Ok(_) => Ok(None),
            Err(e @ (CheckoutError::LocalChanges(_) | CheckoutError::Untracked { .. })) => {
                self.host.err(&format!("error: {e}\n"));
                Ok(Some(CheckedOut::Refused))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// What the switch to `commit` carried over, listed on standard output as git lists it
    /// after a switch (`M\tb`), but not under `-q` or `-f` (which carries nothing over).
    fn list_local_changes(&self, commit: &ObjectId) -> Result<(), CommandError> {
        if self.quiet || self.force {
            return Ok(());
        }
        let tree = commit_tree(self.repo.objects(), commit)?;
        let options = self.options()?;
        let fully = (self.repo.config().get_bool("core.quotepath")?).unwrap_or(true);
        for (status, path) in local_changes(self.repo, &tree, &options)? {
            let path = sluice_object::c_quote::path(&path, fully);
            self.host.out(&format!("{status}\t{path}\n"));
        }
        Ok(())
    }

    /// Where the branch `HEAD` is on stands against its upstream (`checkout` with no name).
    fn standing_of_head(&self) -> Result<(), CommandError> {
        if let Ok((head, _)) = self.repo.refs().resolve("HEAD") {
            if let Some(branch) = head.strip_prefix("refs/heads/") {
                self.standing_of(branch)?;
            }
        }
        Ok(())
    }

    /// Where `branch` stands against its upstream, as git says it on standard output.
    fn standing_of(&self, branch: &str) -> Result<(), CommandError> {
        if let Some(text) = self.host.standing(self.repo, branch)? {
            self.host.out(&text);
        }
        Ok(())
    }

    /// The checkout's settings, with the command's cancellation.
    fn options(&self) -> Result<CheckoutOptions, CommandError> {
        let mut options = CheckoutOptions::from_config(self.repo.config())?;
        options.write.cancel = self.cancel.clone();
        Ok(options)
    }
}
