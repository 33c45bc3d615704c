//! The branch a checkout makes: `-b <name> [<start>]`, `-B` (made or reset), `--orphan`,
//! `--track` alone, and the guess from a remote's branch. What it starts at, whether it may be
//! made, and its upstream as `--track`/`--no-track` and `branch.autoSetupMerge` decide, as git's
//! checkout decides them. Nothing is written here: the branch is made once the work tree is
//! switched ([`crate::revision::move_head`]), so that a refused checkout leaves none.

use crate::revision::{Resolved, RevisionError};
use sluice_object::ObjectId;
use sluice_repo::refs::is_valid_ref_name;
use sluice_repo::{upstream, RefTarget, Repository};

/// `--track`, `--no-track` or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tracking {
    /// As `branch.autoSetupMerge` says.
    #[default]
    Configured,
    /// `--track`: whatever the start, where it is a branch.
    Track,
    /// `--no-track`.
    NoTrack,
}

/// A branch the checkout makes (or resets, `-B`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBranch {
    /// Its full name (`refs/heads/…`).
    pub name: String,
    /// Its start as given (its reflog says "Created from `<start>`", "Reset to `<start>`").
    pub start: String,
    /// `-B` on a branch that exists: its value before.
    pub reset_from: Option<ObjectId>,
    /// The upstream it gets.
    pub upstream: Option<NewUpstream>,
    /// `branch.autoSetupMerge=inherit` from a start with no upstream: git's warning.
    pub warning: Option<String>,
}

/// The upstream a new branch gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewUpstream {
    /// `branch.<name>.remote` (`.` for a branch of this repository).
    pub remote: String,
    /// `branch.<name>.merge`.
    pub merge: String,
    /// The name git says it tracks: `origin/side`, or the local branch's.
    pub shown: String,
    /// Whether `pull` rebases onto it (`branch.autoSetupRebase`): git says "by rebasing".
    pub rebasing: bool,
}

/// How `-b`/`-B` asked for the branch.
#[derive(Debug, Clone)]
pub struct Asked {
    /// The new branch's short name.
    pub name: String,
    /// Where it starts (`HEAD` when not given).
    pub start: Option<String>,
    /// `-B`: reset it where it exists.
    pub reset: bool,
    /// `--track`/`--no-track`.
    pub tracking: Tracking,
}

/// Plans the branch `asked` names: refused in git's words where the name is no branch name,
/// the branch exists (without `-B`) or the start is no commit.
pub fn plan(repo: &Repository, asked: &Asked) -> Result<Resolved, RevisionError> {
    let full = checked_name(repo, &asked.name)?;
    let existing = repo.refs().resolve(&full).ok().and_then(|(_, id)| id);
    if existing.is_some() && !asked.reset {
        return Err(RevisionError::BranchExists(asked.name.to_owned()));
    }
    let start = asked.start.as_deref().unwrap_or("HEAD");
    let not_a_commit = || RevisionError::NotACommitFor {
        start: start.to_owned(),
        name: asked.name.to_owned(),
    };
    let named = sluice_repo::revision::resolve(repo, start).ok_or_else(not_a_commit)?;
    let id = (repo.objects().peel_to_commit(named.id)).ok_or_else(not_a_commit)?;
    // As git's dwim: the ref the start names, followed through symbolic refs (`HEAD` on a
    // branch is that branch, for tracking).
    let start_ref = (repo.refs().dwim(start)?)
        .map(|(full, _)| repo.refs().resolve(&full).map_or(full, |(name, _)| name));
    let upstream = upstream_of(repo, asked, start_ref.as_deref())?;
    let inherits = upstream.is_none() && inherits(repo, asked);
    // git names a local branch by its short name here, anything else in full.
    let warning = (start_ref.filter(|_| inherits)).map(|start| {
        let start = start.strip_prefix("refs/heads/").unwrap_or(&start);
        format!("asked to inherit tracking from '{start}', but no remote is set")
    });
    Ok(Resolved {
        id,
        branch: Some(full.clone()),
        new_branch: Some(NewBranch {
            name: full,
            start: start.to_owned(),
            reset_from: existing,
            upstream,
            warning,
        }),
    })
}

/// `--orphan <name>`: an unborn branch `HEAD` will name; the work tree and index stay.
pub fn orphan(repo: &Repository, name: &str) -> Result<String, RevisionError> {
    let full = checked_name(repo, name)?;
    if repo
        .refs()
        .resolve(&full)
        .ok()
        .and_then(|(_, id)| id)
        .is_some()
    {
        return Err(RevisionError::BranchExists(name.to_owned()));
    }
    Ok(full)
}

/// The branch `--track <remote>/<branch>` alone makes: named after the remote's branch.
pub fn tracked_name(start: &str) -> Result<String, RevisionError> {
    let short = start
        .strip_prefix("refs/")
        .unwrap_or(start)
        .trim_start_matches("remotes/");
    match short.split_once('/') {
        Some((_, name)) if !name.is_empty() => Ok(name.to_owned()),
        _ => Err(RevisionError::MissingBranchName),
    }
}

/// Whether the upstream is to be inherited from the start (`branch.autoSetupMerge=inherit`,
/// no `--track`/`--no-track`).
fn inherits(repo: &Repository, asked: &Asked) -> bool {
    asked.tracking == Tracking::Configured
        && repo.config().get("branch.autosetupmerge") == Some("inherit")
}

/// `refs/heads/<name>`, where that is a valid branch name.
fn checked_name(repo: &Repository, name: &str) -> Result<String, RevisionError> {
    let full = format!("refs/heads/{name}");
    match is_valid_ref_name(&full) && name != "HEAD" && !name.starts_with('-') {
        true => Ok(full),
        false => Err(RevisionError::InvalidBranchName {
            name: name.to_owned(),
            hint: repo.config().get_bool("advice.refsyntax")?.unwrap_or(true),
        }),
    }
}

/// The upstream a branch made from `start_ref` gets, as git decides it: none with
/// `--no-track`; from a remote-tracking branch, the remote's branch it tracks (unless
/// `branch.autoSetupMerge` is `false`, or `simple` and the names differ); from a local branch,
/// that branch with `--track` or `always`, its own upstream with `inherit`.
fn upstream_of(
    repo: &Repository,
    asked: &Asked,
    start_ref: Option<&str>,
) -> Result<Option<NewUpstream>, RevisionError> {
    let config = repo.config();
    let setting = config.get("branch.autosetupmerge").unwrap_or("true");
    let setting = match asked.tracking {
        Tracking::NoTrack => return Ok(None),
        Tracking::Track => "always",
        Tracking::Configured => setting,
    };
    let Some(start_ref) = start_ref else {
        return Ok(None);
    };
    if let Some(short) = start_ref.strip_prefix("refs/remotes/") {
        let Some((remote, merge)) = remote_tracked(repo, start_ref) else {
            return Ok(None);
        };
        let same_name = merge.strip_prefix("refs/heads/") == Some(asked.name.as_str());
        return Ok(match setting {
            "false" | "inherit" => None,
            "simple" if !same_name => None,
            _ => Some(NewUpstream {
                merge,
                shown: short.to_owned(),
                rebasing: upstream::rebases(config, &remote),
                remote,
            }),
        });
    }
    let Some(local) = start_ref.strip_prefix("refs/heads/") else {
        return Ok(None);
    };
    Ok(match setting {
        "always" => Some(NewUpstream {
            remote: ".".to_owned(),
            merge: start_ref.to_owned(),
            shown: local.to_owned(),
            rebasing: upstream::rebases(config, "."),
        }),
        "inherit" => upstream::of(config, local).map(|(remote, merge)| NewUpstream {
            remote: remote.to_owned(),
            merge: merge.to_owned(),
            shown: upstream::upstream_ref(repo, local)
                .map_or_else(|| merge.to_owned(), |r| short_ref(&r).to_owned()),
            rebasing: upstream::rebases(config, remote),
        }),
        _ => None,
    })
}

/// The remote, and its ref, that the remote-tracking ref `tracking` is fetched from: the
/// first remote whose fetch refspecs map one of its refs there.
fn remote_tracked(repo: &Repository, tracking: &str) -> Option<(String, String)> {
    repo.config()
        .subsection_names("remote")
        .into_iter()
        .find_map(|remote| {
            let specs = upstream::fetch_specs(repo, &remote);
            let merge = (specs.iter().filter(|spec| !spec.negative)).find_map(|spec| match spec
                .is_exact()
            {
                true => (spec.dst.as_deref() == Some(tracking)).then(|| spec.src.clone()),
                false => spec.source_for(tracking),
            })?;
            Some((remote, merge))
        })
}

/// A ref's name as git shows it: without `refs/heads/` or `refs/remotes/`.
fn short_ref(name: &str) -> &str {
    name.strip_prefix("refs/heads/")
        .or_else(|| name.strip_prefix("refs/remotes/"))
        .unwrap_or(name)
}

/// Makes (or resets) `branch` at `id` once the work tree is switched: the ref (unchanged where
/// `-B` finds it there already), its reflog entry (and `HEAD`'s, where `HEAD` is on it), and
/// its upstream.
pub(crate) fn make(
    repo: &Repository,
    branch: &NewBranch,
    id: ObjectId,
    log: impl Fn(&str, (ObjectId, ObjectId), &str) -> Result<(), RevisionError>,
) -> Result<(), RevisionError> {
    let old = branch.reset_from.unwrap_or(repo.hash().null_id());
    let message = match branch.reset_from {
        Some(_) => format!("branch: Reset to {}", branch.start),
        None => format!("branch: Created from {}", branch.start),
    };
    if branch.reset_from != Some(id) {
        repo.refs().write(&branch.name, &RefTarget::Id(id))?;
        log(&branch.name, (old, id), &message)?;
    }
    // The branch `HEAD` is on: `HEAD`'s reflog has the reset too, changed or not, as git's.
    let head = repo.refs().read("HEAD")?;
    if head == Some(RefTarget::Symbolic(branch.name.clone())) {
        log("HEAD", (old, id), &message)?;
    }
    if let Some(up) = &branch.upstream {
        let mut config = repo.config_file()?;
        let name = branch.name.trim_start_matches("refs/heads/");
        upstream::record(&mut config, repo.config(), name, &up.remote, &up.merge)?;
        config.write()?;
    }
    Ok(())
}
