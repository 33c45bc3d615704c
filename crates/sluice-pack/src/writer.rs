//! Writing a pack stream (`gitformat-pack`): the 12-byte header, entries given already
//! compressed (copied from another pack, or deflated by the caller), and the trailing checksum
//! of everything before it.

use crate::entry::{write_entry_header, write_ofs_distance, EntryKind};
use sluice_object::{HashKind, ObjectId, TrailerHasher};
use std::io::{self, Write};

/// Writes one pack to `out`, hashing as it goes.
#[derive(Debug)]
pub struct PackWriter<W: Write> {
    out: W,
    trailer: Trailer,
    offset: u64,
    header: Vec<u8>,
    expected: u32,
    written: u32,
    /// CRC32 of the entry being written, as the `.idx` records it.
    crc: crc32fast::Hasher,
}

/// How the trailing checksum is found.
#[derive(Debug)]
enum Trailer {
    /// Hashed from the bytes as they go out.
    Hashed(TrailerHasher),
    /// Known before the first byte: the same bytes went out before and were hashed then.
    Known(ObjectId),
}

/// Where an entry went, and its CRC32 (of its header and data, as the `.idx` records it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenEntry {
    /// The entry's offset in the pack.
    pub offset: u64,
    /// The CRC32 of the entry's bytes.
    pub crc32: u32,
}

impl<W: Write> PackWriter<W> {
    /// Starts a version 2 pack that will hold `count` entries.
    pub fn new(out: W, hash: HashKind, count: u32) -> io::Result<Self> {
        Self::start(out, Trailer::Hashed(TrailerHasher::new(hash)), count)
    }

    /// Starts a version 2 pack of `count` entries whose bytes are known to hash to
    /// `checksum` (they were written and hashed before): nothing is hashed, and a caller that
    /// writes other bytes than it did then sends a pack the receiver will refuse.
    pub fn with_checksum(out: W, checksum: ObjectId, count: u32) -> io::Result<Self> {
        Self::start(out, Trailer::Known(checksum), count)
    }

    fn start(out: W, trailer: Trailer, count: u32) -> io::Result<Self> {
        let mut writer = PackWriter {
            out,
            trailer,
            offset: 0,
            header: Vec::with_capacity(64),
            expected: count,
            written: 0,
            crc: crc32fast::Hasher::new(),
        };
        writer.put(&crate::entry::pack_header(2, count))?;
        Ok(writer)
    }

    /// Where the next entry will start.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Writes an entry: `kind` (for an ofs-delta, the distance back from this entry's start to
    /// its base's start), the inflated size, and the zlib stream.
    pub fn write_entry(
        &mut self,
        kind: EntryKind,
        size: u64,
        compressed: &[u8],
    ) -> io::Result<WrittenEntry> {
        let start = self.offset;
        let mut header = std::mem::take(&mut self.header);
        header.clear();
        write_entry_header(kind.pack_type(), size, &mut header);
        match kind {
            EntryKind::Base(_) => {}
            EntryKind::OfsDelta { distance } => {
                if distance == 0 || distance > start {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "ofs-delta base is not before the entry",
                    ));
                }
                write_ofs_distance(distance, &mut header);
            }
            EntryKind::RefDelta { base } => header.extend_from_slice(base.as_bytes()),
        }
        self.crc = crc32fast::Hasher::new();
        self.crc.update(&header);
        self.crc.update(compressed);
        let result = self.put(&header).and_then(|_| self.put(compressed));
        self.header = header;
        result?;
        self.written += 1;
        Ok(WrittenEntry {
            offset: start,
            crc32: std::mem::take(&mut self.crc).finalize(),
        })
    }

    /// Writes `entries` whole entries taken as they are from another pack, where they stood
    /// at the same offsets: only right after the header, so that their ofs-deltas stay valid.
    pub fn write_verbatim(&mut self, bytes: &[u8], entries: u32) -> io::Result<()> {
        if self.offset != crate::entry::PACK_HEADER_LEN as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "entries copied whole must follow the header",
            ));
        }
        for chunk in bytes.chunks(1 << 20) {
            self.put(chunk)?;
        }
        self.written += entries;
        Ok(())
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        if let Trailer::Hashed(hasher) = &mut self.trailer {
            hasher.update(bytes);
        }
        self.out.write_all(bytes)?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Writes the trailer; returns the output and the pack's checksum.
    pub fn finish(mut self) -> io::Result<(W, ObjectId)> {
        if self.written != self.expected {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "pack announced {} entries but {} were written",
                    self.expected, self.written
                ),
            ));
        }
        let checksum = match self.trailer {
            Trailer::Hashed(hasher) => hasher.finalize(),
            Trailer::Known(checksum) => checksum,
        };
        self.out.write_all(checksum.as_bytes())?;
        self.out.flush()?;
        Ok((self.out, checksum))
    }
}
