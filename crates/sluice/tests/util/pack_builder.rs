//! Builds pack files byte by byte, for packs git's pack-objects will not produce: a base with
//! tens of thousands of children, duplicates, and every kind of corruption. Git's own
//! index-pack stays the judge of the well-formed ones.

use sluice_object::{hash_object, HashKind, ObjectId, ObjectKind, TrailerHasher};
use sluice_pack::entry::{write_entry_header, write_ofs_distance};
use sluice_pack::inflate::deflate;

/// One delta instruction.
pub enum Op<'a> {
    Copy { offset: u64, size: u64 },
    Insert(&'a [u8]),
}

fn varint(mut n: u64, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Encodes a delta from its sizes and instructions (no checking: hostile deltas are wanted).
pub fn delta(base_size: u64, result_size: u64, ops: &[Op]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(base_size, &mut out);
    varint(result_size, &mut out);
    for op in ops {
        match op {
            Op::Insert(bytes) => {
                for chunk in bytes.chunks(127) {
                    out.push(chunk.len() as u8);
                    out.extend_from_slice(chunk);
                }
            }
            Op::Copy { offset, size } => {
                let mut cmd = 0x80u8;
                let mut args = Vec::new();
                for i in 0..4 {
                    let byte = (offset >> (8 * i)) as u8;
                    if byte != 0 {
                        cmd |= 1 << i;
                        args.push(byte);
                    }
                }
                for i in 0..3 {
                    let byte = (size >> (8 * i)) as u8;
                    if byte != 0 {
                        cmd |= 0x10 << i;
                        args.push(byte);
                    }
                }
                out.push(cmd);
                out.extend_from_slice(&args);
            }
        }
    }
    out
}

/// A delta that keeps the whole base and appends `suffix`.
pub fn append_delta(base: &[u8], suffix: &[u8]) -> Vec<u8> {
    let mut ops = Vec::new();
    let mut at = 0u64;
    while at < base.len() as u64 {
        let size = (base.len() as u64 - at).min(0xffff);
        ops.push(Op::Copy { offset: at, size });
        at += size;
    }
    ops.push(Op::Insert(suffix));
    delta(base.len() as u64, (base.len() + suffix.len()) as u64, &ops)
}

/// A pack under construction.
#[derive(Default)]
pub struct PackBuilder {
    body: Vec<u8>,
    offsets: Vec<u64>,
    /// Overrides the object count in the header.
    pub count: Option<u32>,
    /// Overrides the version in the header.
    pub version: Option<u32>,
}

impl PackBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    fn offset(&self) -> u64 {
        12 + self.body.len() as u64
    }

    /// Offset of entry `index`.
    pub fn offset_of(&self, index: usize) -> u64 {
        self.offsets[index]
    }

    /// Adds raw entry bytes; returns the entry's index.
    pub fn raw(&mut self, bytes: &[u8]) -> usize {
        self.offsets.push(self.offset());
        self.body.extend_from_slice(bytes);
        self.offsets.len() - 1
    }

    /// Adds a whole object; returns its index and id.
    pub fn object(&mut self, kind: ObjectKind, data: &[u8]) -> (usize, ObjectId) {
        let mut bytes = Vec::new();
        write_entry_header(kind.pack_type(), data.len() as u64, &mut bytes);
        bytes.extend_from_slice(&deflate(data, 6));
        let id = hash_object(HashKind::Sha1, kind, data).expect("no attack");
        (self.raw(&bytes), id)
    }

    /// Adds an ofs-delta against entry `base`.
    pub fn ofs_delta(&mut self, base: usize, delta: &[u8]) -> usize {
        let distance = self.offset() - self.offsets[base];
        self.ofs_delta_distance(distance, delta)
    }

    /// Adds an ofs-delta with an explicit distance (possibly wrong).
    pub fn ofs_delta_distance(&mut self, distance: u64, delta: &[u8]) -> usize {
        let mut bytes = Vec::new();
        write_entry_header(6, delta.len() as u64, &mut bytes);
        write_ofs_distance(distance, &mut bytes);
        bytes.extend_from_slice(&deflate(delta, 6));
        self.raw(&bytes)
    }

    /// Adds a ref-delta against `base`.
    pub fn ref_delta(&mut self, base: &ObjectId, delta: &[u8]) -> usize {
        let mut bytes = Vec::new();
        write_entry_header(7, delta.len() as u64, &mut bytes);
        bytes.extend_from_slice(base.as_bytes());
        bytes.extend_from_slice(&deflate(delta, 6));
        self.raw(&bytes)
    }

    /// The pack: header, entries, trailer.
    pub fn build(&self) -> Vec<u8> {
        let mut pack = Vec::with_capacity(self.body.len() + 32);
        pack.extend_from_slice(b"PACK");
        pack.extend_from_slice(&self.version.unwrap_or(2).to_be_bytes());
        let count = self.count.unwrap_or(self.offsets.len() as u32);
        pack.extend_from_slice(&count.to_be_bytes());
        pack.extend_from_slice(&self.body);
        let mut hasher = TrailerHasher::new(HashKind::Sha1);
        hasher.update(&pack);
        pack.extend_from_slice(hasher.finalize().as_bytes());
        pack
    }
}

/// Recomputes the trailer of a pack whose bytes were edited.
pub fn fix_trailer(pack: &mut [u8]) {
    let end = pack.len() - 20;
    let mut hasher = TrailerHasher::new(HashKind::Sha1);
    hasher.update(&pack[..end]);
    let sum = hasher.finalize();
    pack[end..].copy_from_slice(sum.as_bytes());
}
