//! Naming commits as git does for the commands Sluice has: a branch, a tag, a remote-tracking
//! branch, a full ref name, `HEAD`, or a full object id, each optionally followed by `~<n>`
//! and `^<n>` steps.

use crate::new_branch::{Asked, NewBranch, Tracking};
use sluice_object::ObjectId;
use sluice_odb::ConfigError;
use sluice_repo::{RefError, RefTarget, Repository};

/// Why a name names nothing here.
#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
    /// No ref, remote-tracking branch or object has that name.
    #[error("invalid reference: {name}")]
    Invalid {
        /// The name.
        name: String,
    },
    /// The name is a tree (or a tag of one): `HEAD` holds commits only.
    #[error("Cannot switch branch to a non-commit '{name}'")]
    NotACommit {
        /// The name.
        name: String,
    },
    /// The name is a blob (or a tag of one), which git reads as a tree it cannot read.
    #[error("unable to read tree ({id})")]
    NotATree {
        /// The blob.
        id: ObjectId,
    },
    /// `-b` of a branch that exists.
    #[error("a branch named '{0}' already exists")]
    BranchExists(String),
    /// `-b` of a name that is no branch name (git 2.47 adds its hints, unless
    /// `advice.refSyntax` is off).
    #[error("'{name}' is not a valid branch name{}", match hint {
        true => "\nhint: See `man git check-ref-format`\nhint: Disable this message with \"git config advice.refSyntax false\"",
        false => "",
    })]
    InvalidBranchName {
        /// The name.
        name: String,
        /// Whether git's hints follow.
        hint: bool,
    },
    /// `-b` from a start that is no commit.
    #[error("'{start}' is not a commit and a branch '{name}' cannot be created from it")]
    NotACommitFor {
        /// The start.
        start: String,
        /// The branch.
        name: String,
    },
    /// `--detach` (or `--orphan`) from a name of no commit: git takes it for a path.
    #[error("git checkout: --detach does not take a path argument '{0}'")]
    DetachPath(String),
    /// `--track` alone from a start no branch name can be taken from.
    #[error("missing branch name; try -b")]
    MissingBranchName,
    /// The refs could not be read, or the new branch written.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// The new branch's upstream could not be configured.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// What a name resolved to.
pub struct Resolved {
    /// The object.
    pub id: ObjectId,
    /// The local branch it names (`refs/heads/…`), if it names one.
    pub branch: Option<String>,
    /// The branch the checkout makes there (once the work tree is switched).
    pub new_branch: Option<NewBranch>,
}

/// Resolves `name` as git's checkout does (a local branch by its short name; a remote's branch
/// by its name alone, which becomes a local branch, unless `guess` is off (`--no-guess`,
/// `checkout.guess`); any other revision detaches `HEAD`), to
/// a commit: an annotated tag is peeled, a tree or blob refused, so that `HEAD` and branches
/// only ever hold commits.
pub fn resolve(repo: &Repository, name: &str, guess: bool) -> Result<Resolved, RevisionError> {
    let mut resolved = resolve_any(repo, name, guess)?;
    resolved.id = match repo.objects().peel_to_commit(resolved.id) {
        Some(commit) => commit,
        None => {
            let peeled = repo.objects().peel_tags(resolved.id).unwrap_or(resolved.id);
            return Err(match repo.objects().read(&peeled).ok().flatten() {
                Some((sluice_object::ObjectKind::Blob, _)) => {
                    RevisionError::NotATree { id: peeled }
                }
                _ => RevisionError::NotACommit {
                    name: name.to_owned(),
                },
            });
        }
    };
    Ok(resolved)
}

/// What `name` names, peeled or not.
fn resolve_any(repo: &Repository, name: &str, guess: bool) -> Result<Resolved, RevisionError> {
    if let Some((candidate, id)) = repo.refs().dwim(name)? {
        // A branch given by its short name is checked out as that branch.
        let branch = candidate
            .strip_prefix("refs/heads/")
            .map(|_| candidate.clone());
        return Ok(Resolved {
            id,
            branch,
            new_branch: None,
        });
    }
    if guess {
        if let Some(resolved) = guess_remote_branch(repo, name)? {
            return Ok(resolved);
        }
    }
    // Any other commit-ish (`main~1`, `v1.0^2`, a full id) detaches `HEAD` there.
    if let Some(named) = sluice_repo::revision::resolve(repo, name) {
        return Ok(Resolved {
            id: named.id,
            branch: None,
            new_branch: None,
        });
    }
    Err(RevisionError::Invalid {
        name: name.to_owned(),
    })
}

/// The name checkout works with for `target`: for `-` (git's `@{-1}`) and `@{-<n>}`, the
/// branch (by its short name) or the commit `HEAD` was on before the n-th last checkout, as
/// the one resolver reads `HEAD`'s reflog; `None` when there was none. Any other target is
/// itself.
pub fn checkout_name(repo: &Repository, target: &str) -> Option<String> {
    let back = match target {
        "-" => "1",
        _ => match (target.strip_prefix("@{-")).and_then(|rest| rest.strip_suffix('}')) {
            Some(back) => back,
            None => return Some(target.to_owned()),
        },
    };
    previous_checkout(repo, back)
}

/// What `@{-<back>}` names: a branch by its short name, or a commit's id.
fn previous_checkout(repo: &Repository, back: &str) -> Option<String> {
    let named = sluice_repo::revision::resolve(repo, &format!("@{{-{back}}}"))?;
    Some(match named.ref_name {
        Some(branch) => branch.trim_start_matches("refs/heads/").to_owned(),
        None => named.id.to_string(),
    })
}

/// git's checkout guess: `<name>` that is no ref but exactly one remote's `<remote>/<name>`
/// becomes a new local branch there, tracking it.
fn guess_remote_branch(repo: &Repository, name: &str) -> Result<Option<Resolved>, RevisionError> {
    if name.starts_with("refs/")
        || !sluice_repo::refs::is_valid_ref_name(&format!("refs/heads/{name}"))
    {
        return Ok(None);
    }
    let matches: Vec<(String, ObjectId)> = repo
        .refs()
        .list()?
        .into_iter()
        .filter(|(r, _)| {
            r.strip_prefix("refs/remotes/")
                .and_then(|rest| rest.split_once('/'))
                .is_some_and(|(_, branch)| branch == name)
        })
        .collect();
    let [(remote_ref, _)] = matches.as_slice() else {
        return Ok(None);
    };
    // As `-b <name> <remote>/<name>` (the upstream as `branch.autoSetupMerge` says), the
    // reflog naming the remote-tracking ref in full.
    let asked = Asked {
        name: name.to_owned(),
        start: Some(remote_ref.clone()),
        reset: false,
        tracking: Tracking::Configured,
    };
    Ok(Some(crate::new_branch::plan(repo, &asked)?))
}

/// Where `HEAD` went, for the message git prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadMoved {
    /// Onto a local branch (its short name): new (just created), the one it was on, or another.
    Branch {
        /// The branch's short name.
        name: String,
        /// It was just made.
        created: bool,
        /// It was reset (`-B`).
        reset: bool,
        /// `HEAD` was on it already.
        already: bool,
    },
    /// Detached at a commit, with its subject line.
    Detached {
        /// The commit.
        id: ObjectId,
        /// Its subject.
        subject: String,
    },
}

/// How `HEAD` moved, for git's messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadMove {
    /// Where it went.
    pub to: HeadMoved,
    /// The commit a detached `HEAD` left for another one, with its subject (git: "Previous HEAD
    /// position was …").
    pub left: Option<(ObjectId, String)>,
    /// It was on a branch before (detaching it earns git's advice).
    pub was_on_branch: bool,
}

/// Points `HEAD` at `target` after its tree was checked out (making the branch first where
/// the checkout creates one), with git's reflog entry (`checkout: moving from <old> to
/// <given>`), `given` being the name on the command line.
pub fn move_head(
    repo: &Repository,
    target: &Resolved,
    given: &str,
) -> Result<HeadMove, RevisionError> {
    let refs = repo.refs();
    let (head_ref, head_id) = refs.resolve("HEAD")?;
    let old = head_id.unwrap_or(repo.hash().null_id());
    let was_on_branch = head_ref.starts_with("refs/heads/");
    let left = (!was_on_branch && head_id.is_some_and(|id| id != target.id))
        .then(|| (old, subject(repo, &old)));
    let from = head_ref
        .strip_prefix("refs/heads/")
        .map_or_else(|| old.to_string(), str::to_owned);
    if let Some(branch) = &target.new_branch {
        let log = |name: &str, ids, message: &str| log_update(repo, name, ids, message);
        crate::new_branch::make(repo, branch, target.id, log)?;
    }
    let (new_head, to, moved) = match &target.branch {
        Some(branch) => {
            let name = branch.trim_start_matches("refs/heads/").to_owned();
            let new_branch = target.new_branch.as_ref();
            let moved = HeadMoved::Branch {
                name: name.clone(),
                created: new_branch.is_some_and(|b| b.reset_from.is_none()),
                reset: new_branch.is_some_and(|b| b.reset_from.is_some()),
                already: head_ref == *branch,
            };
            (RefTarget::Symbolic(branch.clone()), name, moved)
        }
        None => {
            let subject = subject(repo, &target.id);
            let moved = HeadMoved::Detached {
                id: target.id,
                subject,
            };
            (RefTarget::Id(target.id), given.to_owned(), moved)
        }
    };
    refs.write("HEAD", &new_head)?;
    let moving = format!("checkout: moving from {from} to {to}");
    log_update(repo, "HEAD", (old, target.id), &moving)?;
    Ok(HeadMove {
        to: moved,
        left,
        was_on_branch,
    })
}

/// Points `HEAD` at the unborn branch `branch` (`--orphan`), as git: no reflog entry.
pub fn orphan_head(repo: &Repository, branch: &str) -> Result<(), RevisionError> {
    repo.refs()
        .write("HEAD", &RefTarget::Symbolic(branch.to_owned()))?;
    Ok(())
}

/// Logs the update of `name` from `old` to `new` where `core.logAllRefUpdates` asks for it. As
/// git, a reflog that cannot be written does not undo what was done.
fn log_update(
    repo: &Repository,
    name: &str,
    (old, new): (ObjectId, ObjectId),
    message: &str,
) -> Result<(), RevisionError> {
    let bare = repo.work_tree().is_none();
    let policy = sluice_repo::refs::reflog::LogRefs::from_config(repo.config(), bare)?;
    if repo.refs().logs(policy, name) {
        let who = sluice_repo::refs::reflog_identity(repo.config());
        let _ = repo.refs().append_log(name, &old, &new, &who, message);
    }
    Ok(())
}

/// A commit's subject: the first line of its message.
fn subject(repo: &Repository, id: &ObjectId) -> String {
    let Ok(Some((_, data))) = repo.objects().read(id) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&data);
    text.split_once("\n\n")
        .and_then(|(_, body)| body.lines().next())
        .unwrap_or("")
        .to_owned()
}
