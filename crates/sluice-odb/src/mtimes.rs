//! A cruft pack's `.mtimes` file (gitformat-pack): beside a pack of objects no ref reaches, the
//! time each was last written, so that a later repack or gc can judge each object's age as it
//! would judge a loose object's file. `MTME`, version 1, the hash's number, one 4-byte time
//! per object in the order of the pack's index (by id), the pack's checksum, and a checksum of
//! all before it.

use crate::pack_store::{Staged, StoreError};
use sluice_object::{HashKind, ObjectId, TrailerHasher};
use std::io::Write;
use std::path::Path;

const SIGNATURE: &[u8; 4] = b"MTME";
const HEADER_LEN: usize = 12;

/// The extension of the file beside the pack.
pub const EXTENSION: &str = "mtimes";

/// Writes `<pack>.mtimes` for the pack whose checksum is `checksum`: `times` holds each
/// object's time (seconds since the epoch), in the order of the pack's index.
pub fn write_mtimes(
    pack_path: &Path,
    checksum: &ObjectId,
    times: &[u32],
    hash: HashKind,
) -> Result<(), StoreError> {
    let mut bytes = Vec::with_capacity(HEADER_LEN + times.len() * 4 + 2 * hash.len_in_bytes());
    bytes.extend_from_slice(SIGNATURE);
    bytes.extend_from_slice(&1u32.to_be_bytes());
    bytes.extend_from_slice(&hash_number(hash).to_be_bytes());
    for time in times {
        bytes.extend_from_slice(&time.to_be_bytes());
    }
    bytes.extend_from_slice(checksum.as_bytes());
    let mut trailer = TrailerHasher::new(hash);
    trailer.update(&bytes);
    bytes.extend_from_slice(trailer.finalize().as_bytes());
    let path = pack_path.with_extension(EXTENSION);
    let dir = path.parent().unwrap_or(Path::new("."));
    let staged = Staged::write(dir, "tmp_mtimes_", |out: &mut dyn Write| {
        out.write_all(&bytes)
    })?;
    staged.commit(&path, false)
}

/// The times of `<pack>.mtimes` in index order, if the file is there and sound for a pack of
/// `count` objects whose checksum is `checksum`; `None` otherwise (the pack is then dated by
/// its file, as for an ordinary pack).
pub fn read_mtimes(
    pack_path: &Path,
    checksum: &ObjectId,
    count: usize,
    hash: HashKind,
) -> Option<Vec<u32>> {
    let bytes = std::fs::read(pack_path.with_extension(EXTENSION)).ok()?;
    let id_len = hash.len_in_bytes();
    if bytes.len() != HEADER_LEN + count * 4 + 2 * id_len
        || &bytes[..4] != SIGNATURE
        || bytes[4..8] != 1u32.to_be_bytes()
        || bytes[8..12] != hash_number(hash).to_be_bytes()
    {
        return None;
    }
    let table_end = HEADER_LEN + count * 4;
    if &bytes[table_end..table_end + id_len] != checksum.as_bytes() {
        return None;
    }
    let mut trailer = TrailerHasher::new(hash);
    trailer.update(&bytes[..table_end + id_len]);
    if trailer.finalize().as_bytes() != &bytes[table_end + id_len..] {
        return None;
    }
    Some(
        bytes[HEADER_LEN..table_end]
            .chunks_exact(4)
            .map(|t| u32::from_be_bytes(t.try_into().expect("four bytes")))
            .collect(),
    )
}

fn hash_number(hash: HashKind) -> u32 {
    match hash {
        HashKind::Sha1 => 1,
    }
}
