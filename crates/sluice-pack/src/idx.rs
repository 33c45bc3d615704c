//! Pack index files (`gitformat-pack`, "pack-*.idx files have the following format"): version 1
//! (fan-out, then offset and id pairs) and version 2 (fan-out, ids, CRC32s, 31-bit offsets, a
//! table of 64-bit offsets), each ending in the pack's checksum and its own.

use sluice_object::{HashKind, ObjectId, TrailerHasher};
use std::io::{self, Write};

const V2_MAGIC: [u8; 4] = [0xff, b't', b'O', b'c'];

/// Why an index file is not valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdxError {
    /// The file is shorter than its header and tables require.
    #[error("index file is truncated or too small ({size} bytes)")]
    TooSmall {
        /// Size of the file.
        size: u64,
    },
    /// An unknown version number.
    #[error("index file has unsupported version {0}")]
    Version(u32),
    /// The fan-out table is not monotonic.
    #[error("index file has a non-monotonic fan-out table at entry {0}")]
    Fanout(usize),
    /// The trailing checksum does not match the content.
    #[error("index file checksum mismatch")]
    Checksum,
}

/// One object as an index records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdxEntry {
    /// The object's id.
    pub id: ObjectId,
    /// CRC32 of the raw entry in the pack (0 in version 1, which has none).
    pub crc32: u32,
    /// Offset of the entry in the pack.
    pub offset: u64,
}

/// How to write an index, as `--index-version=<version>[,<offset>]` sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdxWriteOptions {
    /// 1 or 2.
    pub version: u32,
    /// Offsets above this go to version 2's 64-bit table (git: 0x7fffffff unless set lower).
    pub off32_limit: u64,
    /// Offsets (sorted) that go to the 64-bit table although they are small: recovered from an
    /// existing index when verifying, so that the index written again is byte-identical.
    pub anomalies: Vec<u64>,
}

/// A value of `--index-version` that git would refuse.
#[derive(Debug, thiserror::Error)]
pub enum IndexVersionError {
    /// Not a number.
    #[error("bad version '{0}'")]
    BadVersion(String),
    /// A version other than 1 and 2.
    #[error("unsupported index version {0}")]
    Unsupported(u32),
    /// An offset that is no number (decimal or `0x` hexadecimal).
    #[error("bad offset '{0}'")]
    BadOffset(String),
}

impl IdxWriteOptions {
    /// Reads `--index-version=<version>[,<offset>]`: the version, and the offset from which
    /// version 2 puts offsets in its 64-bit table.
    pub fn parse_version(value: &str) -> Result<(u32, Option<u64>), IndexVersionError> {
        let (version, offset) = match value.split_once(',') {
            Some((v, o)) => (v, Some(o)),
            None => (value, None),
        };
        let version: u32 = version
            .parse()
            .map_err(|_| IndexVersionError::BadVersion(value.to_owned()))?;
        if version != 1 && version != 2 {
            return Err(IndexVersionError::Unsupported(version));
        }
        let offset = match offset {
            Some(o) => {
                let parsed = match o.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => o.parse(),
                };
                Some(parsed.map_err(|_| IndexVersionError::BadOffset(o.to_owned()))?)
            }
            None => None,
        };
        Ok((version, offset))
    }
}

impl Default for IdxWriteOptions {
    fn default() -> Self {
        IdxWriteOptions {
            version: 2,
            off32_limit: 0x7fff_ffff,
            anomalies: Vec::new(),
        }
    }
}

impl IdxWriteOptions {
    fn needs_large_offset(&self, offset: u64) -> bool {
        offset >> 31 != 0
            || offset > self.off32_limit
            || self.anomalies.binary_search(&offset).is_ok()
    }
}

/// A writer that hashes what passes through it, for the trailing checksum.
struct HashingWriter<'a> {
    out: &'a mut dyn Write,
    hasher: TrailerHasher,
}

impl Write for HashingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Writes an index for `count` objects; `entry(i)` returns the `i`-th in index order (sorted by
/// id; duplicates adjacent). Returns the index's own checksum.
pub fn write_idx(
    hash: HashKind,
    count: usize,
    entry: impl Fn(usize) -> IdxEntry,
    pack_checksum: &ObjectId,
    options: &IdxWriteOptions,
    out: &mut dyn Write,
) -> io::Result<ObjectId> {
    let mut fanout = [0u32; 256];
    for i in 0..count {
        fanout[entry(i).id.first_byte() as usize] += 1;
    }
    let entries = IdxParts {
        count,
        fanout: &fanout,
        id: &|i| entry(i).id,
        place: &|i| {
            let e = entry(i);
            (e.crc32, e.offset)
        },
    };
    write_idx_parts(hash, &entries, pack_checksum, options, out)
}

/// The objects of an index, read a table at a time: each of the index's tables reads only
/// what it holds, so an id that is costly to fetch (the indexer's, from the slot of each entry
/// in pack order) is fetched once.
pub struct IdxParts<'a> {
    /// How many objects.
    pub count: usize,
    /// How many objects have ids whose first byte is each value (not yet running totals).
    pub fanout: &'a [u32; 256],
    /// The `i`-th object's id, in index order (sorted by id; duplicates adjacent).
    pub id: &'a dyn Fn(usize) -> ObjectId,
    /// The `i`-th object's CRC32 (0 in version 1) and offset in the pack.
    pub place: &'a dyn Fn(usize) -> (u32, u64),
}

impl std::fmt::Debug for IdxParts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdxParts")
            .field("count", &self.count)
            .finish()
    }
}

/// [`write_idx`] from its tables' parts.
pub fn write_idx_parts(
    hash: HashKind,
    entries: &IdxParts<'_>,
    pack_checksum: &ObjectId,
    options: &IdxWriteOptions,
    out: &mut dyn Write,
) -> io::Result<ObjectId> {
    let IdxParts {
        count,
        fanout: counts,
        id,
        place,
    } = *entries;
    // Buffered before the hasher: the tables are written four bytes at a time, and hashing
    // (like the file) wants large pieces.
    let mut w = io::BufWriter::with_capacity(
        1 << 16,
        HashingWriter {
            out,
            hasher: TrailerHasher::new(hash),
        },
    );
    let mut fanout = [0u32; 256];
    let mut running = 0u32;
    for (slot, count) in fanout.iter_mut().zip(counts) {
        running += count;
        *slot = running;
    }
    // As git: version 1 cannot hold an offset past 31 bits (or past the limit asked for), and
    // an index that needs one is written as version 2 instead.
    // Looked for only when version 1 is asked: every other index is written without the pass.
    let past_v1 = options.version == 1
        && (0..count)
            .map(|i| place(i).1)
            .max()
            .is_some_and(|last| last >> 31 != 0 || last > options.off32_limit);
    match options.version {
        1 if !past_v1 => {
            for value in fanout {
                w.write_all(&value.to_be_bytes())?;
            }
            for i in 0..count {
                let (_, offset) = place(i);
                w.write_all(&(offset as u32).to_be_bytes())?;
                w.write_all(id(i).as_bytes())?;
            }
        }
        _ => {
            w.write_all(&V2_MAGIC)?;
            w.write_all(&2u32.to_be_bytes())?;
            for value in fanout {
                w.write_all(&value.to_be_bytes())?;
            }
            for i in 0..count {
                w.write_all(id(i).as_bytes())?;
            }
            for i in 0..count {
                w.write_all(&place(i).0.to_be_bytes())?;
            }
            let mut large = 0u32;
            for i in 0..count {
                let offset = place(i).1;
                let word = if options.needs_large_offset(offset) {
                    large += 1;
                    0x8000_0000 | (large - 1)
                } else {
                    offset as u32
                };
                w.write_all(&word.to_be_bytes())?;
            }
            if large > 0 {
                for i in 0..count {
                    let offset = place(i).1;
                    if options.needs_large_offset(offset) {
                        w.write_all(&offset.to_be_bytes())?;
                    }
                }
            }
        }
    }
    w.write_all(pack_checksum.as_bytes())?;
    let w = w.into_inner().map_err(io::IntoInnerError::into_error)?;
    let checksum = w.hasher.finalize();
    w.out.write_all(checksum.as_bytes())?;
    Ok(checksum)
}

/// A pack index held in memory or mapped, read in place.
#[derive(Debug)]
pub struct PackIndex<D: AsRef<[u8]>> {
    data: D,
    hash: HashKind,
    version: u32,
    count: usize,
    /// Where the fan-out table starts.
    fanout_at: usize,
}

impl<D: AsRef<[u8]>> PackIndex<D> {
    /// Checks the header and table sizes of an index; the checksum is checked by [`Self::verify_checksum`].
    pub fn new(data: D, hash: HashKind) -> Result<Self, IdxError> {
        let bytes = data.as_ref();
        let size = bytes.len() as u64;
        let (version, fanout_at) = if bytes.len() >= 8 && bytes[..4] == V2_MAGIC {
            let version = u32::from_be_bytes(bytes[4..8].try_into().expect("4 bytes"));
            if version != 2 {
                return Err(IdxError::Version(version));
            }
            (2, 8)
        } else {
            (1, 0)
        };
        let fanout = bytes
            .get(fanout_at..fanout_at + 1024)
            .ok_or(IdxError::TooSmall { size })?;
        let mut previous = 0u32;
        for (i, chunk) in fanout.chunks_exact(4).enumerate() {
            let value = u32::from_be_bytes(chunk.try_into().expect("4 bytes"));
            if value < previous {
                return Err(IdxError::Fanout(i));
            }
            previous = value;
        }
        let count = previous as usize;
        let n = hash.len_in_bytes();
        let needed = match version {
            1 => fanout_at as u64 + 1024 + count as u64 * (4 + n as u64) + 2 * n as u64,
            _ => fanout_at as u64 + 1024 + count as u64 * (n as u64 + 8) + 2 * n as u64,
        };
        if size < needed {
            return Err(IdxError::TooSmall { size });
        }
        if version == 1 && size != needed {
            return Err(IdxError::TooSmall { size });
        }
        let index = PackIndex {
            data,
            hash,
            version,
            count,
            fanout_at,
        };
        // The 64-bit table's references are checked when an offset is read, not here: opening
        // an index must not walk all its entries (849,000 for git/git) before any lookup.
        if version == 2 && !(size - needed).is_multiple_of(8) {
            return Err(IdxError::TooSmall { size });
        }
        Ok(index)
    }

    /// The index's version, 1 or 2.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The number of objects.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the index lists no object.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The raw bytes of the index.
    pub fn bytes(&self) -> &[u8] {
        self.data.as_ref()
    }

    fn fanout(&self, byte: usize) -> usize {
        let at = self.fanout_at + 4 * byte;
        u32::from_be_bytes(self.bytes()[at..at + 4].try_into().expect("4 bytes")) as usize
    }

    fn tables_at(&self) -> usize {
        self.fanout_at + 1024
    }

    /// The id of the `i`-th object in index order.
    pub fn id(&self, i: usize) -> ObjectId {
        let n = self.hash.len_in_bytes();
        let at = match self.version {
            1 => self.tables_at() + i * (4 + n) + 4,
            _ => self.tables_at() + i * n,
        };
        ObjectId::from_bytes(self.hash, &self.bytes()[at..at + n]).expect("length checked")
    }

    /// The CRC32 of the `i`-th object (version 2 only; 0 in version 1).
    pub fn crc32(&self, i: usize) -> u32 {
        if self.version == 1 {
            return 0;
        }
        let at = self.tables_at() + self.count * self.hash.len_in_bytes() + 4 * i;
        u32::from_be_bytes(self.bytes()[at..at + 4].try_into().expect("4 bytes"))
    }

    fn offset_word(&self, i: usize) -> u32 {
        let at = self.tables_at() + self.count * (self.hash.len_in_bytes() + 4) + 4 * i;
        u32::from_be_bytes(self.bytes()[at..at + 4].try_into().expect("4 bytes"))
    }

    /// The pack offset of the `i`-th object. A corrupt reference into the 64-bit table yields
    /// `u64::MAX`, which every reader refuses as an offset outside the pack.
    pub fn offset(&self, i: usize) -> u64 {
        let n = self.hash.len_in_bytes();
        match self.version {
            1 => {
                let at = self.tables_at() + i * (4 + n);
                u64::from(u32::from_be_bytes(
                    self.bytes()[at..at + 4].try_into().expect("4 bytes"),
                ))
            }
            _ => {
                let word = self.offset_word(i);
                if word & 0x8000_0000 == 0 {
                    return u64::from(word);
                }
                let at =
                    self.tables_at() + self.count * (n + 8) + 8 * (word & 0x7fff_ffff) as usize;
                let table_end = self.bytes().len() - 2 * n;
                match self.bytes().get(at..at + 8).filter(|_| at + 8 <= table_end) {
                    Some(bytes) => u64::from_be_bytes(bytes.try_into().expect("8 bytes")),
                    None => u64::MAX,
                }
            }
        }
    }

    /// The object's entry: id, CRC32 and offset.
    pub fn entry(&self, i: usize) -> IdxEntry {
        IdxEntry {
            id: self.id(i),
            crc32: self.crc32(i),
            offset: self.offset(i),
        }
    }

    /// Finds an object's position in index order.
    ///
    /// Ids are uniformly distributed, so the search first interpolates on the eight bytes after
    /// the fan-out byte (about three probes for a bucket of a few hundred ids, where a binary
    /// search takes nine, each a likely cache miss: 5% of a checkout's CPU), then bisects what
    /// is left. The interpolation rounds are bounded, so a hostile index costs no more than a
    /// binary search.
    pub fn lookup(&self, id: &ObjectId) -> Option<usize> {
        let first = id.first_byte() as usize;
        let mut lo = if first == 0 {
            0
        } else {
            self.fanout(first - 1)
        };
        let mut hi = self.fanout(first);
        let want = id.as_bytes();
        let n = self.hash.len_in_bytes();
        let (stride, skip) = match self.version {
            1 => (4 + n, 4),
            _ => (n, 0),
        };
        let base = self.tables_at() + skip;
        let bytes = self.bytes();
        let key = |i: usize| &bytes[base + i * stride..base + i * stride + n];
        let target = prefix_after_first(want);
        // The prefixes bounding [lo, hi): everything below lo is smaller, from hi on larger.
        let (mut lo_key, mut hi_key) = (0u64, u64::MAX);
        for _ in 0..4 {
            if hi - lo <= 8 || target < lo_key || target > hi_key {
                break;
            }
            let span = (hi - lo) as u128;
            let width = u128::from(hi_key - lo_key) + 1;
            let guess = lo + (u128::from(target - lo_key) * span / width) as usize;
            let mid = guess.min(hi - 1);
            let at = key(mid);
            match compare_ids(at, want) {
                std::cmp::Ordering::Less => {
                    lo = mid + 1;
                    lo_key = prefix_after_first(at);
                }
                std::cmp::Ordering::Greater => {
                    hi = mid;
                    hi_key = prefix_after_first(at);
                }
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match compare_ids(key(mid), want) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The ids on either side of where `id` sorts among those with its first byte (itself
    /// excluded if present): the only ones that can share more than its first two hex digits.
    pub fn neighbours(&self, id: &ObjectId) -> [Option<ObjectId>; 2] {
        let first = id.first_byte() as usize;
        let start = if first == 0 {
            0
        } else {
            self.fanout(first - 1)
        };
        let end = self.fanout(first);
        let (mut lo, mut hi) = (start, end);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.id(mid).cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                _ => hi = mid,
            }
        }
        let below = (lo > start).then(|| self.id(lo - 1));
        let after = match lo < end && self.id(lo) == *id {
            true => lo + 1,
            false => lo,
        };
        let above = (after < end).then(|| self.id(after));
        [below, above]
    }

    /// The checksum of the pack this index describes.
    pub fn pack_checksum(&self) -> ObjectId {
        let n = self.hash.len_in_bytes();
        let end = self.bytes().len();
        ObjectId::from_bytes(self.hash, &self.bytes()[end - 2 * n..end - n]).expect("length")
    }

    /// Checks the index's own trailing checksum.
    pub fn verify_checksum(&self) -> Result<(), IdxError> {
        let n = self.hash.len_in_bytes();
        let bytes = self.bytes();
        let mut hasher = TrailerHasher::new(self.hash);
        hasher.update(&bytes[..bytes.len() - n]);
        if hasher.finalize().as_bytes() == &bytes[bytes.len() - n..] {
            Ok(())
        } else {
            Err(IdxError::Checksum)
        }
    }

    /// The options that write this same index again: its version, and the small offsets it
    /// stores in the 64-bit table.
    pub fn write_options(&self) -> IdxWriteOptions {
        let mut options = IdxWriteOptions {
            version: self.version,
            ..IdxWriteOptions::default()
        };
        if self.version == 2 {
            for i in 0..self.count {
                if self.offset_word(i) & 0x8000_0000 != 0 {
                    let offset = self.offset(i);
                    if offset >> 31 == 0 {
                        options.anomalies.push(offset);
                    }
                }
            }
            options.anomalies.sort_unstable();
        }
        options
    }
}

/// The eight bytes after an id's first (the fan-out byte), as a number ordered as the ids are.
fn prefix_after_first(id: &[u8]) -> u64 {
    u64::from_be_bytes(id[1..9].try_into().expect("ids are longer than 9 bytes"))
}

/// Orders two ids of the same length a word at a time (a `memcmp` call per probe showed in
/// profiles).
fn compare_ids(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let mut a_words = a.chunks_exact(8);
    let mut b_words = b.chunks_exact(8);
    for (x, y) in (&mut a_words).zip(&mut b_words) {
        let x = u64::from_be_bytes(x.try_into().expect("8 bytes"));
        let y = u64::from_be_bytes(y.try_into().expect("8 bytes"));
        if x != y {
            return x.cmp(&y);
        }
    }
    a_words.remainder().cmp(b_words.remainder())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_object::ObjectKind;

    /// Ids of generated blobs, sorted, with each one's offset.
    fn entries(count: usize, hash: HashKind) -> Vec<IdxEntry> {
        let mut entries: Vec<IdxEntry> = (0..count)
            .map(|i| IdxEntry {
                id: sluice_object::hash_object(hash, ObjectKind::Blob, format!("{i}").as_bytes())
                    .expect("hashing memory cannot fail"),
                crc32: i as u32,
                offset: 12 + 100 * i as u64,
            })
            .collect();
        entries.sort_by_key(|e| e.id);
        entries
    }

    #[test]
    fn lookup_finds_every_id_and_no_other() {
        let hash = HashKind::Sha1;
        let absent = sluice_object::hash_object(hash, ObjectKind::Blob, b"absent")
            .expect("hashing memory cannot fail");
        let pack_checksum = ObjectId::from_bytes(hash, &[0; 20]).expect("20 bytes");
        for version in [1, 2] {
            for count in [0, 1, 7, 300, 5000] {
                let entries = entries(count, hash);
                let options = IdxWriteOptions {
                    version,
                    ..IdxWriteOptions::default()
                };
                let mut out = Vec::new();
                write_idx(
                    hash,
                    count,
                    |i| entries[i],
                    &pack_checksum,
                    &options,
                    &mut out,
                )
                .expect("writing to memory cannot fail");
                let index = PackIndex::new(out, hash).expect("a valid index");
                for (i, entry) in entries.iter().enumerate() {
                    assert_eq!(index.lookup(&entry.id), Some(i), "v{version}, {count} ids");
                    assert_eq!(index.offset(i), entry.offset);
                }
                assert_eq!(index.lookup(&absent), None);
                // Ids one bit away from present ones fall between them.
                for entry in entries.iter().take(50) {
                    let mut bytes = entry.id.as_bytes().to_vec();
                    *bytes.last_mut().expect("non-empty") ^= 1;
                    let near = ObjectId::from_bytes(hash, &bytes).expect("same length");
                    assert_eq!(index.lookup(&near), None);
                }
            }
        }
    }
}
