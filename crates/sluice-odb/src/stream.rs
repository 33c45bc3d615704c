//! Reading an object's content as a stream, for objects too big to hold whole
//! (`core.bigFileThreshold`): whole objects in a pack are inflated straight from the map, a
//! buffer at a time. Deltas must be rebuilt in memory, so they are not streamed (git's
//! pack-objects does not delta objects over the threshold), nor are loose objects, which are
//! small in practice (git packs big objects on arrival).

use sluice_pack::inflate::{Inflater, ZlibInflate};
use std::io::{self, Read};

/// Inflates one zlib stream from a byte slice, checking that it yields exactly `size` bytes.
pub(crate) struct InflateReader<'a> {
    input: &'a [u8],
    /// Made on the first read: callers often only want the size (to decide whether to
    /// stream at all), and a decoder's tables are costly to set up.
    inflater: Option<Inflater>,
    /// Output inflated but not yet read.
    pending: Vec<u8>,
    taken: usize,
    /// Bytes still to produce.
    remaining: u64,
    done: bool,
}

impl<'a> InflateReader<'a> {
    pub(crate) fn new(input: &'a [u8], size: u64) -> Self {
        InflateReader {
            input,
            inflater: None,
            pending: Vec::new(),
            taken: 0,
            remaining: size,
            done: false,
        }
    }

    fn bad(why: &str) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, why.to_owned())
    }
}

impl Read for InflateReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.taken == self.pending.len() {
            if self.done {
                return Ok(0);
            }
            let inflater = self.inflater.get_or_insert_with(|| {
                let mut inflater = Inflater::new();
                inflater.begin();
                inflater
            });
            let fed = inflater
                .feed(self.input, true, true)
                .map_err(|e| Self::bad(&e.to_string()))?;
            self.input = &self.input[fed.consumed..];
            if fed.output.len() as u64 > self.remaining {
                return Err(Self::bad("object inflates to more than its size"));
            }
            self.remaining -= fed.output.len() as u64;
            self.pending.clear();
            self.pending.extend_from_slice(fed.output);
            self.taken = 0;
            if fed.done {
                self.done = true;
                if self.remaining != 0 {
                    return Err(Self::bad("object inflates to less than its size"));
                }
            } else if fed.consumed == 0 && fed.produced == 0 {
                return Err(Self::bad("object data is truncated"));
            }
        }
        let n = buf.len().min(self.pending.len() - self.taken);
        buf[..n].copy_from_slice(&self.pending[self.taken..self.taken + n]);
        self.taken += n;
        Ok(n)
    }
}
