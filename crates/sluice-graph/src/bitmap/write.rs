//! Writing a pack's reachability bitmap (`gitformat-pack`, `.bitmap` v1): the four type
//! bitmaps, one EWAH bitmap of everything reachable for each selected commit, and the
//! name-hash cache, for a pack that holds everything its refs reach (what `repack -a` writes).
//!
//! Each bitmap is stored XORed against one of the ten before it when that is smaller, as git
//! stores them. Selected commits: the tips asked for and a spread of history as git spaces it
//! (`select`). A bitmap the replaced pack had for a selected commit is carried over (`reuse`);
//! the others are built oldest first: a commit's walk stops at an ancestor with a bitmap, which
//! is ORed in, and at any object already set (a set tree has its whole content set).

use super::ewah::{encode, Bitset};
use super::reuse::Reused;
use super::select::select;
use super::target::BitmapTarget;
use super::{FULL_DAG, HASH_CACHE, LOOKUP_TABLE};
use crate::commit_graph::ReachableCommit;
use crate::walk::Walked;
use sluice_object::parse::{parse_commit, ParseError};
use sluice_object::progress::Progress;
use sluice_object::tree_diff::for_each_changed;
use sluice_object::{IdMap, ObjectId, ObjectKind};
use sluice_odb::pack_store::Staged;
use sluice_odb::Pack;
use sluice_odb::{Config, ConfigError, ObjectDb, OdbError};
use std::path::PathBuf;

/// Why no bitmap was written (the pack stays usable without one).
#[derive(Debug, thiserror::Error)]
pub enum BitmapWriteError {
    /// An object could not be read.
    #[error(transparent)]
    Odb(#[from] OdbError),
    /// An object the refs reach is not in the pack.
    #[error("object {0} is not in the pack: a bitmap needs every reachable object")]
    NotInPack(ObjectId),
    /// A commit or tree cannot be parsed.
    #[error("malformed object {id}: {source}")]
    Malformed {
        /// The object.
        id: ObjectId,
        /// What is wrong with it.
        #[source]
        source: ParseError,
    },
    /// The file could not be written.
    #[error(transparent)]
    Write(#[from] sluice_odb::pack_store::StoreError),
    /// The objects to describe could not be walked.
    #[error(transparent)]
    Walk(crate::walk::WalkError),
    /// The bitmaps were built for another pack.
    #[error("bitmaps built for pack {0} do not describe this pack")]
    OtherPack(ObjectId),
}

/// The bitmaps of a pack's selected commits, built and not yet written.
#[derive(Debug)]
pub struct CommitBitmaps {
    /// The checksum of the pack (or multi-pack-index) whose positions they use.
    pack: ObjectId,
    /// Oldest first.
    selected: Vec<ObjectId>,
    built: IdMap<Bitset>,
    /// How far into the commits their selection went, as git's progress counts it.
    spaced: usize,
}

impl CommitBitmaps {
    /// How many commits have a bitmap.
    pub fn len(&self) -> usize {
        self.selected.len()
    }

    /// Whether none has.
    pub fn is_empty(&self) -> bool {
        self.selected.is_empty()
    }

    /// Shows the phases of their making as done, for bitmaps built before they are written
    /// (while a repack counted).
    pub fn show_made(&self, progress: &dyn Progress) {
        show_selecting(progress, self.spaced);
        progress.phase("Building bitmaps", Some(self.len() as u64));
        progress.add(self.len() as u64);
        progress.finish();
    }

    /// Whether they were built for `pack` (the same checksum: the same objects in the same
    /// positions).
    pub fn describes(&self, pack: &Pack) -> bool {
        self.pack == pack.index().pack_checksum()
    }

    /// Whether they were built for `target`.
    pub fn describe(&self, target: &BitmapTarget<'_>) -> bool {
        self.pack == target.checksum()
    }
}

/// The optional sections a `.bitmap` file carries, as git's `pack.writeBitmapHashCache` (on
/// unless set false) and `pack.writeBitmapLookupTable` (off unless set) choose them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitmapFormat {
    /// The name-hash cache: each object's path hash, for the delta search of a later repack.
    pub hash_cache: bool,
    /// The commit lookup table: where each commit's bitmap is, so that a reader loads only
    /// the bitmaps it needs.
    pub lookup_table: bool,
}

impl Default for BitmapFormat {
    fn default() -> Self {
        BitmapFormat {
            hash_cache: true,
            lookup_table: false,
        }
    }
}

impl BitmapFormat {
    /// The sections `config` asks for (a value that is no boolean is git's error).
    pub fn from_config(config: &Config) -> Result<BitmapFormat, ConfigError> {
        let default = BitmapFormat::default();
        Ok(BitmapFormat {
            hash_cache: (config.get_bool("pack.writebitmaphashcache")?)
                .unwrap_or(default.hash_cache),
            lookup_table: (config.get_bool("pack.writebitmaplookuptable")?)
                .unwrap_or(default.lookup_table),
        })
    }
}

/// Writes `<pack>.bitmap` for `pack`, which holds every object of `walked` (kinds and name
/// hashes from there) and every commit of `tips`, which all get a bitmap; `objects` reads
/// commits and trees. `replaced` is a pack whose bitmaps may be carried over.
pub fn write_bitmap(
    pack: &Pack,
    objects: &ObjectDb,
    walked: &Walked,
    tips: &[ObjectId],
    replaced: Option<&Pack>,
    (progress, format): (&dyn Progress, BitmapFormat),
) -> Result<PathBuf, BitmapWriteError> {
    let commits: Vec<ObjectId> = (walked.objects.iter())
        .filter(|o| o.kind == ObjectKind::Commit)
        .map(|o| o.id)
        .collect();
    let commits = CommitsIn::Ids(&commits);
    let target = BitmapTarget::Pack(pack);
    let bitmaps = build_commit_bitmaps(&target, objects, commits, tips, replaced, progress)?;
    write_bitmap_file(&target, walked, &bitmaps, format)
}

/// The commits a pack's bitmaps are chosen from, newest first (the order selection spaces).
#[derive(Debug, Clone, Copy)]
pub enum CommitsIn<'a> {
    /// Their ids; their parents and trees are read.
    Ids(&'a [ObjectId]),
    /// Read already.
    Read(&'a [ReachableCommit]),
}

/// Builds the bitmaps of `target`'s selected commits, in its positions: `commits` are its
/// commits, `tips` each get one, `replaced` is a pack whose bitmaps may be carried over.
/// Needs no walk of the objects: a repack can build them while it counts.
pub fn build_commit_bitmaps(
    target: &BitmapTarget<'_>,
    objects: &ObjectDb,
    commits: CommitsIn<'_>,
    tips: &[ObjectId],
    replaced: Option<&Pack>,
    progress: &dyn Progress,
) -> Result<CommitBitmaps, BitmapWriteError> {
    let count = target.len();
    // Every object's bit, found once: the walks below look up each tree entry they meet, and a
    // search of the index per entry was most of their time.
    let mut bits: IdMap<u32> = IdMap::default();
    bits.reserve(count);
    for position in 0..count {
        let bit = target
            .bit_at(position)
            .ok_or(BitmapWriteError::NotInPack(target.id_at(position)))?;
        bits.insert(target.id_at(position), bit as u32);
    }
    let bit_of = |id: &ObjectId| -> Result<usize, BitmapWriteError> {
        bits.get(id)
            .map(|&bit| bit as usize)
            .ok_or(BitmapWriteError::NotInPack(*id))
    };
    let (graph, commits) = match commits {
        CommitsIn::Ids(ids) => (CommitGraph::read(objects, ids)?, ids.to_vec()),
        CommitsIn::Read(read) => {
            let nodes = (read.iter())
                .map(|c| (c.id, (c.parents.clone(), c.tree)))
                .collect();
            let ids: Vec<ObjectId> = read.iter().map(|c| c.id).collect();
            (CommitGraph::with_levels(nodes, &ids), ids)
        }
    };
    let commits = &commits[..];
    let mut reused = replaced.and_then(|old| Reused::open(old, target));
    let tips: Vec<ObjectId> = (tips.iter())
        .filter(|t| graph.nodes.contains_key(*t))
        .copied()
        .collect();
    let (mut selected, spaced) = select(
        commits,
        &tips,
        |c| reused.as_ref().is_some_and(|r| r.has(c)),
        |c| graph.nodes[c].0.len() > 1,
    );
    show_selecting(progress, spaced);
    // Oldest first, so that each walk finds its selected ancestors built.
    selected.sort_by_key(|id| graph.level[id]);
    progress.phase("Building bitmaps", Some(selected.len() as u64));
    let mut built: IdMap<Bitset> = IdMap::default();
    let mut trees = TreeReader::new(objects);
    for commit in &selected {
        let bitmap = match reused.as_mut().and_then(|r| r.bitmap(commit)) {
            Some(carried) => carried,
            None => reachable(&mut trees, &graph, commit, &built, count, &bit_of)?,
        };
        built.insert(*commit, bitmap);
        progress.add(1);
    }
    progress.finish();
    Ok(CommitBitmaps {
        pack: target.checksum(),
        selected,
        built,
        spaced,
    })
}

/// git's "Selecting bitmap commits" phase: how far into the commits the spacing went (not
/// shown where every commit is taken, as git's for fewer than a hundred).
fn show_selecting(progress: &dyn Progress, spaced: usize) {
    progress.phase("Selecting bitmap commits", None);
    progress.add(spaced as u64);
    progress.finish();
}

/// Writes `target`'s bitmap from `bitmaps` (built for it) and the kinds and name hashes of
/// `walked`, which lists every object of the target, with the sections `format` asks for.
pub fn write_bitmap_file(
    target: &BitmapTarget<'_>,
    walked: &Walked,
    bitmaps: &CommitBitmaps,
    format: BitmapFormat,
) -> Result<PathBuf, BitmapWriteError> {
    let checksum = target.checksum();
    if bitmaps.pack != checksum {
        return Err(BitmapWriteError::OtherPack(bitmaps.pack));
    }
    let count = target.len();
    let mut types = [(); 4].map(|_| Bitset::new(count));
    let mut hashes = vec![0u32; count];
    for object in &walked.objects {
        let kind = match object.kind {
            ObjectKind::Commit => 0,
            ObjectKind::Tree => 1,
            ObjectKind::Blob => 2,
            ObjectKind::Tag => 3,
        };
        let position =
            (target.index_of(&object.id)).ok_or(BitmapWriteError::NotInPack(object.id))?;
        let bit = target
            .bit_at(position)
            .ok_or(BitmapWriteError::NotInPack(object.id))?;
        types[kind].set(bit);
        hashes[position] = object.name_hash;
    }
    let (selected, built) = (&bitmaps.selected, &bitmaps.built);
    let mut out = Vec::new();
    out.extend_from_slice(b"BITM");
    out.extend_from_slice(&1u16.to_be_bytes());
    let flags = FULL_DAG
        | (if format.hash_cache { HASH_CACHE } else { 0 })
        | (if format.lookup_table { LOOKUP_TABLE } else { 0 });
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&(selected.len() as u32).to_be_bytes());
    out.extend_from_slice(checksum.as_bytes());
    for set in &types {
        out.extend_from_slice(&encode(set));
    }
    let mut rows = Vec::with_capacity(selected.len());
    for (k, commit) in selected.iter().enumerate() {
        let position = target
            .index_of(commit)
            .ok_or(BitmapWriteError::NotInPack(*commit))?;
        let (xor, bytes) = smallest_encoding(selected, built, k);
        rows.push(Row {
            position: position as u32,
            offset: out.len() as u64,
            xor_with: (xor > 0).then(|| k - usize::from(xor)),
        });
        out.extend_from_slice(&(position as u32).to_be_bytes());
        // The XOR offset, then no flags.
        out.extend_from_slice(&[xor, 0]);
        out.extend_from_slice(&bytes);
    }
    if format.lookup_table {
        out.extend_from_slice(&lookup_table(&rows));
    }
    if format.hash_cache {
        for hash in &hashes {
            out.extend_from_slice(&hash.to_be_bytes());
        }
    }
    let mut trailer = sluice_object::TrailerHasher::new(checksum.kind());
    trailer.update(&out);
    out.extend_from_slice(trailer.finalize().as_bytes());
    let path = target.path();
    // A temporary file of its own renamed into place (read-only, as git leaves the files of a
    // pack), as git writes it: a lock file would outlive a killed repack and stop every later
    // one.
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let staged = Staged::write(dir, "tmp_bitmap_", |w: &mut dyn std::io::Write| {
        w.write_all(&out)
    })?;
    staged.commit(&path, false)?;
    Ok(path)
}

/// Where one selected commit's entry is in the file, for the lookup table.
struct Row {
    /// The commit's position in the index (or multi-pack-index).
    position: u32,
    /// Where its entry starts, its position field first.
    offset: u64,
    /// The entry (in file order) its bitmap is XORed against.
    xor_with: Option<usize>,
}

/// The commit lookup table (`gitformat-bitmap`): a `(position, offset, XOR row)` triplet per
/// entry, sorted by position; a row names the triplet of the XOR base in this sorted table.
fn lookup_table(rows: &[Row]) -> Vec<u8> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&k| rows[k].position);
    let mut row_of = vec![0u32; rows.len()];
    for (row, &k) in order.iter().enumerate() {
        row_of[k] = row as u32;
    }
    let mut table = Vec::with_capacity(rows.len() * 16);
    for &k in &order {
        let xor_row = rows[k].xor_with.map_or(u32::MAX, |base| row_of[base]);
        table.extend_from_slice(&rows[k].position.to_be_bytes());
        table.extend_from_slice(&rows[k].offset.to_be_bytes());
        table.extend_from_slice(&xor_row.to_be_bytes());
    }
    table
}

/// The entries an entry may be XORed against: the last ten (git's search).
const XOR_SEARCH: usize = 10;

/// Entry `k`'s bitmap encoded as it is, or XORed against one of the entries just before it
/// when that is smaller (neighbouring commits reach nearly the same objects); returns the
/// offset back to that entry (0 for none) and the bytes.
fn smallest_encoding(selected: &[ObjectId], built: &IdMap<Bitset>, k: usize) -> (u8, Vec<u8>) {
    let own = &built[&selected[k]];
    let mut best = (0u8, encode(own));
    for back in 1..=XOR_SEARCH.min(k) {
        let mut xored = own.clone();
        xored.xor(&built[&selected[k - back]]);
        let bytes = encode(&xored);
        if bytes.len() < best.1.len() {
            best = (back as u8, bytes);
        }
    }
    best
}

/// Each commit's parents and tree, and its topological level.
struct CommitGraph {
    nodes: IdMap<(Vec<ObjectId>, ObjectId)>,
    level: IdMap<u32>,
}

impl CommitGraph {
    fn read(objects: &ObjectDb, commits: &[ObjectId]) -> Result<CommitGraph, BitmapWriteError> {
        let mut nodes = IdMap::default();
        for id in commits {
            let data = match objects.read(id)? {
                Some((ObjectKind::Commit, data)) => data,
                _ => return Err(BitmapWriteError::NotInPack(*id)),
            };
            let commit = parse_commit(objects.hash(), &data)
                .map_err(|source| BitmapWriteError::Malformed { id: *id, source })?;
            nodes.insert(*id, (commit.parents, commit.tree));
        }
        Ok(CommitGraph::with_levels(nodes, commits))
    }

    /// The graph of `nodes` with each commit's topological level, `commits` listing them.
    fn with_levels(nodes: IdMap<(Vec<ObjectId>, ObjectId)>, commits: &[ObjectId]) -> CommitGraph {
        let mut level: IdMap<u32> = IdMap::default();
        let mut stack = Vec::new();
        for id in commits {
            stack.push(*id);
            while let Some(&at) = stack.last() {
                if level.contains_key(&at) {
                    stack.pop();
                    continue;
                }
                let parents = nodes.get(&at).map(|n| &n.0[..]).unwrap_or(&[]);
                let waiting: Vec<ObjectId> = (parents.iter())
                    .filter(|p| nodes.contains_key(*p) && !level.contains_key(*p))
                    .copied()
                    .collect();
                if !waiting.is_empty() {
                    stack.extend(waiting);
                    continue;
                }
                stack.pop();
                let highest = parents.iter().filter_map(|p| level.get(p)).max().copied();
                level.insert(at, highest.map_or(1, |l| l + 1));
            }
        }
        CommitGraph { nodes, level }
    }
}

/// Everything `commit` reaches, from the bitmaps of selected ancestors already built and a walk
/// of the rest.
///
/// Commits are walked first, newest first (highest level): a selected ancestor is met, and its
/// bitmap ORed in, before any of its own ancestors. Trees wait until every ancestor's bitmap is
/// in, so that no tree an ancestor has is read again. Each tree is compared with the tree at
/// its path in the first parent (which ends up in the set too, through a bitmap or this walk):
/// only the entries that differ are looked up, where looking up every entry of every root
/// tree was most of the time.
fn reachable(
    trees: &mut TreeReader<'_>,
    graph: &CommitGraph,
    commit: &ObjectId,
    built: &IdMap<Bitset>,
    count: usize,
    bit_of: &dyn Fn(&ObjectId) -> Result<usize, BitmapWriteError>,
) -> Result<Bitset, BitmapWriteError> {
    let mut set = Bitset::new(count);
    let mut commits = std::collections::BinaryHeap::from([(graph.level[commit], *commit)]);
    let mut pending: Vec<(ObjectId, Option<ObjectId>)> = Vec::new();
    while let Some((_, id)) = commits.pop() {
        let bit = bit_of(&id)?;
        if set.get(bit) {
            continue;
        }
        if id != *commit {
            if let Some(ancestor) = built.get(&id) {
                set.or(ancestor);
                continue;
            }
        }
        set.set(bit);
        let (parents, tree) = &graph.nodes[&id];
        for parent in parents {
            if let Some(&level) = graph.level.get(parent) {
                commits.push((level, *parent));
            }
        }
        let reference = (parents.first())
            .and_then(|p| graph.nodes.get(p))
            .map(|n| n.1);
        pending.push((*tree, reference));
    }
    let hash = trees.objects.hash();
    while let Some((tree, reference)) = pending.pop() {
        let bit = bit_of(&tree)?;
        if set.get(bit) {
            continue;
        }
        set.set(bit);
        let data = trees.read(&tree)?;
        let old = match reference {
            Some(reference) => trees.read(&reference)?,
            None => std::sync::Arc::from(&[][..]),
        };
        let mut failed = None;
        for_each_changed(
            hash,
            &data,
            &old,
            |entry, counterpart| {
                if entry.is_tree() {
                    let old = counterpart.filter(|o| o.is_tree()).map(|o| o.id);
                    pending.push((entry.id, old));
                } else {
                    match bit_of(&entry.id) {
                        Ok(bit) => set.set(bit),
                        Err(e) => failed = Some(e),
                    }
                }
                Ok(())
            },
            |offset| BitmapWriteError::Malformed {
                id: tree,
                source: ParseError::TreeEntry(offset),
            },
        )?;
        if let Some(e) = failed {
            return Err(e);
        }
    }
    Ok(set)
}

/// Reads trees, keeping the last few: a tree is read again as the reference of the same path
/// one commit later.
struct TreeReader<'a> {
    objects: &'a ObjectDb,
    recent: IdMap<std::sync::Arc<[u8]>>,
    order: std::collections::VecDeque<ObjectId>,
}

/// How many trees [`TreeReader`] keeps.
const RECENT_TREES: usize = 256;

impl<'a> TreeReader<'a> {
    fn new(objects: &'a ObjectDb) -> Self {
        TreeReader {
            objects,
            recent: IdMap::default(),
            order: std::collections::VecDeque::new(),
        }
    }

    fn read(&mut self, id: &ObjectId) -> Result<std::sync::Arc<[u8]>, BitmapWriteError> {
        if let Some(data) = self.recent.get(id) {
            return Ok(std::sync::Arc::clone(data));
        }
        let data: std::sync::Arc<[u8]> = match self.objects.read(id)? {
            Some((ObjectKind::Tree, data)) => data.into(),
            _ => return Err(BitmapWriteError::NotInPack(*id)),
        };
        if self.order.len() == RECENT_TREES {
            if let Some(old) = self.order.pop_front() {
                self.recent.remove(&old);
            }
        }
        self.order.push_back(*id);
        self.recent.insert(*id, std::sync::Arc::clone(&data));
        Ok(data)
    }
}
