//! Listing the trees and blobs of many commits on every core, in the order the one-threaded
//! walk lists them.
//!
//! The one-threaded walk takes the commits in turn and lists, depth first, what each commit's
//! tree has that no earlier commit's tree had (it compares each tree with its parent's, and
//! skips trees already seen). Reading the trees (inflating them, applying their deltas) is most
//! of its time: 2.2 s of `sluice push`'s 2.8 s of counting for git/git's whole history, alone
//! on one core while the server waits for the pack's first byte.
//!
//! Here workers take consecutive runs of commits and diff each commit's tree with its parent's
//! (phase A), recording every object they meet, each tree with the extent of what they met
//! below it. A tree some earlier commit (in walk order) has met already is not descended
//! into: everything an earlier commit's tree reaches is seen by the time the walk gets to the
//! later one, so the one-threaded walk would skip it too. The calling thread then replays the
//! runs in order against the real seen set (phase B), skipping a tree's extent when the tree
//! turns out to be seen after all; what comes out is exactly the one-threaded walk's list.

use super::tree_cache::{below, changed_blob, old_subtree, TreeCache};
use super::{name_hash, Missing, ObjectFilter, WalkError, WalkedObject, MAX_TREE_DEPTH};
use sluice_object::cancel::Cancel;
use sluice_object::parse::ParseError;
use sluice_object::progress::Progress;
use sluice_object::tree_diff::for_each_changed;
use sluice_object::{IdMap, IdSet, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

/// One commit's tree to list, with the tree it is compared with (its first parent's, when the
/// walk has listed that parent or the other side has it).
#[derive(Debug, Clone, Copy)]
pub(super) struct TreeJob {
    pub(super) tree: ObjectId,
    pub(super) old: Option<ObjectId>,
}

/// How the walk lists its commits' trees: as the request's `cores` say, or as the tests
/// choose (they compare the listings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TreeListing {
    /// In parallel when there are cores to spare and commits enough to share.
    Auto,
    /// On the calling thread.
    OneThread,
    /// With `threads` workers taking `run` commits at a time (tests choose small runs).
    #[cfg_attr(not(test), allow(dead_code))]
    Parallel { threads: usize, run: usize },
}

/// Fewer commits than this are listed on one thread: starting workers costs more than they
/// save.
const PARALLEL_COMMITS: usize = 256;

/// The workers and run length to list `commits` commits' trees with, or `None` for the
/// one-threaded walk (which a filter that reads blobs or limits depth always takes).
pub(super) fn parallelism(
    listing: TreeListing,
    filter: ObjectFilter,
    commits: usize,
) -> Option<(usize, Option<usize>)> {
    if !matches!(filter, ObjectFilter::None | ObjectFilter::ObjectType(_)) {
        return None;
    }
    match listing {
        TreeListing::OneThread => None,
        TreeListing::Parallel { threads, run } => Some((threads, Some(run))),
        TreeListing::Auto => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            (cores > 1 && commits >= PARALLEL_COMMITS).then_some((cores, None))
        }
    }
}

/// Commits per run a worker takes: consecutive commits mostly compare with the tree the one
/// before them read, which the worker's cache still holds.
const RUN: usize = 64;

/// Shards of the map of which commit met a tree first.
const SHARDS: usize = 64;

/// Trees a worker keeps for the comparisons that follow, before its cache starts over.
const CACHE_ENTRIES: usize = 1024;

/// What phase A met, in the one-threaded walk's order.
enum Met {
    /// A tree, and the index (in its run's list) one past everything met below it.
    Tree {
        object: WalkedObject,
        end: usize,
    },
    Blob(WalkedObject),
    /// A tree that could not be read: an error if the walk gets to it unseen.
    Unreadable {
        id: ObjectId,
        error: WalkError,
    },
    /// A malformed tree, or one nested too deep: an error if the walk gets here.
    Broken(WalkError),
}

/// Lists `jobs` (in walk order) into `out`, marking what is listed in `seen`, as
/// `Walker::list_tree` does for each in turn; `threads` workers read the trees.
pub(super) fn list_in_parallel(
    (odb, missing): (&ObjectDb, Missing),
    jobs: &[TreeJob],
    (threads, run): (usize, Option<usize>),
    (seen, out): (&mut IdSet, &mut Vec<WalkedObject>),
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<(), WalkError> {
    let run = run.unwrap_or(RUN).max(1);
    let runs = jobs.len().div_ceil(run);
    let lister = Lister {
        odb,
        firsts: (0..SHARDS).map(|_| Mutex::default()).collect(),
    };
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::channel::<(usize, Vec<Met>)>();
        for _ in 0..threads.max(1) {
            let sender = sender.clone();
            let (lister, next) = (&lister, &next);
            scope.spawn(move || {
                let mut cache = TreeCache::new(CACHE_ENTRIES, missing);
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= runs {
                        break;
                    }
                    let start = index * run;
                    let end = (start + run).min(jobs.len());
                    let met = lister.list_run(start, &jobs[start..end], &mut cache);
                    if sender.send((index, met)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        let mut pending = BTreeMap::new();
        let mut result = Ok(());
        for wanted in 0..runs {
            let met = loop {
                if let Some(met) = pending.remove(&wanted) {
                    break met;
                }
                let (index, met) = receiver.recv().expect("a worker sends every run it takes");
                pending.insert(index, met);
            };
            result = (cancel.check().map_err(WalkError::from))
                .and_then(|()| replay(met, seen, out, progress));
            if result.is_err() {
                // Workers stop at their next run.
                next.store(runs, Ordering::Relaxed);
                break;
            }
        }
        result
    })
}

/// Phase B: the run's objects, each tree listed unless seen (then what was met below it is
/// skipped), each blob unless seen.
fn replay(
    met: Vec<Met>,
    seen: &mut IdSet,
    out: &mut Vec<WalkedObject>,
    progress: &dyn Progress,
) -> Result<(), WalkError> {
    let mut skip_to = 0;
    for (index, item) in met.into_iter().enumerate() {
        if index < skip_to {
            continue;
        }
        match item {
            Met::Tree { object, end } => {
                if seen.insert(object.id) {
                    out.push(object);
                    progress.add(1);
                } else {
                    skip_to = end;
                }
            }
            Met::Blob(object) => {
                if seen.insert(object.id) {
                    out.push(object);
                    progress.add(1);
                }
            }
            Met::Unreadable { id, error } => {
                if !seen.contains(&id) {
                    return Err(error);
                }
            }
            Met::Broken(error) => return Err(error),
        }
    }
    Ok(())
}

/// Phase A's shared state.
struct Lister<'a> {
    odb: &'a ObjectDb,
    /// For each tree met so far, the first commit (by walk order) that met it.
    firsts: Box<[Mutex<IdMap<usize>>]>,
}

impl Lister<'_> {
    /// Phase A of the commits `jobs`, the first of which is the `start`-th of the walk.
    fn list_run(&self, start: usize, jobs: &[TreeJob], cache: &mut TreeCache) -> Vec<Met> {
        let mut met = Vec::new();
        let mut path = Vec::new();
        for (k, job) in jobs.iter().enumerate() {
            self.descend(start + k, &job.tree, job.old, &mut path, 0, &mut met, cache);
        }
        met
    }

    /// Whether commit `commit` is the first to meet `tree`; if it is not, an earlier commit's
    /// tree reaches `tree`, so the walk has seen it by the time it gets to `commit`.
    fn first_to_meet(&self, tree: &ObjectId, commit: usize) -> bool {
        let shard = usize::from(tree.first_byte()) % SHARDS;
        let mut firsts = self.firsts[shard].lock().unwrap_or_else(|e| e.into_inner());
        match firsts.get_mut(tree) {
            Some(first) if *first <= commit => false,
            Some(first) => {
                *first = commit;
                true
            }
            None => {
                firsts.insert(*tree, commit);
                true
            }
        }
    }

    /// Meets `id` and, depth first, what changed below it since `old`.
    #[allow(clippy::too_many_arguments)]
    fn descend(
        &self,
        commit: usize,
        id: &ObjectId,
        old: Option<ObjectId>,
        path: &mut Vec<u8>,
        depth: usize,
        met: &mut Vec<Met>,
        cache: &mut TreeCache,
    ) {
        if depth > MAX_TREE_DEPTH {
            let source = ParseError::TreeEntry(0);
            met.push(Met::Broken(WalkError::Malformed { id: *id, source }));
            return;
        }
        if !self.first_to_meet(id, commit) {
            return;
        }
        let old = old.filter(|old| old != id);
        let read = cache.read_tree(self.odb, id).and_then(|data| {
            let old_data = match old {
                Some(old) => cache.read_old_tree(self.odb, &old)?,
                None => None,
            };
            Ok((data, old_data))
        });
        let (data, old_data) = match read {
            Ok(read) => read,
            Err(error) => return met.push(Met::Unreadable { id: *id, error }),
        };
        let at = met.len();
        met.push(Met::Tree {
            object: WalkedObject {
                id: *id,
                kind: ObjectKind::Tree,
                name_hash: name_hash(path),
                previous: old,
            },
            end: 0,
        });
        let old_data = old_data.as_deref().map_or(&[][..], |d| &d[..]);
        let listed = for_each_changed(
            self.odb.hash(),
            &data,
            old_data,
            |entry, counterpart| {
                below(path, entry.name, |path| match entry.is_tree() {
                    true => {
                        let old = old_subtree(counterpart);
                        self.descend(commit, &entry.id, old, path, depth + 1, met, cache);
                    }
                    false => met.push(Met::Blob(changed_blob(&entry, counterpart, path))),
                });
                Ok(())
            },
            |offset| WalkError::Malformed {
                id: *id,
                source: ParseError::TreeEntry(offset),
            },
        );
        if let Err(error) = listed {
            met.push(Met::Broken(error));
        }
        let end = met.len();
        if let Met::Tree { end: slot, .. } = &mut met[at] {
            *slot = end;
        }
    }
}

#[cfg(test)]
#[path = "trees_tests.rs"]
mod tests;
