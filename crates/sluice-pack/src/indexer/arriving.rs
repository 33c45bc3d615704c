//! The objects of a pack while its deltas are still being resolved, for work that should not
//! wait for the whole pack (a clone's checkout). After pass 1 every whole object's id is known;
//! each delta's id becomes known the moment a worker resolves it. Readers look objects up by id,
//! wait for more to arrive, and rebuild a delta's content from its chain in the pack file.

use super::resolve::Resolver;
use super::table::Table;
use super::{IndexError, LookupError, ObjectLookup, ResolvedSlot};
use sluice_object::{IdHashBuilder, ObjectId, ObjectKind};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Waiters are woken once per this many arrivals (and at the end), not for each object.
const WAKE_EVERY: usize = 1024;

/// Entry indexes by object id, for every object known so far: open addressing over slots that
/// hold an entry's index plus one (0 is empty), the id itself read from the entry's resolved
/// slot. At most half the slots fill, so probes stay short; at 8 bytes an object this is a third
/// of a map that stores the ids, and an insert is one compare-exchange, so workers never wait
/// for one another or for a reader.
struct KnownIds {
    slots: Box<[AtomicU32]>,
    hasher: IdHashBuilder,
}

impl KnownIds {
    /// A table for a pack of `entries` entries: twice as many slots, rounded up to a power of two.
    fn new(entries: usize) -> Self {
        let len = (entries.max(8) * 2).next_power_of_two();
        KnownIds {
            slots: (0..len).map(|_| AtomicU32::new(0)).collect(),
            hasher: IdHashBuilder::default(),
        }
    }

    /// The slots `id` may be in, in probe order.
    fn probe(&self, id: &ObjectId) -> impl Iterator<Item = &AtomicU32> {
        let mask = self.slots.len() - 1;
        let start = self.hasher.hash_one(id) as usize;
        (0..self.slots.len()).map(move |step| &self.slots[(start + step) & mask])
    }

    /// Records that entry `index`, already resolved in `resolved`, holds `id`. A second entry
    /// with the same id (a duplicate object) is not recorded: either one reads the same.
    fn insert(&self, id: &ObjectId, index: u32, resolved: &Table<ResolvedSlot>) {
        for slot in self.probe(id) {
            match slot.compare_exchange(0, index + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return,
                Err(held) if id_at(resolved, held).as_ref() == Some(id) => return,
                Err(_) => {}
            }
        }
    }

    fn get(&self, id: &ObjectId, resolved: &Table<ResolvedSlot>) -> Option<u32> {
        for slot in self.probe(id) {
            match slot.load(Ordering::Acquire) {
                0 => return None,
                held if id_at(resolved, held).as_ref() == Some(id) => return Some(held - 1),
                _ => {}
            }
        }
        None
    }
}

/// The id of the entry a slot holding `held` points to.
fn id_at(resolved: &Table<ResolvedSlot>, held: u32) -> Option<ObjectId> {
    let index = held.checked_sub(1)? as usize;
    resolved.get(index)?.get().map(|r| r.id)
}

/// How resolution stands, for waiters.
#[derive(Default)]
struct State {
    /// Bumped at each wake-up, so a waiter that looked before it cannot miss it.
    generation: u64,
    /// Every object is known (or resolution stopped: see `failed`).
    complete: bool,
    failed: bool,
}

/// Where resolving workers record arrivals; shared with the readers.
pub(crate) struct Arrivals {
    known: KnownIds,
    /// Arrivals so far, to wake waiters once per [`WAKE_EVERY`].
    count: AtomicUsize,
    state: Mutex<State>,
    woken: Condvar,
}

impl Arrivals {
    /// Arrivals for a pack of `entries` entries.
    pub(crate) fn new(entries: usize) -> Self {
        Arrivals {
            known: KnownIds::new(entries),
            count: AtomicUsize::new(0),
            state: Mutex::default(),
            woken: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wake(&self, end: Option<bool>) {
        let mut state = self.lock();
        state.generation += 1;
        if let Some(failed) = end {
            state.complete = true;
            state.failed = failed;
        }
        self.woken.notify_all();
    }

    /// The whole objects pass 1 identified.
    pub(crate) fn seed(&self, indexes: impl Iterator<Item = u32>, resolved: &Table<ResolvedSlot>) {
        for index in indexes {
            if let Some(r) = resolved[index as usize].get() {
                self.known.insert(&r.id, index, resolved);
            }
        }
    }

    /// A worker resolved entry `index` as `id` (already set in `resolved`).
    pub(crate) fn arrived(&self, id: &ObjectId, index: u32, resolved: &Table<ResolvedSlot>) {
        self.known.insert(id, index, resolved);
        if (self.count.fetch_add(1, Ordering::Relaxed) + 1).is_multiple_of(WAKE_EVERY) {
            self.wake(None);
        }
    }

    /// Resolution ended, well (`failed` false) or not.
    pub(crate) fn finish(&self, failed: bool) {
        self.wake(Some(failed));
    }
}

/// A pack being resolved, as objects to read.
pub struct ArrivingPack<'a> {
    pub(crate) resolver: &'a Resolver<'a>,
    pub(crate) arrivals: &'a Arrivals,
}

impl std::fmt::Debug for ArrivingPack<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrivingPack").finish()
    }
}

impl ArrivingPack<'_> {
    /// The pack's hash.
    pub fn hash(&self) -> sluice_object::HashKind {
        self.resolver.hash
    }

    /// Whether resolution has ended: every object that will arrive has.
    pub fn all_arrived(&self) -> bool {
        self.arrivals.lock().complete
    }

    fn known(&self, id: &ObjectId) -> Option<u32> {
        self.arrivals.known.get(id, self.resolver.resolved)
    }

    /// Whether `id` can be read now without waiting.
    pub fn is_ready(&self, id: &ObjectId) -> bool {
        self.known(id).is_some()
    }

    /// Waits until more objects have arrived or resolution has ended; returns whether it has.
    pub fn wait_for_more(&self) -> bool {
        let state = self.arrivals.lock();
        if state.complete {
            return true;
        }
        let state = self
            .arrivals
            .woken
            .wait(state)
            .unwrap_or_else(|e| e.into_inner());
        state.complete
    }

    /// The entry holding `id`, waiting for it while resolution goes on; `None` once resolution
    /// has ended without it.
    fn entry_of(&self, id: &ObjectId) -> Result<Option<u32>, LookupError> {
        let mut state = self.arrivals.lock();
        loop {
            // Looked up under the lock: an arrival announced after this look bumps the
            // generation only once this waiter sleeps, and wakes it.
            if let Some(index) = self.known(id) {
                return Ok(Some(index));
            }
            if state.failed {
                return Err(LookupError::new("the pack could not be indexed"));
            }
            if state.complete {
                return Ok(None);
            }
            let seen = state.generation;
            while state.generation == seen {
                state = self
                    .arrivals
                    .woken
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner());
            }
        }
    }

    /// Rebuilds entry `index` from the pack.
    fn rebuild(&self, index: u32) -> Result<(ObjectKind, Vec<u8>), IndexError> {
        self.resolver.rebuild(index, &|id| self.known(id))
    }
}

impl ObjectLookup for ArrivingPack<'_> {
    fn contains(&self, id: &ObjectId) -> bool {
        self.is_ready(id)
    }

    fn read(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, LookupError> {
        match self.entry_of(id)? {
            Some(index) => self.rebuild(index).map(Some).map_err(LookupError::new),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexer::Resolved;
    use sluice_object::{hash_object, HashKind};

    fn resolved(id: ObjectId) -> ResolvedSlot {
        ResolvedSlot::filled(Resolved {
            id,
            kind: ObjectKind::Blob,
            depth: 0,
        })
    }

    /// Every recorded id is found at its entry, a duplicate keeps the first entry, and ids
    /// never recorded are not found.
    #[test]
    fn known_ids_find_what_was_recorded() {
        let ids: Vec<ObjectId> = (0..5000u32)
            .map(|i| hash_object(HashKind::Sha1, ObjectKind::Blob, &i.to_le_bytes()).unwrap())
            .collect();
        // Entries 0..5000 hold the ids; entry 5000 repeats entry 7's.
        // In two parts, as a pack scanned in two halves leaves them.
        let mut slots = Table::new(ids[..2500].iter().map(|&id| resolved(id)).collect());
        slots.append_part(ids[2500..].iter().map(|&id| resolved(id)).collect());
        slots.push(resolved(ids[7]));
        let known = KnownIds::new(slots.len());
        for (index, id) in ids.iter().enumerate().step_by(2) {
            known.insert(id, index as u32, &slots);
        }
        known.insert(&ids[7], 7, &slots);
        known.insert(&ids[7], 5000, &slots);
        for (index, id) in ids.iter().enumerate() {
            let expected = (index % 2 == 0 || index == 7).then_some(index as u32);
            assert_eq!(known.get(id, &slots), expected, "entry {index}");
        }
        let absent = hash_object(HashKind::Sha1, ObjectKind::Tree, b"").unwrap();
        assert_eq!(known.get(&absent, &slots), None);
    }
}
