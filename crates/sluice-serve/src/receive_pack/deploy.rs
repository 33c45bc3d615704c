//! `receive.denyCurrentBranch=updateInstead`: a push to the branch a non-bare repository has
//! checked out moves its work tree and index too, as git's receive-pack does. The
//! `push-to-checkout` hook, when there is one, decides and does the update itself; otherwise
//! the work tree and index must hold the current commit exactly, and they are switched to the
//! pushed one (git's push-to-deploy). Each refusal is git's reason for the client.

use super::hooks::Hooks;
use sluice_checkout::{clean_state, commit_tree, switch, CheckoutOptions, CleanState};
use sluice_object::progress::Discard;
use sluice_object::ObjectId;
use sluice_repo::Repository;
use std::path::PathBuf;

/// Moves the work tree of `repo` to `new`, before its current branch moves there; `Err` holds
/// why not, in git's words.
pub(super) fn update_instead(
    repo: &Repository,
    hooks: &Hooks,
    new: &ObjectId,
) -> Result<(), &'static str> {
    let Some(work_tree) = work_tree_of(repo) else {
        return Err("denyCurrentBranch = updateInstead needs a worktree");
    };
    let git_dir = std::path::absolute(repo.git_dir()).unwrap_or(repo.git_dir().to_owned());
    let env = [
        (
            "GIT_WORK_TREE".to_owned(),
            work_tree.clone().into_os_string(),
        ),
        ("GIT_DIR".to_owned(), git_dir.clone().into_os_string()),
    ];
    let hex = new.to_string();
    if let Some(ran) = hooks.run_in(&work_tree, "push-to-checkout", &[&hex], b"", &env, None) {
        return match ran.success {
            true => Ok(()),
            false => Err("push-to-checkout hook declined"),
        };
    }
    // Opened with its work tree: receive-pack serves the repository as a git directory alone.
    let deployed = Repository::open_git_dir(git_dir, Some(work_tree))
        .map_err(|_| "Up-to-date check failed")?;
    let options =
        CheckoutOptions::of_repository(&deployed).map_err(|_| "Up-to-date check failed")?;
    let head = deployed.refs().resolve("HEAD").ok().and_then(|(_, id)| id);
    let objects = deployed.objects();
    let head_tree = match head {
        Some(commit) => Some(commit_tree(objects, &commit).map_err(|_| "Up-to-date check failed")?),
        None => None,
    };
    match clean_state(&deployed, head_tree.as_ref(), &options) {
        Ok(CleanState::Clean) => {}
        Ok(CleanState::UnstagedChanges) => return Err("Working directory has unstaged changes"),
        Ok(CleanState::StagedChanges) => return Err("Working directory has staged changes"),
        Err(_) => return Err("Up-to-date check failed"),
    }
    let tree =
        commit_tree(objects, new).map_err(|_| "Could not update working tree to new HEAD")?;
    switch(&deployed, &tree, false, &options, &Discard)
        .map(|_| ())
        .map_err(|_| "Could not update working tree to new HEAD")
}

/// The work tree of a repository served by its git directory: `core.worktree`, else the
/// directory around a `.git`.
fn work_tree_of(repo: &Repository) -> Option<PathBuf> {
    if let Some(tree) = repo.work_tree() {
        return Some(tree.to_owned());
    }
    if let Some(path) = repo.config().get_path("core.worktree") {
        return Some(repo.git_dir().join(path));
    }
    let git_dir = std::path::absolute(repo.git_dir()).ok()?;
    match git_dir.file_name() == Some(std::ffi::OsStr::new(".git")) {
        true => git_dir.parent().map(PathBuf::from),
        false => None,
    }
}
