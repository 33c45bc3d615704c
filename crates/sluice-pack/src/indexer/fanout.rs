//! Finding an id in a sorted list of ids through a fan-out by their leading bits: about one
//! bucket per id (at most 2^16 buckets, 256 KiB), so a lookup touches the table and one or two
//! ids where a binary search over the whole list takes ~20 steps, each a cache miss on lists
//! of a pack's size. Every resolved object asks whether it is some ref-delta's base, and every
//! link of an arriving pack whether the pack holds it.

use sluice_object::ObjectId;

/// A fan-out over one sorted list of ids (which it does not hold).
pub(crate) struct IdFanout {
    /// The ids whose leading `bits` bits are `p` are `ids[starts[p]..starts[p + 1]]`.
    starts: Vec<u32>,
    bits: u32,
}

impl IdFanout {
    /// The fan-out of `ids`, which must be sorted.
    pub(crate) fn new(ids: &[ObjectId]) -> IdFanout {
        let bits = (usize::BITS - ids.len().leading_zeros()).min(16);
        let mut starts = vec![0u32; (1usize << bits) + 1];
        for id in ids {
            starts[prefix(id, bits) + 1] += 1;
        }
        for k in 1..starts.len() {
            starts[k] += starts[k - 1];
        }
        IdFanout { starts, bits }
    }

    /// The position of `id` in `ids` (the list this fan-out was made from), if it is there.
    pub(crate) fn find(&self, ids: &[ObjectId], id: &ObjectId) -> Option<usize> {
        let p = prefix(id, self.bits);
        let (lo, hi) = (self.starts[p] as usize, self.starts[p + 1] as usize);
        ids[lo..hi].binary_search(id).ok().map(|k| lo + k)
    }
}

/// The leading `bits` (1 to 16) bits of `id`.
fn prefix(id: &ObjectId, bits: u32) -> usize {
    let bytes = id.as_bytes();
    let lead = u16::from_be_bytes([bytes[0], bytes[1]]);
    (u32::from(lead) >> (16 - bits)) as usize
}

#[cfg(test)]
mod tests {
    use super::IdFanout;
    use sluice_object::{HashKind, ObjectId};

    fn id(bytes: &[u8]) -> ObjectId {
        let mut full = [0u8; 20];
        full[..bytes.len()].copy_from_slice(bytes);
        ObjectId::from_bytes(HashKind::Sha1, &full).unwrap()
    }

    /// Every id is found where it is, and ids not in the list are not, for list lengths around
    /// each power of two and the empty list.
    #[test]
    fn finds_each_id_and_no_other() {
        for count in [0usize, 1, 2, 3, 255, 256, 257, 4_000, 70_000] {
            let mut ids: Vec<ObjectId> = (0..count as u32)
                .map(|i| {
                    let mixed = i.wrapping_mul(0x9e37_79b9).rotate_left(7) ^ i;
                    let mut bytes = [0u8; 8];
                    bytes[..4].copy_from_slice(&mixed.to_be_bytes());
                    bytes[4..].copy_from_slice(&(2 * i).to_be_bytes());
                    id(&bytes)
                })
                .collect();
            ids.sort_unstable();
            let fanout = IdFanout::new(&ids);
            for (k, one) in ids.iter().enumerate() {
                assert_eq!(fanout.find(&ids, one), Some(k));
                let mut other = one.as_bytes().to_vec();
                other[7] |= 1;
                assert_eq!(fanout.find(&ids, &id(&other)), None);
            }
            assert_eq!(fanout.find(&ids, &id(&[0xff; 20])), None);
        }
    }
}
