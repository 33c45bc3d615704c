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
        StreamInput {
            reader,
            buf: vec![0; BUFFER_SIZE],
            start: 0,
            end: 0,
            flushed: 0,
            offset: 0,
            eof: false,
            hasher: Some(TrailerHasher::new(hash)),
            limit,
        }
    }

    /// A reader of a pack's middle, from `offset` on, with a `buffer`-byte buffer: it does not
    /// hash (the trailer covers the whole pack) and copies nothing.
    pub(crate) fn mid_pack(reader: &'a mut dyn Read, offset: u64, buffer: usize) -> Self {
        StreamInput {
            reader,
            buf: vec![0; buffer],
            start: 0,
            end: 0,
            flushed: 0,
            offset,
            eof: false,
            hasher: None,
            limit: None,
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

    /// Reads the trailing checksum, checks it against everything consumed before it, and copies
    /// it to the sink. Returns the checksum.
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
        let expected = self.hasher.take().expect("a hashing input").finalize();
        let found = ObjectId::from_bytes(hash, &self.available()[..n]).expect("n bytes");
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
        use std::os::unix::fs::FileExt;
        self.flush_consumed()?;
        let mut hasher = self.hasher.clone().expect("a hashing input");
        let mut at = self.offset;
        let mut chunk = vec![0u8; BUFFER_SIZE];
        while at < data_end {
            let n = chunk.len().min((data_end - at) as usize);
            file.read_exact_at(&mut chunk[..n], at)
                .map_err(|source| IndexError::Io {
                    context: "reading the pack",
                    source,
                })?;
            hasher.update(&chunk[..n]);
            at += n as u64;
        }
        Ok(hasher.finalize())
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
