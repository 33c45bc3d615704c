//! git's words after a checkout: where `HEAD` went, the advice on a detached `HEAD`, the
//! upstream a new branch got, and how many files were restored. Built here, beside what they
//! describe, so that checkout and clone say them alike; the caller prints them.

use crate::new_branch::NewUpstream;
use crate::revision::{HeadMove, HeadMoved};
use sluice_object::ObjectId;
use sluice_odb::ConfigError;
use sluice_repo::Repository;

/// What git says on standard error once `HEAD` moved: the commit a detached `HEAD` left, then
/// where it went, with the advice (`advice.detachedHead`) on leaving a branch for a detached
/// `HEAD` named `given`, unless `--detach` asked for it. Every line ends in a newline.
pub fn head_moved(
    repo: &Repository,
    moved: &HeadMove,
    (given, detach): (&str, bool),
) -> Result<String, ConfigError> {
    let abbrev = |id| sluice_repo::abbrev::abbreviate(repo, id);
    let mut text = String::new();
    if let Some((id, subject)) = &moved.left {
        text += &format!("Previous HEAD position was {} {subject}\n", abbrev(id));
    }
    let line = match &moved.to {
        HeadMoved::Branch {
            name,
            reset: true,
            already: true,
            ..
        } => format!("Reset branch '{name}'"),
        HeadMoved::Branch {
            name, reset: true, ..
        } => format!("Switched to and reset branch '{name}'"),
        HeadMoved::Branch {
            name,
            created: true,
            ..
        } => format!("Switched to a new branch '{name}'"),
        HeadMoved::Branch {
            name,
            already: true,
            ..
        } => format!("Already on '{name}'"),
        HeadMoved::Branch { name, .. } => format!("Switched to branch '{name}'"),
        HeadMoved::Detached { id, subject } => {
            if moved.was_on_branch && !detach && advises_detached(repo)? {
                text += &detached_advice(given);
            }
            format!("HEAD is now at {} {subject}", abbrev(id))
        }
    };
    Ok(text + &line + "\n")
}

/// Whether git gives its advice on a detached `HEAD` (`advice.detachedHead`, on by default).
pub fn advises_detached(repo: &Repository) -> Result<bool, ConfigError> {
    Ok((repo.config().get_bool("advice.detachedhead")?).unwrap_or(true))
}

/// git's advice on leaving a branch for a detached `HEAD` at `target`, word for word as git
/// 2.39 and 2.47 print it (after a checkout, and after a clone of a tag).
pub fn detached_advice(target: &str) -> String {
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

/// The line git prints on standard output once the branch `branch` (a full or short name) is
/// made with `upstream`.
pub fn tracking_set_up(branch: &str, upstream: &NewUpstream) -> String {
    let rebasing = ["", " by rebasing"][usize::from(upstream.rebasing)];
    let name = branch.trim_start_matches("refs/heads/");
    format!(
        "branch '{name}' set up to track '{}'{rebasing}.",
        upstream.shown
    )
}

/// git's count of the files a checkout of paths wrote, from a commit's tree (abbreviated) or
/// from the index.
pub fn restored(repo: &Repository, written: usize, from: Option<&ObjectId>) -> String {
    let paths = ["paths", "path"][usize::from(written == 1)];
    let source = match from {
        Some(tree) => sluice_repo::abbrev::abbreviate(repo, tree),
        None => "the index".to_owned(),
    };
    format!("Updated {written} {paths} from {source}")
}
