//! Ancestry between commits: whether an update of a ref is a fast-forward.

use crate::odb::ObjectDb;
use sluice_object::parse::parse_commit;
use sluice_object::{IdSet, ObjectId, ObjectKind};

/// Whether `old` is `new` or one of its ancestors (missing objects end the walk: a shallow
/// boundary). With a commit-graph holding both, the walk reads no commit and goes no further
/// back than `old`'s generation: a commit of a lower one cannot reach it (without, a
/// refused fast-forward walked the whole history).
pub fn is_ancestor(odb: &ObjectDb, old: &ObjectId, new: &ObjectId) -> bool {
    if let Some(graph) = crate::commit_graph::GraphReader::open(odb.dir(), odb.hash()) {
        if let Some(answer) = is_ancestor_in(&graph, old, new) {
            return answer;
        }
    }
    is_ancestor_reading(odb, old, new)
}

/// The answer from the graph alone; `None` when it lacks either commit or is broken.
fn is_ancestor_in(
    graph: &crate::commit_graph::GraphReader,
    old: &ObjectId,
    new: &ObjectId,
) -> Option<bool> {
    let (target, start) = (graph.position(old)?, graph.position(new)?);
    let floor = graph.generation(target)?;
    let mut seen = std::collections::HashSet::new();
    let mut queue = vec![start];
    while let Some(at) = queue.pop() {
        if at == target {
            return Some(true);
        }
        if !seen.insert(at) || graph.generation(at)? < floor {
            continue;
        }
        queue.extend(graph.parents(at)?);
    }
    Some(false)
}

/// [`is_ancestor`] by reading commits.
fn is_ancestor_reading(odb: &ObjectDb, old: &ObjectId, new: &ObjectId) -> bool {
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
