//! What a set of tips reaches, remembered between the requests of one server.
//!
//! Between repacks a bitmap answers only for the commits it was written with: a clone after
//! pushes walks the pushed commits and their trees (and reads every annotated tag) down to
//! bitmapped ancestors, for every request, although the answer is the same each time. The
//! answer depends on nothing but the tips and the bitmap (whose trailing checksum covers the
//! pack or multi-pack-index it numbers, and so every bit's object), and objects never change
//! under their ids; so it is kept, keyed by exactly those, and the next request with the same
//! tips takes a copy instead of walking. `sluice serve`'s warm-up after a push makes the walk
//! once, in the background, so even the first clone after it finds it here.

use super::Reached;
use sluice_object::ObjectId;
use std::collections::VecDeque;
use std::sync::Mutex;

/// Answers kept, at most; the least recently used go first.
pub(super) const MAX_ENTRIES: usize = 32;

/// A bound on the memory of the answers kept: one is the bitmap's bits plus the objects found
/// outside it (a megabyte for ten million objects).
const MAX_BYTES: usize = 64 << 20;

/// Bytes an entry for objects stored outside the bitmap costs, about (id, kind, name hash and
/// the map's overhead).
const OUTSIDE_ENTRY_BYTES: usize = 48;

/// The answers of earlier reaches, shared by a server's requests.
#[derive(Debug, Default)]
pub struct ReachMemo {
    pub(super) kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
pub(super) struct Kept {
    /// Most recently used last.
    pub(super) entries: VecDeque<(Key, Reached)>,
    bytes: usize,
}

/// The identity of one reach: the bitmap's trailing checksum and the tips, sorted, without
/// duplicates.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Key {
    bitmap: Vec<u8>,
    pub(super) tips: Vec<ObjectId>,
}

impl Key {
    pub(super) fn new(bitmap: &[u8], tips: &[ObjectId]) -> Self {
        let mut tips = tips.to_vec();
        tips.sort_unstable();
        tips.dedup();
        Key {
            bitmap: bitmap.to_vec(),
            tips,
        }
    }

    fn bytes(&self) -> usize {
        self.bitmap.len() + self.tips.len() * std::mem::size_of::<ObjectId>()
    }
}

fn bytes_of(key: &Key, reached: &Reached) -> usize {
    key.bytes() + reached.bits.bytes() + reached.outside.len() * OUTSIDE_ENTRY_BYTES
}

impl ReachMemo {
    /// An empty memo.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of the answer kept for `key`, if there is one.
    pub(super) fn recall(&self, key: &Key) -> Option<Reached> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let at = kept.entries.iter().position(|(k, _)| k == key)?;
        let entry = kept.entries.remove(at)?;
        let copy = entry.1.clone();
        kept.entries.push_back(entry);
        Some(copy)
    }

    /// Keeps `reached` as the answer for `key`, dropping the least recently used answers
    /// while the memo is over its bounds; an answer larger than the whole bound is not kept.
    pub(super) fn remember(&self, key: Key, reached: &Reached) {
        let bytes = bytes_of(&key, reached);
        if bytes > MAX_BYTES {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.entries.iter().any(|(k, _)| *k == key) {
            return;
        }
        while kept.entries.len() >= MAX_ENTRIES || kept.bytes + bytes > MAX_BYTES {
            let Some((old_key, old)) = kept.entries.pop_front() else {
                break;
            };
            kept.bytes -= bytes_of(&old_key, &old);
        }
        kept.bytes += bytes;
        kept.entries.push_back((key, reached.clone()));
    }
}
