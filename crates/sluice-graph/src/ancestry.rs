//! Ancestry between commits: whether an update of a ref is a fast-forward, and how far a
//! branch stands from its upstream.

use sluice_object::parse::parse_commit;
use sluice_object::{IdSet, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;

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
    is_ancestor_reading(odb, old, new, &IdSet::default())
}

/// [`is_ancestor`] in a shallow repository, as git sees its history: the `shallow` commits
/// have no parents (git's grafts), so what lies past them is no ancestor; the commit-graph,
/// which does not know the cut, is not asked (git uses none in a shallow repository).
pub fn is_ancestor_within(odb: &ObjectDb, old: &ObjectId, new: &ObjectId, shallow: &IdSet) -> bool {
    match shallow.is_empty() {
        true => is_ancestor(odb, old, new),
        false => is_ancestor_reading(odb, old, new, shallow),
    }
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

/// [`is_ancestor`] by reading commits, the parents of the `shallow` ones left out.
fn is_ancestor_reading(odb: &ObjectDb, old: &ObjectId, new: &ObjectId, shallow: &IdSet) -> bool {
    let mut seen = IdSet::default();
    let mut queue = std::collections::VecDeque::from([*new]);
    while let Some(id) = queue.pop_front() {
        if id == *old {
            return true;
        }
        if !seen.insert(id) || shallow.contains(&id) {
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

/// How many commits `ours` has that `theirs` lacks, and the other way round (git's "ahead" and
/// "behind"); `None` when either tip cannot be read.
///
/// Each commit met carries which tips reach it; the walk goes newest first and stops once every
/// queued commit is reached from both and is older than every commit reached from one side
/// only (so none of those can be its ancestor): it reads what lies between the tips and their
/// merge bases, not the whole history. A side reaching a commit already walked is passed on to
/// its ancestors, so commits of one date (or a skewed clock) are counted right too.
pub fn ahead_behind(odb: &ObjectDb, ours: &ObjectId, theirs: &ObjectId) -> Option<(usize, usize)> {
    let walk = walk_sides(odb, ours, theirs)?;
    let count = |side| walk.flags.values().filter(|(f, _)| *f == side).count();
    Some((count(OURS), count(THEIRS)))
}

/// Common ancestors of `a` and `b`, among them every merge base, and none that a commit
/// reached from one side only could have (the walk of [`ahead_behind`] meets them): what they
/// reach is what both reach, so they are what a symmetric range (`a...b`) leaves out. `None`
/// when either tip cannot be read.
pub fn common_ancestors_met(odb: &ObjectDb, a: &ObjectId, b: &ObjectId) -> Option<Vec<ObjectId>> {
    let walk = walk_sides(odb, a, b)?;
    let mut common: Vec<ObjectId> = (walk.flags.iter())
        .filter(|(_, (side, _))| *side == BOTH)
        .map(|(id, _)| *id)
        .collect();
    common.sort_unstable();
    Some(common)
}

/// The walk from `ours` and `theirs` down to where every line is reached from both.
fn walk_sides<'a>(odb: &'a ObjectDb, ours: &ObjectId, theirs: &ObjectId) -> Option<SideWalk<'a>> {
    let mut walk = SideWalk::new(odb);
    walk.reach(*ours, OURS, true)?;
    walk.reach(*theirs, THEIRS, true)?;
    while let Some((time, id)) = walk.queue.pop() {
        let flag = walk.flags[&id].0;
        if flag != BOTH {
            walk.alone_queued -= 1;
        } else if walk.alone_queued == 0 && time < walk.oldest_alone {
            break;
        }
        walk.popped.insert(id);
        if flag != BOTH {
            walk.oldest_alone = walk.oldest_alone.min(time);
        }
        for parent in walk.flags[&id].1.clone() {
            walk.reach(parent, flag, false)?;
        }
    }
    Some(walk)
}

const OURS: u8 = 1;
const THEIRS: u8 = 2;
const BOTH: u8 = OURS | THEIRS;

/// The state of [`ahead_behind`]'s walk.
struct SideWalk<'a> {
    odb: &'a ObjectDb,
    /// Every commit met: the sides that reach it, and its parents.
    flags: sluice_object::IdMap<(u8, Vec<ObjectId>)>,
    /// Commits to walk, newest first.
    queue: std::collections::BinaryHeap<(i64, ObjectId)>,
    /// Commits walked (their parents have their flags).
    popped: IdSet,
    /// The oldest date of a walked commit reached from one side only.
    oldest_alone: i64,
    /// Queued commits reached from one side only.
    alone_queued: usize,
}

impl SideWalk<'_> {
    fn new(odb: &ObjectDb) -> SideWalk<'_> {
        SideWalk {
            odb,
            flags: sluice_object::IdMap::default(),
            queue: std::collections::BinaryHeap::new(),
            popped: IdSet::default(),
            oldest_alone: i64::MAX,
            alone_queued: 0,
        }
    }

    /// Marks `id` reached from `side`: a new commit is read and queued (a tip must be
    /// readable; a parent that is not here, past a shallow boundary, ends its line), a walked
    /// one passes the side on to its ancestors.
    fn reach(&mut self, id: ObjectId, side: u8, tip: bool) -> Option<()> {
        let mut stack = vec![id];
        while let Some(id) = stack.pop() {
            match self.flags.get_mut(&id) {
                Some((flags, parents)) => {
                    if *flags & side == side {
                        continue;
                    }
                    *flags |= side;
                    if self.popped.contains(&id) {
                        stack.extend(parents.iter().copied());
                    } else if *flags == BOTH {
                        // Queued, reached from one side until now.
                        self.alone_queued -= 1;
                    }
                }
                None => {
                    let read = self.odb.read(&id).ok().flatten().and_then(|(kind, data)| {
                        let commit = (kind == ObjectKind::Commit)
                            .then(|| parse_commit(id.kind(), &data).ok())??;
                        Some((commit.time, commit.parents))
                    });
                    let (time, parents) = match (read, tip) {
                        (Some(read), _) => read,
                        (None, true) => return None,
                        (None, false) => (i64::MIN, Vec::new()),
                    };
                    self.flags.insert(id, (side, parents));
                    self.queue.push((time, id));
                    self.alone_queued += usize::from(side != BOTH);
                }
            }
        }
        Some(())
    }
}

#[cfg(test)]
#[path = "ancestry_tests.rs"]
mod tests;
