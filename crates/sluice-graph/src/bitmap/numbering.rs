//! How a bitmap being read numbers its objects: a pack's bitmap by the pack's order, a
//! multi-pack-index's by the file's pseudo-pack order (its RIDX chunk lists, for each bit, the
//! object's position among the file's sorted ids). Either way each object also has an index
//! position (its rank among the sorted ids, which commit entries and the name-hash cache use)
//! and a place in one of the repository's packs, where the pack writer finds it.

use sluice_object::ObjectId;
use sluice_odb::chunk_file::find;
use sluice_odb::midx::pack_names;
use sluice_odb::mmap::{map, Mapped};
use sluice_odb::ObjectDb;
use sluice_odb::Pack;
use std::path::PathBuf;
use std::sync::Arc;

/// The numbering of a bitmap's objects.
#[derive(Debug, Clone)]
pub(crate) enum Numbering<'a> {
    /// A pack's order; the pack, and its number in the odb if it is one of its packs.
    Pack(&'a Pack, Option<usize>),
    /// A multi-pack-index's pseudo-pack order.
    Midx(Arc<MidxNumbering>),
}

impl Numbering<'_> {
    pub(crate) fn checksum(&self) -> ObjectId {
        match self {
            Numbering::Pack(pack, _) => pack.index().pack_checksum(),
            Numbering::Midx(midx) => midx.checksum,
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Numbering::Pack(pack, _) => pack.index().len(),
            Numbering::Midx(midx) => midx.count,
        }
    }

    /// The file the bitmap is read from.
    pub(crate) fn bitmap_path(&self) -> PathBuf {
        match self {
            Numbering::Pack(pack, _) => pack.path().with_extension("bitmap"),
            Numbering::Midx(midx) => midx.bitmap_path(),
        }
    }

    /// The object at index position `index`.
    pub(crate) fn id_at(&self, index: usize) -> ObjectId {
        match self {
            Numbering::Pack(pack, _) => pack.index().id(index),
            Numbering::Midx(midx) => midx.id_at(index),
        }
    }

    /// The bit of `id`, if the bitmap numbers it.
    pub(crate) fn bit_of(&self, id: &ObjectId) -> Option<usize> {
        match self {
            Numbering::Pack(pack, _) => pack.index().lookup(id).and_then(|i| pack.rank_of(i)),
            Numbering::Midx(midx) => midx.bit_of(id),
        }
    }

    /// The index position of the object at `bit`.
    pub(crate) fn index_at_bit(&self, bit: usize) -> Option<usize> {
        match self {
            Numbering::Pack(pack, _) => pack.at_rank(bit),
            Numbering::Midx(midx) => midx.index_at_bit(bit),
        }
    }

    /// The numbering again, for the objects the other side has, once the bitmap is gone;
    /// `None` for a pack that is not one of the odb's.
    pub(crate) fn known(&self) -> Option<KnownNumbering> {
        match self {
            Numbering::Pack(_, number) => Some(KnownNumbering::Pack((*number)?)),
            Numbering::Midx(midx) => Some(KnownNumbering::Midx(Arc::clone(midx))),
        }
    }

    /// Where the object at `bit` is stored: the odb's pack number and its index position there.
    pub(crate) fn location(&self, odb: &ObjectDb, bit: usize) -> Option<(u32, u32)> {
        match self {
            Numbering::Pack(pack, number) => Some(((*number)? as u32, pack.at_rank(bit)? as u32)),
            Numbering::Midx(midx) => midx.location(odb, bit),
        }
    }
}

/// A numbering kept with the bits of what the other side has.
#[derive(Debug, Clone)]
pub(crate) enum KnownNumbering {
    /// The odb's pack of this number.
    Pack(usize),
    /// The multi-pack-index.
    Midx(Arc<MidxNumbering>),
}

impl KnownNumbering {
    /// The bit of `id`; `odb` is the one the numbering was made for.
    pub(crate) fn bit_of(&self, odb: &ObjectDb, id: &ObjectId) -> Option<usize> {
        match self {
            KnownNumbering::Pack(number) => {
                let pack = &odb.packs()[*number];
                pack.index().lookup(id).and_then(|i| pack.rank_of(i))
            }
            KnownNumbering::Midx(midx) => midx.bit_of(id),
        }
    }
}

/// A multi-pack-index read for its bitmap's sake.
#[derive(Debug)]
pub(crate) struct MidxNumbering {
    data: Mapped,
    pack_dir: PathBuf,
    checksum: ObjectId,
    count: usize,
    id_len: usize,
    /// Where the chunks of sorted ids, of (pack, offset) pairs and of the reverse index start.
    lookup: usize,
    offsets: usize,
    reverse: usize,
    /// The bit of each index position (the reverse index inverted).
    bits: Vec<u32>,
    /// For each pack of the file: its number among the odb's packs, the first bit of its
    /// objects and whether every object of it is numbered here (then its objects' bits follow
    /// its own order, and a bit gives its rank there directly).
    packs: Vec<(usize, usize, bool)>,
}

impl MidxNumbering {
    /// The multi-pack-index of `odb`'s pack directory, if it has one with a reverse index whose
    /// packs are all among `odb`'s; `None` otherwise (a bitmap of it cannot be used).
    pub(crate) fn open(odb: &ObjectDb) -> Option<MidxNumbering> {
        let pack_dir = odb.pack_dir();
        let file = std::fs::File::open(pack_dir.join(sluice_odb::midx::FILE_NAME)).ok()?;
        let data = map(&file).ok()?;
        let bytes = data.as_ref();
        let hash = odb.hash();
        let id_len = hash.len_in_bytes();
        let (pack_count, table) = sluice_odb::midx::read_header(bytes, hash).ok()?;
        let (names_at, names_len) = find(&table, *b"PNAM")?;
        let (lookup, lookup_len) = find(&table, *b"OIDL")?;
        let (offsets, offsets_len) = find(&table, *b"OOFF")?;
        let (reverse, reverse_len) = find(&table, *b"RIDX")?;
        let count = lookup_len / id_len;
        if offsets_len != count * 8 || reverse_len != count * 4 {
            return None;
        }
        let checksum = ObjectId::from_bytes(hash, &bytes[bytes.len() - id_len..]).ok()?;
        // Without its bitmap the file is of no use here: not worth inverting its order.
        if !sluice_odb::midx::bitmap_path(&pack_dir, &checksum).exists() {
            return None;
        }
        let names = pack_names(&bytes[names_at..names_at + names_len], pack_count).ok()?;
        let mut packs = Vec::with_capacity(pack_count);
        for name in names {
            let stem = name.trim_end_matches(".idx");
            let number = (odb.packs().iter()).position(|p| {
                p.path().parent() == Some(pack_dir.as_path())
                    && p.path()
                        .file_stem()
                        .is_some_and(|s| s.to_string_lossy() == stem)
            })?;
            packs.push((number, usize::MAX, false));
        }
        let mut midx = MidxNumbering {
            data,
            pack_dir,
            checksum,
            count,
            id_len,
            lookup,
            offsets,
            reverse,
            bits: vec![u32::MAX; count],
            packs,
        };
        midx.index_bits(odb)?;
        Some(midx)
    }

    /// Inverts the reverse index and finds where each pack's objects start, checking that
    /// every index position has exactly one bit.
    fn index_bits(&mut self, odb: &ObjectDb) -> Option<()> {
        let mut per_pack = vec![0usize; self.packs.len()];
        for bit in 0..self.count {
            let index = self.index_at_bit(bit)?;
            if self.bits[index] != u32::MAX {
                return None;
            }
            self.bits[index] = bit as u32;
            let pack = self.pack_of(index)?;
            per_pack[pack] += 1;
            let first = &mut self.packs[pack].1;
            *first = (*first).min(bit);
        }
        for (pack, numbered) in self.packs.iter_mut().zip(per_pack) {
            pack.2 = numbered == odb.packs()[pack.0].index().len();
        }
        Some(())
    }

    fn bitmap_path(&self) -> PathBuf {
        sluice_odb::midx::bitmap_path(&self.pack_dir, &self.checksum)
    }

    fn be32(&self, at: usize) -> Option<u32> {
        let bytes = self.data.as_ref().get(at..at + 4)?;
        Some(u32::from_be_bytes(bytes.try_into().ok()?))
    }

    fn id_at(&self, index: usize) -> ObjectId {
        let at = self.lookup + index * self.id_len;
        let bytes = &self.data.as_ref()[at..at + self.id_len];
        ObjectId::from_bytes(self.checksum.kind(), bytes).unwrap_or(self.checksum)
    }

    fn index_of(&self, id: &ObjectId) -> Option<usize> {
        let ids = &self.data.as_ref()[self.lookup..self.lookup + self.count * self.id_len];
        let (mut low, mut high) = (0, self.count);
        while low < high {
            let middle = (low + high) / 2;
            let at = middle * self.id_len;
            match ids[at..at + self.id_len].cmp(id.as_bytes()) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(middle),
            }
        }
        None
    }

    fn bit_of(&self, id: &ObjectId) -> Option<usize> {
        self.index_of(id).map(|index| self.bits[index] as usize)
    }

    fn index_at_bit(&self, bit: usize) -> Option<usize> {
        let index = self.be32(self.reverse + bit * 4)? as usize;
        (index < self.count).then_some(index)
    }

    /// The file's number of the pack holding the object at `index`.
    fn pack_of(&self, index: usize) -> Option<usize> {
        let pack = self.be32(self.offsets + index * 8)? as usize;
        (pack < self.packs.len()).then_some(pack)
    }

    fn location(&self, odb: &ObjectDb, bit: usize) -> Option<(u32, u32)> {
        let index = self.index_at_bit(bit)?;
        let (number, first, whole) = self.packs[self.pack_of(index)?];
        let pack = &odb.packs()[number];
        let position = match whole {
            true => pack.at_rank(bit - first)?,
            false => pack.index().lookup(&self.id_at(index))?,
        };
        Some((number as u32, position as u32))
    }
}
