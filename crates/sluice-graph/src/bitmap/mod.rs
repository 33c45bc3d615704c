//! Reachability bitmaps (`gitformat-bitmap`): a `.bitmap` beside a pack holds, for selected
//! commits, the set of pack objects each reaches, one bit per object in pack order. Counting
//! the objects of a fetch becomes a few ORs and one AND-NOT instead of a walk over every tree
//! of the history; commits without a bitmap of their own are walked only down to ancestors
//! that have one.
//!
//! A multi-pack-index's bitmap is read first (its bits number the objects of several packs),
//! else the first pack's. Anything this code cannot vouch for (a checksum that is not the
//! file's, an object outside it, a shallow or filtered request) makes it step aside, and the
//! revision walk answers instead.

mod ewah;
#[cfg(test)]
mod midx_tests;
mod midx_write;
mod numbering;
#[cfg(test)]
mod outside_tests;
mod reach_memo;
#[cfg(test)]
mod reach_memo_tests;
mod reuse;
mod select;
mod target;
mod write;

pub use midx_write::write_midx_bitmap;
pub(crate) use numbering::KnownNumbering;
use numbering::{MidxNumbering, Numbering};
pub use reach_memo::ReachMemo;
pub use target::BitmapTarget;
pub use write::{
    build_commit_bitmaps, write_bitmap, write_bitmap_file, BitmapFormat, BitmapWriteError,
    CommitBitmaps, CommitsIn,
};

use crate::walk::{
    known_paths, KnownInPack, KnownObjects, Located, WalkError, WalkRequest, Walked, WalkedObject,
};
pub(crate) use ewah::Bitset;
use ewah::{decode, serialized_len};
use sluice_object::parse::{parse_commit, parse_tag, ParseError};
use sluice_object::progress::Progress;
use sluice_object::tree_diff::for_each_changed;
use sluice_object::{IdMap, IdSet, ObjectId, ObjectKind};
use sluice_odb::mmap::{map, Mapped};
use sluice_odb::ObjectDb;
use sluice_odb::Pack;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

const FULL_DAG: u16 = 0x1;
const HASH_CACHE: u16 = 0x4;
const LOOKUP_TABLE: u16 = 0x10;
/// The furthest back an entry may be XORed against.
const MAX_XOR_OFFSET: usize = 160;
/// Have commits whose trees give the client's versions of files to the delta search.
const MAX_PATH_HAVES: usize = 16;
/// Resolved bitmaps kept while answering one request.
const CACHE_ENTRIES: usize = 256;

/// One selected commit's stored bitmap.
struct Entry {
    /// Where its EWAH data starts in the file.
    at: usize,
    /// The entry it is XORed against, if any.
    xor_with: Option<usize>,
}

/// A bitmap index (a pack's or a multi-pack-index's), ready for questions.
struct PackBitmap<'a> {
    numbering: Numbering<'a>,
    data: Mapped,
    objects: usize,
    /// Commits, trees, blobs, tags.
    types: [Bitset; 4],
    entries: Vec<Entry>,
    by_commit: IdMap<usize>,
    /// Where the name-hash cache starts (one 32-bit hash per object, in index order).
    hashes: Option<usize>,
    cache: HashMap<usize, Bitset>,
    /// Where the file's trailing checksum starts: it identifies the bitmap, and through its
    /// header the pack or multi-pack-index it numbers.
    trailer: usize,
}

/// A problem with a `.bitmap` file: it is then not used.
#[derive(Debug)]
struct Unusable;

impl From<ewah::EwahError> for Unusable {
    fn from(_: ewah::EwahError) -> Self {
        Unusable
    }
}

impl<'a> PackBitmap<'a> {
    /// The bitmap of `pack`, one of the odb's (`number`) or not.
    fn open(pack: &'a Pack, number: Option<usize>) -> Result<PackBitmap<'a>, Unusable> {
        Self::open_numbered(Numbering::Pack(pack, number))
    }

    fn open_numbered(numbering: Numbering<'a>) -> Result<PackBitmap<'a>, Unusable> {
        let file = std::fs::File::open(numbering.bitmap_path()).map_err(|_| Unusable)?;
        let mapped = map(&file).map_err(|_| Unusable)?;
        let data = mapped.as_ref();
        let objects = numbering.len();
        let checksum = numbering.checksum();
        let id_len = checksum.as_bytes().len();
        let header = 12 + id_len;
        if data.len() < header + id_len
            || &data[..4] != b"BITM"
            || data[4..6] != 1u16.to_be_bytes()
            || data[header - id_len..header] != *checksum.as_bytes()
        {
            return Err(Unusable);
        }
        let flags = u16::from_be_bytes([data[6], data[7]]);
        if flags & FULL_DAG == 0 {
            return Err(Unusable);
        }
        let count = u32::from_be_bytes(data[8..12].try_into().map_err(|_| Unusable)?) as usize;
        let body_end = data.len() - id_len;
        let mut at = header;
        let mut types = Vec::with_capacity(4);
        for _ in 0..4 {
            let rest = data.get(at..body_end).ok_or(Unusable)?;
            types.push(decode(rest, objects)?);
            at += serialized_len(rest)?;
        }
        let mut entries = Vec::with_capacity(count.min(objects));
        let mut by_commit = IdMap::default();
        for k in 0..count {
            let fixed = data.get(at..at + 6).ok_or(Unusable)?;
            let position = u32::from_be_bytes(fixed[..4].try_into().map_err(|_| Unusable)?);
            let xor = usize::from(fixed[4]);
            if position as usize >= objects || xor > k || xor > MAX_XOR_OFFSET {
                return Err(Unusable);
            }
            at += 6;
            let len = serialized_len(data.get(at..body_end).ok_or(Unusable)?)?;
            entries.push(Entry {
                at,
                xor_with: (xor > 0).then(|| k - xor),
            });
            by_commit.insert(numbering.id_at(position as usize), k);
            at += len;
        }
        let hashes = (flags & HASH_CACHE != 0)
            .then(|| body_end.checked_sub(4 * objects))
            .flatten()
            .filter(|&h| h >= at);
        let types: [Bitset; 4] = types.try_into().map_err(|_| Unusable)?;
        Ok(PackBitmap {
            numbering,
            data: mapped,
            objects,
            types,
            entries,
            by_commit,
            hashes,
            cache: HashMap::new(),
            trailer: body_end,
        })
    }

    /// The bit of `id`, if the bitmap numbers it.
    fn position(&self, id: &ObjectId) -> Option<usize> {
        self.numbering.bit_of(id)
    }

    fn kind_at(&self, position: usize) -> Option<ObjectKind> {
        [
            ObjectKind::Commit,
            ObjectKind::Tree,
            ObjectKind::Blob,
            ObjectKind::Tag,
        ]
        .into_iter()
        .zip(&self.types)
        .find(|(_, set)| set.get(position))
        .map(|(kind, _)| kind)
    }

    fn name_hash_at(&self, index_position: usize) -> u32 {
        self.hashes.map_or(0, |at| {
            let at = at + 4 * index_position;
            u32::from_be_bytes(
                self.data.as_ref()[at..at + 4]
                    .try_into()
                    .unwrap_or_default(),
            )
        })
    }

    /// The bitmap of entry `k`, its XOR chain undone.
    fn entry_bitmap(&mut self, k: usize) -> Result<Bitset, Unusable> {
        if let Some(found) = self.cache.get(&k) {
            return Ok(found.clone());
        }
        let mut chain = vec![k];
        while let Some(base) = self.entries[*chain.last().unwrap_or(&k)].xor_with {
            if self.cache.contains_key(&base) {
                break;
            }
            chain.push(base);
        }
        let last = *chain.last().unwrap_or(&k);
        let mut bits = match self.entries[last].xor_with.and_then(|b| self.cache.get(&b)) {
            Some(base) => {
                let mut own = decode(&self.data.as_ref()[self.entries[last].at..], self.objects)?;
                own.xor(base);
                own
            }
            None => decode(&self.data.as_ref()[self.entries[last].at..], self.objects)?,
        };
        for &entry in chain.iter().rev().skip(1) {
            let mut own = decode(&self.data.as_ref()[self.entries[entry].at..], self.objects)?;
            own.xor(&bits);
            bits = own;
        }
        if self.cache.len() >= CACHE_ENTRIES {
            self.cache.clear();
        }
        self.cache.insert(k, bits.clone());
        Ok(bits)
    }

    /// [`Self::reach`], answered from `memo` when it has the answer, and remembered there
    /// when not.
    fn reach_remembered(
        &mut self,
        odb: &ObjectDb,
        tips: &[ObjectId],
        memo: Option<&ReachMemo>,
    ) -> Result<Option<Reached>, WalkError> {
        let Some(memo) = memo.filter(|_| !tips.is_empty()) else {
            return self.reach(odb, tips);
        };
        let key = reach_memo::Key::new(&self.data.as_ref()[self.trailer..], tips);
        if let Some(reached) = memo.recall(&key) {
            return Ok(Some(reached));
        }
        let reached = self.reach(odb, tips)?;
        if let Some(reached) = &reached {
            memo.remember(key, reached);
        }
        Ok(reached)
    }

    /// Every object reachable from `tips`: the pack's by bit, the others (objects pushed or
    /// fetched since the pack was written) by id; `None` when one of them cannot be read.
    fn reach(&mut self, odb: &ObjectDb, tips: &[ObjectId]) -> Result<Option<Reached>, WalkError> {
        let mut result = Reached {
            bits: Bitset::new(self.objects),
            outside: IdMap::default(),
        };
        // Each walked commit's tree, with its first parent (what the tree may be compared with).
        let mut roots = Vec::new();
        // Tips with bitmaps first, then the rest newest first (a parent queued with its
        // child's time): the walk from a recent commit soon meets bitmapped ancestors, and
        // older tips (release tags) are then found already covered.
        let mut queue = BinaryHeap::new();
        for (order, id) in tips.iter().enumerate() {
            match self.by_commit.get(id) {
                Some(&k) => {
                    let Ok(bits) = self.entry_bitmap(k) else {
                        return Ok(None);
                    };
                    result.bits.or(&bits);
                }
                None => queue.push((i64::MAX, Reverse(order), *id)),
            }
        }
        let mut order = tips.len();
        while let Some((time, _, id)) = queue.pop() {
            let position = self.position(&id);
            if result.has(position, &id) {
                continue;
            }
            if let Some(&k) = self.by_commit.get(&id) {
                let Ok(bits) = self.entry_bitmap(k) else {
                    return Ok(None);
                };
                result.bits.or(&bits);
                continue;
            }
            let Some((kind, data)) = odb.read(&id)? else {
                return Ok(None);
            };
            // A tree is marked when it is listed, below.
            if kind != ObjectKind::Tree {
                result.mark(position, id, kind, 0);
            }
            match kind {
                ObjectKind::Tag => {
                    let tag = parse_tag(odb.hash(), &data)
                        .map_err(|source| WalkError::Malformed { id, source })?;
                    order += 1;
                    queue.push((time, Reverse(order), tag.object));
                }
                ObjectKind::Commit => {
                    let commit = parse_commit(odb.hash(), &data)
                        .map_err(|source| WalkError::Malformed { id, source })?;
                    for parent in &commit.parents {
                        order += 1;
                        queue.push((commit.time, Reverse(order), *parent));
                    }
                    roots.push((commit.tree, commit.parents.first().copied(), id));
                }
                ObjectKind::Tree => roots.push((id, None, id)),
                ObjectKind::Blob => {}
            }
        }
        // Trees last: by now the bitmapped ancestors' objects are in. A tree is compared with
        // its commit's first parent's only where a bitmap has that parent, so that everything
        // the parent's tree holds is in already; a walked parent's tree is no such guarantee
        // (its own tree may have been skipped, met first through another commit that has the
        // same tree and other parents, as after a revert), and the tree is read whole.
        let walked: IdSet = roots.iter().map(|(_, _, commit)| *commit).collect();
        let mut unbitmapped = Vec::with_capacity(roots.len());
        for (tree, parent, _) in roots {
            let covered = parent.filter(|parent| {
                let position = self.position(parent);
                position.is_some() && result.has(position, parent) && !walked.contains(parent)
            });
            let old = match covered {
                Some(parent) => commit_tree(odb, &parent)?,
                None => None,
            };
            unbitmapped.push((tree, old, 0));
        }
        while let Some((tree, old, name_hash)) = unbitmapped.pop() {
            let position = self.position(&tree);
            if result.has(position, &tree) {
                continue;
            }
            result.mark(position, tree, ObjectKind::Tree, name_hash);
            let Some((ObjectKind::Tree, data)) = odb.read(&tree)? else {
                return Ok(None);
            };
            let old_data = match old {
                Some(old) => match odb.read(&old)? {
                    Some((ObjectKind::Tree, data)) => data,
                    _ => Vec::new(),
                },
                None => Vec::new(),
            };
            for_each_changed(
                odb.hash(),
                &data,
                &old_data,
                |entry, counterpart| {
                    let position = self.position(&entry.id);
                    if result.has(position, &entry.id) {
                        return Ok(());
                    }
                    let name_hash = || crate::walk::name_hash(entry.name);
                    if entry.is_tree() {
                        let old = counterpart.filter(|o| o.is_tree()).map(|o| o.id);
                        unbitmapped.push((entry.id, old, name_hash()));
                    } else {
                        result.mark(position, entry.id, ObjectKind::Blob, name_hash());
                    }
                    Ok(())
                },
                |offset| WalkError::Malformed {
                    id: tree,
                    source: ParseError::TreeEntry(offset),
                },
            )?;
        }
        Ok(Some(result))
    }
}

/// What a set of tips reaches: the bitmapped pack's objects by bit, and the objects stored
/// elsewhere (newer packs, loose objects) with their kind and name hash.
#[derive(Debug, Clone)]
struct Reached {
    bits: Bitset,
    outside: IdMap<(ObjectKind, u32)>,
}

impl Reached {
    /// Whether the object at pack position `position` (`None`: outside the pack) is in.
    fn has(&self, position: Option<usize>, id: &ObjectId) -> bool {
        match position {
            Some(position) => self.bits.get(position),
            None => self.outside.contains_key(id),
        }
    }

    fn mark(&mut self, position: Option<usize>, id: ObjectId, kind: ObjectKind, name_hash: u32) {
        match position {
            Some(position) => self.bits.set(position),
            None => {
                self.outside.insert(id, (kind, name_hash));
            }
        }
    }
}

/// The tree of commit `id`, if it is a readable commit.
fn commit_tree(odb: &ObjectDb, id: &ObjectId) -> Result<Option<ObjectId>, WalkError> {
    let Some((ObjectKind::Commit, data)) = odb.read(id)? else {
        return Ok(None);
    };
    let commit = parse_commit(odb.hash(), &data)
        .map_err(|source| WalkError::Malformed { id: *id, source })?;
    Ok(Some(commit.tree))
}

/// The index positions of `pack`'s commits, as its bitmap's type index lists them; `None`
/// when the pack has no usable bitmap.
pub(crate) fn commit_positions(pack: &Pack) -> Option<Vec<usize>> {
    let bitmap = PackBitmap::open(pack, None).ok()?;
    bitmap.types[0]
        .ones()
        .map(|rank| pack.at_rank(rank))
        .collect()
}

/// Whether counting in `odb` can start from a bitmap (a multi-pack-index's or a pack's), so
/// that a full count costs a fraction of a walk of the whole history.
pub fn counts_with_bitmap(odb: &ObjectDb) -> bool {
    open_bitmap(odb).is_some()
}

/// The bitmap to count with: the multi-pack-index's when it has one (git reads it first),
/// else the first pack's.
fn open_bitmap(odb: &ObjectDb) -> Option<PackBitmap<'_>> {
    let midx = MidxNumbering::open(odb).map(|m| Numbering::Midx(std::sync::Arc::new(m)));
    if let Some(bitmap) = midx.and_then(|n| PackBitmap::open_numbered(n).ok()) {
        return Some(bitmap);
    }
    (odb.packs().iter().enumerate()).find_map(|(n, pack)| PackBitmap::open(pack, Some(n)).ok())
}

/// The objects `request` asks for, counted with a bitmap; `None` when there is none or it
/// cannot answer (then the walk must).
pub(crate) fn walk_with_bitmap(
    odb: &ObjectDb,
    request: &WalkRequest<'_>,
    progress: &dyn Progress,
) -> Result<Option<Walked>, WalkError> {
    let Some(mut bitmap) = open_bitmap(odb) else {
        return Ok(None);
    };
    progress.phase("Enumerating objects", None);
    let Some(Reached {
        bits: mut send,
        outside: send_outside,
    }) = bitmap.reach_remembered(odb, request.wants, request.reach_memo)?
    else {
        return Ok(None);
    };
    let Some(Reached {
        bits: have,
        outside: have_outside,
    }) = bitmap.reach_remembered(odb, request.haves, request.reach_memo)?
    else {
        return Ok(None);
    };
    send.and_not(&have);
    let mut walked = Walked::default();
    let count = send.count();
    walked.objects.reserve(count + send_outside.len());
    let mut located = Vec::with_capacity(count);
    for position in send.ones() {
        let numbering = &bitmap.numbering;
        let (Some(index_position), Some(at)) = (
            numbering.index_at_bit(position),
            numbering.location(odb, position),
        ) else {
            return Ok(None);
        };
        located.push(at);
        let Some(kind) = bitmap.kind_at(position) else {
            return Ok(None);
        };
        walked.objects.push(WalkedObject {
            id: numbering.id_at(index_position),
            kind,
            name_hash: bitmap.name_hash_at(index_position),
            previous: None,
        });
    }
    // Objects stored outside the bitmapped pack follow, for the writer to find one by one:
    // commits first, as a walk lists them.
    let mut outside: Vec<(ObjectId, (ObjectKind, u32))> = (send_outside.into_iter())
        .filter(|(id, _)| !have_outside.contains_key(id))
        .collect();
    outside.sort_by_key(|(id, (kind, _))| (*kind != ObjectKind::Commit, *id));
    walked.objects.extend(
        outside
            .into_iter()
            .map(|(id, (kind, name_hash))| WalkedObject {
                id,
                kind,
                name_hash,
                previous: None,
            }),
    );
    progress.add(walked.objects.len() as u64);
    walked.located = Some(Located { at: located });
    // The delta search's candidates from the client's side: the files of the haves' trees (a
    // few commits), not every object they reach.
    let have_commits: Vec<ObjectId> = request
        .haves
        .iter()
        .filter(|id| bitmap.position(id).is_some_and(|p| bitmap.types[0].get(p)))
        .take(MAX_PATH_HAVES)
        .copied()
        .collect();
    walked.known_by_path = known_paths(odb, &have_commits, progress, &request.cancel)?;
    let Some(numbering) = bitmap.numbering.known() else {
        return Ok(None);
    };
    walked.known_to_other_side = KnownObjects::with_pack(KnownInPack {
        numbering,
        bits: have,
    });
    for id in have_outside.into_keys() {
        walked.known_to_other_side.insert(id);
    }
    progress.finish();
    Ok(Some(walked))
}
