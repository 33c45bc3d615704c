//! Pass 2: delta resolution. Each whole object with children is the root of a delta tree; trees
//! are resolved on all threads of a work-stealing pool. A node's bases are shared by reference
//! count and freed as soon as their last child is built; a chain of single children runs as a
//! loop (no recursion, so chains thousands deep are fine) and a node with several children hands
//! all but one to other workers. Results go into per-entry `ResolvedSlot`s: no lock on the hot path.
//! A tree's hash resumes from the states its base's hash passed through, over the prefix the
//! delta copied in place (`HashCheckpoints`).

use super::arriving::Arrivals;
use super::fanout::IdFanout;
use super::links::{Links, ObjectCheck, Unrecorded};
use super::small_deltas::Kept;
use super::table::Table;
use super::{Entry, IndexError, ObjectLookup, Resolved, ResolvedSlot, NOT_KEPT};
use crate::delta::apply_delta;
use crate::entry::{OFS_DELTA, REF_DELTA};
use crate::inflate::{Inflater, ZlibInflate};
use sluice_object::progress::Progress;
use sluice_object::{
    hash_object_resuming, HashCheckpoints, HashKind, ObjectId, ObjectKind, SharedPrefix,
};
use std::cell::RefCell;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Children of each entry, as a compressed sparse row: `children[start[i]..start[i+1]]`.
pub(crate) struct OfsChildren {
    start: Vec<u32>,
    children: Vec<u32>,
}

impl OfsChildren {
    pub(crate) fn build(entries: &Table<Entry>) -> Self {
        let mut start = vec![0u32; entries.len() + 1];
        for entry in entries.iter().filter(|e| e.is_ofs_delta()) {
            start[entry.base as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut fill = start.clone();
        let mut children = vec![0u32; start[entries.len()] as usize];
        for (i, entry) in entries.iter().enumerate().filter(|(_, e)| e.is_ofs_delta()) {
            let slot = &mut fill[entry.base as usize];
            children[*slot as usize] = i as u32;
            *slot += 1;
        }
        OfsChildren { start, children }
    }

    fn of(&self, index: u32) -> &[u32] {
        match (
            self.start.get(index as usize),
            self.start.get(index as usize + 1),
        ) {
            (Some(&a), Some(&b)) => &self.children[a as usize..b as usize],
            // Objects appended by --fix-thin have no ofs-delta children.
            _ => &[],
        }
    }
}

/// Ref-delta children, grouped by the base id they want. Pass 1 records a base id per
/// ref-delta; [`RefChildren::build`] sorts those ids and keeps each once, renumbering every
/// ref-delta's `Entry::base` to match, then lists each base's children in a compact table. A
/// ref-delta then costs its share of one id and 4 bytes here, where a sorted (id, child) list
/// beside the ids cost 44 bytes (rust-lang/cargo's pack is almost all ref-deltas: 9 MB of
/// index-pack's 30 MB).
pub(crate) struct RefChildren {
    /// `children[start[k]..start[k + 1]]` want the `k`-th base id.
    start: Vec<u32>,
    /// Entry indices, in pack order within each base.
    children: Vec<u32>,
    /// Finds a base in `ref_bases`: every resolved object asks whether it is one, and on a
    /// pack of ref-deltas a binary search over all of them was 5% of index-pack's time
    /// (rust-lang/cargo's pack).
    fanout: IdFanout,
}

impl RefChildren {
    /// Builds the table, sorting and deduplicating `ref_bases` in place and renumbering the
    /// ref-deltas of `entries` that point into it.
    pub(crate) fn build(entries: &mut Table<Entry>, ref_bases: &mut Vec<ObjectId>) -> Self {
        if ref_bases.is_empty() {
            return RefChildren {
                start: Vec::new(),
                children: Vec::new(),
                fanout: IdFanout::new(&[]),
            };
        }
        let mut order: Vec<u32> = (0..ref_bases.len() as u32).collect();
        order.sort_unstable_by_key(|&i| ref_bases[i as usize]);
        let distinct = 1
            + (order.windows(2))
                .filter(|pair| ref_bases[pair[0] as usize] != ref_bases[pair[1] as usize])
                .count();
        let mut unique: Vec<ObjectId> = Vec::with_capacity(distinct);
        // Old position in `ref_bases` -> position in `unique`; its memory then holds the
        // children.
        let mut renumber = vec![0u32; ref_bases.len()];
        for &old in &order {
            let id = ref_bases[old as usize];
            if unique.last() != Some(&id) {
                unique.push(id);
            }
            renumber[old as usize] = (unique.len() - 1) as u32;
        }
        drop(order);
        *ref_bases = unique;
        let mut start = vec![0u32; ref_bases.len() + 1];
        for i in 0..entries.len() {
            let entry = &mut entries[i];
            if entry.is_ref_delta() {
                entry.base = renumber[entry.base as usize];
                start[entry.base as usize + 1] += 1;
            }
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        // Filled in pack order, so each base's children stay in pack order.
        let mut children = renumber;
        let mut next = start.clone();
        for (i, entry) in entries.iter().enumerate() {
            if entry.is_ref_delta() {
                let slot = &mut next[entry.base as usize];
                children[*slot as usize] = i as u32;
                *slot += 1;
            }
        }
        let fanout = IdFanout::new(ref_bases);
        RefChildren {
            start,
            children,
            fanout,
        }
    }

    fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    /// The ref-deltas whose base is `id`, given the (sorted, unique) `ref_bases`.
    pub(crate) fn of(&self, ref_bases: &[ObjectId], id: &ObjectId) -> &[u32] {
        if self.is_empty() {
            return &[];
        }
        match self.fanout.find(ref_bases, id) {
            Some(k) => &self.children[self.start[k] as usize..self.start[k + 1] as usize],
            None => &[],
        }
    }
}

/// Per-thread buffers, reused from object to object.
#[derive(Default)]
struct Workspace {
    inflater: Inflater,
    /// Pack bytes from `window_at` on, read for resolver `window_of` (see [`READ_AHEAD`]).
    window: Vec<u8>,
    window_at: u64,
    window_of: u64,
    delta: Vec<u8>,
    result: Vec<u8>,
}

/// Bytes read at once when pass 2 needs an entry not in its thread's window. The entries a
/// thread needs next often follow closely (in git/git's pack, 59% of reads fall in the 8 KiB
/// after the one before), and reading a few KiB costs little more than a hundred bytes: half the
/// `pread` calls, which were most of pass 2's system time.
const READ_AHEAD: usize = 8 << 10;

/// Tells resolvers apart, so that a thread never takes one pack's window for another's.
static RESOLVERS: AtomicU64 = AtomicU64::new(1);

/// A key for a new resolver's reads.
pub(crate) fn read_key() -> u64 {
    RESOLVERS.fetch_add(1, Ordering::Relaxed)
}

/// An object whose children are being built: its content, and for a tree the states its hash
/// passed through, from which a same-sized child's hash resumes.
struct Base {
    data: Vec<u8>,
    checkpoints: Option<HashCheckpoints>,
}

impl Workspace {
    /// The result buffer, handed over whole; a spare one takes its place.
    fn take_result(&mut self) -> Vec<u8> {
        let spare = SPARE
            .with(|spare| spare.borrow_mut().pop())
            .unwrap_or_default();
        std::mem::replace(&mut self.result, spare)
    }
}

/// Which buffers of dropped bases a thread keeps for its next results: those glibc maps
/// (above its 128 KiB threshold) up to 1 MiB in all. A base's buffer freed and the next result's
/// allocated anew is then a new mapping whose pages fault in one by one: without reuse, pass 2
/// on git/git's pack took 260k more page faults (0.5 s of system time). Smaller buffers come
/// back from the heap's free lists anyway.
const SPARE_MIN_SIZE: usize = 128 << 10;
const SPARE_TOTAL: usize = 1 << 20;

impl Drop for Base {
    fn drop(&mut self) {
        let capacity = self.data.capacity();
        if !(SPARE_MIN_SIZE..=SPARE_TOTAL).contains(&capacity) {
            return;
        }
        let data = std::mem::take(&mut self.data);
        SPARE.with(|spare| {
            let mut spare = spare.borrow_mut();
            let held: usize = spare.iter().map(Vec::capacity).sum();
            if held + capacity <= SPARE_TOTAL {
                spare.push(data);
            }
        });
    }
}

thread_local! {
    static WORKSPACE: RefCell<Workspace> = RefCell::new(Workspace::default());
    static SPARE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// Everything the workers share, read-only but for the result slots.
pub(crate) struct Resolver<'a> {
    pub(crate) hash: HashKind,
    pub(crate) pack: &'a File,
    pub(crate) entries: &'a Table<Entry>,
    /// Small deltas' data, kept from pass 1 (`Entry::kept`).
    pub(crate) kept: &'a Kept,
    pub(crate) resolved: &'a Table<ResolvedSlot>,
    pub(crate) ofs: &'a OfsChildren,
    pub(crate) refs: &'a RefChildren,
    /// Where the last entry's data ends (the trailer, or the end of appended objects).
    pub(crate) data_end: u64,
    pub(crate) lookup: Option<&'a dyn ObjectLookup>,
    /// The ids of ref-deltas' bases (`Entry::base` indexes them).
    pub(crate) ref_bases: &'a [ObjectId],
    /// Told of every resolved object, when a reader works alongside resolution.
    pub(crate) arrivals: Option<&'a Arrivals>,
    /// Where the links of resolved objects are recorded, when asked for.
    pub(crate) links: Option<&'a Links<'a>>,
    pub(crate) progress: &'a dyn Progress,
    pub(crate) interrupt: &'a AtomicBool,
    pub(crate) error: OnceLock<IndexError>,
    pub(crate) quit: AtomicBool,
    /// What this resolver's reads are kept under in a thread's window ([`read_key`]).
    pub(crate) read_key: u64,
}

impl<'a> Resolver<'a> {
    pub(crate) fn fail(&self, error: IndexError) {
        let _ = self.error.set(error);
        self.quit.store(true, Ordering::Relaxed);
    }

    fn stopped(&self) -> bool {
        if self.interrupt.load(Ordering::Relaxed) {
            self.fail(IndexError::Interrupted);
        }
        self.quit.load(Ordering::Relaxed)
    }

    /// Reads and inflates entry `index`'s data into `out`.
    fn read_entry(
        &self,
        index: u32,
        work: &mut Workspace,
        to_result: bool,
    ) -> Result<(), IndexError> {
        let entry = &self.entries[index as usize];
        let data_start = entry.offset() + entry.header_len();
        let data_end = self
            .entries
            .get(index as usize + 1)
            .map_or(self.data_end, |next| next.offset());
        let len = (data_end - data_start) as usize;
        let held = work.window_of == self.read_key
            && data_start >= work.window_at
            && data_start + len as u64 <= work.window_at + work.window.len() as u64;
        if !held {
            self.read_window(work, data_start, len)
                .map_err(|source| IndexError::Io {
                    context: "reading the pack back",
                    source,
                })?;
        }
        let from = (data_start - work.window_at) as usize;
        let compressed = &work.window[from..from + len];
        let out = if to_result {
            &mut work.result
        } else {
            &mut work.delta
        };
        work.inflater
            .inflate_exact(compressed, entry.size() as usize, out)
            .map_err(|source| IndexError::Inflate {
                offset: entry.offset(),
                source,
            })?;
        Ok(())
    }

    /// Fills the thread's window from `at` with at least `len` bytes, [`READ_AHEAD`] where the
    /// file has them.
    fn read_window(&self, work: &mut Workspace, at: u64, len: usize) -> std::io::Result<()> {
        work.window_of = 0;
        let want = len.max(READ_AHEAD);
        // Grown, never shrunk (its capacity stays anyway): no zeroing of bytes about to be read.
        if work.window.len() < want {
            work.window.resize(want, 0);
        }
        let mut got = 0;
        while got < want {
            match self
                .pack
                .read_at(&mut work.window[got..want], at + got as u64)
            {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if got < len {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        work.window.truncate(got);
        (work.window_at, work.window_of) = (at, self.read_key);
        Ok(())
    }

    /// Reads and inflates a whole object's data.
    pub(crate) fn read_whole(&self, index: u32) -> Result<Vec<u8>, IndexError> {
        WORKSPACE.with(|w| {
            let mut work = w.borrow_mut();
            self.read_entry(index, &mut work, true)?;
            Ok(work.take_result())
        })
    }

    /// A small delta's data, if pass 1 kept it.
    fn kept_delta(&self, index: u32) -> Option<&'a [u8]> {
        let entry = &self.entries[index as usize];
        if entry.kept == NOT_KEPT {
            return None;
        }
        let at = entry.kept as usize;
        self.kept.get(at, entry.size() as usize)
    }

    /// Reads and inflates a delta entry's delta data.
    pub(crate) fn read_delta(&self, index: u32) -> Result<Vec<u8>, IndexError> {
        if let Some(delta) = self.kept_delta(index) {
            return Ok(delta.to_vec());
        }
        WORKSPACE.with(|w| {
            let mut work = w.borrow_mut();
            self.read_entry(index, &mut work, false)?;
            Ok(std::mem::take(&mut work.delta))
        })
    }

    /// The base id of the ref-delta whose `Entry::base` is `base`.
    pub(crate) fn ref_base(&self, base: u32) -> ObjectId {
        self.ref_bases[base as usize]
    }

    /// Whether the stored object with this id differs from `data`: that is a collision.
    pub(crate) fn check_collision(
        &self,
        id: &ObjectId,
        kind: ObjectKind,
        data: &[u8],
    ) -> Result<(), IndexError> {
        let Some(lookup) = self.lookup else {
            return Ok(());
        };
        if !lookup.contains(id) {
            return Ok(());
        }
        match lookup.read(id) {
            Ok(Some((stored_kind, stored))) if stored_kind == kind && stored == data => Ok(()),
            Ok(None) => Ok(()),
            Ok(Some(_)) => Err(IndexError::Collision { id: *id }),
            Err(source) => Err(IndexError::Lookup { id: *id, source }),
        }
    }

    /// A delta reached a second time. Each ofs-delta has one base entry, built once, so only a
    /// ref-delta gets here: its base id belongs to two entries (a duplicate object, or a cycle
    /// of ref-deltas that leads back to an object stored whole). git refuses such a pack, and
    /// keeping it would write an index that lists one object twice.
    fn resolved_twice(&self, child: u32) {
        let entry = &self.entries[child as usize];
        if entry.is_ref_delta() {
            self.fail(IndexError::ResolvedTwice {
                offset: entry.offset(),
                base: self.ref_base(entry.base),
            });
        }
    }

    fn has_children(&self, index: u32, id: &ObjectId) -> bool {
        !self.ofs.of(index).is_empty() || !self.refs.of(self.ref_bases, id).is_empty()
    }

    /// Whole objects that have children, in pack order: the roots of the delta trees.
    pub(crate) fn roots(&self) -> Vec<u32> {
        (0..self.entries.len() as u32)
            .filter(|&i| {
                let entry = &self.entries[i as usize];
                entry.is_whole()
                    && self.resolved[i as usize]
                        .get()
                        .is_some_and(|r| self.has_children(i, &r.id))
            })
            .collect()
    }

    /// Resolves the tree under root `index`, whose data is read from the pack.
    pub(crate) fn resolve_root<'s>(&'s self, scope: &rayon::Scope<'s>, index: u32) {
        if self.stopped() {
            return;
        }
        let Some(root) = self.resolved[index as usize].get() else {
            return;
        };
        let read = self.read_whole(index).and_then(|data| {
            self.record_links(index, root, &data, None)?;
            Ok(data)
        });
        match read {
            Ok(data) => self.resolve_from(scope, data, root, index),
            Err(e) => self.fail(e),
        }
    }

    /// Records what entry `index`, resolved as `object` with `data` (rebuilt from `base`, if
    /// given), refers to.
    pub(crate) fn record_links(
        &self,
        index: u32,
        object: Resolved,
        data: &[u8],
        base: Option<&[u8]>,
    ) -> Result<(), IndexError> {
        let Some(links) = self.links else {
            return Ok(());
        };
        let offset = self.entries[index as usize].offset();
        links
            .record(object.kind, &object.id, data, base)
            .map_err(|unrecorded| match unrecorded {
                Unrecorded::Malformed(source) => IndexError::Malformed {
                    offset,
                    id: object.id,
                    source,
                },
                Unrecorded::Refused => IndexError::Refused {
                    offset,
                    id: object.id,
                },
            })
    }

    /// Rebuilds entry `index` from the pack: its chain of deltas down to a whole object, the
    /// entries of ref-deltas' bases found by `entry_of`.
    pub(crate) fn rebuild(
        &self,
        index: u32,
        entry_of: &dyn Fn(&ObjectId) -> Option<u32>,
    ) -> Result<(ObjectKind, Vec<u8>), IndexError> {
        let kind = self.resolved[index as usize]
            .get()
            .map(|r| r.kind)
            .ok_or(IndexError::Interrupted)?;
        let mut chain = Vec::new();
        let mut at = index;
        loop {
            let entry = &self.entries[at as usize];
            let base = match entry.pack_type() {
                OFS_DELTA => entry.base,
                REF_DELTA => entry_of(&self.ref_base(entry.base)).ok_or(IndexError::Interrupted)?,
                _ => break,
            };
            chain.push(at);
            at = base;
            if chain.len() > self.entries.len() {
                return Err(IndexError::Interrupted);
            }
        }
        let mut data = self.read_whole(at)?;
        for &delta_index in chain.iter().rev() {
            let offset = self.entries[delta_index as usize].offset();
            let delta = self.read_delta(delta_index)?;
            let mut out = Vec::new();
            apply_delta(&data, &delta, &mut out)
                .map_err(|source| IndexError::Delta { offset, source })?;
            data = out;
        }
        Ok((kind, data))
    }

    /// After resolution, judges the blobs `check` asked for (a tree's `.gitmodules`): from
    /// the pack, else from the repository; one found in neither is not judged, as git's
    /// index-pack leaves it.
    pub(crate) fn check_wanted_blobs(&self, check: &dyn ObjectCheck) -> Result<(), IndexError> {
        let wanted = check.wanted_blobs();
        if wanted.is_empty() {
            return Ok(());
        }
        let entry_of = |id: &ObjectId| {
            (self.resolved.iter())
                .position(|r| r.get().is_some_and(|r| r.id == *id))
                .map(|i| i as u32)
        };
        for id in wanted {
            let index = entry_of(&id);
            let object = match index {
                Some(index) => Some(self.rebuild(index, &entry_of)?),
                None => match self.lookup {
                    Some(lookup) => lookup
                        .read(&id)
                        .map_err(|source| IndexError::Lookup { id, source })?,
                    None => None,
                },
            };
            let Some((kind, data)) = object else {
                continue;
            };
            if !check.check_blob(&id, kind, &data) {
                // As git: a blob of the pack is refused as a packed object, anything else
                // (a tree named `.gitmodules`, a blob of the repository) at the end.
                return Err(match index.filter(|_| kind == ObjectKind::Blob) {
                    Some(index) => IndexError::Refused {
                        offset: self.entries[index as usize].offset(),
                        id,
                    },
                    None => IndexError::RefusedAtEnd { id },
                });
            }
        }
        Ok(())
    }

    /// Records the links of a whole object that is no delta's base: pass 1 hashed it without
    /// keeping its data, and no tree's resolution reads it again.
    pub(crate) fn record_leaf_links(&self, index: u32) -> Result<(), IndexError> {
        let Some(object) = self.resolved[index as usize].get() else {
            return Ok(());
        };
        if object.kind == ObjectKind::Blob || self.has_children(index, &object.id) {
            return Ok(());
        }
        let data = self.read_whole(index)?;
        self.record_links(index, object, &data, None)
    }

    /// Resolves the tree under an object given with its data: a root read from the pack, or an
    /// object appended by --fix-thin.
    pub(crate) fn resolve_from<'s>(
        &'s self,
        scope: &rayon::Scope<'s>,
        data: Vec<u8>,
        root: Resolved,
        index: u32,
    ) {
        // A root's hash was taken without saving states. Hashing a root tree again to save them
        // would cost more than it gives: in git/git's pack the same-sized children of roots
        // share 15 MB of prefixes, against 660 MB for all trees.
        let checkpoints = None;
        self.descend(scope, Arc::new(Base { data, checkpoints }), root, index);
    }

    fn descend<'s>(
        &'s self,
        scope: &rayon::Scope<'s>,
        mut base: Arc<Base>,
        mut node: Resolved,
        mut index: u32,
    ) {
        loop {
            if self.stopped() {
                return;
            }
            let ofs = self.ofs.of(index);
            let refs = self.refs.of(self.ref_bases, &node.id);
            let mut children = ofs.iter().chain(refs).copied();
            let Some(last) = children.next_back() else {
                return;
            };
            for child in children {
                let base = Arc::clone(&base);
                scope.spawn(move |scope| {
                    if let Some((data, resolved)) = self.build(&base, node, child) {
                        drop(base);
                        if let Some(data) = data {
                            self.descend(scope, Arc::new(data), resolved, child);
                        }
                    }
                });
            }
            match self.build(&base, node, last) {
                Some((Some(data), resolved)) => {
                    base = Arc::new(data);
                    node = resolved;
                    index = last;
                }
                _ => return,
            }
        }
    }

    /// Builds entry `child` from its base. Returns its data when it has children of its own
    /// (leaves reuse the thread's buffer instead), or `None` when it failed or another worker
    /// already resolved it (a duplicate base).
    fn build(&self, base: &Base, parent: Resolved, child: u32) -> Option<(Option<Base>, Resolved)> {
        if self.stopped() {
            return None;
        }
        let offset = self.entries[child as usize].offset();
        if self.resolved[child as usize].is_set() {
            self.resolved_twice(child);
            return None;
        }
        let outcome = WORKSPACE.with(|w| {
            let mut work = w.borrow_mut();
            let work = &mut *work;
            let delta = match self.kept_delta(child) {
                Some(delta) => delta,
                None => {
                    self.read_entry(child, work, false)?;
                    &work.delta
                }
            };
            let in_place = apply_delta(&base.data, delta, &mut work.result)
                .map_err(|source| IndexError::Delta { offset, source })?;
            let shared = base.checkpoints.as_ref().map(|checkpoints| SharedPrefix {
                checkpoints,
                len: in_place,
            });
            // Before the id is known only ofs-delta children can be counted; with ref-deltas
            // about, a tree saves its states whether or not one turns out to be its child.
            let save = parent.kind == ObjectKind::Tree
                && (!self.ofs.of(child).is_empty() || !self.refs.is_empty());
            let (id, checkpoints) =
                hash_object_resuming(self.hash, parent.kind, &work.result, shared, save)
                    .map_err(|_| IndexError::CollisionAttack { offset })?;
            self.check_collision(&id, parent.kind, &work.result)?;
            let resolved = Resolved {
                id,
                kind: parent.kind,
                depth: parent.depth + 1,
            };
            self.record_links(child, resolved, &work.result, Some(&base.data))?;
            if self.resolved[child as usize].set(resolved).is_err() {
                self.resolved_twice(child);
                return Ok(None);
            }
            if let Some(arrivals) = self.arrivals {
                arrivals.arrived(&id, child, self.resolved);
            }
            let data = self.has_children(child, &id).then(|| Base {
                data: work.take_result(),
                checkpoints,
            });
            Ok(Some((data, resolved)))
        });
        match outcome {
            Ok(Some(done)) => {
                self.progress.add(1);
                Some(done)
            }
            Ok(None) => None,
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }
}
