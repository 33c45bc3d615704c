//! What a fetch "on demand" needs of a superproject's submodules: the commits the fetch
//! brought, and the submodule commits they record (where submodules live, their names, URLs
//! and activity: [`crate::registry`]).

use sluice_object::{IdMap, ObjectId};
use sluice_repo::Repository;

/// The commits a fetch brought: those `tips` reach and `before` does not, as a fetch "on
/// demand" looks through them (`tips` alone when the walk cannot be made).
pub fn new_commits(repo: &Repository, tips: &[ObjectId], before: &[ObjectId]) -> Vec<ObjectId> {
    let cancel = sluice_object::cancel::Cancel::default();
    let request = sluice_graph::WalkRequest {
        filter: sluice_graph::ObjectFilter::TreeDepth(0),
        ..sluice_graph::WalkRequest::reachable(tips, before, cancel)
    };
    let discard = sluice_object::progress::Discard;
    match sluice_graph::walk_objects(repo.objects(), &request, &discard) {
        Ok(walked) => (walked.objects.iter())
            .filter(|o| o.kind == sluice_object::ObjectKind::Commit)
            .map(|o| o.id)
            .collect(),
        Err(_) => tips.to_vec(),
    }
}

/// The commits `commits` record for the submodule at `path` (the gitlink there in each
/// commit's tree), each once: what a fetch "on demand" needs the submodule to have. A commit
/// that cannot be read, or has no gitlink there, records none.
pub fn recorded_at(repo: &Repository, commits: &[ObjectId], path: &str) -> Vec<ObjectId> {
    let odb = repo.objects();
    let parts: Vec<&str> = path.split('/').collect();
    // What each tree met at each depth holds there: commits share most of their subtrees.
    let mut seen: Vec<IdMap<Option<ObjectId>>> = vec![IdMap::default(); parts.len()];
    let mut found = Vec::new();
    for commit in commits {
        let Ok(tree) = sluice_checkout::commit_tree(odb, commit) else {
            continue;
        };
        if let Some(id) = gitlink_at(repo, tree, &parts, &mut seen) {
            if !found.contains(&id) {
                found.push(id);
            }
        }
    }
    found
}

/// The gitlink at the path `parts` under `tree`, if there is one; `seen` remembers, for each
/// depth, what a tree there led to.
fn gitlink_at(
    repo: &Repository,
    mut tree: ObjectId,
    parts: &[&str],
    seen: &mut [IdMap<Option<ObjectId>>],
) -> Option<ObjectId> {
    let mut walked = Vec::new();
    let mut found = None;
    for (depth, part) in parts.iter().enumerate() {
        if let Some(known) = seen[depth].get(&tree) {
            found = *known;
            break;
        }
        walked.push((depth, tree));
        let Some((_, data)) = repo.objects().read(&tree).ok().flatten() else {
            break;
        };
        let entries = sluice_object::parse::tree_entries(repo.hash(), &data);
        let Some(entry) = entries.flatten().find(|e| e.name == part.as_bytes()) else {
            break;
        };
        match depth + 1 == parts.len() {
            true => {
                found = entry.is_gitlink().then_some(entry.id);
                break;
            }
            false if entry.is_tree() => tree = entry.id,
            false => break,
        }
    }
    for (depth, tree) in walked {
        seen[depth].insert(tree, found);
    }
    found
}
