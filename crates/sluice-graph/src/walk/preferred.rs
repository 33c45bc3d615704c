//! git's preferred bases, counted as its pack-objects counts them. For each path it sends
//! (the first of each path hash, in the order its traversal shows them: the newest commit's
//! tree first, depth first), git looks the same path up in the trees of the edge commits
//! (those the other side has, up to its window of ten) and adds what it finds there as a
//! possible delta base: each find is one more "Enumerating objects", each distinct one one
//! more "Counting objects". Sluice chooses its bases its own way; only the counts follow.

use super::{name_hash, Missing, ObjectFilter, WalkError, WalkRequest, Walked, WalkedObject};
use sluice_object::parse::tree_entries;
use sluice_object::progress::Progress;
use sluice_object::{IdMap, IdSet, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use std::collections::HashSet;

/// How many edge trees git looks paths up in (its default `pack.window`).
const EDGE_TREES: usize = 10;

/// What git's pack-objects adds for preferred bases.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PreferredCount {
    /// Every object found (one enumerated each, the same object once per find).
    pub(crate) met: u64,
    /// The distinct objects found (counted beside the objects sent).
    pub(crate) distinct: u32,
}

/// Counts the preferred bases of the walk `walked` (made for `request`, the other side having
/// the trees `edge_trees`) where git's pack-objects counts them, a walk without a filter with
/// nothing missing: onto `progress`'s enumeration, and into [`Walked::preferred_bases`].
pub(crate) fn count_into(
    odb: &ObjectDb,
    request: &WalkRequest<'_>,
    (walked, edge_trees): (&mut Walked, &[ObjectId]),
    progress: &dyn Progress,
) -> Result<(), WalkError> {
    if request.filter != ObjectFilter::None || request.missing != Missing::Fail {
        return Ok(());
    }
    let counted = count_preferred(odb, &walked.objects, edge_trees)?;
    progress.add(counted.met);
    walked.preferred_bases = counted.distinct;
    Ok(())
}

/// Counts the preferred bases of sending `objects` (commits newest first, then trees and
/// blobs) to a side that has the trees `edge_trees` (the edge commits' trees, in order).
pub(crate) fn count_preferred(
    odb: &ObjectDb,
    objects: &[WalkedObject],
    edge_trees: &[ObjectId],
) -> Result<PreferredCount, WalkError> {
    let mut edges: Vec<ObjectId> = Vec::new();
    for tree in edge_trees {
        if edges.len() < EDGE_TREES && !edges.contains(tree) {
            edges.push(*tree);
        }
    }
    if edges.is_empty() {
        return Ok(PreferredCount::default());
    }
    let paths = first_paths(odb, objects)?;
    let mut count = PreferredCount::default();
    let mut found = IdSet::default();
    // The edge trees' subtrees, read once however many paths go through them.
    let mut read: IdMap<Vec<Entry>> = IdMap::default();
    for path in &paths {
        for edge in &edges {
            if let Some(id) = look_up(odb, &mut read, edge, path)? {
                count.met += 1;
                if found.insert(id) {
                    count.distinct += 1;
                }
            }
        }
    }
    Ok(count)
}

/// The path of the first object sent of each path hash, in the order git's traversal shows
/// them: each sent commit's tree (newest first), depth first in entry order, each object once.
fn first_paths(odb: &ObjectDb, objects: &[WalkedObject]) -> Result<Vec<Vec<u8>>, WalkError> {
    let sent: IdSet = (objects.iter())
        .filter(|o| matches!(o.kind, ObjectKind::Tree | ObjectKind::Blob))
        .map(|o| o.id)
        .collect();
    let mut paths = FirstPaths {
        sent,
        shown: IdSet::default(),
        hashes: HashSet::new(),
        paths: Vec::new(),
    };
    for commit in objects.iter().filter(|o| o.kind == ObjectKind::Commit) {
        let Some((ObjectKind::Commit, data)) = odb.read(&commit.id)? else {
            continue;
        };
        let Ok(parsed) = sluice_object::parse::parse_commit(odb.hash(), &data) else {
            continue;
        };
        // Frames of (a tree's entries, the next one, the tree's path), so that no tree's depth
        // can exhaust the stack.
        let mut stack: Vec<(Vec<Entry>, usize, Vec<u8>)> = Vec::new();
        if paths.show(parsed.tree, Vec::new()) {
            stack.push((entries_of(odb, &parsed.tree)?, 0, Vec::new()));
        }
        while let Some((entries, next, path)) = stack.last_mut() {
            let Some(entry) = entries.get(*next) else {
                stack.pop();
                continue;
            };
            *next += 1;
            let mut full = path.clone();
            if !full.is_empty() {
                full.push(b'/');
            }
            full.extend_from_slice(&entry.name);
            let (id, is_tree) = (entry.id, entry.is_tree);
            if paths.show(id, full.clone()) && is_tree {
                stack.push((entries_of(odb, &id)?, 0, full));
            }
        }
    }
    Ok(paths.paths)
}

/// The objects shown so far, and the first path of each path hash.
struct FirstPaths {
    sent: IdSet,
    shown: IdSet,
    hashes: HashSet<u32>,
    paths: Vec<Vec<u8>>,
}

impl FirstPaths {
    /// Shows `id` at `path` if it is sent and not shown yet; whether it was.
    fn show(&mut self, id: ObjectId, path: Vec<u8>) -> bool {
        if !self.sent.contains(&id) || !self.shown.insert(id) {
            return false;
        }
        if self.hashes.insert(name_hash(&path)) {
            self.paths.push(path);
        }
        true
    }
}

/// One entry of a tree, owned.
struct Entry {
    id: ObjectId,
    name: Vec<u8>,
    is_tree: bool,
}

/// The entries of the tree `id` but submodules (none when it cannot be read as a tree).
fn entries_of(odb: &ObjectDb, id: &ObjectId) -> Result<Vec<Entry>, WalkError> {
    let Some((ObjectKind::Tree, data)) = odb.read(id)? else {
        return Ok(Vec::new());
    };
    Ok((tree_entries(odb.hash(), &data).flatten())
        .filter(|e| !e.is_gitlink())
        .map(|e| Entry {
            id: e.id,
            name: e.name.to_vec(),
            is_tree: e.is_tree(),
        })
        .collect())
}

/// The object at `path` in the tree `root` (the tree itself for the empty path), if any; the
/// trees read on the way kept in `read`.
fn look_up(
    odb: &ObjectDb,
    read: &mut IdMap<Vec<Entry>>,
    root: &ObjectId,
    path: &[u8],
) -> Result<Option<ObjectId>, WalkError> {
    let mut at = *root;
    if path.is_empty() {
        return Ok(Some(at));
    }
    let mut parts = path.split(|&b| b == b'/').peekable();
    while let Some(part) = parts.next() {
        let entries = match read.entry(at) {
            std::collections::hash_map::Entry::Occupied(known) => known.into_mut(),
            std::collections::hash_map::Entry::Vacant(new) => new.insert(entries_of(odb, &at)?),
        };
        let entry = entries.iter().find(|e| e.name == part);
        match (entry, parts.peek()) {
            (Some(entry), None) => return Ok(Some(entry.id)),
            (Some(entry), Some(_)) if entry.is_tree => at = entry.id,
            _ => return Ok(None),
        }
    }
    Ok(None)
}
