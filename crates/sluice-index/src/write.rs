//! Writing index files: version 2, or 3 when an entry has extended flags, as git does.

use crate::Index;
use sluice_object::TrailerHasher;
use std::io::Write;

/// Passes bytes on while hashing them, for the trailing checksum.
struct Hashing<'a> {
    out: &'a mut dyn Write,
    hasher: TrailerHasher,
}

impl Write for Hashing<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Serialises `index` (entries must be sorted); returns the bytes, checksum included.
pub fn write_index(index: &Index) -> Vec<u8> {
    let n = index.hash.len_in_bytes();
    let mut out = Vec::with_capacity(12 + index.entries.len() * (70 + n) + 64);
    write_index_to(index, &mut out).expect("writing to memory does not fail");
    out
}

/// Serialises `index` (entries must be sorted) into `out`, checksum included.
pub fn write_index_to(index: &Index, out: &mut dyn Write) -> std::io::Result<()> {
    let version: u32 = if index.entries.iter().any(|e| e.is_extended()) {
        3
    } else {
        2
    };
    let mut out = Hashing {
        out,
        hasher: TrailerHasher::new(index.hash),
    };
    out.write_all(b"DIRC")?;
    out.write_all(&version.to_be_bytes())?;
    out.write_all(&(index.entries.len() as u32).to_be_bytes())?;
    // One entry at a time through a small buffer: 62 bytes of fixed fields, the path, and
    // 1 to 8 NULs to a multiple of 8 bytes.
    let mut entry_bytes = Vec::with_capacity(256);
    for entry in &index.entries {
        entry_bytes.clear();
        let s = &entry.stat;
        for word in [
            s.ctime.0, s.ctime.1, s.mtime.0, s.mtime.1, s.dev, s.ino, entry.mode, s.uid, s.gid,
            s.size,
        ] {
            entry_bytes.extend_from_slice(&word.to_be_bytes());
        }
        entry_bytes.extend_from_slice(entry.id.as_bytes());
        entry_bytes.extend_from_slice(&entry.flags_word().to_be_bytes());
        if entry.is_extended() {
            entry_bytes.extend_from_slice(&entry.extended_flags.to_be_bytes());
        }
        entry_bytes.extend_from_slice(&entry.path);
        let padded = (entry_bytes.len() + 8) & !7;
        entry_bytes.resize(padded, 0);
        out.write_all(&entry_bytes)?;
    }
    if let Some(tree) = &index.tree {
        let mut data = Vec::new();
        tree.write(&mut data);
        out.write_all(b"TREE")?;
        out.write_all(&(data.len() as u32).to_be_bytes())?;
        out.write_all(&data)?;
    }
    for (signature, data) in &index.extensions {
        out.write_all(signature)?;
        out.write_all(&(data.len() as u32).to_be_bytes())?;
        out.write_all(data)?;
    }
    let Hashing { out, hasher } = out;
    out.write_all(hasher.finalize().as_bytes())
}
