//! `push --recurse-submodules`: which submodules hold commits that the history being pushed
//! refers to and that no remote of theirs has (git's `find_unpushed_submodules`), and the
//! order of a push that pushes them first.

use super::{PushError, PushOptions, PushedRef};
use sluice_graph::{walk_objects, ObjectFilter, WalkRequest};
use sluice_object::parse::parse_commit;
use sluice_object::progress::Discard;
use sluice_object::tree_diff::for_each_difference;
use sluice_object::{IdSet, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use sluice_repo::Repository;
use std::collections::BTreeMap;
use std::path::Path;

/// What a push does about submodules (`--recurse-submodules`, `push.recurseSubmodules`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecurseSubmodules {
    /// Nothing.
    #[default]
    No,
    /// Refuse the push while a submodule commit it needs is on no remote.
    Check,
    /// Push those submodules first.
    OnDemand,
    /// Push those submodules, and not the superproject.
    Only,
}

impl RecurseSubmodules {
    /// From the value of `option` (`recurse-submodules`, or the setting's key), with git's
    /// message, naming it, for one it does not know.
    pub fn parse(option: &str, mode: &str) -> Result<Self, super::PushError> {
        Ok(match mode.to_ascii_lowercase().as_str() {
            "check" => RecurseSubmodules::Check,
            "on-demand" => RecurseSubmodules::OnDemand,
            "only" => RecurseSubmodules::Only,
            "no" | "false" | "off" | "0" => RecurseSubmodules::No,
            _ => {
                let why = format!("bad {option} argument: {mode}");
                return Err(super::PushError::BadSetting(why));
            }
        })
    }
}

/// Runs the submodule part of a push before its refs are sent: checks, or pushes the
/// submodules that need it through `options.push_submodule` and checks again. `Ok(false)`
/// under `only`: the superproject's refs are not sent.
pub(crate) fn before_push(
    repo: &Repository,
    remote: Option<&str>,
    options: &PushOptions<'_>,
    refs: &[PushedRef],
) -> Result<bool, PushError> {
    let mode = options.recurse_submodules;
    // As git: a bare repository has no submodules checked out to look into.
    if mode == RecurseSubmodules::No || repo.work_tree().is_none() {
        return Ok(mode != RecurseSubmodules::Only);
    }
    let tips: Vec<ObjectId> = refs.iter().filter_map(|r| r.new).collect();
    if matches!(mode, RecurseSubmodules::OnDemand | RecurseSubmodules::Only) {
        for path in unpushed(repo, &tips, remote)? {
            let pushed = options.push_submodule.is_some_and(|push| push(&path));
            if !pushed {
                return Err(PushError::SubmodulePushFailed(path));
            }
        }
    }
    let check_again = mode == RecurseSubmodules::Check
        || (mode == RecurseSubmodules::OnDemand && !options.dry_run);
    if check_again {
        let left = unpushed(repo, &tips, remote)?;
        if !left.is_empty() {
            return Err(PushError::UnpushedSubmodules(left));
        }
    }
    Ok(mode != RecurseSubmodules::Only)
}

/// The paths of submodules whose commits, referred to by the history from `tips` that the
/// remote's tracking refs (`refs/remotes/<remote>/`) do not reach, no remote-tracking ref of
/// the submodule reaches. As git, a submodule not checked out, one lacking those commits, and
/// one with no remote-tracking refs at all are taken as pushed: nothing can be said of them.
pub(crate) fn unpushed(
    repo: &Repository,
    tips: &[ObjectId],
    remote: Option<&str>,
) -> Result<Vec<String>, PushError> {
    let Some(work_tree) = repo.work_tree() else {
        return Ok(Vec::new());
    };
    let hidden = match remote {
        Some(name) => refs_under(repo, &format!("refs/remotes/{name}/"))?,
        None => Vec::new(),
    };
    let odb = repo.objects();
    let mut changed: BTreeMap<String, Vec<ObjectId>> = BTreeMap::new();
    for commit in commits_between(odb, tips, &hidden)? {
        for (path, id) in changed_gitlinks(odb, &commit)? {
            let ids = changed.entry(path).or_default();
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let mut unpushed = Vec::new();
    for (path, commits) in changed {
        let Some(sub) = open_submodule(repo, work_tree, &path) else {
            continue;
        };
        if needs_pushing(&sub, &commits)? {
            unpushed.push(path);
        }
    }
    Ok(unpushed)
}

/// Whether the submodule lacks, on every remote-tracking ref, one of `commits` it has.
fn needs_pushing(sub: &Repository, commits: &[ObjectId]) -> Result<bool, PushError> {
    let odb = sub.objects();
    let have_all = (commits.iter()).all(|id| read_commit(odb, id).is_some());
    // Commits it has but no ref reaches are taken as missing, as git does.
    if !have_all || !commits_between(odb, commits, &refs_under(sub, "refs/")?)?.is_empty() {
        return Ok(false);
    }
    let remotes = refs_under(sub, "refs/remotes/")?;
    if remotes.is_empty() {
        return Ok(false);
    }
    Ok(!commits_between(odb, commits, &remotes)?.is_empty())
}

/// The values of the refs whose names start with `prefix`.
fn refs_under(repo: &Repository, prefix: &str) -> Result<Vec<ObjectId>, PushError> {
    Ok(repo
        .refs()
        .list()?
        .into_iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .map(|(_, id)| id)
        .collect())
}

/// The commits reachable from `tips` and not from `hidden` (`rev-list <tips> --not <hidden>`).
fn commits_between(
    odb: &ObjectDb,
    tips: &[ObjectId],
    hidden: &[ObjectId],
) -> Result<Vec<ObjectId>, PushError> {
    let request = WalkRequest {
        wants: tips,
        haves: hidden,
        shallow: &IdSet::default(),
        filter: ObjectFilter::TreeDepth(0),
        reach_memo: None,
        cores: sluice_graph::WalkCores::All,
        // A few commits of one branch: not worth stopping.
        missing: Default::default(),
        cancel: Default::default(),
    };
    let walked = walk_objects(odb, &request, &Discard)?;
    Ok((walked.objects.iter())
        .filter(|o| o.kind == ObjectKind::Commit)
        .map(|o| o.id)
        .collect())
}

/// The gitlinks `commit` changes, with their new commits, as git's combined diff sees them:
/// against its one parent, or for a merge those that differ from every parent; a root commit
/// changes none.
fn changed_gitlinks(
    odb: &ObjectDb,
    commit: &ObjectId,
) -> Result<Vec<(String, ObjectId)>, PushError> {
    let Some(parsed) = read_commit(odb, commit) else {
        return Ok(Vec::new());
    };
    let mut result: Option<Vec<(String, ObjectId)>> = None;
    for parent in &parsed.parents {
        let parent_tree = read_commit(odb, parent).map(|p| p.tree);
        let mut found = Vec::new();
        gitlinks_changed(
            odb,
            Some(&parsed.tree),
            parent_tree.as_ref(),
            "",
            &mut found,
        );
        result = Some(match result {
            None => found,
            Some(before) => before.into_iter().filter(|c| found.contains(c)).collect(),
        });
    }
    Ok(result.unwrap_or_default())
}

fn read_commit(odb: &ObjectDb, id: &ObjectId) -> Option<sluice_object::parse::Commit> {
    match odb.read(id) {
        Ok(Some((ObjectKind::Commit, data))) => parse_commit(id.kind(), &data).ok(),
        _ => None,
    }
}

/// Appends to `found` the gitlinks of tree `new` (under `prefix`) that `old` does not hold
/// with the same commit, descending into the subtrees that differ.
fn gitlinks_changed(
    odb: &ObjectDb,
    new: Option<&ObjectId>,
    old: Option<&ObjectId>,
    prefix: &str,
    found: &mut Vec<(String, ObjectId)>,
) {
    let read = |id: Option<&ObjectId>| match id.map(|id| odb.read(id)) {
        Some(Ok(Some((ObjectKind::Tree, data)))) => data,
        _ => Vec::new(),
    };
    if new.is_none() || new == old {
        return;
    }
    let (new_data, old_data) = (read(new), read(old));
    // A malformed tree just ends the look at it: the server's checks judge the push.
    let _ = for_each_difference(
        odb.hash(),
        &new_data,
        &old_data,
        |entry, before| {
            let path = format!("{prefix}{}", String::from_utf8_lossy(entry.name));
            if entry.is_gitlink() {
                found.push((path, entry.id));
            } else if entry.is_tree() {
                let old_tree = before.filter(|b| b.is_tree()).map(|b| b.id);
                gitlinks_changed(
                    odb,
                    Some(&entry.id),
                    old_tree.as_ref(),
                    &format!("{path}/"),
                    found,
                );
            }
            Ok(())
        },
        |_| (),
    );
}

/// The repository of the submodule at `path`: its checkout's `.git`, else the one git keeps
/// in `<git-dir>/modules/<path>`.
fn open_submodule(repo: &Repository, work_tree: &Path, path: &str) -> Option<Repository> {
    if let Ok(sub) = Repository::open_work_tree(&work_tree.join(path)) {
        return Some(sub);
    }
    let kept = repo.git_dir().join("modules").join(path);
    Repository::open_git_dir(kept.clone(), None)
        .ok()
        .filter(|_| kept.is_dir())
}
