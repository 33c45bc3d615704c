//! Pack entry headers (`gitformat-pack`): a type and an inflated size in a little-endian base-128
//! varint, then for an ofs-delta the distance back to its base, for a ref-delta the base's id.

use sluice_object::{HashKind, ObjectId, ObjectKind};

/// The most bytes a header can take: type/size varint (10), then a base id of up to 32 bytes.
pub const MAX_ENTRY_HEADER_LEN: usize = 10 + 32;

/// The type number of an ofs-delta entry.
pub const OFS_DELTA: u8 = 6;
/// The type number of a ref-delta entry.
pub const REF_DELTA: u8 = 7;

/// The length of a pack's header: `PACK`, the version, the entry count.
pub const PACK_HEADER_LEN: usize = 12;

/// A pack's 12-byte header: `PACK`, the version, the number of entries, big-endian.
pub fn pack_header(version: u32, count: u32) -> [u8; PACK_HEADER_LEN] {
    let mut header = *b"PACK\0\0\0\0\0\0\0\0";
    header[4..8].copy_from_slice(&version.to_be_bytes());
    header[8..].copy_from_slice(&count.to_be_bytes());
    header
}

/// `--pack_header=<version>,<count>` that is none.
#[derive(Debug, thiserror::Error)]
#[error("bad --pack_header={0}")]
pub struct BadPackHeader(pub String);

/// The header `--pack_header=<version>,<count>` stands for: index-pack and unpack-objects are
/// given it by the fetch that already read the pack's first 12 bytes.
pub fn pack_header_option(value: &str) -> Result<[u8; PACK_HEADER_LEN], BadPackHeader> {
    let bad = || BadPackHeader(value.to_owned());
    let (version, count) = value.split_once(',').ok_or_else(bad)?;
    let version: u32 = version.parse().map_err(|_| bad())?;
    let count: u32 = count.parse().map_err(|_| bad())?;
    Ok(pack_header(version, count))
}

/// What a pack entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A whole object.
    Base(ObjectKind),
    /// A delta against the entry `distance` bytes before this one.
    OfsDelta {
        /// Bytes from the base entry's start to this entry's start; at least 1.
        distance: u64,
    },
    /// A delta against the object with this id, in the pack or (thin packs) elsewhere.
    RefDelta {
        /// The base's id.
        base: ObjectId,
    },
}

impl EntryKind {
    /// The type number of this entry as stored in the pack.
    pub fn pack_type(&self) -> u8 {
        match self {
            EntryKind::Base(kind) => kind.pack_type(),
            EntryKind::OfsDelta { .. } => OFS_DELTA,
            EntryKind::RefDelta { .. } => REF_DELTA,
        }
    }
}

/// A parsed entry header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryHeader {
    /// What the entry holds.
    pub kind: EntryKind,
    /// Inflated size of the entry's data (the object, or the delta instructions).
    pub size: u64,
    /// Length of the header in bytes; the zlib stream starts right after it.
    pub header_len: usize,
}

/// Why an entry header is not valid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// The input ends inside the header.
    #[error("truncated entry header")]
    Truncated,
    /// Type 0 or 5, which the format reserves.
    #[error("invalid object type {0}")]
    ReservedType(u8),
    /// A varint that does not end within 64 bits.
    #[error("entry header varint does not end within 64 bits")]
    EndlessVarint,
    /// An ofs-delta distance of 0, or one that reaches before the start of the pack.
    #[error("delta base offset is out of bounds")]
    BadBaseOffset,
}

/// Parses the entry header at the start of `buf`, which starts at pack offset `offset`.
///
/// Returns [`EntryError::Truncated`] when `buf` ends inside the header; a streaming caller that
/// can read more should do so and try again.
pub fn parse_entry_header(
    buf: &[u8],
    offset: u64,
    hash: HashKind,
) -> Result<EntryHeader, EntryError> {
    let mut pos = 0;
    let first = *buf.first().ok_or(EntryError::Truncated)?;
    pos += 1;
    let type_number = (first >> 4) & 7;
    let mut size = u64::from(first & 15);
    let mut shift = 4u32;
    let mut byte = first;
    while byte & 0x80 != 0 {
        byte = *buf.get(pos).ok_or(EntryError::Truncated)?;
        pos += 1;
        if shift > 60 || (shift == 60 && byte & 0x70 != 0) {
            return Err(EntryError::EndlessVarint);
        }
        size |= u64::from(byte & 0x7f) << shift;
        shift += 7;
    }
    let kind = match type_number {
        1..=4 => EntryKind::Base(ObjectKind::from_pack_type(type_number).expect("1 to 4")),
        6 => {
            let mut byte = *buf.get(pos).ok_or(EntryError::Truncated)?;
            pos += 1;
            let mut distance = u64::from(byte & 0x7f);
            while byte & 0x80 != 0 {
                byte = *buf.get(pos).ok_or(EntryError::Truncated)?;
                pos += 1;
                // Each continuation adds one before shifting, so the value grows by 7 bits.
                if distance >= (1 << 56) {
                    return Err(EntryError::EndlessVarint);
                }
                distance = ((distance + 1) << 7) | u64::from(byte & 0x7f);
            }
            if distance == 0 || distance > offset {
                return Err(EntryError::BadBaseOffset);
            }
            EntryKind::OfsDelta { distance }
        }
        7 => {
            let end = pos + hash.len_in_bytes();
            let bytes = buf.get(pos..end).ok_or(EntryError::Truncated)?;
            pos = end;
            EntryKind::RefDelta {
                base: ObjectId::from_bytes(hash, bytes).expect("slice has the hash's length"),
            }
        }
        other => return Err(EntryError::ReservedType(other)),
    };
    Ok(EntryHeader {
        kind,
        size,
        header_len: pos,
    })
}

/// Writes the header of a whole object (or the type/size part of a delta) into `out`.
pub fn write_entry_header(pack_type: u8, size: u64, out: &mut Vec<u8>) {
    let mut byte = (pack_type << 4) | (size & 15) as u8;
    let mut rest = size >> 4;
    while rest != 0 {
        out.push(byte | 0x80);
        byte = (rest & 0x7f) as u8;
        rest >>= 7;
    }
    out.push(byte);
}

/// Writes an ofs-delta distance in the pack's offset encoding.
pub fn write_ofs_distance(distance: u64, out: &mut Vec<u8>) {
    let mut buf = [0u8; 10];
    let mut pos = buf.len() - 1;
    let mut n = distance;
    buf[pos] = (n & 0x7f) as u8;
    n >>= 7;
    while n != 0 {
        n -= 1;
        pos -= 1;
        buf[pos] = 0x80 | (n & 0x7f) as u8;
        n >>= 7;
    }
    out.extend_from_slice(&buf[pos..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip() {
        for size in [0u64, 15, 16, 1000, 1 << 40, u64::MAX] {
            let mut buf = Vec::new();
            write_entry_header(3, size, &mut buf);
            let header = parse_entry_header(&buf, 12, HashKind::Sha1).unwrap();
            assert_eq!(header.size, size);
            assert_eq!(header.header_len, buf.len());
            assert_eq!(header.kind, EntryKind::Base(ObjectKind::Blob));
        }
        for distance in [1u64, 127, 128, 16511, 16512, 1 << 40] {
            let mut buf = Vec::new();
            write_entry_header(6, 9, &mut buf);
            write_ofs_distance(distance, &mut buf);
            let header = parse_entry_header(&buf, u64::MAX, HashKind::Sha1).unwrap();
            assert_eq!(header.kind, EntryKind::OfsDelta { distance });
            assert_eq!(header.header_len, buf.len());
        }
    }

    #[test]
    fn bad_headers_are_refused() {
        let sha = HashKind::Sha1;
        assert_eq!(parse_entry_header(&[], 12, sha), Err(EntryError::Truncated));
        assert_eq!(
            parse_entry_header(&[0x05], 12, sha),
            Err(EntryError::ReservedType(0))
        );
        assert_eq!(
            parse_entry_header(&[0x50], 12, sha),
            Err(EntryError::ReservedType(5))
        );
        assert_eq!(
            parse_entry_header(&[0xb0], 12, sha),
            Err(EntryError::Truncated)
        );
        assert_eq!(
            parse_entry_header(&[0xff; 20], 12, sha),
            Err(EntryError::EndlessVarint)
        );
        assert_eq!(
            parse_entry_header(&[0x60, 0x00], 12, sha),
            Err(EntryError::BadBaseOffset)
        );
        assert_eq!(
            parse_entry_header(&[0x60, 0x0d], 12, sha),
            Err(EntryError::BadBaseOffset)
        );
        assert_eq!(
            parse_entry_header(
                &[0x60, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
                12,
                sha
            ),
            Err(EntryError::EndlessVarint)
        );
        assert_eq!(
            parse_entry_header(&[0x70, 1, 2], 12, sha),
            Err(EntryError::Truncated)
        );
    }
}
