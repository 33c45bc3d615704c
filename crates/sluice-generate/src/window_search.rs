//! The window search of `repack` and `pack-objects`: every object that is not kept as a stored
//! delta (with `-f`, `--no-reuse-delta`: every one) tried against the objects of its kind just
//! before it in git's order (kind, hash of the path, largest first), a window of them at a
//! time, on every core.
//!
//! The sorted list is cut into segments where the kind or the path's hash changes, and the
//! segments are handed out by rayon's work stealing: a thread that finishes early takes
//! segments another would have done, so no static split leaves one core idle at the end.
//! Deltas never cross a segment, which costs only the first window of each (a few hundred of hundreds of thousands
//! of objects), and makes every thread's chains its own, so depths need no locking.

use crate::delta_search::{NewDelta, MAX_SIZE, MIN_SIZE};
use crate::islands::Islands;
use rayon::prelude::*;
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_object::{ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use sluice_pack::delta_encode::BlockIndex;
use sluice_pack::inflate::deflate;
use std::collections::VecDeque;

/// How far the search looks, as git's `--window`, `--depth`, `--window-memory`, `--threads`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchLimits {
    /// Objects in the window, the one being searched among them (git's `pack.window`, 10).
    pub window: usize,
    /// The longest delta chain (git's `pack.depth`, 50).
    pub depth: u32,
    /// Bytes of object data (and their indexes) a window may hold; 0 for no limit (git's
    /// `pack.windowMemory`).
    pub window_memory: u64,
    /// Threads; 0 for one per core (git's `pack.threads`).
    pub threads: usize,
    /// What of the stored packs is kept as it is.
    pub reuse: Reuse,
}

/// What of the stored packs a search keeps as it is (git's `--no-reuse-delta` and
/// `--no-reuse-object`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// A stored delta whose base goes into the pack too is copied as it is; every other
    /// object is searched, and one that stays whole and is stored whole is copied (git's
    /// default: a pack made without a search, or cut at a size limit, gets its deltas).
    Deltas,
    /// Every object is searched anew; one that stays whole is copied as stored (`-f`,
    /// `--no-reuse-delta`).
    Objects,
    /// Every object is searched, and compressed, anew (`-F`,
    /// `--no-reuse-object`).
    Nothing,
}

impl Default for SearchLimits {
    fn default() -> Self {
        SearchLimits {
            window: 10,
            depth: 50,
            window_memory: 0,
            threads: 0,
            reuse: Reuse::Deltas,
        }
    }
}

/// Limits given on the command line, each overriding its config key.
#[derive(Debug, Clone, Copy, Default)]
pub struct GivenLimits {
    /// `--window`.
    pub window: Option<usize>,
    /// `--depth`.
    pub depth: Option<u32>,
    /// `--window-memory`, in bytes.
    pub window_memory: Option<u64>,
    /// `--threads`.
    pub threads: Option<usize>,
}

/// The deepest delta chain git writes: a deeper one asked for is cut to it, with a warning
/// (see [`SearchLimits::too_deep`]).
pub const MAX_DEPTH: u32 = 4095;

impl SearchLimits {
    /// The depth asked for (`given`, else `pack.depth`, else 50), before it is cut.
    fn depth_asked(
        config: &sluice_odb::Config,
        given: &GivenLimits,
    ) -> Result<u32, sluice_odb::ConfigError> {
        Ok(match given.depth {
            Some(depth) => depth,
            None => (config.get_int32("pack.depth")?)
                .map_or(SearchLimits::default().depth, |d| d.max(0) as u32),
        })
    }

    /// A depth asked for beyond [`MAX_DEPTH`], which git's pack-objects warns of ("delta chain
    /// depth … is too deep, forcing 4095") before it cuts it.
    pub fn too_deep(
        config: &sluice_odb::Config,
        given: &GivenLimits,
    ) -> Result<Option<u32>, sluice_odb::ConfigError> {
        Ok(Some(Self::depth_asked(config, given)?).filter(|&depth| depth > MAX_DEPTH))
    }

    /// The limits of a search that keeps stored deltas, as the configuration sets them (a
    /// roll of packs, gc's repack).
    pub fn keeping_stored_deltas(
        config: &sluice_odb::Config,
    ) -> Result<SearchLimits, sluice_odb::ConfigError> {
        Self::from_config(config, &GivenLimits::default(), Reuse::Deltas)
    }

    /// The limits `given`, else `pack.window`, `pack.depth`, `pack.windowMemory` and
    /// `pack.threads`, else git's defaults; the depth capped at 4095 as git caps it.
    pub fn from_config(
        config: &sluice_odb::Config,
        given: &GivenLimits,
        reuse: Reuse,
    ) -> Result<SearchLimits, sluice_odb::ConfigError> {
        let defaults = SearchLimits::default();
        let int = |key: &str| config.get_int(key);
        let window = match given.window {
            Some(window) => window,
            None => {
                (config.get_int32("pack.window")?).map_or(defaults.window, |w| w.max(0) as usize)
            }
        };
        let depth = Self::depth_asked(config, given)?;
        let window_memory = match given.window_memory {
            Some(bytes) => bytes,
            None => int("pack.windowmemory")?.map_or(0, |m| m.max(0) as u64),
        };
        let threads = match given.threads {
            Some(threads) => threads,
            None => sluice_odb::pack_store::pack_threads(config)?,
        };
        Ok(SearchLimits {
            window,
            depth: depth.clamp(1, MAX_DEPTH),
            window_memory,
            threads,
            reuse,
        })
    }
}

/// An object to search, with the size that orders it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sized {
    pub id: ObjectId,
    pub kind: ObjectKind,
    pub name_hash: u32,
    pub size: u64,
    /// Stored whole: if no delta is found, its stored entry is copied; otherwise the search,
    /// which has its data at hand, compresses it for the writer.
    pub stored_whole: bool,
    /// The longest chain of stored deltas kept on it: its own chain may be only that much
    /// shorter than the depth limit (git counts a base's delta children the same way).
    pub headroom: u32,
    /// The pack it is stored in, whole or as a delta.
    pub pack: Option<u32>,
    /// How many delta islands reach it (0 without islands): the objects of more go first,
    /// the bases of those of fewer (git's order too).
    pub breadth: u32,
}

impl Sized {
    /// The pack whose objects this one is not tried against: with stored deltas reused, an
    /// object stored whole was tried against its pack's neighbours by whoever wrote that pack
    /// and found no delta (git's rule too). So a repack of one well-packed pack searches
    /// nothing, and one of many tries each object against the other packs' objects only.
    fn tried_in(&self, reuse: Reuse) -> Option<u32> {
        match reuse {
            Reuse::Deltas if self.stored_whole => self.pack,
            _ => None,
        }
    }
}

/// What the search made for an object.
#[derive(Debug)]
pub(crate) enum Made {
    /// A delta against an object before it.
    Delta(NewDelta),
    /// No delta: the object whole, compressed (for one not stored whole).
    Whole {
        /// Its kind.
        kind: ObjectKind,
        /// Its size.
        size: u64,
        /// Its data, compressed.
        compressed: Vec<u8>,
    },
}

/// Objects per segment before a cut is looked for (at the next change of path hash).
const SEGMENT: usize = 1024;

/// Finds a delta for each object of `objects` that has a good one; returns them by position in
/// `objects`, compressed at `level`, with the compressed data of those that stay whole and are
/// not stored whole.
pub(crate) fn search_all(
    odb: &ObjectDb,
    objects: &[Sized],
    (limits, islands): (&SearchLimits, Option<&Islands>),
    (level, cancel): (u32, &Cancel),
    progress: &dyn Progress,
) -> Vec<(usize, Made)> {
    let mut order: Vec<usize> = (0..objects.len()).collect();
    let key = |&i: &usize| {
        let o = &objects[i];
        let (islands, size) = (std::cmp::Reverse(o.breadth), std::cmp::Reverse(o.size));
        (o.kind as u8, o.name_hash, islands, size, i)
    };
    order.sort_unstable_by_key(key);
    let mut segments = cut(&order, objects);
    // The costliest first, so that no long segment starts last.
    segments.sort_by_key(|s| std::cmp::Reverse(s.iter().map(|&i| objects[i].size).sum::<u64>()));
    progress.phase("Compressing objects", Some(objects.len() as u64));
    let run = || {
        segments
            .par_iter()
            .with_max_len(1)
            .flat_map_iter(|segment| match cancel.is_cancelled() {
                // The segments not started yet are left; the caller sees the flag.
                true => Vec::new(),
                false => {
                    let searched = (objects, &segment[..], islands);
                    search_segment(odb, searched, limits, level, progress)
                }
            })
            .collect::<Vec<_>>()
    };
    let found = match rayon::ThreadPoolBuilder::new()
        .num_threads(sluice_object::threads::workers(limits.threads))
        .build()
    {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    };
    progress.finish();
    found
}

/// Cuts the sorted `order` into segments of one kind each, of at least [`SEGMENT`] objects
/// where there are enough, each ending where the kind or the path hash changes (or anywhere
/// among objects with no path).
fn cut<'a>(order: &'a [usize], objects: &[Sized]) -> Vec<&'a [usize]> {
    let mut segments = Vec::new();
    let mut start = 0;
    for at in 1..order.len() {
        let (a, b) = (&objects[order[at - 1]], &objects[order[at]]);
        // Every kind its own segments: a delta is of its base's kind. Objects with no path
        // (commits, tags) share no hash worth keeping together: a long run of them is cut like
        // any other, or one thread would search all of a history's commits alone.
        let one_path = a.name_hash == b.name_hash && a.name_hash != 0;
        if a.kind != b.kind || at - start >= SEGMENT && !one_path {
            segments.push(&order[start..at]);
            start = at;
        }
    }
    if start < order.len() {
        segments.push(&order[start..]);
    }
    segments
}

/// One object in a window: its data (read when first tried as a base), the index of its
/// blocks once it serves as one, the length of the delta chain it ends, and where it is stored.
struct Slot {
    id: ObjectId,
    kind: ObjectKind,
    size: u64,
    pack: Option<u32>,
    data: Option<Vec<u8>>,
    index: Option<BlockIndex>,
    depth: u32,
}

impl Slot {
    fn memory(&self) -> u64 {
        let data = self.data.as_ref().map_or(0, Vec::len);
        (data + self.index.as_ref().map_or(0, BlockIndex::memory)) as u64
    }

    /// Reads its data if not yet read; false if it cannot be read as the kind the walk gave.
    fn load(&mut self, odb: &ObjectDb) -> bool {
        if self.data.is_none() {
            match odb.read(&self.id) {
                Ok(Some((kind, data))) if kind == self.kind => self.data = Some(data),
                _ => return false,
            }
        }
        true
    }
}

/// The objects of `segment` (places in `objects`) searched in turn, each against the window
/// of those before it, within the bounds of `islands` when given.
fn search_segment(
    odb: &ObjectDb,
    (objects, segment, islands): (&[Sized], &[usize], Option<&Islands>),
    limits: &SearchLimits,
    level: u32,
    progress: &dyn Progress,
) -> Vec<(usize, Made)> {
    let mut found = Vec::new();
    // Most recent first.
    // Never more than the segment holds, however wide the window asked for.
    let capacity = limits.window.min(segment.len()) + 1;
    let mut window: VecDeque<Slot> = VecDeque::with_capacity(capacity);
    let mut spare = Spare::default();
    let others = limits.window.saturating_sub(1);
    for &i in segment {
        progress.add(1);
        let object = &objects[i];
        if object.size > MAX_SIZE as u64 || others == 0 {
            continue;
        }
        let tried_in = object.tried_in(limits.reuse);
        let any_base = (window.iter()).any(|slot| tried_in.is_none() || slot.pack != tried_in);
        let data = match object.stored_whole && !any_base {
            // Neither searched nor compressed now: read only if a later object tries it.
            true => None,
            // An unreadable object is left to the writer, which reads it again and says why.
            false => match odb.read(&object.id) {
                Ok(Some((kind, data))) if kind == object.kind => Some(data),
                _ => continue,
            },
        };
        let mut depth = 0;
        let target = Target {
            id: object.id,
            islands,
            kind: object.kind,
            data: data.as_deref().unwrap_or_default(),
            max_depth: limits.depth.saturating_sub(object.headroom),
            tried_in,
        };
        if let Some((at, delta)) = best_delta(odb, &mut window, &target, &mut spare) {
            let base = window.remove(at).expect("the base is in the window");
            depth = base.depth + 1;
            found.push((i, Made::Delta(NewDelta::new(base.id, &delta, level))));
            spare.delta = delta;
            // The base just used stays longest: the next version of this file likely wants
            // it too (git keeps a used base in its window the same way).
            window.push_front(base);
        } else if let Some(data) = data.as_ref().filter(|_| !object.stored_whole) {
            found.push((
                i,
                Made::Whole {
                    kind: object.kind,
                    size: data.len() as u64,
                    compressed: deflate(data, level),
                },
            ));
        }
        // At the depth limit it can be no one's base: the window keeps the slot for others
        // (git evicts such an object first the same way).
        if depth < limits.depth {
            window.push_front(Slot {
                id: object.id,
                kind: object.kind,
                size: object.size,
                pack: object.pack,
                data,
                index: None,
                depth,
            });
            while window.len() > others {
                spare.take(window.pop_back());
            }
        }
        if limits.window_memory > 0 {
            let mut held: u64 = window.iter().map(Slot::memory).sum();
            while held > limits.window_memory && window.len() > 1 {
                let slot = window.pop_back();
                held -= slot.as_ref().map_or(0, Slot::memory);
                spare.take(slot);
            }
        }
    }
    found
}

/// The object a delta is looked for: its data, the longest chain it may end, and the pack
/// whose objects it is not tried against.
struct Target<'a> {
    id: ObjectId,
    /// The bounds no delta crosses.
    islands: Option<&'a Islands>,
    kind: ObjectKind,
    data: &'a [u8],
    max_depth: u32,
    tried_in: Option<u32>,
}

/// What slots leaving the window leave behind for the next ones: an index's tables and a
/// delta's buffer, reused rather than allocated per object.
#[derive(Default)]
struct Spare {
    index: Option<BlockIndex>,
    delta: Vec<u8>,
}

impl Spare {
    /// Keeps the index of a slot leaving the window (the larger of two, whose tables fit more
    /// bases).
    fn take(&mut self, slot: Option<Slot>) {
        let Some(index) = slot.and_then(|s| s.index) else {
            return;
        };
        if self
            .index
            .as_ref()
            .is_none_or(|i| i.memory() < index.memory())
        {
            self.index = Some(index);
        }
    }

    /// An index of `base`, in spare tables when there are some.
    fn index(&mut self, base: &[u8]) -> BlockIndex {
        match self.index.take() {
            Some(index) => index.rebuild(base),
            None => BlockIndex::new(base),
        }
    }
}

/// The smallest delta of `target` against a base in `window`, if one is worth having;
/// returns the base's place in the window and the delta.
fn best_delta(
    odb: &ObjectDb,
    window: &mut VecDeque<Slot>,
    target: &Target<'_>,
    spare: &mut Spare,
) -> Option<(usize, Vec<u8>)> {
    let Target {
        id,
        islands,
        kind,
        data: target,
        max_depth,
        tried_in,
    } = *target;
    if target.len() < MIN_SIZE || max_depth == 0 {
        return None;
    }
    // The best so far: its place in the window, the delta, and the depth it would give.
    let mut best: Option<(usize, Vec<u8>, u32)> = None;
    for (at, slot) in window.iter_mut().enumerate() {
        // A target far smaller than the base rarely shares enough with it to pay for indexing
        // the base (git's filter too).
        // A delta is of its base's kind: a blob's against a tree would make a tree.
        if slot.kind != kind
            || slot.depth >= max_depth
            || (target.len() as u64) < slot.size / 32
            || (tried_in.is_some() && slot.pack == tried_in)
            || islands.is_some_and(|islands| !islands.allows(&id, &slot.id))
        {
            continue;
        }
        let limit = match &best {
            Some((_, delta, depth)) => worth(delta.len(), *depth, slot.depth, max_depth),
            None => worth(half(target.len()), 1, slot.depth, max_depth),
        };
        // A delta inserts at least the bytes the target has beyond its base.
        if limit == 0 || (target.len() as u64).saturating_sub(slot.size) >= limit as u64 {
            continue;
        }
        if !slot.load(odb) {
            continue;
        }
        let Slot {
            data: Some(data),
            index,
            ..
        } = slot
        else {
            continue;
        };
        let index = index.get_or_insert_with(|| spare.index(data));
        if !index.delta_into(data, target, limit, &mut spare.delta) {
            continue;
        }
        // Of two deltas as small, the one on the shallower chain.
        let better = match &best {
            Some((_, old, depth)) => spare.delta.len() < old.len() || slot.depth + 1 < *depth,
            None => true,
        };
        if better {
            // The buffer the old best held becomes the next try's.
            let delta = std::mem::take(&mut spare.delta);
            if let Some((_, old, _)) = best.replace((at, delta, slot.depth + 1)) {
                spare.delta = old;
            }
        }
    }
    best.map(|(at, delta, _)| (at, delta))
}

/// The bar for a target of `size` bytes before any delta: under half its size.
fn half(size: usize) -> usize {
    (size / 2).saturating_sub(20)
}

/// The largest delta worth making against a base that ends a chain of `depth`, when the
/// best delta so far is `bar` bytes and gives a chain of `bar_depth` (for none: half the
/// target and 1). The bar grows as the base's chain is shorter than the best's: a shallow
/// base may give a somewhat larger delta, so that chains branch out from good bases instead
/// of running to the depth limit, where every object after must start a new chain whole.
fn worth(bar: usize, bar_depth: u32, depth: u32, max_depth: u32) -> usize {
    let scaled = bar as u64 * u64::from(max_depth - depth) / u64::from(max_depth - bar_depth + 1);
    scaled as usize
}
