//! The multi-pack-index (`objects/pack/multi-pack-index`, gitformat-pack): one sorted table of
//! every object of every pack in the directory, each with the pack that holds it and its
//! offset there, so that git looks an object up once instead of once per pack. Written as git
//! writes it (the same bytes for the same packs) and verified as `git multi-pack-index verify`
//! verifies it. Sluice's own readers go through each pack's `.idx`; the file is for git's.

use crate::chunk_file::{checksum_matches, find, read_table, write_chunked, Chunk};
use crate::lockfile::LockError;
use crate::{OdbError, Pack};
use sluice_object::progress::Progress;
use sluice_object::{HashKind, ObjectId};
use std::path::{Path, PathBuf};

pub(crate) const PACK_NAMES: [u8; 4] = *b"PNAM";
const OID_FANOUT: [u8; 4] = *b"OIDF";
pub(crate) const OID_LOOKUP: [u8; 4] = *b"OIDL";
pub(crate) const OBJECT_OFFSETS: [u8; 4] = *b"OOFF";
const LARGE_OFFSETS: [u8; 4] = *b"LOFF";
const REVERSE_INDEX: [u8; 4] = *b"RIDX";
const BITMAPPED_PACKS: [u8; 4] = *b"BTMP";
/// An offset with this bit set names a row of the large offsets, when there are any.
const LARGE_OFFSET_BIT: u32 = 0x8000_0000;
const HEADER_LEN: usize = 12;

/// The file's name in a pack directory.
pub const FILE_NAME: &str = "multi-pack-index";

/// Where the bitmap of the multi-pack-index whose checksum is `checksum` lives.
pub fn bitmap_path(pack_dir: &Path, checksum: &ObjectId) -> PathBuf {
    pack_dir.join(format!("{FILE_NAME}-{checksum}.bitmap"))
}

/// Why a multi-pack-index could not be written, or is not sound.
#[derive(Debug, thiserror::Error)]
pub enum MidxError {
    /// The pack directory could not be listed.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A pack could not be opened.
    #[error(transparent)]
    Odb(#[from] OdbError),
    /// The file could not be written.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// `--preferred-pack` names a pack without objects (git's words).
    #[error("cannot select preferred pack {} with no objects", .0.display())]
    EmptyPreferredPack(PathBuf),
    /// More packs than the file can name.
    #[error("too many packs for a multi-pack-index: {0}")]
    TooManyPacks(usize),
    /// There is no pack to index (git's words): no file is written.
    #[error("no pack files to index.")]
    NoPacks,
    /// The file is damaged or does not match its packs.
    #[error("{}: {why}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the object or position concerned.
        #[source]
        why: MidxDamage,
    },
}

/// What is wrong with a multi-pack-index, naming the position, object or pack concerned, in
/// the words of git's `multi-pack-index verify` where it has some.
#[derive(Debug, thiserror::Error)]
pub enum MidxDamage {
    /// The trailing checksum does not match.
    #[error("incorrect checksum")]
    Checksum,
    /// Not a multi-pack-index.
    #[error("bad signature")]
    Signature,
    /// A version, hash or layering this reader does not know.
    #[error("unsupported version {version} or hash {hash} or base files {bases}")]
    Version {
        /// The file's version.
        version: u8,
        /// Its hash function's number.
        hash: u8,
        /// Its count of base files.
        bases: u8,
    },
    /// The chunk table is malformed.
    #[error("bad chunk table")]
    ChunkTable,
    /// A required chunk is missing.
    #[error("missing {0} chunk")]
    MissingChunk(String),
    /// The chunk sizes disagree with the object count.
    #[error("chunk sizes do not match the object count")]
    ChunkSizes,
    /// The pack names are not as many as the header says.
    #[error("{found} pack names for {count} packs")]
    PackCount {
        /// Names found.
        found: usize,
        /// Packs the header counts.
        count: usize,
    },
    /// Two pack names out of order.
    #[error("pack names out of order: '{0}' before '{1}'")]
    PackOrder(String, String),
    /// A fanout entry below the one before it, or past the object count.
    #[error("fanout entry {0} is out of order")]
    Fanout(usize),
    /// The fanout's total and the lookup's count differ.
    #[error("fanout counts {fanout} objects, the lookup {lookup}")]
    FanoutTotal {
        /// The fanout's last entry.
        fanout: usize,
        /// The ids in the lookup.
        lookup: usize,
    },
    /// An object id that cannot be read.
    #[error("bad object id at position {0}")]
    BadId(usize),
    /// An id not above the one before it.
    #[error("object ids out of order at position {position} ({id})")]
    IdOrder {
        /// Its position.
        position: usize,
        /// The id.
        id: ObjectId,
    },
    /// An id outside the range its first byte's fanout entries give.
    #[error("object {0} is outside its fanout range")]
    OutsideFanout(ObjectId),
    /// A large offset that points past its chunk.
    #[error("object {0}: bad large offset")]
    LargeOffset(ObjectId),
    /// An object said to be in a pack the file does not name.
    #[error("object {id}: pack {pack} is not named")]
    UnnamedPack {
        /// The object.
        id: ObjectId,
        /// The pack's number.
        pack: usize,
    },
    /// An object at another offset than its pack's index gives.
    #[error("incorrect object offset for {id}: {offset} in {}", pack.display())]
    Offset {
        /// The object.
        id: ObjectId,
        /// The offset the file gives.
        offset: u64,
        /// The pack.
        pack: PathBuf,
    },
}

/// What a multi-pack-index covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MidxSummary {
    /// Packs named.
    pub packs: usize,
    /// Objects indexed.
    pub objects: usize,
    /// The `--preferred-pack` given that names no pack here: git warns of it and goes on
    /// without it.
    pub unknown_preferred: Option<String>,
}

/// Which copy of an object wins: the preferred pack's, then the newest pack's (whole
/// seconds), then the first listed.
type Preference = (bool, std::cmp::Reverse<Option<u64>>, usize);

/// How a multi-pack-index is written.
#[derive(Debug, Clone, Default)]
pub struct MidxOptions {
    /// The pack whose copy of an object wins, and whose objects come first in the pseudo-pack
    /// order a bitmap numbers (`--preferred-pack`, named by its `.pack` or `.idx` file); for
    /// a bitmap without one, the oldest pack, as git picks it.
    pub preferred_pack: Option<String>,
    /// Add what a bitmap of the multi-pack-index needs: the reverse index in pseudo-pack
    /// order (RIDX) and where each pack's objects start in it (BTMP), as git 2.44+ writes them.
    pub bitmap: bool,
    /// Only these packs (their index files' names, `pack-<hash>.idx`), not every pack of the
    /// directory (`--stdin-packs`); names of no pack there count for nothing.
    pub packs: Option<Vec<String>>,
}

/// A multi-pack-index as written: the objects in the order of its ids, with where each sits
/// in its pseudo-pack order (the preferred pack's objects first, then each pack's in turn,
/// each in offset order): the positions a bitmap of it numbers.
#[derive(Debug, Clone)]
pub struct MidxLayout {
    /// The file's trailing checksum, which names its bitmap.
    pub checksum: ObjectId,
    /// Every object, sorted.
    pub ids: Vec<ObjectId>,
    /// The pseudo-pack position of each object of `ids`.
    pub bit_of: Vec<u32>,
}

/// One object's row: its id, the pack (by its number in the file) and the offset there.
struct Row {
    id: ObjectId,
    pack: u32,
    offset: u64,
}

/// Writes `<pack_dir>/multi-pack-index` for every pack in `pack_dir`. An object in several
/// packs is found in the most recently modified one (by whole seconds), and among packs of
/// the same second in the one the directory lists first: the copy git picks, so that the
/// file is git's byte for byte.
pub fn write_midx(pack_dir: &Path, hash: HashKind) -> Result<MidxSummary, MidxError> {
    write_midx_with(pack_dir, hash, &MidxOptions::default()).map(|(summary, _)| summary)
}

/// [`write_midx`] as `options` say: with a preferred pack, whose copies win over the
/// newest's, and with the chunks a bitmap needs. Returns the layout a bitmap numbers.
pub fn write_midx_with(
    pack_dir: &Path,
    hash: HashKind,
    options: &MidxOptions,
) -> Result<(MidxSummary, MidxLayout), MidxError> {
    let mut listed = index_names(pack_dir)?;
    if let Some(only) = &options.packs {
        listed.retain(|name| only.contains(name));
    }
    let mut names = listed.clone();
    names.sort();
    if names.is_empty() {
        return Err(MidxError::NoPacks);
    }
    let pack_count =
        u32::try_from(names.len()).map_err(|_| MidxError::TooManyPacks(names.len()))?;
    let mut packs = Vec::with_capacity(names.len());
    for name in &names {
        let pack = Pack::open(&pack_dir.join(name), hash)?;
        // Whole seconds, as git compares them: packs written in the same second tie, and the
        // one the directory lists first wins.
        let modified = std::fs::metadata(pack.path())
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        packs.push((pack, modified));
    }
    let (preferred, unknown_preferred) = preferred_pack(&listed, &names, &packs, options)?;
    let mut rows: Vec<(Row, Preference)> = Vec::new();
    for (number, (pack, modified)) in packs.iter().enumerate() {
        let listed_at = listed
            .iter()
            .position(|n| *n == names[number])
            .unwrap_or(number);
        let index = pack.index();
        let rank = (
            Some(number) != preferred,
            std::cmp::Reverse(*modified),
            listed_at,
        );
        for position in 0..index.len() {
            let row = Row {
                id: index.id(position),
                pack: number as u32,
                offset: index.offset(position),
            };
            rows.push((row, rank));
        }
    }
    rows.sort_unstable_by(|(a, a_rank), (b, b_rank)| {
        (a.id, a_rank, a.pack).cmp(&(b.id, b_rank, b.pack))
    });
    rows.dedup_by(|later, first| later.0.id == first.0.id);
    let rows: Vec<Row> = rows.into_iter().map(|(row, _)| row).collect();
    let pseudo = match (options.bitmap, preferred) {
        (true, Some(preferred)) => Some(pseudo_order(&rows, preferred as u32)),
        _ => None,
    };
    let bytes = encode(&names, pack_count, &rows, pseudo.as_deref(), hash);
    crate::lockfile::write_locked(&pack_dir.join(FILE_NAME), &bytes, false)?;
    if pseudo.is_none() {
        remove_midx_bitmaps(pack_dir, None);
    }
    let checksum = ObjectId::from_bytes(hash, &bytes[bytes.len() - hash.len_in_bytes()..])
        .expect("a checksum of the hash's length");
    let mut bit_of = vec![0u32; rows.len()];
    for (position, &index) in pseudo.iter().flatten().enumerate() {
        bit_of[index as usize] = position as u32;
    }
    let summary = MidxSummary {
        packs: names.len(),
        objects: rows.len(),
        unknown_preferred,
    };
    let layout = MidxLayout {
        checksum,
        ids: rows.iter().map(|r| r.id).collect(),
        bit_of,
    };
    Ok((summary, layout))
}

/// The number of the preferred pack among `names`: the one `options` names, else for a
/// bitmap the oldest pack with objects (ties to the first the directory lists), else none;
/// with the name given when it names no pack here (git warns and goes on without it; for a
/// bitmap Sluice then takes the oldest, as if none was given, so that the first pack of the
/// bitmap's order holds every object of its own).
fn preferred_pack(
    listed: &[String],
    names: &[String],
    packs: &[(Pack, Option<u64>)],
    options: &MidxOptions,
) -> Result<(Option<usize>, Option<String>), MidxError> {
    let mut unknown = None;
    if let Some(wanted) = &options.preferred_pack {
        let stem = wanted.trim_end_matches(".pack").trim_end_matches(".idx");
        match names
            .iter()
            .position(|n| n.trim_end_matches(".idx") == stem)
        {
            Some(n) if packs[n].0.index().is_empty() => {
                return Err(MidxError::EmptyPreferredPack(packs[n].0.path().to_owned()));
            }
            Some(n) => return Ok((Some(n), None)),
            None => unknown = Some(wanted.clone()),
        }
    }
    if !options.bitmap {
        return Ok((None, unknown));
    }
    // As git: the first pack the directory lists among the oldest (whole seconds).
    let oldest = (packs.iter().enumerate())
        .filter(|(_, (pack, _))| !pack.index().is_empty())
        .min_by_key(|(n, (_, modified))| {
            let listed_at = listed.iter().position(|l| *l == names[*n]);
            (*modified, listed_at)
        })
        .map(|(n, _)| n);
    Ok((oldest, unknown))
}

/// The rows' indexes in pseudo-pack order: the preferred pack's objects first, then each
/// other pack's in the file's order, each pack's by offset.
fn pseudo_order(rows: &[Row], preferred: u32) -> Vec<u32> {
    let mut order: Vec<u32> = (0..rows.len() as u32).collect();
    order.sort_unstable_by_key(|&i| {
        let row = &rows[i as usize];
        (row.pack != preferred, row.pack, row.offset)
    });
    order
}

/// Removes `<pack_dir>/multi-pack-index`, if there is one: a repack that deletes packs it
/// names leaves it describing files that are gone.
pub fn remove_midx(pack_dir: &Path) -> Result<(), MidxError> {
    remove_midx_bitmaps(pack_dir, None);
    match std::fs::remove_file(pack_dir.join(FILE_NAME)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(MidxError::Io {
            path: pack_dir.join(FILE_NAME),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Removes the bitmaps (and reverse indexes) of multi-pack-indexes in `pack_dir`, but `kept`:
/// they describe a file that is gone or rewritten.
pub fn remove_midx_bitmaps(pack_dir: &Path, kept: Option<&Path>) {
    let Ok(entries) = std::fs::read_dir(pack_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let stale = name.starts_with("multi-pack-index-")
            && (name.ends_with(".bitmap") || name.ends_with(".rev"));
        if stale && Some(path.as_path()) != kept {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// The `.idx` files of `pack_dir`, in the order the directory lists them (git writes the
/// names sorted, but breaks ties between copies of an object by this order).
fn index_names(pack_dir: &Path) -> Result<Vec<String>, MidxError> {
    let io = |source| MidxError::Io {
        path: pack_dir.to_owned(),
        source,
    };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(pack_dir).map_err(io)? {
        let name = entry.map_err(io)?.file_name();
        let Some(name) = name.to_str() else { continue };
        // Any pack, whatever its name (the loose-objects task's are `loose-*`), as git's.
        if name.ends_with(".idx") && pack_dir.join(name).with_extension("pack").exists() {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

fn encode(
    names: &[String],
    pack_count: u32,
    rows: &[Row],
    pseudo: Option<&[u32]>,
    hash: HashKind,
) -> Vec<u8> {
    let mut pack_names = Vec::new();
    for name in names {
        pack_names.extend_from_slice(name.as_bytes());
        pack_names.push(0);
    }
    // The chunk is padded to a multiple of four bytes.
    pack_names.resize(pack_names.len().next_multiple_of(4), 0);
    let ids: Vec<ObjectId> = rows.iter().map(|r| r.id).collect();
    let lookup: Vec<u8> = ids.iter().flat_map(|id| id.as_bytes().to_vec()).collect();
    // Offsets past 4 GiB need the large table; then every offset past 2 GiB goes there.
    let large_needed = rows.iter().any(|r| r.offset > u64::from(u32::MAX));
    let (mut offsets, mut large) = (Vec::with_capacity(rows.len() * 8), Vec::new());
    for row in rows {
        offsets.extend_from_slice(&row.pack.to_be_bytes());
        let value = if large_needed && row.offset >= u64::from(LARGE_OFFSET_BIT) {
            let at = (large.len() / 8) as u32;
            large.extend_from_slice(&row.offset.to_be_bytes());
            at | LARGE_OFFSET_BIT
        } else {
            row.offset as u32
        };
        offsets.extend_from_slice(&value.to_be_bytes());
    }
    let mut chunks: Vec<Chunk> = vec![
        (PACK_NAMES, pack_names),
        (OID_FANOUT, crate::chunk_file::fanout(&ids)),
        (OID_LOOKUP, lookup),
        (OBJECT_OFFSETS, offsets),
    ];
    if !large.is_empty() {
        chunks.push((LARGE_OFFSETS, large));
    }
    if let Some(pseudo) = pseudo {
        let reverse = pseudo.iter().flat_map(|i| i.to_be_bytes()).collect();
        chunks.push((REVERSE_INDEX, reverse));
        chunks.push((BITMAPPED_PACKS, bitmapped_packs(rows, pseudo, pack_count)));
    }
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(b"MIDX");
    header.extend_from_slice(&[1, hash_version(hash), chunks.len() as u8, 0]);
    header.extend_from_slice(&pack_count.to_be_bytes());
    write_chunked(&header, &chunks, hash)
}

/// For each pack, the first pseudo-pack position of its objects and how many it has.
fn bitmapped_packs(rows: &[Row], pseudo: &[u32], pack_count: u32) -> Vec<u8> {
    let mut packs = vec![(u32::MAX, 0u32); pack_count as usize];
    for (position, &index) in pseudo.iter().enumerate() {
        let entry = &mut packs[rows[index as usize].pack as usize];
        entry.0 = entry.0.min(position as u32);
        entry.1 += 1;
    }
    let mut out = Vec::with_capacity(packs.len() * 8);
    for (first, count) in packs {
        let first = if count == 0 { 0 } else { first };
        out.extend_from_slice(&first.to_be_bytes());
        out.extend_from_slice(&count.to_be_bytes());
    }
    out
}

fn hash_version(hash: HashKind) -> u8 {
    match hash {
        HashKind::Sha1 => 1,
    }
}

/// Checks `<pack_dir>/multi-pack-index` as git's verify does: its checksum, its header and
/// chunks, pack names in order and present, ids in order and matching the fanout, and every
/// object at the offset its pack's index gives, its phases shown on `progress`. `None` where
/// there is none, which git's verify finds good.
pub fn verify_midx(
    pack_dir: &Path,
    hash: HashKind,
    progress: &dyn Progress,
) -> Result<Option<MidxSummary>, MidxError> {
    let path = pack_dir.join(FILE_NAME);
    let corrupt = |why: MidxDamage| MidxError::Corrupt {
        path: path.clone(),
        why,
    };
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(MidxError::Io { path, source }),
    };
    if !checksum_matches(&bytes, hash) {
        return Err(corrupt(MidxDamage::Checksum));
    }
    let (pack_count, table) = read_header(&bytes, hash).map_err(corrupt)?;
    let chunk = |id: [u8; 4]| {
        find(&table, id)
            .map(|(start, len)| &bytes[start..start + len])
            .ok_or_else(|| {
                corrupt(MidxDamage::MissingChunk(
                    String::from_utf8_lossy(&id).into(),
                ))
            })
    };
    let names = pack_names(chunk(PACK_NAMES)?, pack_count).map_err(corrupt)?;
    let fanout = chunk(OID_FANOUT)?;
    let lookup = chunk(OID_LOOKUP)?;
    let offsets = chunk(OBJECT_OFFSETS)?;
    let large = find(&table, LARGE_OFFSETS).map(|(start, len)| &bytes[start..start + len]);
    let id_len = hash.len_in_bytes();
    let count = lookup.len() / id_len;
    if fanout.len() != 1024 || lookup.len() % id_len != 0 || offsets.len() != count * 8 {
        return Err(corrupt(MidxDamage::ChunkSizes));
    }
    let mut packs = Vec::with_capacity(names.len());
    for name in &names {
        packs.push(Pack::open(&pack_dir.join(name), hash)?);
    }
    let chunks = ObjectChunks {
        fanout,
        lookup,
        offsets,
        large,
    };
    check_objects(&packs, chunks, hash, progress).map_err(corrupt)?;
    Ok(Some(MidxSummary {
        packs: names.len(),
        objects: count,
        unknown_preferred: None,
    }))
}

/// A chunk table: each chunk's id, start and length.
pub(crate) type ChunkTable = Vec<([u8; 4], usize, usize)>;

/// The pack count and chunk table of a multi-pack-index's `bytes`, its header checked.
pub fn read_header(bytes: &[u8], hash: HashKind) -> Result<(usize, ChunkTable), MidxDamage> {
    if bytes.len() < HEADER_LEN || &bytes[..4] != b"MIDX" {
        return Err(MidxDamage::Signature);
    }
    if bytes[4] != 1 || bytes[5] != hash_version(hash) || bytes[7] != 0 {
        return Err(MidxDamage::Version {
            version: bytes[4],
            hash: bytes[5],
            bases: bytes[7],
        });
    }
    let pack_count = u32::from_be_bytes(bytes[8..12].try_into().expect("four bytes")) as usize;
    let table =
        read_table(bytes, HEADER_LEN, usize::from(bytes[6]), hash).ok_or(MidxDamage::ChunkTable)?;
    Ok((pack_count, table))
}

/// The pack names of the PNAM chunk, checked: `count` of them, in order, each once.
pub fn pack_names(chunk: &[u8], count: usize) -> Result<Vec<String>, MidxDamage> {
    let names: Vec<String> = chunk
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    if names.len() != count {
        let found = names.len();
        return Err(MidxDamage::PackCount { found, count });
    }
    if let Some(pair) = names.windows(2).find(|p| p[0] >= p[1]) {
        return Err(MidxDamage::PackOrder(pair[0].clone(), pair[1].clone()));
    }
    Ok(names)
}

/// The chunks of a multi-pack-index that place its objects.
struct ObjectChunks<'a> {
    fanout: &'a [u8],
    lookup: &'a [u8],
    offsets: &'a [u8],
    large: Option<&'a [u8]>,
}

/// Each object in order, counted by the fanout, at the offset its pack's index gives; in
/// git's phases (the order, then the offsets).
fn check_objects(
    packs: &[Pack],
    chunks: ObjectChunks<'_>,
    hash: HashKind,
    progress: &dyn Progress,
) -> Result<(), MidxDamage> {
    let ObjectChunks {
        fanout,
        lookup,
        offsets,
        large,
    } = chunks;
    let id_len = hash.len_in_bytes();
    let count = lookup.len() / id_len;
    let be32 = |bytes: &[u8], at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    let mut previous: Option<ObjectId> = None;
    let mut below = 0usize;
    for byte in 0..256 {
        let total = be32(fanout, byte * 4) as usize;
        if total < below || total > count {
            return Err(MidxDamage::Fanout(byte));
        }
        below = total;
    }
    if below != count {
        return Err(MidxDamage::FanoutTotal {
            fanout: below,
            lookup: count,
        });
    }
    let id_at = |i: usize| {
        ObjectId::from_bytes(hash, &lookup[i * id_len..(i + 1) * id_len])
            .map_err(|_| MidxDamage::BadId(i))
    };
    progress.phase(
        "Verifying OID order in multi-pack-index",
        Some(count.saturating_sub(1) as u64),
    );
    for i in 0..count {
        let id = id_at(i)?;
        if previous.is_some_and(|p| p >= id) {
            return Err(MidxDamage::IdOrder { position: i, id });
        }
        let first = usize::from(id.as_bytes()[0]);
        let lower = if first == 0 {
            0
        } else {
            be32(fanout, (first - 1) * 4) as usize
        };
        if i < lower || i >= be32(fanout, first * 4) as usize {
            return Err(MidxDamage::OutsideFanout(id));
        }
        progress.add(u64::from(previous.is_some()));
        previous = Some(id);
    }
    progress.finish();
    // git sorts the objects by pack before it checks their offsets: a phase of its own.
    progress.phase("Sorting objects by packfile", Some(count as u64));
    progress.add(count as u64);
    progress.finish();
    progress.phase("Verifying object offsets", Some(count as u64));
    for i in 0..count {
        let id = id_at(i)?;
        let pack_number = be32(offsets, i * 8) as usize;
        let raw = be32(offsets, i * 8 + 4);
        let offset = match large {
            Some(large) if raw & LARGE_OFFSET_BIT != 0 => {
                let at = (raw & !LARGE_OFFSET_BIT) as usize * 8;
                let eight = large.get(at..at + 8).ok_or(MidxDamage::LargeOffset(id))?;
                u64::from_be_bytes(eight.try_into().unwrap())
            }
            _ => u64::from(raw),
        };
        let pack = packs.get(pack_number).ok_or(MidxDamage::UnnamedPack {
            id,
            pack: pack_number,
        })?;
        match pack.index().lookup(&id) {
            Some(position) if pack.index().offset(position) == offset => {}
            _ => {
                let pack = pack.path().to_owned();
                return Err(MidxDamage::Offset { id, offset, pack });
            }
        }
        progress.add(1);
    }
    progress.finish();
    Ok(())
}
