//! Making deltas in git's format (the counterpart of [`crate::delta`]): an index of the base's
//! 16-byte blocks, then one pass over the target with a rolling hash that finds where a block
//! of the base starts, grows each match both ways, and emits copies for matches and inserts for
//! the rest.
//!
//! One index serves many targets (the delta search tries each base against several objects).

use sluice_object::tree_diff::common_prefix;

/// Bytes per indexed block of the base, and the shortest match searched for.
const BLOCK: usize = 16;
/// Candidates looked at per hash hit: bounds the work on repetitive bases.
const MAX_CHAIN: usize = 32;
/// A match this long ends the look along the chain: a longer one would save a few bytes of
/// copy instruction at the cost of comparing kilobytes more per candidate (git stops there
/// too).
const GOOD_MATCH: usize = 4096;
/// The longest copy one instruction describes (three size bytes).
const MAX_COPY: usize = 0xff_ffff;
/// The longest insert one instruction carries.
const MAX_INSERT: usize = 0x7f;
/// Multiplier of the rolling hash.
const PRIME: u32 = 0x0100_0193;

/// `PRIME` to the power `BLOCK - 1`: the weight of the byte leaving the window.
const fn leaving_weight() -> u32 {
    let mut weight = 1u32;
    let mut i = 1;
    while i < BLOCK {
        weight = weight.wrapping_mul(PRIME);
        i += 1;
    }
    weight
}
const LEAVING: u32 = leaving_weight();

fn block_hash(block: &[u8]) -> u32 {
    block.iter().fold(0u32, |h, &b| {
        h.wrapping_mul(PRIME).wrapping_add(u32::from(b) + 1)
    })
}

fn roll(hash: u32, out: u8, inn: u8) -> u32 {
    hash.wrapping_sub((u32::from(out) + 1).wrapping_mul(LEAVING))
        .wrapping_mul(PRIME)
        .wrapping_add(u32::from(inn) + 1)
}

/// A base prepared for making deltas against it.
#[derive(Debug)]
pub struct DeltaIndex<'a> {
    base: &'a [u8],
    blocks: BlockIndex,
}

impl<'a> DeltaIndex<'a> {
    /// Indexes `base`. Bases of 4 GiB or more cannot be indexed (git's deltas address them,
    /// but nothing that large is worth a delta search) and give an index that finds nothing.
    pub fn new(base: &'a [u8]) -> Self {
        DeltaIndex {
            base,
            blocks: BlockIndex::new(base),
        }
    }

    /// The base this index is for.
    pub fn base(&self) -> &'a [u8] {
        self.base
    }

    /// A delta that turns the base into `target`, or `None` when it would be longer than
    /// `max_size` bytes (or the base is empty).
    pub fn delta(&self, target: &[u8], max_size: usize) -> Option<Vec<u8>> {
        self.blocks.delta(self.base, target, max_size)
    }
}

/// The index of a base's blocks without the base itself: for a caller that keeps the base
/// beside it (a delta search's window, where the two move together).
#[derive(Debug)]
pub struct BlockIndex {
    /// Hash bucket → the most recent block start + 1 (0: empty).
    heads: Vec<u32>,
    /// Block number → the previous block start + 1 in the same bucket.
    next: Vec<u32>,
    /// Bits of the mixed hash dropped to pick a bucket (32 less the log of the bucket count).
    shift: u32,
}

impl BlockIndex {
    /// Indexes `base` (see [`DeltaIndex::new`]).
    pub fn new(base: &[u8]) -> Self {
        let empty = BlockIndex {
            heads: Vec::new(),
            next: Vec::new(),
            shift: 0,
        };
        empty.rebuild(base)
    }

    /// Indexes `base` in this index's memory, which no longer serves its old base: a delta
    /// search indexes a base per object, and fresh tables each time cost as much in page
    /// faults and in returning memory to the system as the indexing itself.
    pub fn rebuild(mut self, base: &[u8]) -> Self {
        let blocks = if base.len() >= u32::MAX as usize {
            0
        } else {
            base.len() / BLOCK
        };
        // Four to eight buckets per block: on rust-lang/cargo's history, twice as many found
        // no more matches and cost more to clear and to miss in cache; a quarter as many
        // made the chains longer and the search a tenth slower.
        let buckets = (blocks * 4).next_power_of_two().max(16);
        self.heads.clear();
        self.heads.resize(buckets, 0);
        self.next.clear();
        self.next.resize(blocks, 0);
        self.shift = 32 - buckets.trailing_zeros();
        // Each chain starts at the base's last block with that hash.
        for block in 0..blocks {
            let start = block * BLOCK;
            let bucket = self.bucket(block_hash(&base[start..start + BLOCK]));
            self.next[block] = self.heads[bucket];
            self.heads[bucket] = start as u32 + 1;
        }
        self
    }

    /// The bucket of a block's rolling hash: its top bits after one multiplication, which
    /// spreads the low bits the rolling hash leaves alike (Fibonacci hashing).
    fn bucket(&self, hash: u32) -> usize {
        (hash.wrapping_mul(0x9e37_79b1) >> self.shift) as usize
    }

    /// Bytes this index holds.
    pub fn memory(&self) -> usize {
        (self.heads.capacity() + self.next.capacity()) * 4
    }

    /// A delta that turns `base` (the bytes this index was built from) into `target`, or
    /// `None` when it would be longer than `max_size` bytes (or the base is empty).
    pub fn delta(&self, base: &[u8], target: &[u8], max_size: usize) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(max_size.min(target.len() / 2 + 64));
        self.delta_into(base, target, max_size, &mut out)
            .then_some(out)
    }

    /// [`BlockIndex::delta`] into `out` (cleared first), whose memory a caller trying many
    /// bases reuses: most tries fail. False when there is no delta within `max_size` bytes.
    pub fn delta_into(
        &self,
        base: &[u8],
        target: &[u8],
        max_size: usize,
        out: &mut Vec<u8>,
    ) -> bool {
        out.clear();
        if base.is_empty() || self.next.is_empty() && target.len() > max_size {
            return false;
        }
        push_varint(out, base.len() as u64);
        push_varint(out, target.len() as u64);
        let mut pending = 0; // start of bytes not yet covered by an instruction
        let mut pos = 0;
        let mut hash = target.get(..BLOCK).map_or(0, block_hash);
        while pos + BLOCK <= target.len() {
            if let Some((base_at, len)) = self.best_match(base, target, pos, hash) {
                // Grow the match backwards over bytes that would otherwise be inserted.
                let mut start = pos;
                let mut base_start = base_at;
                while start > pending && base_start > 0 && target[start - 1] == base[base_start - 1]
                {
                    start -= 1;
                    base_start -= 1;
                }
                push_inserts(out, &target[pending..start]);
                push_copies(out, base_start, pos + len - start);
                pos += len;
                pending = pos;
                if out.len() > max_size {
                    return false;
                }
                if pos + BLOCK <= target.len() {
                    hash = block_hash(&target[pos..pos + BLOCK]);
                }
                continue;
            }
            if pos + BLOCK < target.len() {
                hash = roll(hash, target[pos], target[pos + BLOCK]);
            }
            pos += 1;
            // An insert already past the limit cannot come back under it.
            if pos - pending > max_size {
                return false;
            }
        }
        push_inserts(out, &target[pending..]);
        out.len() <= max_size
    }

    /// The longest match of `base` for the block of `target` at `pos` (whose hash is `hash`),
    /// extended forwards; `None` below one block.
    fn best_match(
        &self,
        base: &[u8],
        target: &[u8],
        pos: usize,
        hash: u32,
    ) -> Option<(usize, usize)> {
        let mut candidate = self.heads[self.bucket(hash)];
        let mut best: Option<(usize, usize)> = None;
        let mut looked = 0;
        while candidate != 0 && looked < MAX_CHAIN {
            let at = candidate as usize - 1;
            looked += 1;
            let limit = (base.len() - at).min(target.len() - pos);
            let len = common_prefix(&base[at..at + limit], &target[pos..pos + limit]);
            if len >= BLOCK && best.is_none_or(|(_, b)| len > b) {
                best = Some((at, len));
                if len >= GOOD_MATCH || at + len == base.len() || pos + len == target.len() {
                    break;
                }
            }
            candidate = self.next[at / BLOCK];
        }
        best
    }
}

fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn push_inserts(out: &mut Vec<u8>, mut data: &[u8]) {
    while !data.is_empty() {
        let len = data.len().min(MAX_INSERT);
        out.push(len as u8);
        out.extend_from_slice(&data[..len]);
        data = &data[len..];
    }
}

fn push_copies(out: &mut Vec<u8>, mut offset: usize, mut len: usize) {
    while len > 0 {
        let this = len.min(MAX_COPY);
        push_copy(out, offset as u32, this as u32);
        offset += this;
        len -= this;
    }
}

/// One copy instruction: a bit per non-zero byte of offset (4) and size (3); a size of
/// 0x10000 is written as no size bytes at all.
fn push_copy(out: &mut Vec<u8>, offset: u32, size: u32) {
    // The opcode comes first but is known last: its place is kept and filled in after.
    let opcode_at = out.len();
    out.push(0);
    let mut opcode = 0x80u8;
    for i in 0..4 {
        let byte = (offset >> (8 * i)) as u8;
        if byte != 0 {
            opcode |= 1 << i;
            out.push(byte);
        }
    }
    let size = if size == 0x10000 { 0 } else { size };
    for i in 0..3 {
        let byte = (size >> (8 * i)) as u8;
        if byte != 0 {
            opcode |= 0x10 << i;
            out.push(byte);
        }
    }
    out[opcode_at] = opcode;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta::apply_delta;

    fn noise(seed: u64, len: usize) -> Vec<u8> {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..len)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                (state >> 33) as u8
            })
            .collect()
    }

    fn round_trip(base: &[u8], target: &[u8]) -> Option<usize> {
        let delta = DeltaIndex::new(base).delta(target, usize::MAX)?;
        let mut out = Vec::new();
        apply_delta(base, &delta, &mut out).unwrap();
        assert_eq!(out, target);
        Some(delta.len())
    }

    #[test]
    fn edits_make_small_deltas_that_apply() {
        let base = noise(1, 200_000);
        let mut target = base.clone();
        target[5000] ^= 1;
        target.splice(100_000..100_010, noise(2, 300));
        target.truncate(190_000);
        target.extend_from_slice(&base[..70_000]);
        let size = round_trip(&base, &target).unwrap();
        assert!(size < 1000, "delta of {size} bytes");
    }

    #[test]
    fn odd_shapes_round_trip() {
        let base = noise(3, 5000);
        for target in [
            Vec::new(),
            b"short".to_vec(),
            noise(4, 3000),
            [&base[..], &base[..]].concat(),
            vec![0u8; 300_000],
            base[17..4000].to_vec(),
        ] {
            round_trip(&base, &target);
        }
        round_trip(&vec![0u8; 300_000], &vec![0u8; 20_000_000]);
        round_trip(b"tiny", b"tiny target");
        assert!(DeltaIndex::new(b"").delta(b"x", usize::MAX).is_none());
    }

    #[test]
    fn size_limit_is_kept() {
        let base = noise(5, 10_000);
        let target = noise(6, 10_000);
        assert!(DeltaIndex::new(&base).delta(&target, 5000).is_none());
        let close = [&base[..9000], b"changed"].concat();
        let delta = DeltaIndex::new(&base).delta(&close, 100).unwrap();
        assert!(delta.len() <= 100);
    }
}
