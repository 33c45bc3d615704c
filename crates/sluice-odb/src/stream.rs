//! Reading an object's content as a stream, for objects too big to hold whole
//! (`core.bigFileThreshold`): whole objects in a pack are inflated straight from the map, a
//! buffer at a time. Deltas must be rebuilt in memory, so they are not streamed (git's
//! pack-objects does not delta objects over the threshold), nor are loose objects, which are
//! small in practice (git packs big objects on arrival).

use sluice_pack::inflate::Inflater;
use std::io::{self, Read};

/// Inflates one zlib stream from a byte slice, checking that it yields exactly `size` bytes.
pub(crate) struct InflateReader<'a> {
    input: &'a [u8],
    inflater: Inflater,
    /// Bytes still to produce.
    remaining: u64,
    done: bool,
}

impl<'a> InflateReader<'a> {
    pub(crate) fn new(input: &'a [u8], size: u64) -> Self {
        InflateReader {
            input,
            inflater: Inflater::new(),
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
        loop {
            if self.done || buf.is_empty() {
                return Ok(0);
            }
            let step = self
                .inflater
                .step(self.input, buf)
                .map_err(|e| Self::bad(&e.to_string()))?;
            self.input = &self.input[step.consumed..];
            let produced = step.produced;
            if produced as u64 > self.remaining {
                return Err(Self::bad("object inflates to more than its size"));
            }
            self.remaining -= produced as u64;
            if step.done {
                self.done = true;
                if self.remaining != 0 {
                    return Err(Self::bad("object inflates to less than its size"));
                }
            } else if step.consumed == 0 && step.produced == 0 {
                return Err(Self::bad("object data is truncated"));
            }
            if produced > 0 || self.done {
                return Ok(produced);
            }
        }
    }
}
