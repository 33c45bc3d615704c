//! Writing index files: version 2, or 3 when an entry has extended flags, as git does.

use super::Index;
use sluice_object::TrailerHasher;

/// Serialises `index` (entries must be sorted); returns the bytes, checksum included.
pub fn write_index(index: &Index) -> Vec<u8> {
    let n = index.hash.len_in_bytes();
    let version: u32 = if index.entries.iter().any(|e| e.is_extended()) {
        3
    } else {
        2
    };
    let mut out = Vec::with_capacity(12 + index.entries.len() * (70 + n) + 64);
    out.extend_from_slice(b"DIRC");
    out.extend_from_slice(&version.to_be_bytes());
    out.extend_from_slice(&(index.entries.len() as u32).to_be_bytes());
    for entry in &index.entries {
        let start = out.len();
        let s = &entry.stat;
        for word in [
            s.ctime.0, s.ctime.1, s.mtime.0, s.mtime.1, s.dev, s.ino, entry.mode, s.uid, s.gid,
            s.size,
        ] {
            out.extend_from_slice(&word.to_be_bytes());
        }
        out.extend_from_slice(entry.id.as_bytes());
        out.extend_from_slice(&entry.flags_word().to_be_bytes());
        if entry.is_extended() {
            out.extend_from_slice(&entry.extended_flags.to_be_bytes());
        }
        out.extend_from_slice(&entry.path);
        // 1 to 8 NULs, to a multiple of 8 bytes.
        let len = out.len() - start;
        let padded = (len + 8) & !7;
        out.resize(start + padded, 0);
    }
    if let Some(tree) = &index.tree {
        let mut data = Vec::new();
        tree.write(&mut data);
        out.extend_from_slice(b"TREE");
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(&data);
    }
    for (signature, data) in &index.extensions {
        out.extend_from_slice(signature);
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(data);
    }
    let mut hasher = TrailerHasher::new(index.hash);
    hasher.update(&out);
    out.extend_from_slice(hasher.finalize().as_bytes());
    out
}
