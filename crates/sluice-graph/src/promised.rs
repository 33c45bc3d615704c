//! A partial clone's promisor objects, as git counts them: the objects of the packs marked
//! `.promisor` (they came from a promisor remote) and every object those name. The remote
//! keeps all of them, so the repository may lack any by design: a walk that finds one missing
//! is not looking at a broken repository, where any other missing object means one.

use crate::walk::{WalkError, WalkedObject};
use sluice_object::cancel::Cancel;
use sluice_object::parse::{parse_commit, parse_tag, tree_entries};
use sluice_object::{IdSet, ObjectKind};
use sluice_odb::{ObjectDb, Pack};
use std::sync::Arc;

/// The packs of `odb` marked `.promisor`.
pub fn promisor_packs(odb: &ObjectDb) -> Vec<&Arc<Pack>> {
    (odb.packs().iter())
        .filter(|pack| pack.path().with_extension("promisor").exists())
        .collect()
}

/// Fails on the first of `missing` that is no promisor object: nothing promised it, so the
/// repository is broken ([`WalkError::Missing`], as a walk that fails on missing objects says).
/// The promisor objects are only gathered when something is missing (every commit, tree and
/// tag of the promisor packs read).
pub fn only_promised_missing(
    odb: &ObjectDb,
    missing: &[WalkedObject],
    cancel: &Cancel,
) -> Result<(), WalkError> {
    if missing.is_empty() {
        return Ok(());
    }
    let promised = promisor_objects(odb, cancel)?;
    match missing.iter().find(|o| !promised.contains(&o.id)) {
        Some(object) => Err(WalkError::Missing {
            kind: object.kind.as_str(),
            id: object.id,
        }),
        None => Ok(()),
    }
}

/// The promisor objects of `odb`: what its promisor packs hold, and what each of their
/// commits (tree and parents), trees (entries, gitlinks aside) and tags (target) names.
pub fn promisor_objects(odb: &ObjectDb, cancel: &Cancel) -> Result<IdSet, WalkError> {
    let mut promised = IdSet::default();
    for pack in promisor_packs(odb) {
        for position in 0..pack.index().len() {
            cancel.check()?;
            let id = pack.index().id(position);
            promised.insert(id);
            // A blob names nothing: its kind is read from the entry headers, its data never.
            if pack.kind_at(position)? == Some(ObjectKind::Blob) {
                continue;
            }
            let (kind, data) = pack.read_position(position)?;
            let malformed = |source| WalkError::Malformed { id, source };
            match kind {
                ObjectKind::Commit => {
                    let commit = parse_commit(odb.hash(), &data).map_err(malformed)?;
                    promised.insert(commit.tree);
                    promised.extend(commit.parents);
                }
                ObjectKind::Tree => {
                    for entry in tree_entries(odb.hash(), &data) {
                        let entry = entry.map_err(malformed)?;
                        if !entry.is_gitlink() {
                            promised.insert(entry.id);
                        }
                    }
                }
                ObjectKind::Tag => {
                    promised.insert(parse_tag(odb.hash(), &data).map_err(malformed)?.object);
                }
                ObjectKind::Blob => {}
            }
        }
    }
    Ok(promised)
}
