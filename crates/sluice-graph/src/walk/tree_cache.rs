//! Trees lately read by a walk, kept for the comparisons that follow: a commit's tree is
//! compared with its parent's, which the walk has usually just read, and each subtree with
//! the parent's subtree at the same path. Also what a walk makes of a changed tree entry.

use super::{name_hash, Missing, WalkError, WalkedObject};
use sluice_object::parse::TreeEntry;
use sluice_object::{IdMap, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use std::rc::Rc;

/// Trees by id, starting over when `capacity` are held.
pub(super) struct TreeCache {
    trees: IdMap<Rc<Vec<u8>>>,
    capacity: usize,
    missing: Missing,
}

impl TreeCache {
    pub(super) fn new(capacity: usize, missing: Missing) -> TreeCache {
        TreeCache {
            trees: IdMap::default(),
            capacity,
            missing,
        }
    }

    /// A tree to list: not a tree is an error; missing, an error too, or with
    /// [`Missing::SetAside`] an empty tree (the walk sets the tree aside at its end).
    pub(super) fn read_tree(
        &mut self,
        odb: &ObjectDb,
        id: &ObjectId,
    ) -> Result<Rc<Vec<u8>>, WalkError> {
        if let Some(data) = self.trees.get(id) {
            return Ok(Rc::clone(data));
        }
        let (kind, data) = match (odb.read(id)?, self.missing) {
            (Some(found), _) => found,
            (None, Missing::SetAside) => return Ok(self.remember(id, Vec::new())),
            (None, Missing::Fail) => {
                return Err(WalkError::Missing {
                    kind: "tree",
                    id: *id,
                })
            }
        };
        if kind != ObjectKind::Tree {
            let (found, expected) = (kind, ObjectKind::Tree);
            return Err(WalkError::WrongKind {
                id: *id,
                found,
                expected,
            });
        }
        Ok(self.remember(id, data))
    }

    /// A tree to compare with, which need not be here (the other side's, past a shallow
    /// boundary).
    pub(super) fn read_old_tree(
        &mut self,
        odb: &ObjectDb,
        id: &ObjectId,
    ) -> Result<Option<Rc<Vec<u8>>>, WalkError> {
        if let Some(data) = self.trees.get(id) {
            return Ok(Some(Rc::clone(data)));
        }
        let Some((ObjectKind::Tree, data)) = odb.read(id)? else {
            return Ok(None);
        };
        Ok(Some(self.remember(id, data)))
    }

    fn remember(&mut self, id: &ObjectId, data: Vec<u8>) -> Rc<Vec<u8>> {
        if self.trees.len() >= self.capacity {
            self.trees.clear();
        }
        let data = Rc::new(data);
        self.trees.insert(*id, Rc::clone(&data));
        data
    }
}

/// Runs `f` with `path` extended by `name` (a tree entry's, below the tree at `path`).
pub(super) fn below<R>(path: &mut Vec<u8>, name: &[u8], f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    let base = path.len();
    if base > 0 {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    let result = f(path);
    path.truncate(base);
    result
}

/// A changed blob entry at `path`, with the blob it replaces as the first guess for a delta
/// base.
pub(super) fn changed_blob(
    entry: &TreeEntry<'_>,
    counterpart: Option<TreeEntry<'_>>,
    path: &[u8],
) -> WalkedObject {
    WalkedObject {
        id: entry.id,
        kind: ObjectKind::Blob,
        name_hash: name_hash(path),
        previous: counterpart
            .filter(|o| !o.is_tree() && !o.is_gitlink())
            .map(|o| o.id),
    }
}

/// The subtree a changed tree entry is compared with: the counterpart, if it is a tree.
pub(super) fn old_subtree(counterpart: Option<TreeEntry<'_>>) -> Option<ObjectId> {
    counterpart.filter(|o| o.is_tree()).map(|o| o.id)
}
