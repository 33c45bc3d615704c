//! Copying a stored pack's entries as one block: when every object of a pack goes out (a clone
//! of a repository that took pushes since its repack, or the repack itself), its entries are
//! copied in one piece at the start of the new pack, where they keep their offsets, so its
//! ofs-deltas stay valid and nothing is looked at entry by entry but its CRC32.

use crate::write::{PackOptions, PackStats, Planned, Source};
use crate::GenerateError;
use sluice_odb::{ObjectDb, Pack};
use sluice_pack::entry::PACK_HEADER_LEN;
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

/// The CRC32 of each entry of `pack`, whose entries start at `offsets` (sorted), checked
/// against its index where the index records them; `None` at the first that differs (a damaged
/// entry must not be passed on unread).
pub(crate) fn checked_crcs(pack: &Pack, offsets: &[(u64, u32)]) -> Option<Vec<u32>> {
    let bytes = pack.bytes();
    let end = bytes
        .len()
        .checked_sub(pack.index().pack_checksum().as_bytes().len())?;
    let has_crcs = pack.index().version() >= 2;
    let mut crcs = Vec::with_capacity(offsets.len());
    for (k, &(offset, position)) in offsets.iter().enumerate() {
        let next = offsets.get(k + 1).map_or(end, |&(o, _)| o as usize);
        let entry = bytes.get(offset as usize..next)?;
        let crc = crc32fast::hash(entry);
        if has_crcs && crc != pack.index().crc32(position as usize) {
            return None;
        }
        crcs.push(crc);
    }
    Some(crcs)
}

/// The bytes of `pack`'s entries, between its header and its checksum.
pub(crate) fn entries(pack: &Pack) -> &[u8] {
    let bytes = pack.bytes();
    let end = bytes.len() - pack.index().pack_checksum().as_bytes().len();
    &bytes[PACK_HEADER_LEN..end]
}

/// The one stored pack that holds exactly the objects to send, when the client can take it as
/// it is (ofs-deltas allowed): a full clone of a repacked repository.
pub(crate) fn whole_pack<'a>(
    odb: &'a ObjectDb,
    plan: &[Planned],
    options: &PackOptions,
) -> Option<&'a Pack> {
    let Some(Source::Packed { pack, .. }) = plan.first().map(|p| p.source) else {
        return None;
    };
    let same_pack = plan
        .iter()
        .all(|p| matches!(p.source, Source::Packed { pack: q, .. } if q == pack));
    let found = &odb.packs()[pack as usize];
    // The walk lists each object once, so as many objects as the pack holds is all of them.
    (options.ofs_delta && same_pack && found.index().len() == plan.len()).then_some(found)
}

/// Copies a stored pack as it is, trailer included: the receiver checks every entry and the
/// checksum as it indexes the pack, and nothing is recomputed here.
pub(crate) fn send_whole_pack<W: Write>(
    pack: &Pack,
    count: u32,
    mut out: W,
) -> Result<(W, PackStats), GenerateError> {
    for chunk in pack.bytes().chunks(1 << 20) {
        out.write_all(chunk)?;
    }
    Ok((
        out,
        PackStats {
            total: count,
            pack_reused: count,
            ..PackStats::default()
        },
    ))
}
