//! What the indexer records per entry: pass 1's [`Entry`] (where the entry is, its type, size
//! and CRC) and pass 2's [`Resolved`] (its id, kind and depth), each kept small: index-pack's
//! memory is these tables, 48 bytes an object.
//!
//! A [`ResolvedSlot`] is written once by whichever worker resolves the entry and read by all.
//! A `OnceLock<Resolved>` took 32 bytes an entry; the slot takes 24 (on git/git's 849k
//! entries, 6.8 MB of index-pack's peak), with no lock and no unsafe code: the id is stored as
//! relaxed atomic words and published by a release store of the kind, which doubles as the
//! slot's state.

use crate::entry::{OFS_DELTA, REF_DELTA};
use sluice_object::{HashKind, ObjectId, ObjectKind};
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU8, Ordering};

/// One entry as pass 1 records it, in 24 bytes: the offset, the high bits of the size, the
/// pack type and the header's length share one word (unpacked, the fields took 32 bytes: on
/// git/git's 849k entries, 6.8 MB more of index-pack's peak).
#[derive(Clone, Copy)]
pub(crate) struct Entry {
    /// Offset (bits 0-46), size >> 32 (47-54), pack type (55-57), header length (58-63).
    packed: u64,
    size_low: u32,
    pub(crate) crc32: u32,
    /// ofs-delta: index of the base entry; ref-delta: index into `ref_bases` (renumbered when
    /// pass 2 sorts those, see `RefChildren::build`).
    pub(crate) base: u32,
    /// Where pass 1 kept this small delta's inflated data in `Scan::kept`, or [`NOT_KEPT`].
    pub(crate) kept: u32,
}

const OFFSET_BITS: u32 = 47;
const SIZE_HIGH_BITS: u32 = 8;
const TYPE_BITS: u32 = 3;
/// The largest entry offset an index records here: 128 TiB.
pub(crate) const MAX_ENTRY_OFFSET: u64 = (1 << OFFSET_BITS) - 1;
/// The largest object size: 1 TiB.
pub(crate) const MAX_ENTRY_SIZE: u64 = (1 << (32 + SIZE_HIGH_BITS)) - 1;

impl Entry {
    /// An entry with no base and nothing kept; `None` past [`MAX_ENTRY_OFFSET`] or
    /// [`MAX_ENTRY_SIZE`]. `header_len` is at most `MAX_ENTRY_HEADER_LEN` (42) and
    /// `pack_type` a pack type number (below 8).
    pub(crate) fn new(offset: u64, size: u64, header_len: usize, pack_type: u8) -> Option<Self> {
        if offset > MAX_ENTRY_OFFSET || size > MAX_ENTRY_SIZE {
            return None;
        }
        debug_assert!(header_len <= crate::entry::MAX_ENTRY_HEADER_LEN && pack_type < 8);
        let packed = offset
            | (size >> 32) << OFFSET_BITS
            | u64::from(pack_type) << (OFFSET_BITS + SIZE_HIGH_BITS)
            | (header_len as u64) << (OFFSET_BITS + SIZE_HIGH_BITS + TYPE_BITS);
        Some(Entry {
            packed,
            size_low: size as u32,
            crc32: 0,
            base: 0,
            kept: NOT_KEPT,
        })
    }

    /// Where the entry starts in the pack.
    pub(crate) fn offset(&self) -> u64 {
        self.packed & MAX_ENTRY_OFFSET
    }

    /// Inflated size of the entry's data.
    pub(crate) fn size(&self) -> u64 {
        let high = (self.packed >> OFFSET_BITS) & ((1 << SIZE_HIGH_BITS) - 1);
        high << 32 | u64::from(self.size_low)
    }

    /// 1-4 for whole objects, 6 ofs-delta, 7 ref-delta.
    pub(crate) fn pack_type(&self) -> u8 {
        ((self.packed >> (OFFSET_BITS + SIZE_HIGH_BITS)) & ((1 << TYPE_BITS) - 1)) as u8
    }

    /// Bytes of the entry's header, before its zlib data.
    pub(crate) fn header_len(&self) -> u64 {
        self.packed >> (OFFSET_BITS + SIZE_HIGH_BITS + TYPE_BITS)
    }

    /// Whether the entry holds a whole object rather than a delta.
    pub(crate) fn is_whole(&self) -> bool {
        self.pack_type() < OFS_DELTA
    }

    pub(crate) fn is_ofs_delta(&self) -> bool {
        self.pack_type() == OFS_DELTA
    }

    pub(crate) fn is_ref_delta(&self) -> bool {
        self.pack_type() == REF_DELTA
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("offset", &self.offset())
            .field("size", &self.size())
            .field("pack_type", &self.pack_type())
            .field("header_len", &self.header_len())
            .field("crc32", &self.crc32)
            .field("base", &self.base)
            .field("kept", &self.kept)
            .finish()
    }
}

/// `Entry::kept` of an entry whose data is only in the pack.
pub(crate) const NOT_KEPT: u32 = u32::MAX;

/// What resolution learned about an entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Resolved {
    pub(crate) id: ObjectId,
    pub(crate) kind: ObjectKind,
    /// Length of the delta chain down to a whole object (0 for whole objects).
    pub(crate) depth: u32,
}

/// `state` before anyone resolved the entry.
const EMPTY: u8 = 0;
/// `state` while the winner of the slot stores the id.
const WRITING: u8 = u8::MAX;
/// Bytes of the ids a slot holds (SHA-1's).
const ID_LEN: usize = 20;

/// One entry's [`Resolved`], set at most once.
pub(crate) struct ResolvedSlot {
    id: [AtomicU32; ID_LEN / 4],
    /// [`EMPTY`], [`WRITING`], or the kind's pack type once the slot is readable.
    state: AtomicU8,
    /// The chain depth, saturated at `u16::MAX`: it is only ever shown (`verify-pack -v`),
    /// and git's own packs stop at depth 4095.
    depth: AtomicU16,
}

impl ResolvedSlot {
    /// An empty slot.
    pub(crate) fn new() -> Self {
        ResolvedSlot {
            id: Default::default(),
            state: AtomicU8::new(EMPTY),
            depth: AtomicU16::new(0),
        }
    }

    /// A slot holding `resolved`.
    pub(crate) fn filled(resolved: Resolved) -> Self {
        let slot = Self::new();
        let _ = slot.set(resolved);
        slot
    }

    /// What the slot holds, once it was set.
    pub(crate) fn get(&self) -> Option<Resolved> {
        let kind = ObjectKind::from_pack_type(self.state.load(Ordering::Acquire))?;
        let mut bytes = [0u8; ID_LEN];
        for (chunk, word) in bytes.chunks_exact_mut(4).zip(&self.id) {
            chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
        }
        let id = ObjectId::from_bytes(HashKind::Sha1, &bytes).expect("20 bytes make a SHA-1 id");
        Some(Resolved {
            id,
            kind,
            depth: u32::from(self.depth.load(Ordering::Relaxed)),
        })
    }

    /// Whether the slot was set.
    pub(crate) fn is_set(&self) -> bool {
        ObjectKind::from_pack_type(self.state.load(Ordering::Acquire)).is_some()
    }

    /// Sets the slot; `Err` if it was set (or is being set) already.
    pub(crate) fn set(&self, resolved: Resolved) -> Result<(), ()> {
        let bytes = resolved.id.as_bytes();
        debug_assert_eq!(bytes.len(), ID_LEN, "only SHA-1 packs are indexed");
        self.state
            .compare_exchange(EMPTY, WRITING, Ordering::Acquire, Ordering::Relaxed)
            .map_err(|_| ())?;
        for (chunk, word) in bytes.chunks_exact(4).zip(&self.id) {
            let value = u32::from_ne_bytes(chunk.try_into().expect("4 bytes"));
            word.store(value, Ordering::Relaxed);
        }
        let depth = u16::try_from(resolved.depth).unwrap_or(u16::MAX);
        self.depth.store(depth, Ordering::Relaxed);
        self.state
            .store(resolved.kind.pack_type(), Ordering::Release);
        Ok(())
    }
}

impl Default for ResolvedSlot {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ResolvedSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ResolvedSlot").field(&self.get()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_pack_into_24_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 24);
        let entry = Entry::new(MAX_ENTRY_OFFSET, MAX_ENTRY_SIZE, 42, REF_DELTA).expect("fits");
        assert_eq!(
            (
                entry.offset(),
                entry.size(),
                entry.header_len(),
                entry.pack_type()
            ),
            (MAX_ENTRY_OFFSET, MAX_ENTRY_SIZE, 42, REF_DELTA)
        );
        assert!(entry.is_ref_delta() && !entry.is_whole() && entry.kept == NOT_KEPT);
        let small = Entry::new(12, 5 << 32 | 7, 2, 3).expect("fits");
        assert_eq!(
            (small.offset(), small.size(), small.header_len()),
            (12, 5 << 32 | 7, 2)
        );
        assert!(small.is_whole());
        assert!(Entry::new(MAX_ENTRY_OFFSET + 1, 0, 1, 1).is_none());
        assert!(Entry::new(12, MAX_ENTRY_SIZE + 1, 1, 1).is_none());
    }

    #[test]
    fn set_once_and_read_back() {
        assert_eq!(std::mem::size_of::<ResolvedSlot>(), 24);
        let id = ObjectId::from_hex(HashKind::Sha1, b"0123456789abcdef0123456789abcdef01234567")
            .expect("an id");
        let slot = ResolvedSlot::new();
        assert!(slot.get().is_none());
        let resolved = Resolved {
            id,
            kind: ObjectKind::Tree,
            depth: 70_000,
        };
        assert!(slot.set(resolved).is_ok());
        assert!(slot.set(resolved).is_err());
        let read = slot.get().expect("set");
        assert_eq!(
            (read.id, read.kind, read.depth),
            (id, ObjectKind::Tree, 65_535)
        );
    }
}
