//! Pass 1: one sequential read of the pack. Every entry is parsed, inflated (to find where it
//! ends and check its size), CRC'd, and recorded in a few dozen bytes; whole objects are hashed
//! while their data is in hand. Deltas are left for pass 2, which inflates them again from the
//! pack file rather than holding them (git's and gitoxide's memory-lean choice), except the
//! smallest, kept in a bounded arena: for them the second inflation cost more than the bytes.

use super::{Entry, IndexError, Resolved, ResolvedSlot, NOT_KEPT};
use crate::entry::{
    parse_entry_header, EntryError, EntryKind, MAX_ENTRY_HEADER_LEN, OFS_DELTA, REF_DELTA,
};
use crate::indexer::growing::{GrowingReader, Growth};
use crate::indexer::input::{hash_file_range, FileAt, StreamInput, WrittenHash};
use crate::indexer::small_deltas::Kept;
use crate::indexer::table::Table;
use crate::inflate::{Inflater, ZlibInflate};
use sluice_object::progress::Progress;
use sluice_object::{HashKind, ObjectHasher, ObjectId, TrailerHasher};
use std::fs::File;
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What pass 1 learned about a pack.
pub(crate) struct Scan {
    pub(crate) entries: Table<Entry>,
    pub(crate) resolved: Table<ResolvedSlot>,
    /// The base ids of ref-deltas, one per ref-delta in pack order; sorted and unique once
    /// [`RefChildren::build`](super::resolve::RefChildren::build) has renumbered them.
    pub(crate) ref_bases: Vec<ObjectId>,
    /// Offset of the trailer: the end of the last entry.
    pub(crate) data_end: u64,
    pub(crate) checksum: ObjectId,
    pub(crate) deltas: usize,
    /// The inflated data of small deltas (see [`KEEP_AT_MOST`]), which `Entry::kept` points into.
    pub(crate) kept: Kept,
    /// Offset of the first entry this scan covers (12 unless it started mid-pack).
    floor: u64,
    /// ofs-deltas whose base lies before `floor`: (entry index, base offset), fixed at merge.
    pending: Vec<(u32, u64)>,
}

impl Scan {
    fn new(hash: HashKind, floor: u64, reserve: usize) -> Self {
        Scan {
            entries: Table::new(Vec::with_capacity(reserve)),
            resolved: Table::new(Vec::with_capacity(reserve)),
            ref_bases: Vec::new(),
            data_end: 0,
            checksum: hash.null_id(),
            deltas: 0,
            kept: Kept::default(),
            floor,
            pending: Vec::new(),
        }
    }
}

/// Deltas of at most this many bytes are kept inflated from pass 1. For them, inflating again
/// in pass 2 costs more than the data: a read of the pack, a zlib header and often a Huffman
/// table for a few dozen bytes. The bound weighs time against memory: on rust-lang/cargo's
/// pack (163k deltas) keeping those up to 128 bytes (117k, 6.3 MB) took 1.07 s and 33 MB,
/// up to 32 bytes (57k, 1.6 MB) 1.09 s and 29.5 MB, none 1.11 s and 27.7 MB; git holds 32 MB.
const KEEP_AT_MOST: u64 = 32;
/// What pass 1 keeps of small deltas at most, whatever the pack.
const KEEP_BUDGET: usize = 32 << 20;

/// Where pass 1 of the first thread stopped.
enum Stop {
    /// All declared entries were read.
    Done,
    /// It reached the offset where the second thread started.
    AtSplit,
}

fn read_header(input: &mut StreamInput<'_>) -> Result<u32, IndexError> {
    input.fill(12)?;
    let header = input.available();
    if header.is_empty() {
        return Err(IndexError::Empty);
    }
    if header.len() < 12 {
        return Err(IndexError::Truncated {
            offset: header.len() as u64,
        });
    }
    if &header[..4] != b"PACK" {
        return Err(IndexError::Signature);
    }
    let version = u32::from_be_bytes(header[4..8].try_into().expect("4 bytes"));
    if version != 2 && version != 3 {
        return Err(IndexError::Version(version));
    }
    let count = u32::from_be_bytes(header[8..12].try_into().expect("4 bytes"));
    input.consume(12);
    Ok(count)
}

/// `split` before the second thread has decided.
const UNDECIDED: u64 = 0;
/// `split` when there is no second thread.
const NO_SPLIT: u64 = u64::MAX;

/// Scans entries until `count` are read, or until the offset published in `split` is reached
/// exactly. Passing it without landing on it means the second thread started at a false
/// entry: `cancel` tells it to stop, and scanning goes on alone. `position` publishes where
/// this scan is, for the stream writer's decision to split.
#[allow(clippy::too_many_arguments)]
fn scan_entries(
    input: &mut StreamInput<'_>,
    hash: HashKind,
    scan: &mut Scan,
    count: u32,
    split: &AtomicU64,
    position: &AtomicU64,
    cancel: &AtomicBool,
    progress: &dyn Progress,
    interrupt: &AtomicBool,
) -> Result<Stop, IndexError> {
    let mut inflater = Inflater::new();
    for index in scan.entries.len() as u32..count {
        if interrupt.load(Ordering::Relaxed) {
            return Err(IndexError::Interrupted);
        }
        let before = input.offset();
        position.store(before, Ordering::Relaxed);
        let at = split.load(Ordering::Acquire);
        if at != UNDECIDED && at != NO_SPLIT {
            if before == at {
                return Ok(Stop::AtSplit);
            }
            if before > at {
                cancel.store(true, Ordering::Relaxed);
                split.store(NO_SPLIT, Ordering::Relaxed);
            }
        }
        scan_entry(input, hash, &mut inflater, scan).map_err(|e| {
            // A pack that ends with only its trailer left declared more objects than it has.
            if matches!(e, IndexError::Truncated { .. } | IndexError::Entry { .. })
                && input.at_eof()
                && input.offset() == before
                && input.available().len() == hash.len_in_bytes()
            {
                IndexError::ObjectCount {
                    declared: count,
                    found: index,
                    offset: before,
                }
            } else {
                e
            }
        })?;
        // Its bytes before it is counted: what comes after the last object is the trailer.
        progress.add_bytes(input.offset() - before);
        progress.add(1);
    }
    Ok(Stop::Done)
}

/// Pass 1 over a stream: header, every entry, trailer.
pub(crate) fn scan(
    input: &mut StreamInput<'_>,
    hash: HashKind,
    title: &str,
    progress: &dyn Progress,
    interrupt: &AtomicBool,
) -> Result<Scan, IndexError> {
    let count = read_header(input)?;
    progress.phase(title, Some(u64::from(count)));
    // The header was read too, as git counts it.
    progress.add_bytes(input.offset());
    // The count comes from the input: reserve for at most a million entries up front and let
    // the vectors grow with entries that really arrive.
    let mut scan = Scan::new(hash, 12, (count as usize).min(1 << 20));
    let (no_split, position) = (AtomicU64::new(NO_SPLIT), AtomicU64::new(0));
    let never = AtomicBool::new(false);
    scan_entries(
        input, hash, &mut scan, count, &no_split, &position, &never, progress, interrupt,
    )?;
    scan.data_end = input.offset();
    scan.checksum = input.finish(hash)?;
    // The trailer too, as git's index-pack counts what it read.
    progress.add_bytes(hash.len_in_bytes() as u64);
    Ok(scan)
}

/// Pack files smaller than this are scanned by one thread: the split would not pay for itself.
const SPLIT_MIN_SIZE: u64 = 32 << 20;
/// A stream is split when at least this much of it is left to scan once it has all arrived:
/// below that, a second thread saves under ~40 ms.
const SPLIT_MIN_LEFT: u64 = 8 << 20;
/// A split point must be followed by this many entries that parse and inflate exactly.
const SPLIT_PROBE_ENTRIES: usize = 16;
/// How far past the middle to look for an entry start.
const SPLIT_WINDOW: u64 = 8 << 20;

/// The first thread's part of a two-thread pass 1: from the header to the split, then the
/// second half's entries (from `second`) are merged and the trailer checked; if the second
/// half cannot be used, this thread scans it itself.
#[allow(clippy::too_many_arguments)]
fn scan_first_half(
    input: &mut StreamInput<'_>,
    file: &File,
    hash: HashKind,
    title: &str,
    split: &AtomicU64,
    position: &AtomicU64,
    cancel: &AtomicBool,
    second: impl FnOnce() -> Option<Scan>,
    progress: &dyn Progress,
    interrupt: &AtomicBool,
) -> Result<Scan, IndexError> {
    let count = read_header(input).inspect_err(|_| cancel.store(true, Ordering::Relaxed))?;
    progress.phase(title, Some(u64::from(count)));
    progress.add_bytes(input.offset());
    let mut scan = Scan::new(hash, 12, (count as usize).min(1 << 20));
    let stop = scan_entries(
        input, hash, &mut scan, count, split, position, cancel, progress, interrupt,
    )
    .inspect_err(|_| cancel.store(true, Ordering::Relaxed))?;
    if let Stop::AtSplit = stop {
        let io = |source| IndexError::Io {
            context: "reading the pack",
            source,
        };
        let len = file.metadata().map_err(io)?.len();
        let data_end = len - hash.len_in_bytes() as u64;
        let checksum = if input.checks_trailer() {
            Some(input.checksum_rest_of_file(file, data_end)?)
        } else {
            None
        };
        let first_count = scan.entries.len();
        if second()
            .and_then(|rest| merge(&mut scan, rest, count))
            .is_some()
        {
            progress.add((scan.entries.len() - first_count) as u64);
            let mut trailer = vec![0u8; hash.len_in_bytes()];
            use std::os::unix::fs::FileExt;
            file.read_exact_at(&mut trailer, data_end).map_err(io)?;
            let trailer = ObjectId::from_bytes(hash, &trailer).expect("a whole id");
            if checksum.is_some_and(|checksum| checksum != trailer) {
                return Err(IndexError::TrailerMismatch { offset: data_end });
            }
            scan.data_end = data_end;
            scan.checksum = trailer;
            return Ok(scan);
        }
        // The second half could not be used: go on alone from the split.
        let (no_split, never) = (AtomicU64::new(NO_SPLIT), AtomicBool::new(false));
        scan_entries(
            input, hash, &mut scan, count, &no_split, position, &never, progress, interrupt,
        )?;
    }
    scan.data_end = input.offset();
    scan.checksum = input.finish(hash)?;
    // The trailer too, as git's index-pack counts what it read.
    progress.add_bytes(hash.len_in_bytes() as u64);
    Ok(scan)
}

/// Pass 1 over a pack file on two threads: a second thread finds an entry start past the
/// middle (one that 16 consecutive entries confirm) and scans from there to the trailer while
/// this one scans from the start. The split is kept only if this thread lands exactly on it;
/// anything unexpected falls back to one thread, which then reports errors as usual. Entry
/// boundaries are only known by inflating, so this pass is usually left to one thread: split,
/// it went from 4.5 s to 2.5 s on git/git's pack.
pub(crate) fn scan_file(
    file: &File,
    input: &mut StreamInput<'_>,
    hash: HashKind,
    threads: usize,
    progress: &dyn Progress,
    interrupt: &AtomicBool,
) -> Result<Scan, IndexError> {
    let title = "Indexing objects";
    // A pack read in place moves nothing: no throughput, as git's index-pack of a file.
    let progress = &sluice_object::progress::CountsOnly(progress);
    let len = file
        .metadata()
        .map_err(|source| IndexError::Io {
            context: "reading the pack",
            source,
        })?
        .len();
    let scan = if threads < 2 || len < SPLIT_MIN_SIZE {
        scan(input, hash, title, progress, interrupt)?
    } else {
        let data_end = len - hash.len_in_bytes() as u64;
        let (split, position) = (AtomicU64::new(UNDECIDED), AtomicU64::new(0));
        let cancel = AtomicBool::new(false);
        std::thread::scope(|s| {
            let (split, cancel) = (&split, &cancel);
            let second = s.spawn(move || {
                let Some(at) = find_split(file, len / 2, data_end, hash) else {
                    split.store(NO_SPLIT, Ordering::Release);
                    return None;
                };
                split.store(at, Ordering::Release);
                scan_second_half(file, at, data_end, hash, cancel, interrupt)
            });
            let result = scan_first_half(
                input,
                file,
                hash,
                title,
                split,
                &position,
                cancel,
                || second.join().ok().flatten(),
                progress,
                interrupt,
            );
            cancel.store(true, Ordering::Relaxed);
            result
        })?
    };
    let end = scan.data_end + hash.len_in_bytes() as u64;
    if end != len {
        return Err(IndexError::JunkAtEnd { offset: end });
    }
    Ok(scan)
}

/// Pass 1 over a stream: this thread copies it into `pack` while a scanner thread reads the
/// file right behind it; when the stream ends with enough left to scan, this thread scans the
/// second half of what is left. The stream is read to its end, as a pack file would be.
pub(crate) fn scan_stream(
    stream: &mut dyn Read,
    pack: &File,
    hash: HashKind,
    threads: usize,
    (limit, stop_at_trailer): (Option<u64>, bool),
    progress: &dyn Progress,
    interrupt: &AtomicBool,
) -> Result<Scan, IndexError> {
    let growth = Growth::default();
    let (split, position) = (AtomicU64::new(UNDECIDED), AtomicU64::new(0));
    let cancel = AtomicBool::new(false);
    let n = hash.len_in_bytes() as u64;
    let mut written_hash = WrittenHash::new(hash);
    let (scan, written) = std::thread::scope(|s| {
        let (growth, split, position, cancel) = (&growth, &split, &position, &cancel);
        let (send_second, receive_second) = std::sync::mpsc::channel::<Option<Scan>>();
        let scanner = s.spawn(move || {
            let mut reader = GrowingReader {
                file: pack,
                growth,
                pos: 0,
            };
            let mut input = StreamInput::trailer_checked_elsewhere(&mut reader);
            let result = scan_first_half(
                &mut input,
                pack,
                hash,
                "Receiving objects",
                split,
                position,
                cancel,
                || receive_second.recv().ok().flatten(),
                progress,
                interrupt,
            );
            cancel.store(true, Ordering::Relaxed);
            let written = growth.stop();
            let done = growth.state.lock().map_or(true, |s| s.done);
            let scan = result?;
            let end = scan.data_end + n;
            if done && written > end {
                return Err(IndexError::JunkAtEnd { offset: end });
            }
            Ok(scan)
        });
        let copied = growth.copy(stream, pack, limit, &mut written_hash, stop_at_trailer);
        let second = match &copied {
            // Split only if the scanner is far enough behind for a second half to pay.
            Ok(total) => {
                let total = *total;
                let behind = position.load(Ordering::Relaxed);
                let worth = threads >= 2 && total.saturating_sub(behind) >= SPLIT_MIN_LEFT;
                match worth.then(|| {
                    find_split(
                        pack,
                        (total / 2).max(behind + (total - behind) / 2),
                        total - n,
                        hash,
                    )
                }) {
                    Some(Some(at)) if !cancel.load(Ordering::Relaxed) => {
                        split.store(at, Ordering::Release);
                        scan_second_half(pack, at, total - n, hash, cancel, interrupt)
                    }
                    _ => {
                        split.store(NO_SPLIT, Ordering::Release);
                        None
                    }
                }
            }
            Err(_) => {
                split.store(NO_SPLIT, Ordering::Release);
                None
            }
        };
        let _ = send_second.send(second);
        let scanned = scanner.join().unwrap_or(Err(IndexError::Interrupted));
        match (scanned, copied) {
            (Ok(scan), copied) => Ok((scan, copied.ok())),
            // A failed copy (too large, unreadable) explains a failed scan best.
            (Err(_), Err(copy_error)) => Err(copy_error),
            (Err(e), Ok(_)) => Err(e),
        }
    })?;
    // The writer hashed all it wrote but the last `n` bytes: when the stream ended with the
    // trailer, that is exactly the pack. Otherwise (the stream went on, and the copy was told
    // to stop), the pack is hashed again from the file.
    let expected = if written == Some(scan.data_end + n) {
        written_hash.finalize()
    } else {
        let mut hasher = TrailerHasher::new(hash);
        hash_file_range(&mut hasher, pack, 0..scan.data_end)?;
        hasher.finalize()
    };
    if expected != scan.checksum {
        return Err(IndexError::TrailerMismatch {
            offset: scan.data_end,
        });
    }
    // The stream may have gone on past the trailer before the copy was told to stop.
    pack.set_len(scan.data_end + n)
        .map_err(|source| IndexError::Io {
            context: "writing the pack",
            source,
        })?;
    Ok(scan)
}

/// Looks for an entry start in the `SPLIT_WINDOW` bytes after `from`.
fn find_split(file: &File, from: u64, data_end: u64, hash: HashKind) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let len = SPLIT_WINDOW.min(data_end.saturating_sub(from)) as usize;
    let mut window = vec![0u8; len];
    file.read_exact_at(&mut window, from).ok()?;
    for i in 0..window.len() {
        let kind = (window[i] >> 4) & 7;
        if kind == 0 || kind == 5 {
            continue;
        }
        let at = from + i as u64;
        let Ok(header) = parse_entry_header(&window[i..], at, hash) else {
            continue;
        };
        // git writes zlib streams with a 32 KiB window: CMF 0x78 and a valid check value.
        let z = i + header.header_len;
        let (Some(&cmf), Some(&flg)) = (window.get(z), window.get(z + 1)) else {
            continue;
        };
        if cmf != 0x78 || (u16::from(cmf) << 8 | u16::from(flg)) % 31 != 0 {
            continue;
        }
        if probe(file, at, data_end, hash) {
            return Some(at);
        }
    }
    None
}

/// Whether `SPLIT_PROBE_ENTRIES` entries (or all up to the trailer) parse and inflate exactly
/// from `at`.
fn probe(file: &File, at: u64, data_end: u64, hash: HashKind) -> bool {
    let mut reader = FileAt { file, pos: at };
    let mut input = StreamInput::mid_pack(&mut reader, at, 64 << 10);
    let mut scan = Scan::new(hash, at, SPLIT_PROBE_ENTRIES);
    let mut inflater = Inflater::new();
    for _ in 0..SPLIT_PROBE_ENTRIES {
        if input.offset() == data_end {
            return true;
        }
        if scan_entry(&mut input, hash, &mut inflater, &mut scan).is_err()
            || input.offset() > data_end
        {
            return false;
        }
    }
    true
}

/// Entries to reserve for the part of the pack a second thread scans: as many as the header
/// declares (at most 2^20, as the first part). The split in bytes says little about the split
/// in objects (git/git's second half outgrew its share by bytes plus 1/16 and doubled its
/// tables); pages of the reservation that no entry reaches are never touched.
fn second_half_reserve(file: &File) -> usize {
    use std::os::unix::fs::FileExt;
    let mut header = [0u8; 12];
    if file.read_exact_at(&mut header, 0).is_err() {
        return 1 << 16;
    }
    let count = u32::from_be_bytes([header[8], header[9], header[10], header[11]]);
    (count as usize).min(1 << 20)
}

/// Scans from `at` to exactly `data_end`; `None` if anything is off.
fn scan_second_half(
    file: &File,
    at: u64,
    data_end: u64,
    hash: HashKind,
    cancel: &AtomicBool,
    interrupt: &AtomicBool,
) -> Option<Scan> {
    let mut reader = FileAt { file, pos: at };
    let mut input = StreamInput::mid_pack(&mut reader, at, 1 << 20);
    let mut scan = Scan::new(hash, at, second_half_reserve(file));
    let mut inflater = Inflater::new();
    while input.offset() < data_end {
        if cancel.load(Ordering::Relaxed) || interrupt.load(Ordering::Relaxed) {
            return None;
        }
        scan_entry(&mut input, hash, &mut inflater, &mut scan).ok()?;
    }
    (input.offset() == data_end).then_some(scan)
}

/// Appends the second half to the first; `None` (leaving `first` untouched) when the halves
/// do not add up to the declared count or a pending base is not an entry of the first half.
fn merge(first: &mut Scan, second: Scan, count: u32) -> Option<()> {
    if first.entries.len() + second.entries.len() != count as usize {
        return None;
    }
    let mut fixes = Vec::with_capacity(second.pending.len());
    for &(child, base_offset) in &second.pending {
        let base = first
            .entries
            .first_part()
            .binary_search_by_key(&base_offset, |e| e.offset())
            .ok()?;
        fixes.push((child, base as u32));
    }
    let shift = first.entries.len() as u32;
    let ref_shift = first.ref_bases.len() as u32;
    let mut entries = second.entries.into_vec();
    for entry in entries.iter_mut() {
        match entry.pack_type() {
            OFS_DELTA if entry.base != u32::MAX => entry.base += shift,
            REF_DELTA => entry.base += ref_shift,
            _ => {}
        }
    }
    for (child, base) in fixes {
        entries[child as usize].base = base;
    }
    let kept_shift = first.kept.append(second.kept) as u32;
    for entry in entries.iter_mut().filter(|e| e.kept != NOT_KEPT) {
        entry.kept += kept_shift;
    }
    first.entries.append_part(entries);
    first.resolved.append_part(second.resolved.into_vec());
    first.ref_bases.extend(second.ref_bases);
    first.deltas += second.deltas;
    Some(())
}

fn scan_entry(
    input: &mut StreamInput<'_>,
    hash: HashKind,
    inflater: &mut Inflater,
    scan: &mut Scan,
) -> Result<(), IndexError> {
    let offset = input.offset();
    input.fill(MAX_ENTRY_HEADER_LEN)?;
    let header = match parse_entry_header(input.available(), offset, hash) {
        Ok(header) => header,
        Err(EntryError::Truncated) if input.at_eof() => {
            return Err(IndexError::Truncated {
                offset: offset + input.available().len() as u64,
            })
        }
        Err(source) => return Err(IndexError::Entry { offset, source }),
    };
    let mut crc = crc32fast::Hasher::new();
    crc.update(&input.available()[..header.header_len]);
    input.consume(header.header_len);

    let (pack_type, base) = match header.kind {
        EntryKind::Base(kind) => (kind.pack_type(), 0),
        EntryKind::OfsDelta { distance } => {
            let base_offset = offset - distance;
            if base_offset < scan.floor {
                // Mid-pack scan: the base is in the other half, found at merge.
                scan.pending.push((scan.entries.len() as u32, base_offset));
                (6, u32::MAX)
            } else {
                let base = scan
                    .entries
                    .first_part()
                    .binary_search_by_key(&base_offset, |e| e.offset())
                    .map_err(|_| IndexError::BaseNotAnEntry {
                        offset,
                        base_offset,
                    })?;
                (6, base as u32)
            }
        }
        EntryKind::RefDelta { base } => {
            scan.ref_bases.push(base);
            (7, (scan.ref_bases.len() - 1) as u32)
        }
    };
    let mut hasher = match header.kind {
        EntryKind::Base(kind) => Some(ObjectHasher::new(hash, kind, header.size)),
        _ => None,
    };

    // Whole objects are inflated for hashing and small deltas for keeping; any other delta is
    // only scanned to find its end (its checksum is checked when pass 2 inflates it again).
    inflater.begin();
    let keep_delta = hasher.is_none()
        && header.size <= KEEP_AT_MOST
        && scan.kept.len() + header.size as usize <= KEEP_BUDGET;
    let kept = match keep_delta {
        true => scan.kept.start(header.size as usize),
        false => 0,
    };
    let keep = hasher.is_some() || keep_delta;
    let mut produced = 0u64;
    loop {
        if input.available().is_empty() {
            input.fill(1)?;
            if input.available().is_empty() {
                return Err(IndexError::Truncated {
                    offset: input.offset(),
                });
            }
        }
        let end_of_input = input.at_eof();
        let available = input.available();
        let fed = inflater
            .feed(available, end_of_input, keep)
            .map_err(|source| IndexError::Inflate { offset, source })?;
        crc.update(&available[..fed.consumed]);
        produced += fed.produced as u64;
        if produced > header.size {
            return Err(IndexError::Inflate {
                offset,
                source: crate::inflate::InflateError::SizeMismatch {
                    declared: header.size,
                    actual: produced,
                },
            });
        }
        if let Some(hasher) = hasher.as_mut() {
            hasher.update(fed.output);
        } else if keep_delta {
            scan.kept.extend(fed.output);
        }
        let (consumed, made, done) = (fed.consumed, fed.produced, fed.done);
        input.consume(consumed);
        if done {
            break;
        }
        if consumed == 0 && made == 0 {
            // The inflater needs more input than is buffered to make progress.
            let have = input.available().len();
            input.fill(have + 1)?;
            if input.available().len() == have {
                return Err(IndexError::Truncated {
                    offset: input.offset() + have as u64,
                });
            }
        }
    }
    if produced != header.size {
        return Err(IndexError::Inflate {
            offset,
            source: crate::inflate::InflateError::SizeMismatch {
                declared: header.size,
                actual: produced,
            },
        });
    }

    let slot = ResolvedSlot::new();
    match (hasher, header.kind) {
        (Some(hasher), EntryKind::Base(kind)) => {
            let id = hasher
                .finalize()
                .map_err(|_| IndexError::CollisionAttack { offset })?;
            slot.set(Resolved { id, kind, depth: 0 }).expect("new slot");
        }
        _ => scan.deltas += 1,
    }
    let mut entry = Entry::new(offset, header.size, header.header_len, pack_type).ok_or(
        IndexError::EntryTooLarge {
            offset,
            size: header.size,
        },
    )?;
    entry.crc32 = crc.finalize();
    entry.base = base;
    if keep_delta {
        entry.kept = kept as u32;
    }
    scan.entries.push(entry);
    scan.resolved.push(slot);
    Ok(())
}
