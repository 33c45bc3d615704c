//! The pack as a stream: a buffer over the input that hashes every consumed byte for the trailer,
//! in large chunks, so the first pass reads the input exactly once and never holds more than the
//! buffer.

use super::IndexError;
use sluice_object::{HashKind, ObjectId, TrailerHasher};
use std::io::{self, Read};

/// 1 MiB: large enough that reads and writes are few, small enough to stay in cache.
const BUFFER_SIZE: usize = 1 << 20;

pub(crate) struct StreamInput<'a> {
    reader: &'a mut dyn Read,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// `buf[flushed..start]` is consumed but not yet hashed or copied.
    flushed: usize,
    /// Pack offset of `buf[start]`.
    offset: u64,
    eof: bool,
    /// `None` for a reader that starts mid-pack and cannot check the trailer.
    hasher: Option<TrailerHasher>,
    limit: Option<u64>,
}

impl<'a> StreamInput<'a> {
    pub(crate) fn new(reader: &'a mut dyn Read, hash: HashKind, limit: Option<u64>) -> Self {
        Self::at(
            reader,
            0,
            BUFFER_SIZE,
            Some(TrailerHasher::new(hash)),
            limit,
        )
    }

    /// A reader of a whole pack whose trailer its caller checks (the stream's writer hashes
    /// the pack as it writes it): [`Self::finish`] returns the trailer as found.
    pub(crate) fn trailer_checked_elsewhere(reader: &'a mut dyn Read) -> Self {
        Self::at(reader, 0, BUFFER_SIZE, None, None)
    }

    /// A reader of a pack's middle, from `offset` on, with a `buffer`-byte buffer: it does not
    /// hash (the trailer covers the whole pack) and copies nothing.
    pub(crate) fn mid_pack(reader: &'a mut dyn Read, offset: u64, buffer: usize) -> Self {
        Self::at(reader, offset, buffer, None, None)
    }

    fn at(
        reader: &'a mut dyn Read,
        offset: u64,
        buffer: usize,
        hasher: Option<TrailerHasher>,
        limit: Option<u64>,
    ) -> Self {
        StreamInput {
            reader,
            buf: vec![0; buffer],
            start: 0,
            end: 0,
            flushed: 0,
            offset,
            eof: false,
            hasher,
            limit,
        }
    }

    /// Pack offset of the next unconsumed byte.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// The bytes read but not consumed.
    pub(crate) fn available(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Whether the input has ended (nothing more will arrive beyond `available`).
    pub(crate) fn at_eof(&self) -> bool {
        self.eof
    }

    /// Marks `n` available bytes as consumed.
    pub(crate) fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.end - self.start);
        self.start += n;
        self.offset += n as u64;
    }

    /// Reads until at least `want` bytes are available or the input ends. Returns how many
    /// bytes were newly read.
    pub(crate) fn fill(&mut self, want: usize) -> Result<usize, IndexError> {
        let want = want.min(self.buf.len());
        if self.end - self.start >= want || self.eof {
            return Ok(0);
        }
        if self.buf.len() - self.start < want || self.end == self.buf.len() {
            self.flush_consumed()?;
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            self.flushed = 0;
        }
        let mut read = 0;
        while self.end - self.start < want {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => {
                    self.end += n;
                    read += n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(IndexError::Io {
                        context: "reading the pack",
                        source,
                    })
                }
            }
        }
        if let Some(limit) = self.limit {
            let seen = self.offset + (self.end - self.start) as u64;
            if seen > limit {
                return Err(IndexError::TooLarge { limit });
            }
        }
        Ok(read)
    }

    /// Hashes and copies everything consumed so far.
    fn flush_consumed(&mut self) -> Result<(), IndexError> {
        let chunk = &self.buf[self.flushed..self.start];
        if let Some(hasher) = self.hasher.as_mut() {
            hasher.update(chunk);
        }
        self.flushed = self.start;
        Ok(())
    }

    /// Whether this reader hashes what it reads (and so checks the trailer itself).
    pub(crate) fn checks_trailer(&self) -> bool {
        self.hasher.is_some()
    }

    /// Reads the trailing checksum and, if this reader hashes, checks it against everything
    /// consumed before it. Returns the checksum.
    pub(crate) fn finish(&mut self, hash: HashKind) -> Result<ObjectId, IndexError> {
        let n = hash.len_in_bytes();
        self.flush_consumed()?;
        let trailer_offset = self.offset;
        self.fill(n)?;
        if self.available().len() < n {
            return Err(IndexError::Truncated {
                offset: self.offset + self.available().len() as u64,
            });
        }
        let found = ObjectId::from_bytes(hash, &self.available()[..n]).expect("n bytes");
        let expected = self.hasher.take().map_or(found, TrailerHasher::finalize);
        if expected != found {
            return Err(IndexError::TrailerMismatch {
                offset: trailer_offset,
            });
        }
        self.consume(n);
        self.flushed = self.start;
        Ok(found)
    }

    /// The pack's checksum if the bytes from here to `data_end` are those of `file` (read
    /// there, not from this input): lets the first half's reader check the trailer while the
    /// second half is scanned elsewhere. This input is left as it was.
    pub(crate) fn checksum_rest_of_file(
        &mut self,
        file: &std::fs::File,
        data_end: u64,
    ) -> Result<ObjectId, IndexError> {
        self.flush_consumed()?;
        let mut hasher = self.hasher.clone().expect("a hashing input");
        hash_file_range(&mut hasher, file, self.offset..data_end)?;
        Ok(hasher.finalize())
    }
}

/// Adds `range` of `file` to `hasher`.
pub(crate) fn hash_file_range(
    hasher: &mut TrailerHasher,
    file: &std::fs::File,
    range: std::ops::Range<u64>,
) -> Result<(), IndexError> {
    use std::os::unix::fs::FileExt;
    let mut chunk = vec![0u8; BUFFER_SIZE];
    let mut at = range.start;
    while at < range.end {
        let n = chunk.len().min((range.end - at) as usize);
        file.read_exact_at(&mut chunk[..n], at)
            .map_err(|source| IndexError::Io {
                context: "reading the pack",
                source,
            })?;
        hasher.update(&chunk[..n]);
        at += n as u64;
    }
    Ok(())
}

/// The pack's checksum as the thread that writes a received pack computes it: a hash of
/// everything written except the last `held` bytes, which are the trailer if the stream ended
/// with the pack. It takes that work off the scanner, the busiest thread while a pack arrives.
pub(crate) struct WrittenHash {
    hasher: TrailerHasher,
    tail: Vec<u8>,
    held: usize,
}

impl WrittenHash {
    pub(crate) fn new(hash: HashKind) -> Self {
        let held = hash.len_in_bytes();
        WrittenHash {
            hasher: TrailerHasher::new(hash),
            tail: Vec::with_capacity(2 * held),
            held,
        }
    }

    pub(crate) fn update(&mut self, written: &[u8]) {
        if written.len() >= self.held {
            let (body, tail) = written.split_at(written.len() - self.held);
            self.hasher.update(&self.tail);
            self.hasher.update(body);
            self.tail.clear();
            self.tail.extend_from_slice(tail);
        } else {
            self.tail.extend_from_slice(written);
            let over = self.tail.len().saturating_sub(self.held);
            self.hasher.update(&self.tail[..over]);
            self.tail.drain(..over);
        }
    }

    /// Whether what was written so far ends as a pack does: its last `held` bytes are the hash
    /// of all before them (a chance match is as likely as a hash collision).
    pub(crate) fn ends_pack(&self) -> bool {
        self.tail.len() == self.held && self.hasher.clone().finalize().as_bytes() == self.tail
    }

    /// The hash of everything but the last `held` bytes.
    pub(crate) fn finalize(self) -> ObjectId {
        self.hasher.finalize()
    }
}

/// A `Read` over a file from an offset, with positioned reads (no shared cursor).
pub(crate) struct FileAt<'a> {
    pub(crate) file: &'a std::fs::File,
    pub(crate) pos: u64,
}

impl Read for FileAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written in pieces of every awkward size, the hash covers all but the last 20 bytes.
    #[test]
    fn written_hash_leaves_out_the_last_bytes() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 31 % 251) as u8).collect();
        for piece in [1, 7, 19, 20, 21, 64, 999, 5000] {
            let mut written = WrittenHash::new(HashKind::Sha1);
            for chunk in data.chunks(piece) {
                written.update(chunk);
            }
            let mut whole = TrailerHasher::new(HashKind::Sha1);
            whole.update(&data[..data.len() - 20]);
            assert_eq!(written.finalize(), whole.finalize(), "pieces of {piece}");
        }
    }
}
