//! The objects of a pack while its deltas are still being resolved, for work that should not
//! wait for the whole pack (a clone's checkout). After pass 1 every whole object's id is known;
//! each delta's id becomes known the moment a worker resolves it. Readers look objects up by id,
//! wait for more to arrive, and rebuild a delta's content from its chain in the pack file.

use super::resolve::Resolver;
use super::{IndexError, ObjectLookup};
use crate::delta::apply_delta;
use sluice_object::{IdMap, ObjectId, ObjectKind};
use std::sync::{Condvar, Mutex};

/// Waiters are woken once per this many arrivals (and at the end), not for each object.
const WAKE_EVERY: usize = 1024;

/// What the resolving workers report.
#[derive(Default)]
struct State {
    /// Entry index of every object known so far.
    known: IdMap<u32>,
    /// Arrivals since the waiters were last woken.
    unannounced: usize,
    /// Every object is known (or resolution stopped: see `failed`).
    complete: bool,
    failed: bool,
}

/// Where resolving workers record arrivals; shared with the readers.
#[derive(Default)]
pub(crate) struct Arrivals {
    state: Mutex<State>,
    woken: Condvar,
}

impl Arrivals {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The whole objects pass 1 identified.
    pub(crate) fn seed(&self, ids: impl Iterator<Item = (ObjectId, u32)>) {
        self.lock().known.extend(ids);
    }

    /// A worker resolved entry `index` as `id`.
    pub(crate) fn arrived(&self, id: ObjectId, index: u32) {
        let mut state = self.lock();
        state.known.insert(id, index);
        state.unannounced += 1;
        if state.unannounced >= WAKE_EVERY {
            state.unannounced = 0;
            self.woken.notify_all();
        }
    }

    /// Resolution ended, well (`failed` false) or not.
    pub(crate) fn finish(&self, failed: bool) {
        let mut state = self.lock();
        state.complete = true;
        state.failed = failed;
        self.woken.notify_all();
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

    /// Whether `id` can be read now without waiting.
    pub fn is_ready(&self, id: &ObjectId) -> bool {
        self.arrivals.lock().known.contains_key(id)
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
    fn entry_of(&self, id: &ObjectId) -> Result<Option<u32>, String> {
        let mut state = self.arrivals.lock();
        loop {
            if let Some(&index) = state.known.get(id) {
                return Ok(Some(index));
            }
            if state.failed {
                return Err("the pack could not be indexed".into());
            }
            if state.complete {
                return Ok(None);
            }
            state = self
                .arrivals
                .woken
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Rebuilds entry `index` from the pack: its chain of deltas down to a whole object.
    fn rebuild(&self, index: u32) -> Result<(ObjectKind, Vec<u8>), IndexError> {
        let resolver = self.resolver;
        let kind = resolver.resolved[index as usize]
            .get()
            .map(|r| r.kind)
            .ok_or(IndexError::Interrupted)?;
        let mut chain = Vec::new();
        let mut at = index;
        loop {
            let entry = &resolver.entries[at as usize];
            match entry.pack_type {
                6 => {
                    chain.push(at);
                    at = entry.base;
                }
                7 => {
                    chain.push(at);
                    let base = resolver.ref_base(entry.base);
                    at = match self.arrivals.lock().known.get(&base) {
                        Some(&i) => i,
                        None => return Err(IndexError::Interrupted),
                    };
                }
                _ => break,
            }
            if chain.len() > resolver.entries.len() {
                return Err(IndexError::Interrupted);
            }
        }
        let mut data = resolver.read_whole(at)?;
        for &delta_index in chain.iter().rev() {
            let offset = resolver.entries[delta_index as usize].offset;
            let delta = resolver.read_delta(delta_index)?;
            let mut out = Vec::new();
            apply_delta(&data, &delta, &mut out)
                .map_err(|source| IndexError::Delta { offset, source })?;
            data = out;
        }
        Ok((kind, data))
    }
}

impl ObjectLookup for ArrivingPack<'_> {
    fn contains(&self, id: &ObjectId) -> bool {
        self.is_ready(id)
    }

    fn read(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, String> {
        match self.entry_of(id)? {
            Some(index) => self.rebuild(index).map(Some).map_err(|e| e.to_string()),
            None => Ok(None),
        }
    }
}
