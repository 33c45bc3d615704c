//! Where a repack's walks start: every root, the branch tips its bitmap favours, and the
//! first ref whose object is gone (git's refusal when a pack went missing).

use sluice_object::ObjectId;
use sluice_odb::ObjectDb;
use sluice_repo::Repository;

/// The commits that get a bitmap each, besides git's spread of history: the branches and
/// `HEAD`, what fetches ask for.
pub(crate) fn branch_tips(refs: &[(String, ObjectId)], head: Option<ObjectId>) -> Vec<ObjectId> {
    (refs.iter())
        .filter(|(name, _)| name.starts_with("refs/heads/"))
        .map(|(_, id)| *id)
        .chain(head)
        .collect()
}

/// The first ref whose object `odb` lacks, as git's pack-objects `--all` meets them: every
/// ref, symbolic ones as what they point at, in name order, then HEAD.
pub(crate) fn first_bad_ref(
    repo: &Repository,
    refs: &[(String, ObjectId)],
    head: Option<ObjectId>,
    odb: &ObjectDb,
) -> Option<String> {
    let mut named: Vec<(&str, ObjectId)> = refs.iter().map(|(n, id)| (n.as_str(), *id)).collect();
    let symbolic = repo.refs().list_symbolic();
    for (name, target) in &symbolic {
        if let Some((_, id)) = refs.iter().find(|(n, _)| n == target) {
            named.push((name, *id));
        }
    }
    named.sort_unstable_by_key(|(name, _)| *name);
    let bad = named.into_iter().chain(head.map(|id| ("HEAD", id)));
    // A miss looks past the view: a push may have landed a pack and moved its ref since the
    // view was opened, after which the refs were read.
    bad.into_iter()
        .find(|(_, id)| !odb.contains_or_rescan(id))
        .map(|(name, _)| name.to_owned())
}

/// Where a walk that decides what stays starts: every root, each once; a ref must name an
/// object that is there (the walk fails otherwise, and nothing is removed), while a reflog or
/// an index may name one that is gone.
pub(crate) fn walk_tips(roots: &sluice_repo::Roots, odb: &ObjectDb) -> Vec<ObjectId> {
    let mut tips = roots.refs.clone();
    let logged_or_indexed = roots.reflogs.iter().chain(&roots.indexed);
    tips.extend(logged_or_indexed.filter(|id| odb.contains(id)));
    tips.sort_unstable();
    tips.dedup();
    tips
}
