//! Copying a stored pack's entries as one block: when every object of a pack goes out (a clone
//! of a repository that took pushes since its repack, or the repack itself), its entries are
//! copied in one piece at the start of the new pack, where they keep their offsets, so its
//! ofs-deltas stay valid and nothing is looked at entry by entry but its CRC32.

use crate::stats::PackStats;
use crate::write::{PackOptions, PackReuse};
use crate::GenerateError;
use sluice_odb::{ObjectDb, Pack};
use sluice_pack::entry::{EntryKind, PACK_HEADER_LEN};
use std::io::Write;

/// The pack whose every entry is sent, given how many entries each pack contributes; only a
/// pack of more than one entry, and only when deltas may name bases by offset.
pub(crate) fn choose(odb: &ObjectDb, sent_per_pack: &[u32], ofs_delta: bool) -> Option<usize> {
    if !ofs_delta {
        return None;
    }
    (sent_per_pack.iter().enumerate())
        .filter(|&(pack, &sent)| sent > 1 && sent as usize == odb.packs()[pack].index().len())
        .max_by_key(|&(_, &sent)| sent)
        .map(|(pack, _)| pack)
}

/// The CRC32 of each entry of `pack`, in pack order, checked against its index where the
/// index records them: a damaged entry must not be copied into a pack unread.
pub(crate) fn checked_crcs(pack: &Pack) -> Result<Vec<u32>, GenerateError> {
    let index = pack.index();
    let damaged = |position: usize| GenerateError::DamagedEntry {
        pack: pack.path().to_owned(),
        offset: index.offset(position),
        id: index.id(position),
    };
    let bytes = pack.bytes()?;
    let end = bytes
        .len()
        .saturating_sub(index.pack_checksum().as_bytes().len());
    let has_crcs = index.version() >= 2;
    let positions: Vec<usize> = (0..index.len())
        .map(|rank| pack.at_rank(rank))
        .collect::<Option<_>>()
        .ok_or_else(|| damaged(0))?;
    let mut crcs = Vec::with_capacity(positions.len());
    for (rank, &position) in positions.iter().enumerate() {
        let offset = index.offset(position) as usize;
        let next = positions
            .get(rank + 1)
            .map_or(end, |&p| index.offset(p) as usize);
        let entry = bytes.get(offset..next).ok_or_else(|| damaged(position))?;
        let crc = crc32fast::hash(entry);
        if has_crcs && crc != index.crc32(position) {
            return Err(damaged(position));
        }
        crcs.push(crc);
    }
    Ok(crcs)
}

/// The bytes of `pack`'s entries, between its header and its checksum.
pub(crate) fn entries(pack: &Pack) -> Result<&[u8], GenerateError> {
    let bytes = pack.bytes()?;
    let end = bytes.len() - pack.index().pack_checksum().as_bytes().len();
    Ok(&bytes[PACK_HEADER_LEN..end])
}

/// The one stored pack that holds exactly the objects to send (`count` of them, so many from
/// each pack as `sent_per_pack` says), when the client can take it as it is (ofs-deltas
/// allowed): a full clone of a repacked repository.
pub(crate) fn whole_pack<'a>(
    odb: &'a ObjectDb,
    sent_per_pack: &[u32],
    count: u32,
    options: &PackOptions,
) -> Option<&'a Pack> {
    // The walk lists each object once, so as many objects as the pack holds is all of them.
    let (pack, _) = (sent_per_pack.iter().enumerate()).find(|&(_, &sent)| sent == count)?;
    let found = &odb.packs()[pack];
    (options.ofs_delta && count > 0 && found.index().len() == count as usize).then_some(found)
}

/// Whether every delta chain of `pack` is at most `depth` deltas long: one pass over its
/// entries in pack order, where a delta comes after its base. Stops at the first too long.
pub(crate) fn chains_within(pack: &Pack, depth: u32) -> Result<bool, GenerateError> {
    let index = pack.index();
    // The chain length of each entry, by rank (pack order).
    let mut lengths: Vec<u32> = Vec::with_capacity(index.len());
    let mut offsets: Vec<u64> = Vec::with_capacity(index.len());
    for rank in 0..index.len() {
        let Some(position) = pack.at_rank(rank) else {
            return Ok(false);
        };
        let offset = index.offset(position);
        let base_rank = match pack.entry_header(position)?.kind {
            EntryKind::Base(_) => None,
            EntryKind::OfsDelta { distance } => {
                Some((offset.checked_sub(distance)).and_then(|at| offsets.binary_search(&at).ok()))
            }
            EntryKind::RefDelta { base } => Some(index.lookup(&base).and_then(|p| pack.rank_of(p))),
        };
        let length = match base_rank {
            None => 0,
            Some(base) => match base.and_then(|base| lengths.get(base)) {
                Some(below) => below + 1,
                // A base later in the pack, or none: judged by the writer, not copied whole.
                None => return Ok(false),
            },
        };
        if length > depth {
            return Ok(false);
        }
        lengths.push(length);
        offsets.push(offset);
    }
    Ok(true)
}

/// Copies a stored pack as it is, trailer included: the receiver checks every entry and the
/// checksum as it indexes the pack, and nothing is recomputed here.
pub(crate) fn send_whole_pack<W: Write>(
    pack: &Pack,
    count: u32,
    reuse: PackReuse,
    mut out: W,
) -> Result<(W, PackStats), GenerateError> {
    for chunk in pack.bytes()?.chunks(1 << 20) {
        out.write_all(chunk)?;
    }
    Ok((out, copied_stats(pack, count, reuse)?))
}

/// What copying `pack` whole (`count` entries) adds to git's "Total" line: as pack reuse,
/// only `pack-reused` (git leaves those deltas out of its count too); else its entries, all
/// reused, its deltas among them.
pub(crate) fn copied_stats(
    pack: &Pack,
    count: u32,
    reuse: PackReuse,
) -> Result<PackStats, GenerateError> {
    if reuse == PackReuse::Reused {
        return Ok(PackStats {
            total: count,
            pack_reused: count,
            ..PackStats::default()
        });
    }
    let mut deltas = 0;
    for position in 0..pack.index().len() {
        if !matches!(pack.entry_header(position)?.kind, EntryKind::Base(_)) {
            deltas += 1;
        }
    }
    Ok(PackStats {
        total: count,
        deltas,
        reused: count,
        reused_deltas: deltas,
        pack_reused: 0,
    })
}
