//! zlib inflation for pack entries. One [`Inflater`] per thread is reset between streams: building
//! a fresh decompressor per object rebuilds its tables and showed up as ~7% of a profile.

use flate2::{Decompress, FlushDecompress, Status};

/// Why a zlib stream could not be inflated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InflateError {
    /// The stream is not valid zlib.
    #[error("corrupt zlib stream: {0}")]
    Corrupt(String),
    /// The stream inflates to more or fewer bytes than declared.
    #[error("inflated size mismatch: declared {declared}, got {actual}")]
    SizeMismatch {
        /// Declared size.
        declared: u64,
        /// Bytes actually produced (possibly only a lower bound).
        actual: u64,
    },
    /// The input ends before the stream does.
    #[error("zlib stream is truncated")]
    Truncated,
    /// The declared size cannot be allocated.
    #[error("cannot allocate {size} bytes for an object")]
    TooLarge {
        /// The declared size.
        size: u64,
    },
}

/// The outcome of one [`Inflater::step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Input bytes consumed.
    pub consumed: usize,
    /// Output bytes produced.
    pub produced: usize,
    /// Whether the stream has ended.
    pub done: bool,
}

/// A reusable zlib decompressor.
pub struct Inflater {
    inner: Decompress,
}

impl Default for Inflater {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Inflater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Inflater")
    }
}

impl Inflater {
    /// A decompressor for zlib-wrapped streams.
    pub fn new() -> Self {
        Inflater {
            inner: Decompress::new(true),
        }
    }

    /// Prepares for a new stream.
    pub fn reset(&mut self) {
        self.inner.reset(true);
    }

    /// Inflates as much of `input` into `output` as fits.
    pub fn step(&mut self, input: &[u8], output: &mut [u8]) -> Result<Step, InflateError> {
        let in_before = self.inner.total_in();
        let out_before = self.inner.total_out();
        let status = self
            .inner
            .decompress(input, output, FlushDecompress::None)
            .map_err(|e| InflateError::Corrupt(e.to_string()))?;
        Ok(Step {
            consumed: (self.inner.total_in() - in_before) as usize,
            produced: (self.inner.total_out() - out_before) as usize,
            done: status == Status::StreamEnd,
        })
    }

    /// Inflates one whole stream from `input` into `out` (replacing its contents), which must
    /// produce exactly `size` bytes. Returns how many input bytes the stream took.
    pub fn inflate_exact(
        &mut self,
        input: &[u8],
        size: usize,
        out: &mut Vec<u8>,
    ) -> Result<usize, InflateError> {
        self.reset();
        out.clear();
        // Room for one byte more than declared, so that a stream longer than its declared size
        // is caught rather than silently cut.
        out.try_reserve_exact(size + 1)
            .map_err(|_| InflateError::TooLarge { size: size as u64 })?;
        out.resize(size + 1, 0);
        let mut consumed = 0;
        let mut produced = 0;
        loop {
            let step = self.step(&input[consumed..], &mut out[produced..])?;
            consumed += step.consumed;
            produced += step.produced;
            if step.done {
                break;
            }
            if produced > size {
                return Err(InflateError::SizeMismatch {
                    declared: size as u64,
                    actual: produced as u64,
                });
            }
            if step.consumed == 0 && step.produced == 0 {
                return Err(InflateError::Truncated);
            }
        }
        out.truncate(produced);
        if produced != size {
            return Err(InflateError::SizeMismatch {
                declared: size as u64,
                actual: produced as u64,
            });
        }
        Ok(consumed)
    }
}

/// Compresses `data` as one zlib stream at git's default level (`core.compression` -1 = 6).
pub fn deflate(data: &[u8], level: u32) -> Vec<u8> {
    use std::io::Write as _;
    let mut encoder = flate2::write::ZlibEncoder::new(
        Vec::with_capacity(data.len() / 2 + 64),
        flate2::Compression::new(level),
    );
    encoder
        .write_all(data)
        .expect("writing to a Vec cannot fail");
    encoder.finish().expect("writing to a Vec cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_size_checks() {
        let data = b"hello hello hello hello".repeat(100);
        let packed = deflate(&data, 6);
        let mut inflater = Inflater::new();
        let mut out = Vec::new();
        let used = inflater
            .inflate_exact(&packed, data.len(), &mut out)
            .unwrap();
        assert_eq!(used, packed.len());
        assert_eq!(out, data);
        assert!(matches!(
            inflater.inflate_exact(&packed, data.len() - 1, &mut out),
            Err(InflateError::SizeMismatch { .. })
        ));
        assert!(matches!(
            inflater.inflate_exact(&packed, data.len() + 1, &mut out),
            Err(InflateError::SizeMismatch { .. })
        ));
        assert_eq!(
            inflater.inflate_exact(&packed[..packed.len() / 2], data.len(), &mut out),
            Err(InflateError::Truncated)
        );
        let mut corrupt = packed.clone();
        corrupt[0] = 0;
        assert!(matches!(
            inflater.inflate_exact(&corrupt, data.len(), &mut out),
            Err(InflateError::Corrupt(_))
        ));
    }
}
