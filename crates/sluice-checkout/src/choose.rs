//! What the names on `git checkout`'s command line ask for: a branch or commit to switch to, a
//! branch to make first, files to restore from the index or from a commit, or nothing (then
//! git says where the branch stands). git decides it in this order: pathspecs after the first
//! name, then `-b`/`-B`/`--track`, then `--detach`, then a name that resolves, and last a name
//! that resolves to nothing, which is taken as a path.

use crate::new_branch::{self, Asked};
use crate::revision::{checkout_name, resolve, Resolved, RevisionError};
use crate::{commit_tree, CheckoutError, CheckoutOptions, PathsChecked};
use sluice_object::progress::Progress;
use sluice_object::ObjectId;
use sluice_repo::Repository;
use std::path::Path;

/// The names of a checkout's command line, as git's checkout reads them.
#[derive(Debug, Default)]
pub struct Names<'a> {
    /// The first name: a branch or commit, or where a new branch starts, or a path.
    pub target: Option<&'a str>,
    /// More names after it (pathspecs, without `--`).
    pub more: &'a [String],
    /// The pathspecs after `--`.
    pub paths: &'a [String],
    /// `--detach`.
    pub detach: bool,
    /// The branch `-b`, `-B` or `--track` alone makes.
    pub new_branch: Option<Asked>,
    /// Switch to a branch another worktree has checked out (`--ignore-other-worktrees`).
    pub ignore_other_worktrees: bool,
    /// A name that is only a remote's branch makes a local one there (`--[no-]guess`,
    /// `checkout.guess`).
    pub guess: bool,
}

/// What a checkout's names ask for.
pub enum Choice {
    /// Switch to a branch or commit: the name given (for the reflog) and what it resolved to
    /// (boxed: the others are small).
    Switch(String, Box<Resolved>),
    /// No name: nothing to switch to; git says where the branch `HEAD` is on stands.
    Standing,
    /// Files to restore.
    Restore(Restore),
}

/// Files to restore from the index, or from a commit's tree.
#[derive(Debug)]
pub struct Restore {
    /// The pathspecs.
    pub specs: Vec<String>,
    /// Whether git says how many files were written (it does without `--`).
    pub counted: bool,
    /// The tree they come from (`None`: the index).
    pub from: Option<ObjectId>,
}

/// What `names` ask to check out in `repo`; a name of no commit (with `--detach`, or before
/// `--`) is refused in git's words.
pub fn choose(repo: &Repository, names: Names<'_>) -> Result<Choice, CheckoutError> {
    if !names.paths.is_empty() || !names.more.is_empty() {
        return Ok(Choice::Restore(restore_of(repo, &names)?));
    }
    let guarded = !names.ignore_other_worktrees;
    if let Some(asked) = names.new_branch {
        // `-B` resets a branch: not one another worktree is on.
        if asked.reset && guarded {
            refuse_if_used_elsewhere(repo, &format!("refs/heads/{}", asked.name))?;
        }
        let target = new_branch::plan(repo, &asked).map_err(revision)?;
        return Ok(Choice::Switch(asked.name, Box::new(target)));
    }
    let Some(name) = names.target else {
        if names.detach {
            let target = Box::new(detached_at(repo, "HEAD")?);
            return Ok(Choice::Switch("HEAD".to_owned(), target));
        }
        return Ok(Choice::Standing);
    };
    if names.detach {
        let target = Box::new(detached_at(repo, name)?);
        return Ok(Choice::Switch(name.to_owned(), target));
    }
    // `-` is git's `@{-1}`: where the last checkout came from, named as it was then.
    let resolved = checkout_name(repo, name).map(|given| {
        let target = resolve(repo, &given, names.guess);
        (given, target)
    });
    match resolved {
        Some((given, Ok(target))) => {
            if let (Some(branch), true) = (&target.branch, guarded) {
                refuse_if_used_elsewhere(repo, branch)?;
            }
            Ok(Choice::Switch(given, Box::new(target)))
        }
        Some((_, Err(e))) if !matches!(e, RevisionError::Invalid { .. }) => Err(revision(e)),
        // What names no commit git takes as a path, restored from the index (naming no file,
        // refused there in git's words).
        _ => Ok(Choice::Restore(Restore {
            specs: vec![name.to_owned()],
            counted: true,
            from: None,
        })),
    }
}

/// Refuses `branch` (a full name) where another worktree, not bare, has it checked out.
fn refuse_if_used_elsewhere(repo: &Repository, branch: &str) -> Result<(), CheckoutError> {
    let worktrees = repo.worktrees().map_err(|e| revision(e.into()))?;
    let same = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let here = same(repo.git_dir());
    for worktree in worktrees {
        if same(worktree.git_dir()) == here || worktree.branch().as_deref() != Some(branch) {
            continue;
        }
        if let Some(work_tree) = worktree.work_tree() {
            return Err(CheckoutError::UsedByWorktree {
                branch: branch.trim_start_matches("refs/heads/").to_owned(),
                work_tree,
            });
        }
    }
    Ok(())
}

/// `<tree-ish> [--] <pathspec>…` where the first name resolves (or `--` follows it); else every
/// name is a pathspec of the index.
fn restore_of(repo: &Repository, names: &Names<'_>) -> Result<Restore, CheckoutError> {
    let tree = match names.target {
        Some(name) if !names.paths.is_empty() || resolve(repo, name, names.guess).is_ok() => {
            let named = sluice_repo::revision::resolve(repo, name).ok_or_else(|| {
                revision(RevisionError::Invalid {
                    name: name.to_owned(),
                })
            })?;
            Some(commit_tree(repo.objects(), &named.id)?)
        }
        _ => None,
    };
    let first = names.target.filter(|_| tree.is_none()).map(str::to_owned);
    let specs = first.into_iter().chain(names.more.iter().cloned());
    Ok(Restore {
        specs: specs.chain(names.paths.iter().cloned()).collect(),
        counted: names.paths.is_empty(),
        from: tree,
    })
}

/// `--detach [<commit>]` (and `--orphan <name> <start>`): the commit, however it is named (a
/// branch too).
pub fn detached_at(repo: &Repository, name: &str) -> Result<Resolved, CheckoutError> {
    let id = sluice_repo::revision::resolve(repo, name)
        .and_then(|named| repo.objects().peel_to_commit(named.id));
    let Some(id) = id else {
        return Err(revision(RevisionError::DetachPath(name.to_owned())));
    };
    Ok(Resolved {
        id,
        branch: None,
        new_branch: None,
    })
}

/// The commit `--orphan <branch> <start>` starts the work tree at; a name of no commit is
/// refused as git refuses a new branch's start.
pub fn orphan_start(
    repo: &Repository,
    start: &str,
    branch: &str,
) -> Result<Resolved, CheckoutError> {
    detached_at(repo, start).map_err(|e| match e {
        CheckoutError::Revision(why) if matches!(*why, RevisionError::DetachPath(_)) => {
            revision(RevisionError::NotACommitFor {
                start: start.to_owned(),
                name: branch.to_owned(),
            })
        }
        e => e,
    })
}

/// Restores the files `restore` names, each pathspec taken from `cwd` (below the top of the
/// work tree, as git's are): all of them, or none where one matches nothing.
pub fn restore(
    repo: &Repository,
    cwd: &Path,
    restore: &Restore,
    options: &CheckoutOptions,
    progress: &dyn Progress,
) -> Result<PathsChecked, CheckoutError> {
    let prefix = prefix_of(repo, cwd);
    let asked = (prefix.as_str(), restore.specs.as_slice());
    match &restore.from {
        Some(tree) => crate::checkout_paths_from(repo, tree, asked, options, progress),
        None => crate::checkout_paths(repo, asked, options, progress),
    }
}

/// Where `cwd` is below the top of the work tree (empty at the top), as git's pathspecs are
/// taken from.
fn prefix_of(repo: &Repository, cwd: &Path) -> String {
    let top = repo.work_tree().unwrap_or(repo.git_dir());
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_owned());
    let top = std::fs::canonicalize(top).unwrap_or_else(|_| top.to_owned());
    let prefix = cwd.strip_prefix(&top).unwrap_or(Path::new(""));
    prefix.to_string_lossy().into_owned()
}

fn revision(e: RevisionError) -> CheckoutError {
    CheckoutError::Revision(Box::new(e))
}
