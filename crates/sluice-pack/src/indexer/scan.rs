//! Pass 1: one sequential read of the pack. Every entry is parsed, inflated (to find where it
//! ends and check its size), CRC'd, and recorded in a few dozen bytes; whole objects are hashed
//! while their data is in hand, deltas are left for pass 2, which inflates them again from the
//! pack file rather than holding them (git's and gitoxide's memory-lean choice).

use super::{Entry, IndexError, Resolved};
use crate::entry::{parse_entry_header, EntryError, EntryKind, MAX_ENTRY_HEADER_LEN};
use crate::indexer::input::StreamInput;
use crate::inflate::Inflater;
use sluice_object::progress::Progress;
use sluice_object::{HashKind, ObjectHasher, ObjectId};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Output chunk for inflation: objects are hashed in pieces of this size, never held whole.
const CHUNK: usize = 64 * 1024;

/// What pass 1 learned about a pack.
pub(crate) struct Scan {
    pub(crate) entries: Vec<Entry>,
    pub(crate) resolved: Vec<OnceLock<Resolved>>,
    pub(crate) ref_bases: Vec<ObjectId>,
    /// Offset of the trailer: the end of the last entry.
    pub(crate) data_end: u64,
    pub(crate) checksum: ObjectId,
    pub(crate) deltas: usize,
}

pub(crate) fn scan(
    input: &mut StreamInput<'_>,
    hash: HashKind,
    title: &str,
    progress: &dyn Progress,
    interrupt: &AtomicBool,
) -> Result<Scan, IndexError> {
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
    progress.phase(title, Some(u64::from(count)));

    // The count comes from the input: reserve for at most a million entries up front and let
    // the vectors grow with entries that really arrive.
    let reserve = (count as usize).min(1 << 20);
    let mut scan = Scan {
        entries: Vec::with_capacity(reserve),
        resolved: Vec::with_capacity(reserve),
        ref_bases: Vec::new(),
        data_end: 0,
        checksum: hash.null_id(),
        deltas: 0,
    };
    let mut inflater = Inflater::new();
    let mut chunk = vec![0u8; CHUNK];
    for index in 0..count {
        if interrupt.load(Ordering::Relaxed) {
            return Err(IndexError::Interrupted);
        }
        let before = input.offset();
        scan_entry(input, hash, &mut inflater, &mut chunk, &mut scan).map_err(|e| {
            // A pack that ends with only its trailer left declared more objects than it has.
            if matches!(e, IndexError::Truncated { .. } | IndexError::Entry { .. })
                && input.at_eof()
                && input.offset() == before
                && input.available().len() == hash.len_in_bytes()
            {
                IndexError::ObjectCount {
                    declared: count,
                    found: index,
                }
            } else {
                e
            }
        })?;
        progress.add(1);
        progress.add_bytes(input.offset() - before);
    }
    scan.data_end = input.offset();
    scan.checksum = input.finish(hash)?;
    Ok(scan)
}

fn scan_entry(
    input: &mut StreamInput<'_>,
    hash: HashKind,
    inflater: &mut Inflater,
    chunk: &mut [u8],
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
            let base = scan
                .entries
                .binary_search_by_key(&base_offset, |e| e.offset)
                .map_err(|_| IndexError::BaseNotAnEntry {
                    offset,
                    base_offset,
                })?;
            (6, base as u32)
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

    inflater.reset();
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
        let available = input.available();
        let step = inflater
            .step(available, chunk)
            .map_err(|source| IndexError::Inflate { offset, source })?;
        crc.update(&available[..step.consumed]);
        input.consume(step.consumed);
        produced += step.produced as u64;
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
            hasher.update(&chunk[..step.produced]);
        }
        if step.done {
            break;
        }
        if step.consumed == 0 && step.produced == 0 {
            // zlib needs more input than is buffered to make progress.
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

    let slot = OnceLock::new();
    match (hasher, header.kind) {
        (Some(hasher), EntryKind::Base(kind)) => {
            let id = hasher
                .finalize()
                .map_err(|_| IndexError::CollisionAttack { offset })?;
            slot.set(Resolved { id, kind, depth: 0 }).expect("new slot");
        }
        _ => scan.deltas += 1,
    }
    scan.entries.push(Entry {
        offset,
        size: header.size,
        crc32: crc.finalize(),
        base,
        header_len: header.header_len as u8,
        pack_type,
    });
    scan.resolved.push(slot);
    Ok(())
}
