//! Remembered checksums of packs made only of stored entries copied as they are.
//!
//! A full clone of a repository that took pushes since its last full repack is its big pack
//! copied whole, then the few objects the pushes brought. Copying costs little; the checksum
//! of the response does not: SHA-1 over every byte (318 MB for git/git), more than the rest
//! of the clone together, and the same bytes again for the next clone. When every entry of a
//! pack goes out as it is stored, the bytes are fixed by the stored packs and the order of the
//! entries, so the checksum is too: it is remembered under a key made of exactly those, and
//! the next pack with the same key is written without hashing.

use crate::PackOptions;
use sluice_object::{HashKind, ObjectId, TrailerHasher};
use sluice_odb::ObjectDb;
use std::collections::VecDeque;
use std::sync::Mutex;

/// Where the checksums of copied packs are kept between requests.
pub trait ChecksumMemo: Send + Sync + std::fmt::Debug {
    /// The checksum remembered under `key`.
    fn recall(&self, key: &ObjectId) -> Option<ObjectId>;
    /// Remembers `checksum` under `key`.
    fn remember(&self, key: ObjectId, checksum: ObjectId);
    /// Drops what `key` says: the pack it described could not be copied as it was.
    fn forget(&self, key: &ObjectId);
}

/// A memo in memory, for a server process: the checksums of the last `capacity` packs.
#[derive(Debug)]
pub struct MemoryMemo {
    entries: Mutex<VecDeque<(ObjectId, ObjectId)>>,
    capacity: usize,
}

impl MemoryMemo {
    /// A memo of at most `capacity` checksums, the least recently used forgotten first.
    pub fn new(capacity: usize) -> MemoryMemo {
        MemoryMemo {
            entries: Mutex::new(VecDeque::with_capacity(capacity)),
            capacity,
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, VecDeque<(ObjectId, ObjectId)>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl ChecksumMemo for MemoryMemo {
    fn recall(&self, key: &ObjectId) -> Option<ObjectId> {
        let mut entries = self.entries();
        let at = entries.iter().position(|(k, _)| k == key)?;
        let found = entries.remove(at)?;
        entries.push_front(found);
        Some(found.1)
    }

    fn remember(&self, key: ObjectId, checksum: ObjectId) {
        let mut entries = self.entries();
        entries.retain(|(k, _)| *k != key);
        entries.push_front((key, checksum));
        entries.truncate(self.capacity);
    }

    fn forget(&self, key: &ObjectId) {
        self.entries().retain(|(k, _)| k != key);
    }
}

/// Builds the key of a pack copied entry by entry: everything its bytes depend on.
pub(crate) struct CopyKey(TrailerHasher);

/// Changes whenever the way entries are written could: a memo kept on disk must not outlive
/// the writer that filled it.
const WRITER: &str = concat!("sluice ", env!("CARGO_PKG_VERSION"), " pack-copy 1");

impl CopyKey {
    /// A key for a pack of `count` entries from the packs of `odb`, written with `options`,
    /// whose first entries are pack number `verbatim` copied whole.
    pub(crate) fn new(
        odb: &ObjectDb,
        options: &PackOptions,
        count: u32,
        verbatim: Option<usize>,
    ) -> CopyKey {
        let mut hasher = TrailerHasher::new(HashKind::Sha1);
        hasher.update(WRITER.as_bytes());
        // Not `thin`: a key is only made for a client with nothing, where it changes nothing.
        hasher.update(&[u8::from(options.ofs_delta), options.compression as u8]);
        hasher.update(&count.to_be_bytes());
        hasher.update(&(odb.packs().len() as u32).to_be_bytes());
        for pack in odb.packs() {
            hasher.update(pack.index().pack_checksum().as_bytes());
        }
        let verbatim = verbatim.map_or(u32::MAX, |pack| pack as u32);
        hasher.update(&verbatim.to_be_bytes());
        CopyKey(hasher)
    }

    /// Adds the next entry written: entry at `offset` in pack number `pack`.
    pub(crate) fn entry(&mut self, pack: u32, offset: u64) {
        let mut bytes = [0u8; 12];
        bytes[..4].copy_from_slice(&pack.to_be_bytes());
        bytes[4..].copy_from_slice(&offset.to_be_bytes());
        self.0.update(&bytes);
    }

    /// Adds the next entry written: a loose object, compressed whole.
    pub(crate) fn loose(&mut self, id: &ObjectId) {
        self.0.update(&u32::MAX.to_be_bytes());
        self.0.update(id.as_bytes());
    }

    /// Adds the next entry written: a delta of `target` against `base`, made by the search.
    pub(crate) fn delta(&mut self, target: &ObjectId, base: &ObjectId) {
        self.0.update(&(u32::MAX - 1).to_be_bytes());
        self.0.update(target.as_bytes());
        self.0.update(base.as_bytes());
    }

    pub(crate) fn finish(self) -> ObjectId {
        self.0.finalize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes(HashKind::Sha1, &[n; 20]).unwrap()
    }

    #[test]
    fn the_least_recently_used_go_first() {
        let memo = MemoryMemo::new(2);
        memo.remember(id(1), id(11));
        memo.remember(id(2), id(12));
        assert_eq!(memo.recall(&id(1)), Some(id(11)));
        memo.remember(id(3), id(13));
        assert_eq!(memo.recall(&id(2)), None);
        assert_eq!(memo.recall(&id(1)), Some(id(11)));
        memo.forget(&id(1));
        assert_eq!(memo.recall(&id(1)), None);
        assert_eq!(memo.recall(&id(3)), Some(id(13)));
    }
}
