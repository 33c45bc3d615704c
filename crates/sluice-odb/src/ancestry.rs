//! Ancestry between commits: whether an update of a ref is a fast-forward.

use crate::odb::ObjectDb;
use sluice_object::parse::parse_commit;
use sluice_object::{IdSet, ObjectId, ObjectKind};

/// Whether `old` is `new` or one of its ancestors (missing objects end the walk: a shallow
/// boundary).
pub fn is_ancestor(odb: &ObjectDb, old: &ObjectId, new: &ObjectId) -> bool {
    let mut seen = IdSet::default();
    let mut queue = std::collections::VecDeque::from([*new]);
    while let Some(id) = queue.pop_front() {
        if id == *old {
            return true;
        }
        if !seen.insert(id) {
            continue;
        }
        if let Ok(Some((ObjectKind::Commit, data))) = odb.read(&id) {
            if let Ok(commit) = parse_commit(id.kind(), &data) {
                queue.extend(commit.parents);
            }
        }
    }
    false
}
