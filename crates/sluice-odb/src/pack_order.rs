//! The order of a pack's entries by offset, which the `.idx` does not give: copying an entry
//! verbatim needs where it ends (where the next begins), and an ofs-delta's base is found by
//! offset.
//!
//! A small fetch asks a handful of questions: those are answered by binary search through the
//! `.rev` file (positions in pack order) when there is one. A checkout asks a few thousand:
//! after [`SAMPLES_AFTER`] questions, every [`SAMPLE_STEP`]th rank's offset is kept, and the
//! search starts from those. A full clone asks one per object: after [`TABLE_AFTER`]
//! questions the whole order is built once, as a table.

use crate::mmap::{map, Mapped};
use sluice_object::HashKind;
use sluice_pack::PackIndex;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Questions answered through the `.rev` before building the table.
const TABLE_AFTER: usize = 32 << 10;
/// Questions answered through the `.rev` alone before sampling it.
const SAMPLES_AFTER: usize = 256;
/// Ranks between two samples: a bisection of the `.rev` costs two cache misses a step (its
/// position, then that entry's offset in the `.idx`), twenty steps through git/git's 850,000
/// entries, and a checkout of its 4,800 files asked through its delta chains often enough to
/// spend a tenth of its CPU there. The samples (100 KB for git/git) leave six steps.
const SAMPLE_STEP: usize = 64;

#[derive(Debug)]
pub(crate) struct PackOrder {
    /// The `.rev` file's positions, if it exists and its header and size are right.
    rev: Option<Mapped>,
    /// (offset, index position) sorted by offset.
    table: OnceLock<Vec<(u64, u32)>>,
    /// The offset of every [`SAMPLE_STEP`]th rank of the `.rev`.
    samples: OnceLock<Vec<u64>>,
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
            samples: OnceLock::new(),
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
            Answer::Rev(order) => {
                let k = partition(&order, index, offset);
                // The found entry's own offset is compared: a wrong `.rev` finds nothing
                // rather than a wrong entry.
                let position = rev_position(order.positions, k)?;
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
            Answer::Rev(order) => {
                let k = partition(&order, index, offset + 1);
                rev_position(order.positions, k).map(|p| index.offset(p))
            }
        }
    }

    /// The rank in pack order (the bit of a bitmap) of the entry at index position `position`.
    pub(crate) fn rank_of(&self, index: &PackIndex<Mapped>, position: usize) -> Option<usize> {
        let offset = index.offset(position);
        match self.answer(index) {
            Answer::Table(all) => all.binary_search_by_key(&offset, |&(o, _)| o).ok(),
            Answer::Rev(order) => {
                let k = partition(&order, index, offset);
                (rev_position(order.positions, k)? == position).then_some(k)
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
                Answer::Rev(order) => rev_position(order.positions, rank),
            },
        };
        position.filter(|&p| p < index.len())
    }

    fn answer(&self, index: &PackIndex<Mapped>) -> Answer<'_> {
        if let Some(table) = self.table.get() {
            return Answer::Table(table);
        }
        if let Some(rev) = &self.rev {
            let asked = self.questions.fetch_add(1, Ordering::Relaxed);
            if asked < TABLE_AFTER {
                let rev = &rev.as_ref()[12..12 + 4 * index.len()];
                let samples = (asked >= SAMPLES_AFTER).then(|| {
                    self.samples
                        .get_or_init(|| {
                            (0..index.len())
                                .step_by(SAMPLE_STEP)
                                .map(|k| offset_at(rev, index, k))
                                .collect()
                        })
                        .as_slice()
                });
                return Answer::Rev(RevOrder {
                    positions: rev,
                    samples,
                });
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
    Rev(RevOrder<'a>),
}

struct RevOrder<'a> {
    /// The `.rev` body: big-endian index positions in pack order.
    positions: &'a [u8],
    /// See [`PackOrder::samples`], once taken.
    samples: Option<&'a [u64]>,
}

fn rev_position(rev: &[u8], k: usize) -> Option<usize> {
    let bytes = rev.get(4 * k..4 * k + 4)?;
    Some(u32::from_be_bytes(bytes.try_into().ok()?) as usize)
}

/// The offset of the entry of rank `k`; past the end for a rank the `.rev` gets wrong.
fn offset_at(rev: &[u8], index: &PackIndex<Mapped>, k: usize) -> u64 {
    rev_position(rev, k)
        .filter(|&p| p < index.len())
        .map_or(u64::MAX, |p| index.offset(p))
}

/// The first `k` whose entry starts at or after `offset`.
fn partition(order: &RevOrder<'_>, index: &PackIndex<Mapped>, offset: u64) -> usize {
    let rev = order.positions;
    let (mut low, mut high) = (0, rev.len() / 4);
    if let Some(samples) = order.samples {
        // Sample `j` is rank `j * SAMPLE_STEP`: the answer lies after the last sample before
        // `offset` and at or before the first sample at or after it.
        let j = samples.partition_point(|&o| o < offset);
        high = high.min(j * SAMPLE_STEP);
        if j > 0 {
            low = (j - 1) * SAMPLE_STEP + 1;
        }
    }
    while low < high {
        let mid = (low + high) / 2;
        if offset_at(rev, index, mid) < offset {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::git;

    /// Against the whole order sorted in memory: the entry at each offset, the next offset
    /// after each entry and after offsets between entries, and ranks, through the `.rev`
    /// alone and then through its samples.
    #[test]
    fn answers_through_the_rev_as_the_sorted_table() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q"]);
        for round in 0..4 {
            for f in 0..80 {
                let text = format!("{}{round}\n", "some text\n".repeat(f * f + 1));
                std::fs::write(dir.join(format!("f{f}")), text).unwrap();
            }
            git(dir, &["add", "."]);
            git(dir, &["commit", "-qm", "round"]);
        }
        git(
            dir,
            &["-c", "pack.writeReverseIndex=true", "repack", "-adq"],
        );
        let packs = dir.join(".git/objects/pack");
        let idx = std::fs::read_dir(&packs)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "idx"))
            .unwrap();
        let hash = HashKind::Sha1;
        let index =
            PackIndex::new(map(&std::fs::File::open(&idx).unwrap()).unwrap(), hash).unwrap();
        let order = PackOrder::new(&idx.with_extension("pack"), &index, hash);
        assert!(order.rev.is_some(), "git wrote a .rev");
        let mut all: Vec<(u64, usize)> = (0..index.len()).map(|i| (index.offset(i), i)).collect();
        all.sort_unstable();
        for (k, &(offset, position)) in all.iter().enumerate() {
            let next = all.get(k + 1).map(|&(o, _)| o);
            assert_eq!(order.position_at(&index, offset), Some(position));
            assert_eq!(order.position_at(&index, offset + 1), None);
            assert_eq!(order.next_offset(&index, offset), next);
            assert_eq!(order.next_offset(&index, offset + 1), next);
            assert_eq!(order.rank_of(&index, position), Some(k));
        }
        assert_eq!(order.next_offset(&index, 0), Some(all[0].0));
        assert_eq!(order.position_at(&index, u64::MAX - 1), None);
        // Every answer came from the `.rev`, the later ones starting from its samples: the
        // table is only built after many more questions.
        assert!(order.table.get().is_none());
        assert!(all.len() > 4 * SAMPLE_STEP && order.samples.get().is_some());
    }
}
