//! Reverse indexes (`gitformat-pack`, "pack-*.rev files"): for each object in pack order, its
//! position in the `.idx`; written by default since git 2.41 (`pack.writeReverseIndex`).

use sluice_object::{HashKind, ObjectId, TrailerHasher};
use std::io::{self, Write};

/// Writes a `.rev` file. `index_positions_in_pack_order` lists, for each object in pack order,
/// its position in the index. Returns the file's checksum.
pub fn write_rev(
    hash: HashKind,
    index_positions_in_pack_order: &[u32],
    pack_checksum: &ObjectId,
    out: &mut dyn Write,
) -> io::Result<ObjectId> {
    let mut body = Vec::with_capacity(12 + 4 * index_positions_in_pack_order.len() + 40);
    body.extend_from_slice(b"RIDX");
    body.extend_from_slice(&1u32.to_be_bytes());
    body.extend_from_slice(&hash.format_id().to_be_bytes());
    for position in index_positions_in_pack_order {
        body.extend_from_slice(&position.to_be_bytes());
    }
    body.extend_from_slice(pack_checksum.as_bytes());
    let mut hasher = TrailerHasher::new(hash);
    hasher.update(&body);
    let checksum = hasher.finalize();
    out.write_all(&body)?;
    out.write_all(checksum.as_bytes())?;
    Ok(checksum)
}
