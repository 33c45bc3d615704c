//! A pack on disk, read through its `.idx`: objects found by id and rebuilt through their delta
//! chains, with a bounded cache of recently built bases.

use crate::mmap::{map, Mapped};
use crate::odb::OdbError;
use crate::pack_order::PackOrder;
use crate::ranged::{PackSource, RangedFile};
use sluice_object::{HashKind, ObjectId, ObjectKind};
use sluice_pack::delta::apply_delta;
use sluice_pack::entry::{parse_entry_header, EntryHeader, EntryKind};
use sluice_pack::inflate::{Inflater, ZlibInflate};
use sluice_pack::PackIndex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// Built bases kept for later chains, up to this many bytes (git's `core.deltaBaseCacheLimit`).
const BASE_CACHE_LIMIT: usize = 96 << 20;
/// The cache is split so that parallel readers (checkout workers) rarely share a lock.
const CACHE_SHARDS: usize = 8;

std::thread_local! {
    /// One decompressor per thread, reset between objects: building one per object rebuilt its
    /// tables and window each time (10% of a checkout's user time).
    static INFLATER: std::cell::RefCell<Inflater> = std::cell::RefCell::new(Inflater::new());
    /// A zlib decoder for the first bytes of deltas ([`Pack::object_size`]).
    static PREFIX_INFLATER: std::cell::RefCell<flate2::Decompress> =
        std::cell::RefCell::new(flate2::Decompress::new(true));
    /// Compressed entries read from the file for one-pass reads (see [`Access`]).
    static COMPRESSED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    /// This thread's cache shard, assigned round-robin on first use.
    static SHARD: usize = {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % CACHE_SHARDS
    };
}

/// An object rebuilt from the pack, shared with the base cache.
type SharedObject = Arc<(ObjectKind, Vec<u8>)>;

/// How entries' bytes are reached.
enum Access<'a> {
    /// Through the map: no system call per object, best for walks that come back to the same
    /// trees and commits.
    Mapped,
    /// Read from the file into this buffer: for one pass over many objects (a checkout's
    /// blobs), where mapping would leave every page read resident in the process (each fault
    /// maps a whole folio around it: a switch of 5% of a wide tree held 136 MB of pack).
    /// Entries larger than [`READ_AT_MOST`] are still reached through the map.
    Read {
        buffer: &'a mut Vec<u8>,
        /// The offset of the entry the buffer holds, if any: a caller that looked at an
        /// entry's header has its bytes already.
        holds: Option<u64>,
    },
}

/// Entries read into a buffer are at most this large.
const READ_AT_MOST: u64 = 8 << 20;

/// A read buffer larger than this is not kept for the next object.
const KEEP_READ_BUFFER: usize = 1 << 20;

/// One pack and its index, mapped.
#[derive(Debug)]
pub struct Pack {
    path: PathBuf,
    hash: HashKind,
    index: PackIndex<Mapped>,
    data: Mapped,
    /// The same file, for reads that bypass the map.
    file: std::fs::File,
    cache: Box<[Mutex<BaseCache>]>,
    /// Entries by offset: the end of an entry is the start of the next, which copying
    /// entries verbatim needs.
    order: PackOrder,
    /// For a pack whose bytes are read on demand from elsewhere (a store): what fills it.
    /// Every read of `data` or `file` asks it for the bytes first.
    ranged: Option<RangedFile>,
}

/// One entry of a pack as stored: its header and its compressed bytes, for copying verbatim.
#[derive(Debug, Clone, Copy)]
pub struct RawEntry<'a> {
    /// The entry's header (kind, inflated size).
    pub header: EntryHeader,
    /// Where the entry starts in the pack.
    pub offset: u64,
    /// The entry's whole stored bytes: header, then the zlib stream.
    pub bytes: &'a [u8],
    /// The CRC32 the index records for those bytes (idx v2), `None` for an idx v1.
    pub crc32: Option<u32>,
}

impl RawEntry<'_> {
    /// The zlib stream after the header.
    pub fn compressed(&self) -> &[u8] {
        &self.bytes[self.header.header_len..]
    }
}

#[derive(Debug, Default)]
struct BaseCache {
    bytes: usize,
    entries: HashMap<u64, SharedObject>,
}

/// Packs open in this process, so that concurrent requests on one repository share one map
/// of each pack and its cache of delta bases. A pack is immutable once named; the key also
/// holds the files' sizes and times, so a pack rewritten under its name is opened afresh.
/// A ranged pack's time changes as it fills, so it is known by its inode instead: its marks
/// name the one file they belong to.
type PackKey = (PathBuf, u64, Option<std::time::SystemTime>, u64, u64);
static OPEN_PACKS: Mutex<Option<HashMap<PackKey, Weak<Pack>>>> = Mutex::new(None);

/// Whether a delta chain's root, the whole object it starts from, joins the base cache. Readers
/// that come back to other versions of a file (the window search, walks, serving) gain from it:
/// most deltas against a file name one version of it directly. A checkout reads each object
/// once, so there the roots only held memory: about 10 MB more at the peak of rust-lang/cargo's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ChainRoot {
    Remember,
    Forget,
}

impl Pack {
    /// The pack of `idx_path`, shared with every other user of it in this process.
    pub(crate) fn open_shared(
        idx_path: &Path,
        hash: HashKind,
        source: Option<&Arc<dyn PackSource>>,
    ) -> Result<Arc<Pack>, OdbError> {
        use std::os::unix::fs::MetadataExt;
        let meta = |path: &Path| std::fs::metadata(path).ok();
        let pack_path = idx_path.with_extension("pack");
        let pack_meta = meta(&pack_path);
        let ranged = crate::ranged::marks_path(&pack_path).exists();
        let key: PackKey = (
            idx_path.to_owned(),
            pack_meta.as_ref().map_or(0, |m| m.len()),
            (pack_meta.as_ref().filter(|_| !ranged)).and_then(|m| m.modified().ok()),
            pack_meta.as_ref().map_or(0, |m| m.ino()),
            meta(idx_path).map_or(0, |m| m.len()),
        );
        let mut open = OPEN_PACKS.lock().unwrap_or_else(|e| e.into_inner());
        let open = open.get_or_insert_with(HashMap::new);
        if let Some(pack) = open.get(&key).and_then(Weak::upgrade) {
            return Ok(pack);
        }
        let pack = Arc::new(Pack::open_from(idx_path, hash, source)?);
        open.retain(|_, pack| pack.strong_count() > 0);
        open.insert(key, Arc::downgrade(&pack));
        Ok(pack)
    }

    /// Opens `pack-….idx` and the `.pack` beside it.
    pub fn open(idx_path: &Path, hash: HashKind) -> Result<Pack, OdbError> {
        Self::open_from(idx_path, hash, None)
    }

    /// Opens `pack-….idx` and the `.pack` beside it, reading what a ranged pack lacks from
    /// `source`; a ranged pack without a source is refused (its holes would read as zeros).
    pub fn open_from(
        idx_path: &Path,
        hash: HashKind,
        source: Option<&Arc<dyn PackSource>>,
    ) -> Result<Pack, OdbError> {
        let pack_path = idx_path.with_extension("pack");
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| OdbError::Io { path, source }
        };
        let idx_file = std::fs::File::open(idx_path).map_err(io(idx_path))?;
        let index = PackIndex::new(map(&idx_file).map_err(io(idx_path))?, hash).map_err(|e| {
            OdbError::BadIndex {
                path: idx_path.to_owned(),
                why: e.to_string(),
            }
        })?;
        let ranged = Self::ranged(&pack_path, source)?;
        let pack_file = std::fs::File::open(&pack_path).map_err(io(&pack_path))?;
        let data = map(&pack_file).map_err(io(&pack_path))?;
        if let Some(ranged) = &ranged {
            let len = data.as_ref().len() as u64;
            let trailer = len.saturating_sub(hash.len_in_bytes() as u64);
            (ranged
                .ensure(0..12)
                .and_then(|()| ranged.ensure(trailer..len)))
            .map_err(io(&pack_path))?;
        }
        let bytes = data.as_ref();
        // Header and trailer: a pack of one empty tree is 41 bytes.
        if bytes.len() < 12 + hash.len_in_bytes() || &bytes[..4] != b"PACK" {
            return Err(OdbError::BadPack {
                path: pack_path,
                why: "not a pack file".into(),
            });
        }
        Ok(Pack {
            order: PackOrder::new(&pack_path, &index, hash),
            path: pack_path,
            hash,
            index,
            data,
            file: pack_file,
            cache: (0..CACHE_SHARDS).map(|_| Mutex::default()).collect(),
            ranged,
        })
    }

    /// The ranged pack at `pack_path`, if it is one.
    fn ranged(
        pack_path: &Path,
        source: Option<&Arc<dyn PackSource>>,
    ) -> Result<Option<RangedFile>, OdbError> {
        let io = |source| OdbError::Io {
            path: pack_path.to_owned(),
            source,
        };
        match source {
            Some(source) => RangedFile::open(pack_path, source).map_err(io),
            None if crate::ranged::marks_path(pack_path).exists() => Err(OdbError::BadPack {
                path: pack_path.to_owned(),
                why: "its bytes are read from a store, and none was given".into(),
            }),
            None => Ok(None),
        }
    }

    /// Makes the bytes `range` of the pack present (a ranged pack's); a no-op for others.
    fn ensure(&self, range: std::ops::Range<u64>) -> Result<(), OdbError> {
        match &self.ranged {
            None => Ok(()),
            Some(ranged) => ranged.ensure(range).map_err(|source| OdbError::Io {
                path: self.path.clone(),
                source,
            }),
        }
    }

    /// The `.pack` file's size.
    pub fn len(&self) -> u64 {
        self.data.as_ref().len() as u64
    }

    /// Whether the `.pack` file is empty (never, for a pack that opened).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rank in pack order (the bit of a bitmap) of index position `position`.
    pub fn rank_of(&self, position: usize) -> Option<usize> {
        self.order.rank_of(&self.index, position)
    }

    /// The index position of the entry of rank `rank` in pack order.
    pub fn at_rank(&self, rank: usize) -> Option<usize> {
        self.order.at_rank(&self.index, rank)
    }

    /// The whole `.pack` file as stored, header and trailer included (a ranged pack's fetched
    /// first, whatever it lacks).
    pub fn bytes(&self) -> Result<&[u8], OdbError> {
        self.ensure(0..self.len())?;
        Ok(self.data.as_ref())
    }

    /// The `.pack` file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The index.
    pub fn index(&self) -> &PackIndex<impl AsRef<[u8]>> {
        &self.index
    }

    /// Whether the pack has the object.
    pub fn contains(&self, id: &ObjectId) -> bool {
        self.index.lookup(id).is_some()
    }

    /// Reads the object at index position `position`.
    pub fn read_position(&self, position: usize) -> Result<(ObjectKind, Vec<u8>), OdbError> {
        let object = self.read_at(self.index.offset(position))?;
        Ok(Arc::unwrap_or_clone(object))
    }

    /// Reads an object by id.
    pub fn read(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, OdbError> {
        let Some(position) = self.index.lookup(id) else {
            return Ok(None);
        };
        let object = self.read_at(self.index.offset(position))?;
        Ok(Some(Arc::unwrap_or_clone(object)))
    }

    /// Reads an object by id, or opens it as a stream when it is stored whole and is larger
    /// than `stream_above` bytes; `None` when the pack lacks it. A whole object is inflated
    /// into `buffer`'s allocation (which a caller reading many objects hands back each time).
    pub fn read_or_stream(
        &self,
        id: &ObjectId,
        stream_above: u64,
        buffer: &mut Vec<u8>,
    ) -> Result<Option<crate::ObjectContent<'_>>, OdbError> {
        let Some(position) = self.index.lookup(id) else {
            return Ok(None);
        };
        let offset = self.index.offset(position);
        self.read_or_stream_at(offset, None, stream_above, buffer)
            .map(Some)
    }

    /// [`Self::read_or_stream`] of the entry at `offset`, which ends at `end` when the caller
    /// knows where (see [`crate::PackedObject`]).
    pub(crate) fn read_or_stream_at(
        &self,
        offset: u64,
        end: Option<u64>,
        stream_above: u64,
        buffer: &mut Vec<u8>,
    ) -> Result<crate::ObjectContent<'_>, OdbError> {
        Self::with_read_buffer(|access| {
            let (header, _) = self.entry_through(offset, end, access)?;
            let content = match header.kind {
                EntryKind::Base(kind) if header.size > stream_above => {
                    let (_, input) = self.entry_at(offset)?;
                    let reader = crate::stream::InflateReader::new(input, header.size);
                    crate::ObjectContent::Stream(kind, header.size, Box::new(reader))
                }
                EntryKind::Base(kind) => {
                    // Read alone, a whole object is not cached: only as a chain's base.
                    INFLATER.with(|inflater| {
                        self.inflate_at(offset, access, &mut inflater.borrow_mut(), buffer)
                    })?;
                    crate::ObjectContent::Whole(kind, std::mem::take(buffer))
                }
                _ => {
                    let object = INFLATER.with(|inflater| {
                        let inflater = &mut inflater.borrow_mut();
                        self.read_chain(offset, access, inflater, ChainRoot::Forget)
                    })?;
                    let (kind, data) = Arc::unwrap_or_clone(object);
                    crate::ObjectContent::Whole(kind, data)
                }
            };
            Ok(content)
        })
    }

    /// Where the entry starting at `offset` ends: where the next begins, or the trailer. A
    /// corrupt index may place the next entry past the trailer: callers check.
    pub(crate) fn entry_end(&self, offset: u64) -> u64 {
        self.order
            .next_offset(&self.index, offset)
            .unwrap_or_else(|| self.data_end())
    }

    /// Where the entries end and the trailer begins.
    fn data_end(&self) -> u64 {
        (self.data.as_ref().len() - self.hash.len_in_bytes()) as u64
    }

    /// The index position of the entry starting at `offset`, if one does.
    pub fn position_at(&self, offset: u64) -> Option<usize> {
        self.order.position_at(&self.index, offset)
    }

    /// The entry at index position `position`, as stored.
    pub fn raw_entry(&self, position: usize) -> Result<RawEntry<'_>, OdbError> {
        let offset = self.index.offset(position);
        let end = self.entry_end(offset);
        if end > self.data_end() || end <= offset {
            return Err(self.bad(offset, "entry extends outside the pack"));
        }
        let (header, _) = self.entry_at(offset)?;
        self.ensure(offset..end)?;
        let bytes = &self.data.as_ref()[offset as usize..end as usize];
        if header.header_len >= bytes.len() {
            return Err(self.bad(offset, "entry has no data"));
        }
        Ok(RawEntry {
            header,
            offset,
            bytes,
            crc32: (self.index.version() == 2).then(|| self.index.crc32(position)),
        })
    }

    /// The header of the entry at index position `position`, as stored.
    pub fn entry_header(&self, position: usize) -> Result<EntryHeader, OdbError> {
        Ok(self.entry_at(self.index.offset(position))?.0)
    }

    /// The size of the object at index position `position`: its header's for a whole entry, the
    /// result size at the start of the delta for a delta (inflating only those first bytes).
    pub fn object_size(&self, position: usize) -> Result<u64, OdbError> {
        let offset = self.index.offset(position);
        let (header, input) = self.entry_at(offset)?;
        if let EntryKind::Base(_) = header.kind {
            return Ok(header.size);
        }
        let mut prefix = [0u8; 20];
        let wanted = prefix.len().min(header.size as usize);
        let produced = PREFIX_INFLATER.with(|inflater| {
            let mut inflater = inflater.borrow_mut();
            inflater.reset(true);
            let status =
                inflater.decompress(input, &mut prefix[..wanted], flate2::FlushDecompress::None);
            status.map(|_| inflater.total_out() as usize)
        });
        let produced = produced.map_err(|e| self.bad(offset, e))?;
        sluice_pack::delta::delta_sizes_of_prefix(&prefix[..produced])
            .map(|(_, result)| result)
            .map_err(|e| self.bad(offset, e))
    }

    /// The kind of the object at index position `position`, from the headers of its delta
    /// chain alone (a delta's object is of its base's kind); `None` when the chain leaves the
    /// pack (a ref-delta whose base is elsewhere).
    pub fn kind_at(&self, position: usize) -> Result<Option<ObjectKind>, OdbError> {
        let mut offset = self.index.offset(position);
        // A chain is at most as long as the pack has entries; a longer one is a cycle.
        for _ in 0..=self.index.len() {
            let (header, _) = self.entry_at(offset)?;
            offset = match header.kind {
                EntryKind::Base(kind) => return Ok(Some(kind)),
                EntryKind::OfsDelta { distance } => offset
                    .checked_sub(distance)
                    .ok_or_else(|| self.bad(offset, "delta base before the pack"))?,
                EntryKind::RefDelta { base } => match self.index.lookup(&base) {
                    Some(base_position) => self.index.offset(base_position),
                    None => return Ok(None),
                },
            };
        }
        Err(self.bad(offset, "delta chain loops"))
    }

    /// The header of the entry at `offset` and the bytes from its data to the trailer.
    fn entry_at(&self, offset: u64) -> Result<(EntryHeader, &[u8]), OdbError> {
        let bytes = self.data.as_ref();
        let data_end = bytes.len() - self.hash.len_in_bytes();
        let start = usize::try_from(offset)
            .ok()
            .filter(|&o| o < data_end)
            .ok_or_else(|| self.bad(offset, "offset outside the pack"))?;
        // A ranged pack's entry is made present, and nothing after it is handed out.
        let data_end = match self.ranged {
            None => data_end,
            Some(_) => {
                let end = self.entry_end(offset).clamp(offset + 1, data_end as u64);
                self.ensure(offset..end)?;
                end as usize
            }
        };
        let header = parse_entry_header(&bytes[start..data_end], offset, self.hash)
            .map_err(|e| self.bad(offset, e))?;
        Ok((header, &bytes[start + header.header_len..data_end]))
    }

    fn bad(&self, offset: u64, why: impl std::fmt::Display) -> OdbError {
        OdbError::BadPack {
            path: self.path.clone(),
            why: format!("object at offset {offset}: {why}"),
        }
    }

    /// Runs `f` with this thread's read buffer, which is dropped afterwards if a large entry
    /// grew it.
    fn with_read_buffer<T>(f: impl FnOnce(&mut Access<'_>) -> T) -> T {
        COMPRESSED.with(|buffer| {
            let mut buffer = buffer.borrow_mut();
            let result = f(&mut Access::Read {
                buffer: &mut buffer,
                holds: None,
            });
            if buffer.capacity() > KEEP_READ_BUFFER {
                *buffer = Vec::new();
            }
            result
        })
    }

    /// The header of the entry at `offset` and its bytes up to the trailer (mapped) or to the
    /// next entry (read into the buffer), which is at `end` if the caller knows.
    fn entry_through<'a>(
        &'a self,
        offset: u64,
        end: Option<u64>,
        access: &'a mut Access<'_>,
    ) -> Result<(EntryHeader, &'a [u8]), OdbError> {
        let (buffer, holds) = match access {
            Access::Mapped => return self.entry_at(offset),
            Access::Read { buffer, holds } => (buffer, holds),
        };
        if *holds != Some(offset) {
            if offset >= self.data_end() {
                return Err(self.bad(offset, "offset outside the pack"));
            }
            let end = end
                .unwrap_or_else(|| self.entry_end(offset))
                .min(self.data_end());
            if end <= offset {
                return Err(self.bad(offset, "entry extends outside the pack"));
            }
            if end - offset > READ_AT_MOST {
                *holds = None;
                return self.entry_at(offset);
            }
            // Overwritten whole by the read: only growth is zeroed.
            let len = (end - offset) as usize;
            if buffer.len() < len {
                buffer.resize(len, 0);
            }
            buffer.truncate(len);
            *holds = None;
            self.ensure(offset..end)?;
            std::os::unix::fs::FileExt::read_exact_at(&self.file, buffer, offset).map_err(
                |source| OdbError::Io {
                    path: self.path.clone(),
                    source,
                },
            )?;
            *holds = Some(offset);
        }
        let header =
            parse_entry_header(buffer, offset, self.hash).map_err(|e| self.bad(offset, e))?;
        Ok((header, &buffer[header.header_len..]))
    }

    /// Inflates the data of the entry at `offset` into `out`; returns the entry's kind.
    fn inflate_at(
        &self,
        offset: u64,
        access: &mut Access<'_>,
        inflater: &mut Inflater,
        out: &mut Vec<u8>,
    ) -> Result<EntryKind, OdbError> {
        let (header, input) = self.entry_through(offset, None, access)?;
        // A zlib stream expands at most ~1032 times; a larger declared size is a lie.
        if header.size > (input.len() as u64).saturating_mul(1032) {
            return Err(self.bad(offset, "declared size is impossible"));
        }
        inflater
            .inflate_exact(input, header.size as usize, out)
            .map_err(|e| self.bad(offset, e))?;
        Ok(header.kind)
    }

    /// Rebuilds the object at `offset` through its delta chain.
    fn read_at(&self, offset: u64) -> Result<SharedObject, OdbError> {
        INFLATER.with(|inflater| {
            let inflater = &mut inflater.borrow_mut();
            self.read_chain(offset, &mut Access::Mapped, inflater, ChainRoot::Remember)
        })
    }

    fn read_chain(
        &self,
        offset: u64,
        access: &mut Access<'_>,
        inflater: &mut Inflater,
        root: ChainRoot,
    ) -> Result<SharedObject, OdbError> {
        let mut deltas: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut at = offset;
        // A chain longer than the pack has objects must loop.
        let limit = self.index.len() + 1;
        let mut base = loop {
            if let Some(hit) = self.shard().entries.get(&at) {
                break Arc::clone(hit);
            }
            if deltas.len() > limit {
                return Err(self.bad(offset, "delta chain loops"));
            }
            let mut data = Vec::new();
            match self.inflate_at(at, access, inflater, &mut data)? {
                EntryKind::Base(kind) => {
                    let base = Arc::new((kind, data));
                    // The whole object a chain starts from is the base most often shared:
                    // the deltas against one version of a file mostly name it directly.
                    if !deltas.is_empty() && root == ChainRoot::Remember {
                        self.remember(at, &base);
                    }
                    break base;
                }
                EntryKind::OfsDelta { distance } => {
                    deltas.push((at, data));
                    at -= distance;
                }
                EntryKind::RefDelta { base } => {
                    let position = self.index.lookup(&base).ok_or_else(|| {
                        self.bad(at, format!("delta base {base} is not in the pack"))
                    })?;
                    deltas.push((at, data));
                    at = self.index.offset(position);
                }
            }
        };
        let kind = base.0;
        while let Some((at, delta)) = deltas.pop() {
            let mut out = Vec::new();
            apply_delta(&base.1, &delta, &mut out).map_err(|e| self.bad(at, e))?;
            base = Arc::new((kind, out));
            if !deltas.is_empty() {
                self.remember(at, &base);
            }
        }
        Ok(base)
    }

    fn shard(&self) -> std::sync::MutexGuard<'_, BaseCache> {
        let shard = SHARD.with(|s| *s);
        self.cache[shard].lock().unwrap_or_else(|e| e.into_inner())
    }

    fn remember(&self, offset: u64, object: &SharedObject) {
        let size = object.1.len();
        let limit = BASE_CACHE_LIMIT / CACHE_SHARDS;
        if size > limit / 4 {
            return;
        }
        let mut cache = self.shard();
        if cache.bytes + size > limit {
            cache.entries.clear();
            cache.bytes = 0;
        }
        if cache.entries.insert(offset, Arc::clone(object)).is_none() {
            cache.bytes += size;
        }
    }
}
