//! Changed-path Bloom filters (`commit-graph write --changed-paths`): for each commit, a small
//! Bloom filter of the paths that differ from its first parent (every leading directory of
//! those too), so that a history walk limited to a path can skip commits that cannot touch it.
//! The filters are the `BIDX` chunk (each commit's cumulative end, in bytes) and the `BDAT`
//! chunk (a header of three 32-bit numbers, then the filters in the graph's commit order).
//!
//! As git computes them: the keys are murmur3 (32 bit) of the path with two seeds, combined by
//! double hashing into `hashes` bit positions; a filter holds `bits_per_entry` bits per path,
//! rounded up to whole bytes; a commit with no change has a filter of one zero byte, one with
//! more than 512 paths a filter of one byte of ones. Version 1 of the hash reads the path's
//! bytes as C's signed `char` (so bytes from 0x80 differ from standard murmur3); version 2
//! reads them unsigned.

use super::read::graph_files;
use super::write::{CommitGraphError, Node};
use sluice_object::progress::Progress;
use sluice_object::tree_diff::for_each_difference;
use sluice_object::{HashKind, IdMap, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use std::collections::HashSet;
use std::path::Path;

pub(crate) const BLOOM_INDEX: [u8; 4] = *b"BIDX";
pub(crate) const BLOOM_DATA: [u8; 4] = *b"BDAT";

/// The two murmur3 seeds of a key's double hashing.
const SEEDS: [u32; 2] = [0x293a_e76f, 0x7e64_6e2c];

/// Whether a graph written now carries changed-path filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChangedPaths {
    /// As the graph there now does (with its settings): git's default.
    #[default]
    AsBefore,
    /// Always (`--changed-paths`).
    Write,
    /// Never (`--no-changed-paths`).
    Skip,
}

/// How filters are made; the first three are written in `BDAT`'s header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BloomSettings {
    /// The murmur3 variant (1: bytes as signed, 2: as unsigned).
    pub(super) version: u32,
    /// Bit positions per path.
    pub(super) hashes: u32,
    /// Bits of filter per path.
    pub(super) bits_per_entry: u32,
    /// More paths than this give the "everything changed" filter.
    pub(super) max_paths: usize,
    /// At most this many filters computed anew (`--max-new-filters`,
    /// `commitGraph.maxNewFilters`); the others are written empty, for a later write.
    pub(super) max_new: Option<usize>,
}

impl Default for BloomSettings {
    fn default() -> Self {
        BloomSettings {
            version: 1,
            hashes: 7,
            bits_per_entry: 10,
            max_paths: 512,
            max_new: None,
        }
    }
}

/// The filters of a graph's commits, in its order.
pub(super) struct Filters {
    pub(super) settings: BloomSettings,
    pub(super) filters: Vec<Vec<u8>>,
}

impl Filters {
    /// The `BIDX` and `BDAT` chunks.
    pub(super) fn chunks(&self) -> [([u8; 4], Vec<u8>); 2] {
        let mut index = Vec::with_capacity(self.filters.len() * 4);
        let s = &self.settings;
        let mut data = [s.version, s.hashes, s.bits_per_entry]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect::<Vec<u8>>();
        for filter in &self.filters {
            data.extend_from_slice(filter);
            // A filter's end, counted from after the header.
            index.extend_from_slice(&((data.len() - 12) as u32).to_be_bytes());
        }
        [(BLOOM_INDEX, index), (BLOOM_DATA, data)]
    }
}

/// The settings a graph written now uses, or `None` for no filters: asked for, or kept as
/// the graph there now has them; `commitGraph.changedPathsVersion` (git 2.47's) picks the
/// hash version and which existing filters count.
pub(super) fn settings_for(
    objects: &Path,
    hash: HashKind,
    config: &sluice_odb::Config,
    (choice, max_new): (ChangedPaths, Option<usize>),
) -> Result<Option<BloomSettings>, CommitGraphError> {
    if choice == ChangedPaths::Skip {
        return Ok(None);
    }
    let wanted = config
        .get_int("commitGraph.changedPathsVersion")?
        .unwrap_or(-1);
    // 0 reads no filters, so there are none to keep; another version's are kept, rewritten
    // in the one asked for.
    let existing = existing_settings(objects, hash).filter(|_| wanted != 0);
    let mut settings = match (choice, existing) {
        (_, Some(existing)) => existing,
        (ChangedPaths::Write, None) => BloomSettings::default(),
        _ => return Ok(None),
    };
    if let 1 | 2 = wanted {
        settings.version = wanted as u32;
    }
    let configured = config.get_int("commitGraph.maxNewFilters")?;
    settings.max_new = max_new.or(configured.and_then(|n| usize::try_from(n).ok()));
    Ok(Some(settings))
}

/// The filter settings of the newest graph file that has filters.
fn existing_settings(objects: &Path, hash: HashKind) -> Option<BloomSettings> {
    graph_files(objects).iter().rev().find_map(|path| {
        let bytes = std::fs::read(path).ok()?;
        let count = usize::from(*bytes.get(6)?);
        let table = sluice_odb::chunk_file::read_table(&bytes, 8, count, hash)?;
        let (at, len) = sluice_odb::chunk_file::find(&table, BLOOM_DATA)?;
        let word = |i: usize| -> Option<u32> {
            let raw = bytes.get(at + 4 * i..at + 4 * i + 4)?;
            Some(u32::from_be_bytes(raw.try_into().ok()?))
        };
        let settings = BloomSettings {
            version: word(0)?,
            hashes: word(1)?,
            bits_per_entry: word(2)?,
            ..BloomSettings::default()
        };
        let sound = len >= 12 && matches!(settings.version, 1 | 2) && settings.hashes > 0;
        sound.then_some(settings)
    })
}

/// The filters of `ids` (each in `nodes`, with its first parent; `corrected` their corrected
/// commit dates, in the same order). Those the graph there now holds with the same settings
/// are reused; the others are computed on every core, under `settings.max_new` only that
/// many, the earliest commits first (by corrected date, then commit time, then id) as git
/// picks them, the rest written empty.
pub(super) fn filters(
    objects: &ObjectDb,
    ids: &[ObjectId],
    nodes: &IdMap<Node>,
    corrected: &[u64],
    settings: BloomSettings,
    progress: &dyn Progress,
) -> Result<Filters, CommitGraphError> {
    let mut existing = existing_filters(objects.dir(), objects.hash(), settings);
    let mut wanted: Vec<usize> = (0..ids.len())
        .filter(|&i| !existing.contains_key(&ids[i]))
        .collect();
    if let Some(limit) = settings.max_new {
        let time = |i: usize| nodes.get(&ids[i]).map_or(0, |n| n.time);
        wanted.sort_by_key(|&i| (corrected.get(i).copied(), time(i), i));
        wanted.truncate(limit);
        wanted.sort_unstable();
    }
    progress.delayed_phase(
        "Computing commit changed paths Bloom filters",
        Some(ids.len() as u64),
    );
    progress.add((ids.len() - wanted.len()) as u64);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_thread = wanted.len().div_ceil(threads).max(1);
    let parts: Vec<Result<Made, CommitGraphError>> = std::thread::scope(|scope| {
        let running: Vec<_> = (wanted.chunks(per_thread))
            .map(|chunk| {
                scope.spawn(move || {
                    let mut made = Vec::with_capacity(chunk.len());
                    for &at in chunk {
                        made.push((at, computed(objects, &ids[at], nodes, settings)?));
                        progress.add(1);
                    }
                    Ok(made)
                })
            })
            .collect();
        (running.into_iter())
            .map(|t| t.join().unwrap_or_else(|_| Ok(Vec::new())))
            .collect()
    });
    let mut filters: Vec<Vec<u8>> = (ids.iter())
        .map(|id| existing.remove(id).unwrap_or_default())
        .collect();
    for part in parts {
        for (at, filter) in part? {
            filters[at] = filter;
        }
    }
    progress.finish();
    Ok(Filters { settings, filters })
}

/// Filters made on one thread, each with the position of its commit.
type Made = Vec<(usize, Vec<u8>)>;

/// The filter of commit `id`, against its first parent.
fn computed(
    objects: &ObjectDb,
    id: &ObjectId,
    nodes: &IdMap<Node>,
    settings: BloomSettings,
) -> Result<Vec<u8>, CommitGraphError> {
    let node = nodes.get(id).ok_or(CommitGraphError::Missing(*id))?;
    let old = match node.parents.first() {
        Some(p) => Some(nodes.get(p).ok_or(CommitGraphError::Missing(*p))?.tree),
        None => None,
    };
    let paths = changed_paths(objects, old, node.tree, settings.max_paths)?;
    Ok(filter_of(paths.as_ref(), settings))
}

/// The filters the graph files there now hold, by commit, where written with `settings`
/// (those written empty, not computed then, are left out).
fn existing_filters(objects: &Path, hash: HashKind, settings: BloomSettings) -> IdMap<Vec<u8>> {
    let mut found = IdMap::default();
    for path in graph_files(objects) {
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let Some(count) = bytes.get(6).map(|&c| usize::from(c)) else {
            continue;
        };
        let Some(table) = sluice_odb::chunk_file::read_table(&bytes, 8, count, hash) else {
            continue;
        };
        let chunk =
            |id| sluice_odb::chunk_file::find(&table, id).map(|(at, len)| &bytes[at..at + len]);
        let (Some(lookup), Some(index), Some(data)) =
            (chunk(*b"OIDL"), chunk(BLOOM_INDEX), chunk(BLOOM_DATA))
        else {
            continue;
        };
        let header = [settings.version, settings.hashes, settings.bits_per_entry];
        let same =
            data.len() >= 12 && (0..3).all(|k| data[4 * k..4 * k + 4] == header[k].to_be_bytes());
        let id_len = hash.len_in_bytes();
        if !same || index.len() / 4 != lookup.len() / id_len {
            continue;
        }
        let mut start = 0usize;
        for (raw, end) in lookup.chunks_exact(id_len).zip(index.chunks_exact(4)) {
            let end = u32::from_be_bytes(end.try_into().expect("four bytes")) as usize;
            let filter = data.get(12 + start..12 + end);
            if let (Ok(id), Some(filter)) = (ObjectId::from_bytes(hash, raw), filter) {
                if !filter.is_empty() {
                    found.insert(id, filter.to_vec());
                }
            }
            start = end;
        }
    }
    found
}

/// The filter of `paths`; `None` means more than the settings' maximum.
fn filter_of(paths: Option<&HashSet<Vec<u8>>>, settings: BloomSettings) -> Vec<u8> {
    let Some(paths) = paths else {
        return vec![0xff];
    };
    let bits = paths.len() * settings.bits_per_entry as usize;
    let mut filter = vec![0u8; bits.div_ceil(8).max(1)];
    let width = filter.len() as u64 * 8;
    for path in paths {
        let first = murmur3(SEEDS[0], path, settings.version);
        let step = murmur3(SEEDS[1], path, settings.version);
        for i in 0..settings.hashes {
            let bit = u64::from(first.wrapping_add(i.wrapping_mul(step))) % width;
            filter[(bit / 8) as usize] |= 1 << (bit % 8);
        }
    }
    filter
}

/// 32-bit murmur3 of `data`; `version` 1 takes each byte as a signed one, sign-extended.
fn murmur3(mut seed: u32, data: &[u8], version: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let byte = |b: u8| -> u32 {
        match version {
            1 => b as i8 as i32 as u32,
            _ => u32::from(b),
        }
    };
    let mix = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let k = byte(block[0]) | byte(block[1]) << 8 | byte(block[2]) << 16 | byte(block[3]) << 24;
        seed ^= mix(k);
        seed = seed
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let k = (tail.iter().enumerate()).fold(0u32, |k, (i, &b)| k ^ byte(b) << (8 * i));
        seed ^= mix(k);
    }
    seed ^= data.len() as u32;
    seed ^= seed >> 16;
    seed = seed.wrapping_mul(0x85eb_ca6b);
    seed ^= seed >> 13;
    seed = seed.wrapping_mul(0xc2b2_ae35);
    seed ^ (seed >> 16)
}

/// The paths that differ between the trees `old` (none for a root commit) and `new`, and
/// every leading directory of each; `None` once there are more than `max`.
fn changed_paths(
    objects: &ObjectDb,
    old: Option<ObjectId>,
    new: ObjectId,
    max: usize,
) -> Result<Option<HashSet<Vec<u8>>>, CommitGraphError> {
    let mut paths = ChangedSet {
        paths: HashSet::new(),
        max,
    };
    match diff(objects, old, Some(new), &mut Vec::new(), &mut paths)? {
        Flow::Go => Ok(Some(paths.paths)),
        Flow::TooMany => Ok(None),
    }
}

/// Whether the diff goes on.
enum Flow {
    Go,
    TooMany,
}

struct ChangedSet {
    paths: HashSet<Vec<u8>>,
    max: usize,
}

impl ChangedSet {
    /// Adds `path` and its leading directories.
    fn add(&mut self, path: &[u8]) -> Flow {
        let mut path = path;
        loop {
            if !self.paths.contains(path) {
                self.paths.insert(path.to_vec());
            }
            match path.iter().rposition(|&b| b == b'/') {
                Some(slash) => path = &path[..slash],
                None => break,
            }
        }
        match self.paths.len() > self.max {
            true => Flow::TooMany,
            false => Flow::Go,
        }
    }
}

/// An entry that differs: its name, and the mode and id on each side that has it.
struct Difference {
    name: Vec<u8>,
    old: Option<(u32, ObjectId)>,
    new: Option<(u32, ObjectId)>,
}

/// Adds the paths under `prefix` that differ between the trees `old` and `new` (a missing
/// side is empty), recursing into trees as git's recursive diff does.
fn diff(
    objects: &ObjectDb,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    prefix: &mut Vec<u8>,
    paths: &mut ChangedSet,
) -> Result<Flow, CommitGraphError> {
    let hash = objects.hash();
    let (old_data, new_data) = (read_tree(objects, old)?, read_tree(objects, new)?);
    let mut differences = Vec::new();
    let bad = |tree: Option<ObjectId>| move |offset| CommitGraphError::BadTree { tree, offset };
    for_each_difference(
        hash,
        &new_data,
        &old_data,
        |entry, before| {
            differences.push(Difference {
                name: entry.name.to_vec(),
                old: before.map(|b| (b.mode, b.id)),
                new: Some((entry.mode, entry.id)),
            });
            Ok(())
        },
        bad(new),
    )?;
    for_each_difference(
        hash,
        &old_data,
        &new_data,
        |entry, after| {
            if after.is_none() {
                differences.push(Difference {
                    name: entry.name.to_vec(),
                    old: Some((entry.mode, entry.id)),
                    new: None,
                });
            }
            Ok(())
        },
        bad(old),
    )?;
    for difference in differences {
        let len = prefix.len();
        if len > 0 {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(&difference.name);
        let subtree = |side: Option<(u32, ObjectId)>| side.filter(|s| s.0 == 0o40000);
        let (old_tree, new_tree) = (subtree(difference.old), subtree(difference.new));
        // A side that is no tree is a path of its own; trees are compared inside.
        let leaf = |side: Option<(u32, ObjectId)>| side.is_some_and(|s| s.0 != 0o40000);
        let mut flow = Flow::Go;
        if leaf(difference.old) || leaf(difference.new) {
            flow = paths.add(prefix);
        }
        if matches!(flow, Flow::Go) && (old_tree.is_some() || new_tree.is_some()) {
            flow = diff(
                objects,
                old_tree.map(|t| t.1),
                new_tree.map(|t| t.1),
                prefix,
                paths,
            )?;
        }
        prefix.truncate(len);
        if let Flow::TooMany = flow {
            return Ok(Flow::TooMany);
        }
    }
    Ok(Flow::Go)
}

/// The entries of tree `id` (none for no tree).
fn read_tree(objects: &ObjectDb, id: Option<ObjectId>) -> Result<Vec<u8>, CommitGraphError> {
    let Some(id) = id else {
        return Ok(Vec::new());
    };
    match objects.read(&id)? {
        Some((ObjectKind::Tree, data)) => Ok(data),
        _ => Err(CommitGraphError::Missing(id)),
    }
}

#[cfg(test)]
#[path = "bloom_tests.rs"]
mod tests;
