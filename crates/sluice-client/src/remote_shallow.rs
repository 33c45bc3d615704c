//! A shallow server: one whose own history is cut. A clone from it is cut where the server is.
//! A fetch from it takes a ref only when the history the ref brings does not reach one of the
//! server's cut commits, unless `--update-shallow` lets `.git/shallow` grow: git's "shallow
//! roots are not allowed to be updated".

use sluice_object::parse::parse_commit;
use sluice_object::{IdSet, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;

/// The server's cut commits a clone records: those the pack brought.
pub fn arrived(odb: &ObjectDb, remote_shallow: &[ObjectId]) -> Vec<ObjectId> {
    remote_shallow
        .iter()
        .filter(|id| odb.contains(id))
        .copied()
        .collect()
}

/// Which of a fetch's new tips reach the server's cut.
#[derive(Debug)]
pub struct Reach {
    /// For each tip, in the order given: whether the history it brings reaches a cut commit.
    pub needs_cut: Vec<bool>,
    /// The cut commits the tips reach, which `--update-shallow` adds to `.git/shallow`.
    pub cut: Vec<ObjectId>,
}

/// Works out, for each of `tips`, whether the history it brings (what `known`, the values of
/// the repository's refs, does not reach already) reaches one of `remote_shallow`, the commits
/// the server's history is cut at. A cut commit this repository is cut at too (`ours`, its own
/// shallow list), or does not have even after the fetch, does not count. The parents of `ours`
/// are not followed.
pub fn reach(
    odb: &ObjectDb,
    ours: &[ObjectId],
    remote_shallow: &[ObjectId],
    known: impl IntoIterator<Item = ObjectId>,
    tips: &[ObjectId],
) -> Reach {
    let ours: IdSet = ours.iter().copied().collect();
    let cut: IdSet = remote_shallow
        .iter()
        .filter(|id| !ours.contains(id) && odb.contains(id))
        .copied()
        .collect();
    let mut reach = Reach {
        needs_cut: vec![false; tips.len()],
        cut: Vec::new(),
    };
    if cut.is_empty() {
        return reach;
    }
    let walk = Walk { odb, ours: &ours };
    // All the repository's history: a full walk, paid only when a shallow server has sent a
    // cut this repository does not share.
    let mut known = walk.commits(known, &IdSet::default(), &IdSet::default());
    let mut reached = IdSet::default();
    for (tip, needs_cut) in tips.iter().zip(&mut reach.needs_cut) {
        let brought = walk.commits([*tip], &known, &cut);
        let before = reached.len();
        reached.extend(brought.iter().filter(|id| cut.contains(id)).copied());
        *needs_cut = brought.iter().any(|id| cut.contains(id));
        // History that reaches no cut commit need not be walked again for the next tip.
        if reached.len() == before && !*needs_cut {
            known.extend(brought);
        }
    }
    reach.cut = remote_shallow
        .iter()
        .filter(|id| reached.contains(id))
        .copied()
        .collect();
    reach
}

/// Walks commits through their parents.
struct Walk<'a> {
    odb: &'a ObjectDb,
    /// This repository's shallow commits, whose parents it lacks.
    ours: &'a IdSet,
}

impl Walk<'_> {
    /// The commits reached from `starts` (tags peeled; anything else, or a missing object, is
    /// skipped) without entering `known`. A commit in `bottom` is reached, but not its parents.
    fn commits(
        &self,
        starts: impl IntoIterator<Item = ObjectId>,
        known: &IdSet,
        bottom: &IdSet,
    ) -> IdSet {
        let mut seen = IdSet::default();
        let mut queue: Vec<ObjectId> = starts
            .into_iter()
            .filter_map(|id| self.odb.peel_to_commit(id))
            .collect();
        while let Some(id) = queue.pop() {
            if known.contains(&id) || !seen.insert(id) {
                continue;
            }
            if bottom.contains(&id) || self.ours.contains(&id) {
                continue;
            }
            if let Ok(Some((ObjectKind::Commit, data))) = self.odb.read(&id) {
                if let Ok(commit) = parse_commit(id.kind(), &data) {
                    queue.extend(commit.parents);
                }
            }
        }
        seen
    }
}
