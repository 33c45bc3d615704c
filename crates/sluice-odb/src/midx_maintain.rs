//! Keeping a multi-pack-index's packs in shape, as git's `multi-pack-index expire` and its
//! incremental-repack task do: which pack each object is found in, and the packs no object is
//! found in any more, deleted.

use crate::chunk_file::{checksum_matches, find};
use crate::midx::{
    pack_names, read_header, write_midx, MidxDamage, MidxError, FILE_NAME, OBJECT_OFFSETS,
    OID_LOOKUP, PACK_NAMES,
};
use sluice_object::{HashKind, ObjectId};
use std::path::Path;

/// Which pack a multi-pack-index finds each object in.
#[derive(Debug, Clone)]
pub struct Attribution {
    /// The packs it names (`pack-….idx`), in its order.
    pub packs: Vec<String>,
    /// Each object, and the number of the pack it is found in.
    pub objects: Vec<(ObjectId, u32)>,
}

impl Attribution {
    /// How many objects are found in each pack, by number.
    pub fn counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.packs.len()];
        for &(_, pack) in &self.objects {
            if let Some(count) = counts.get_mut(pack as usize) {
                *count += 1;
            }
        }
        counts
    }
}

/// The attribution of `<pack_dir>/multi-pack-index`; `None` when there is none.
pub fn attribution(pack_dir: &Path, hash: HashKind) -> Result<Option<Attribution>, MidxError> {
    let path = pack_dir.join(FILE_NAME);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(MidxError::Io { path, source }),
    };
    let corrupt = |why: MidxDamage| MidxError::Corrupt {
        path: path.clone(),
        why,
    };
    if !checksum_matches(&bytes, hash) {
        return Err(corrupt(MidxDamage::Checksum));
    }
    let (pack_count, table) = read_header(&bytes, hash).map_err(corrupt)?;
    let chunk = |id: [u8; 4]| {
        let missing = || {
            corrupt(MidxDamage::MissingChunk(
                String::from_utf8_lossy(&id).into(),
            ))
        };
        find(&table, id)
            .map(|(start, len)| &bytes[start..start + len])
            .ok_or_else(missing)
    };
    let packs = pack_names(chunk(PACK_NAMES)?, pack_count).map_err(corrupt)?;
    let (lookup, offsets) = (chunk(OID_LOOKUP)?, chunk(OBJECT_OFFSETS)?);
    let id_len = hash.len_in_bytes();
    if lookup.len() % id_len != 0 || offsets.len() != lookup.len() / id_len * 8 {
        return Err(corrupt(MidxDamage::ChunkSizes));
    }
    let objects = (lookup.chunks_exact(id_len).zip(offsets.chunks_exact(8)))
        .enumerate()
        .map(|(i, (id, row))| {
            let id = ObjectId::from_bytes(hash, id).map_err(|_| corrupt(MidxDamage::BadId(i)))?;
            Ok((
                id,
                u32::from_be_bytes(row[..4].try_into().expect("four bytes")),
            ))
        })
        .collect::<Result<Vec<_>, MidxError>>()?;
    Ok(Some(Attribution { packs, objects }))
}

/// `multi-pack-index expire`: deletes the packs the multi-pack-index finds no object in (but
/// those with a `.keep` file), then writes it again for the packs left. Returns how many
/// packs went.
pub fn expire_midx(pack_dir: &Path, hash: HashKind) -> Result<usize, MidxError> {
    let Some(attribution) = attribution(pack_dir, hash)? else {
        return Ok(0);
    };
    let mut removed = 0;
    for (name, count) in attribution.packs.iter().zip(attribution.counts()) {
        let idx = pack_dir.join(name);
        if count > 0 || idx.with_extension("keep").exists() {
            continue;
        }
        // The index last: a reader that lists indexes never finds one without its pack.
        for extension in ["pack", "rev", "bitmap", "mtimes", "promisor", "idx"] {
            let file = idx.with_extension(extension);
            match std::fs::remove_file(&file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(MidxError::Io { path: file, source }),
            }
        }
        removed += 1;
        crate::written::note_written();
    }
    if removed > 0 {
        write_midx(pack_dir, hash)?;
    }
    Ok(removed)
}
