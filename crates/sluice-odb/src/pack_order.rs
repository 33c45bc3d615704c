//! The order of a pack's entries by offset, which the `.idx` does not give: copying an entry
//! verbatim needs where it ends (where the next begins), and an ofs-delta's base is found by
//! offset.
//!
//! A small fetch asks a handful of questions: those are answered by binary search through the
//! `.rev` file (positions in pack order) when there is one. A full clone asks one per object:
//! after [`TABLE_AFTER`] questions the whole order is built once, as a table.

use crate::mmap::{map, Mapped};
use sluice_object::HashKind;
use sluice_pack::PackIndex;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Questions answered through the `.rev` before building the table.
const TABLE_AFTER: usize = 32 << 10;

#[derive(Debug)]
pub(crate) struct PackOrder {
    /// The `.rev` file's positions, if it exists and its header and size are right.
    rev: Option<Mapped>,
    /// (offset, index position) sorted by offset.
    table: OnceLock<Vec<(u64, u32)>>,
    questions: AtomicUsize,
}

impl PackOrder {
    /// The order of the pack whose `.pack` is at `pack_path`, indexed by `index`.
    pub(crate) fn new(pack_path: &Path, index: &PackIndex<Mapped>, hash: HashKind) -> Self {
        let rev = std::fs::File::open(pack_path.with_extension("rev"))
            .and_then(|f| map(&f))
            .ok()
            .filter(|rev| {
                let rev = rev.as_ref();
                rev.len() == 12 + 4 * index.len() + 2 * hash.len_in_bytes()
                    && rev.starts_with(b"RIDX")
                    && rev[4..8] == 1u32.to_be_bytes()
                    && rev[8..12] == hash.format_id().to_be_bytes()
            });
        PackOrder {
            rev,
            table: OnceLock::new(),
            questions: AtomicUsize::new(0),
        }
    }

    /// The index position of the entry starting at `offset`, if one does.
    pub(crate) fn position_at(&self, index: &PackIndex<Mapped>, offset: u64) -> Option<usize> {
        match self.answer(index) {
            Answer::Table(all) => {
                let i = all.binary_search_by_key(&offset, |&(o, _)| o).ok()?;
                Some(all[i].1 as usize)
            }
            Answer::Rev(rev) => {
                let k = partition(rev, index, offset);
                // The found entry's own offset is compared: a wrong `.rev` finds nothing
                // rather than a wrong entry.
                let position = rev_position(rev, k)?;
                (index.offset(position) == offset).then_some(position)
            }
        }
    }

    /// Where the entry after the one at `offset` starts; `None` for the last entry.
    pub(crate) fn next_offset(&self, index: &PackIndex<Mapped>, offset: u64) -> Option<u64> {
        match self.answer(index) {
            Answer::Table(all) => {
                let next = all.partition_point(|&(o, _)| o <= offset);
                all.get(next).map(|&(o, _)| o)
            }
            Answer::Rev(rev) => {
                let k = partition(rev, index, offset + 1);
                rev_position(rev, k).map(|p| index.offset(p))
            }
        }
    }

    /// The rank in pack order (the bit of a bitmap) of the entry at index position `position`.
    pub(crate) fn rank_of(&self, index: &PackIndex<Mapped>, position: usize) -> Option<usize> {
        let offset = index.offset(position);
        match self.answer(index) {
            Answer::Table(all) => all.binary_search_by_key(&offset, |&(o, _)| o).ok(),
            Answer::Rev(rev) => {
                let k = partition(rev, index, offset);
                (rev_position(rev, k)? == position).then_some(k)
            }
        }
    }

    /// The index position of the entry of rank `rank` in pack order.
    pub(crate) fn at_rank(&self, index: &PackIndex<Mapped>, rank: usize) -> Option<usize> {
        let position = match (&self.rev, self.table.get()) {
            // A direct read: no question counted towards building the table.
            (Some(rev), None) => rev_position(&rev.as_ref()[12..12 + 4 * index.len()], rank),
            _ => match self.answer(index) {
                Answer::Table(all) => all.get(rank).map(|&(_, i)| i as usize),
                Answer::Rev(rev) => rev_position(rev, rank),
            },
        };
        position.filter(|&p| p < index.len())
    }

    fn answer(&self, index: &PackIndex<Mapped>) -> Answer<'_> {
        if let Some(table) = self.table.get() {
            return Answer::Table(table);
        }
        if let Some(rev) = &self.rev {
            if self.questions.fetch_add(1, Ordering::Relaxed) < TABLE_AFTER {
                return Answer::Rev(&rev.as_ref()[12..12 + 4 * index.len()]);
            }
        }
        Answer::Table(self.table.get_or_init(|| {
            let mut all: Vec<(u64, u32)> = (0..index.len())
                .map(|i| (index.offset(i), i as u32))
                .collect();
            all.sort_unstable();
            all
        }))
    }
}

enum Answer<'a> {
    Table(&'a [(u64, u32)]),
    /// The `.rev` body: big-endian index positions in pack order.
    Rev(&'a [u8]),
}

fn rev_position(rev: &[u8], k: usize) -> Option<usize> {
    let bytes = rev.get(4 * k..4 * k + 4)?;
    Some(u32::from_be_bytes(bytes.try_into().ok()?) as usize)
}

/// The first `k` whose entry starts at or after `offset`.
fn partition(rev: &[u8], index: &PackIndex<Mapped>, offset: u64) -> usize {
    let (mut low, mut high) = (0, rev.len() / 4);
    while low < high {
        let mid = (low + high) / 2;
        let at = rev_position(rev, mid)
            .filter(|&p| p < index.len())
            .map_or(u64::MAX, |p| index.offset(p));
        if at < offset {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}
