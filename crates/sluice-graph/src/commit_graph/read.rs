//! Reading the commit-graph: a commit's position, parents and generation without inflating
//! it, from the whole file or from a split chain's layers (positions then count through the
//! layers, bottom first, as their parents do). Every offset is checked against its file, and a
//! graph that does not hold together (wrong signature, hash, chunk table or sizes, a layer
//! missing) is not used: walks then read the commits themselves, as they do without one.

use super::*;
use sluice_object::{HashKind, ObjectId};
use sluice_odb::mmap::{map, Mapped};
use std::path::Path;

/// The graph files of the object directory `objects`: a split chain's layers, bottom first,
/// or the one file.
pub(super) fn graph_files(objects: &Path) -> Vec<std::path::PathBuf> {
    super::files::GraphFiles::of(objects).to_read()
}

/// An opened commit-graph: one file, or the layers of a split one.
pub struct GraphReader {
    files: Vec<GraphFile>,
}

/// A commit as the graph records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphCommit {
    /// Its tree.
    pub tree: ObjectId,
    /// Its parents, in order.
    pub parents: Vec<ObjectId>,
    /// Its committer time (seconds since the epoch).
    pub time: i64,
}

/// One graph file; its positions start at `base` (the commits of the layers below).
struct GraphFile {
    base: usize,
    data: Mapped,
    hash: HashKind,
    count: usize,
    fanout: usize,
    lookup: usize,
    commit_data: usize,
    generation: Option<usize>,
    overflow: Option<(usize, usize)>,
    edges: Option<(usize, usize)>,
}

impl std::fmt::Debug for GraphReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphReader")
            .field("commits", &self.len())
            .field("layers", &self.files.len())
            .finish()
    }
}

impl GraphReader {
    /// The graph of the object directory `objects`, if it has a usable one: the split chain
    /// (`info/commit-graphs/commit-graph-chain`) if there is one, else `info/commit-graph`.
    pub fn open(objects: &Path, hash: HashKind) -> Option<GraphReader> {
        let paths = graph_files(objects);
        let mut files: Vec<GraphFile> = Vec::with_capacity(paths.len());
        for (layer, path) in paths.iter().enumerate() {
            let data = map(&std::fs::File::open(path).ok()?).ok()?;
            let base = files.last().map_or(0, |f| f.base + f.count);
            files.push(GraphFile::parse(data, hash, base, layer)?);
        }
        (!files.is_empty()).then_some(GraphReader { files })
    }

    /// The number of commits.
    pub fn len(&self) -> usize {
        self.files.last().map_or(0, |f| f.base + f.count)
    }

    /// The position of the first commit of the newest layer (0 for a graph of one file).
    pub fn top_layer_start(&self) -> usize {
        self.files.last().map_or(0, |f| f.base)
    }

    /// Whether the graph holds no commit.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The commit at `position`.
    pub fn id(&self, position: u32) -> Option<ObjectId> {
        let (file, local) = self.file_of(position)?;
        file.id(local)
    }

    /// Where `id` is, if the graph has it.
    pub fn position(&self, id: &ObjectId) -> Option<u32> {
        (self.files.iter()).find_map(|f| f.position(id).map(|p| (f.base + p as usize) as u32))
    }

    /// The parents of the commit at `position`, as positions; `None` if the graph is broken
    /// there.
    pub fn parents(&self, position: u32) -> Option<Vec<u32>> {
        let (file, local) = self.file_of(position)?;
        file.parents(local)
    }

    /// The commit's generation: its corrected commit date where the graph has them, else its
    /// topological level. A commit that reaches another has a higher one.
    pub fn generation(&self, position: u32) -> Option<u64> {
        let (file, local) = self.file_of(position)?;
        file.generation(local)
    }

    /// What the graph records of commit `id`: its tree, parents and commit time; `None` if
    /// the graph does not have it (or is broken there).
    pub fn commit(&self, id: &ObjectId) -> Option<GraphCommit> {
        let position = self.position(id)?;
        let (file, local) = self.file_of(position)?;
        let at = file.commit_record(local)?;
        let len = file.hash.len_in_bytes();
        let tree = ObjectId::from_bytes(file.hash, file.bytes().get(at..at + len)?).ok()?;
        let high = be32(file.bytes(), at + len + 8)?;
        let time = (i64::from(high & 3) << 32) | i64::from(be32(file.bytes(), at + len + 12)?);
        let parents = (file.parents(local)?.into_iter())
            .map(|p| self.id(p))
            .collect::<Option<Vec<_>>>()?;
        Some(GraphCommit {
            tree,
            parents,
            time,
        })
    }

    /// The layer holding `position`, and the position within it.
    fn file_of(&self, position: u32) -> Option<(&GraphFile, u32)> {
        let position = position as usize;
        let file =
            (self.files.iter()).find(|f| position >= f.base && position < f.base + f.count)?;
        Some((file, (position - file.base) as u32))
    }
}

impl GraphFile {
    /// Layer number `layer` of a chain (0 for a whole graph), whose positions start at `base`.
    fn parse(data: Mapped, hash: HashKind, base: usize, layer: usize) -> Option<GraphFile> {
        let bytes = data.as_ref();
        let id_len = hash.len_in_bytes();
        let hash_version = match hash {
            HashKind::Sha1 => 1,
        };
        if bytes.len() < 8 + 12 + id_len || &bytes[..4] != b"CGPH" || bytes[4] != 1 {
            return None;
        }
        // A layer names as many graphs below it as the chain lists.
        if bytes[5] != hash_version || usize::from(bytes[7]) != layer {
            return None;
        }
        let table = sluice_odb::chunk_file::read_table(bytes, 8, usize::from(bytes[6]), hash)?;
        let chunk = |id: [u8; 4]| sluice_odb::chunk_file::find(&table, id);
        let (fanout, fanout_len) = chunk(OID_FANOUT)?;
        if fanout_len != 256 * 4 {
            return None;
        }
        let count = be32(bytes, fanout + 255 * 4)? as usize;
        let (lookup, lookup_len) = chunk(OID_LOOKUP)?;
        let (commit_data, data_len) = chunk(COMMIT_DATA)?;
        if lookup_len != count * id_len || data_len != count * (id_len + 16) {
            return None;
        }
        let generation = match chunk(GENERATION_DATA) {
            Some((at, len)) if len == count * 4 => Some(at),
            Some(_) => return None,
            None => None,
        };
        Some(GraphFile {
            base,
            data,
            hash,
            count,
            fanout,
            lookup,
            commit_data,
            generation,
            overflow: chunk(GENERATION_OVERFLOW),
            edges: chunk(EXTRA_EDGES),
        })
    }

    fn bytes(&self) -> &[u8] {
        self.data.as_ref()
    }

    fn id(&self, position: u32) -> Option<ObjectId> {
        let len = self.hash.len_in_bytes();
        let at = self.lookup + position as usize * len;
        ObjectId::from_bytes(self.hash, self.bytes().get(at..at + len)?).ok()
    }

    /// Where `id` is in this file, if it has it.
    fn position(&self, id: &ObjectId) -> Option<u32> {
        let first = usize::from(id.as_bytes()[0]);
        let lo = match first {
            0 => 0,
            _ => be32(self.bytes(), self.fanout + (first - 1) * 4)? as usize,
        };
        let hi = (be32(self.bytes(), self.fanout + first * 4)? as usize).min(self.count);
        let len = self.hash.len_in_bytes();
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let at = self.lookup + mid * len;
            match self.bytes().get(at..at + len)?.cmp(id.as_bytes()) {
                std::cmp::Ordering::Equal => return Some(mid as u32),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        None
    }

    /// The parents of the commit at local `position`, as positions in the whole chain.
    fn parents(&self, position: u32) -> Option<Vec<u32>> {
        let at = self.commit_record(position)? + self.hash.len_in_bytes();
        let (first, second) = (be32(self.bytes(), at)?, be32(self.bytes(), at + 4)?);
        let mut parents = Vec::new();
        for parent in [first, second] {
            if parent == NO_PARENT {
                return Some(parents);
            }
            if parent & EDGE_BIT == 0 {
                parents.push(self.checked(parent)?);
                continue;
            }
            let (edges, len) = self.edges?;
            let mut i = (parent & !EDGE_BIT) as usize;
            loop {
                if 4 * (i + 1) > len {
                    return None;
                }
                let value = be32(self.bytes(), edges + 4 * i)?;
                parents.push(self.checked(value & !EDGE_BIT)?);
                if value & EDGE_BIT != 0 {
                    return Some(parents);
                }
                i += 1;
            }
        }
        Some(parents)
    }

    fn generation(&self, position: u32) -> Option<u64> {
        let at = self.commit_record(position)? + self.hash.len_in_bytes() + 8;
        let high = be32(self.bytes(), at)?;
        let Some(generation) = self.generation else {
            return Some(u64::from(high >> 2));
        };
        let time = (u64::from(high & 3) << 32) | u64::from(be32(self.bytes(), at + 4)?);
        let offset = be32(self.bytes(), generation + 4 * position as usize)?;
        if offset & EDGE_BIT == 0 {
            return Some(time + u64::from(offset));
        }
        let (overflow, len) = self.overflow?;
        let i = (offset & !EDGE_BIT) as usize;
        if 8 * (i + 1) > len {
            return None;
        }
        let at = overflow + 8 * i;
        let value = u64::from_be_bytes(self.bytes().get(at..at + 8)?.try_into().ok()?);
        Some(time + value)
    }

    fn commit_record(&self, position: u32) -> Option<usize> {
        ((position as usize) < self.count)
            .then(|| self.commit_data + position as usize * (self.hash.len_in_bytes() + 16))
    }

    /// A parent's position, if it is in this file or a layer below.
    fn checked(&self, position: u32) -> Option<u32> {
        ((position as usize) < self.base + self.count).then_some(position)
    }
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}
