//! The bitmaps of a pack being replaced, carried over to the pack replacing it: a repack
//! that keeps the same history need not walk it again. Each old bit has the new position of
//! its object; the objects of a repacked pack keep their order in long runs, so a bitmap moves
//! a word at a time.

use super::ewah::Bitset;
use super::target::BitmapTarget;
use super::PackBitmap;
use sluice_object::ObjectId;
use sluice_odb::Pack;

/// A run of old positions that keep their order in the new pack.
struct Run {
    old: usize,
    new: usize,
    len: usize,
}

/// An old pack's bitmaps, readable in a new pack's positions.
pub(crate) struct Reused<'a> {
    old: PackBitmap<'a>,
    runs: Vec<Run>,
    /// Old positions (start, length) whose objects the new pack leaves out.
    gaps: Vec<(usize, usize)>,
    new_count: usize,
}

impl<'a> Reused<'a> {
    /// The bitmaps of `old`, if it has a usable one, for use in `new`.
    pub(crate) fn open(old: &'a Pack, new: &BitmapTarget<'_>) -> Option<Reused<'a>> {
        let bitmap = PackBitmap::open(old, None).ok()?;
        let map = new_positions(old, new)?;
        let (mut runs, mut gaps) = (Vec::new(), Vec::new());
        let mut rank = 0;
        while rank < map.len() {
            let start = rank;
            if map[rank] == u32::MAX {
                while rank < map.len() && map[rank] == u32::MAX {
                    rank += 1;
                }
                gaps.push((start, rank - start));
                continue;
            }
            rank += 1;
            while rank < map.len() && map[rank] == map[rank - 1].wrapping_add(1) {
                rank += 1;
            }
            runs.push(Run {
                old: start,
                new: map[start] as usize,
                len: rank - start,
            });
        }
        Some(Reused {
            old: bitmap,
            runs,
            gaps,
            new_count: new.len(),
        })
    }

    /// Whether `commit` has a bitmap in the old pack.
    pub(crate) fn has(&self, commit: &ObjectId) -> bool {
        self.old.by_commit.contains_key(commit)
    }

    /// `commit`'s old bitmap in the new pack's positions; `None` when it has none, or when it
    /// names an object the new pack lacks (then it does not describe the new pack).
    pub(crate) fn bitmap(&mut self, commit: &ObjectId) -> Option<Bitset> {
        let k = *self.old.by_commit.get(commit)?;
        let old = self.old.entry_bitmap(k).ok()?;
        if self.gaps.iter().any(|&(at, len)| old.any_in(at, len)) {
            return None;
        }
        let mut new = Bitset::new(self.new_count);
        for run in &self.runs {
            new.or_shifted(run.new, &old, run.old, run.len);
        }
        Some(new)
    }
}

/// For each object of `old`, in pack order, its bit in `new` (`u32::MAX` where `new` lacks
/// it): both list their objects sorted by id, so one merge pairs them.
fn new_positions(old: &Pack, new: &BitmapTarget<'_>) -> Option<Vec<u32>> {
    let old_index = old.index();
    let mut map = vec![u32::MAX; old_index.len()];
    let mut j = 0;
    for i in 0..old_index.len() {
        let id = old_index.id(i);
        while j < new.len() && new.id_at(j) < id {
            j += 1;
        }
        if j < new.len() && new.id_at(j) == id {
            let new_rank = new.bit_at(j)?;
            map[old.rank_of(i)?] = u32::try_from(new_rank).ok()?;
        }
    }
    Some(map)
}
