//! Reading index files, versions 2 to 4.

use crate::entry::{IndexEntry, Stat};
use crate::tree_ext::CacheTree;
use crate::{Index, IndexFileError};
use sluice_object::{HashKind, ObjectId, TrailerHasher};

fn u32_at(data: &[u8], at: usize) -> Result<u32, IndexFileError> {
    data.get(at..at + 4)
        .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")))
        .ok_or(IndexFileError::Truncated { offset: at })
}

/// Parses an index file's bytes, checking its checksum.
pub fn read_index(data: &[u8], hash: HashKind) -> Result<Index, IndexFileError> {
    let n = hash.len_in_bytes();
    if data.len() < 12 + n {
        return Err(IndexFileError::Truncated { offset: data.len() });
    }
    if &data[..4] != b"DIRC" {
        return Err(IndexFileError::Signature);
    }
    let version = u32_at(data, 4)?;
    if !(2..=4).contains(&version) {
        return Err(IndexFileError::Version(version));
    }
    let body_end = data.len() - n;
    let mut hasher = TrailerHasher::new(hash);
    hasher.update(&data[..body_end]);
    // An all-zero trailer means git skipped the checksum (index.skipHash).
    let trailer = &data[body_end..];
    if trailer.iter().any(|&b| b != 0) && hasher.finalize().as_bytes() != trailer {
        return Err(IndexFileError::Checksum);
    }
    let count = u32_at(data, 8)? as usize;
    // Each entry takes at least 62 bytes (v4: about 45): bound the reservation by the input.
    let mut entries = Vec::with_capacity(count.min(body_end / 40));
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for index in 0..count {
        let bad = |why| IndexFileError::Entry { index, why };
        let fixed = data
            .get(at..at + 40 + n + 2)
            .ok_or(IndexFileError::Truncated { offset: at })?;
        let word = |i: usize| u32::from_be_bytes(fixed[4 * i..4 * i + 4].try_into().expect("4"));
        let stat = Stat {
            ctime: (word(0), word(1)),
            mtime: (word(2), word(3)),
            dev: word(4),
            ino: word(5),
            uid: word(7),
            gid: word(8),
            size: word(9),
        };
        let mode = word(6);
        let id = ObjectId::from_bytes(hash, &fixed[40..40 + n]).expect("length");
        let flags = u16::from_be_bytes([fixed[40 + n], fixed[41 + n]]);
        let mut pos = at + 42 + n;
        let mut extended_flags = 0;
        if IndexEntry::extended_in(flags) {
            if version < 3 {
                return Err(bad("extended flags in a version 2 index"));
            }
            let bytes = data
                .get(pos..pos + 2)
                .ok_or(IndexFileError::Truncated { offset: pos })?;
            extended_flags = u16::from_be_bytes([bytes[0], bytes[1]]);
            pos += 2;
        }
        let path = if version == 4 {
            // A varint of bytes to drop from the previous path, then the new suffix.
            let mut strip = 0usize;
            let mut byte = *data
                .get(pos)
                .ok_or(IndexFileError::Truncated { offset: pos })?;
            pos += 1;
            strip |= usize::from(byte & 0x7f);
            while byte & 0x80 != 0 {
                byte = *data
                    .get(pos)
                    .ok_or(IndexFileError::Truncated { offset: pos })?;
                pos += 1;
                strip = strip
                    .checked_add(1)
                    .and_then(|s| s.checked_mul(128))
                    .ok_or_else(|| bad("bad path prefix length"))?
                    | usize::from(byte & 0x7f);
            }
            if strip > previous.len() {
                return Err(bad("path prefix longer than the previous path"));
            }
            let nul = data[pos..body_end]
                .iter()
                .position(|&b| b == 0)
                .ok_or(IndexFileError::Truncated { offset: pos })?;
            let mut path = previous[..previous.len() - strip].to_vec();
            path.extend_from_slice(&data[pos..pos + nul]);
            pos += nul + 1;
            path
        } else {
            let nul = data[pos..body_end]
                .iter()
                .position(|&b| b == 0)
                .ok_or(IndexFileError::Truncated { offset: pos })?;
            let path = data[pos..pos + nul].to_vec();
            // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
            let entry_len = pos + nul - at;
            pos = at + ((entry_len + 8) & !7);
            path
        };
        if path.is_empty() {
            return Err(bad("empty path"));
        }
        previous.clone_from(&path);
        entries.push(IndexEntry {
            stat,
            mode,
            id,
            flags,
            extended_flags,
            path,
        });
        at = pos;
    }
    let mut tree = None;
    let mut extensions = Vec::new();
    while at + 8 <= body_end {
        let signature: [u8; 4] = data[at..at + 4].try_into().expect("4 bytes");
        let size = u32_at(data, at + 4)? as usize;
        let start = at + 8;
        let ext = data
            .get(start..start + size)
            .filter(|_| start + size <= body_end)
            .ok_or(IndexFileError::Truncated { offset: at })?;
        match &signature {
            b"TREE" => tree = Some(CacheTree::parse(ext, hash)?),
            s if s[0].is_ascii_uppercase() => extensions.push((signature, ext.to_vec())),
            s => {
                return Err(IndexFileError::RequiredExtension(
                    String::from_utf8_lossy(s).into_owned(),
                ))
            }
        }
        at = start + size;
    }
    if at != body_end {
        return Err(IndexFileError::Truncated { offset: at });
    }
    Ok(Index {
        version,
        entries,
        tree,
        extensions,
        hash,
    })
}
