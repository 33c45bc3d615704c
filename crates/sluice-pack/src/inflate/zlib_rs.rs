//! The reference inflater, on zlib-rs through flate2: what [`super::SiroccoInflater`] is tested
//! against.

use super::{Fed, InflateError, ZlibInflate};
use flate2::{Decompress, FlushDecompress, Status};

/// Output chunk for streamed inflation.
const CHUNK: usize = 64 << 10;

/// Inflates with zlib-rs.
pub struct ZlibRsInflater {
    inner: Decompress,
    chunk: Vec<u8>,
}

impl Default for ZlibRsInflater {
    fn default() -> Self {
        ZlibRsInflater {
            inner: Decompress::new(true),
            chunk: Vec::new(),
        }
    }
}

impl std::fmt::Debug for ZlibRsInflater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ZlibRsInflater")
    }
}

impl ZlibRsInflater {
    /// A new inflater.
    pub fn new() -> Self {
        Self::default()
    }

    fn step(
        &mut self,
        input: &[u8],
        output: &mut [u8],
        flush: FlushDecompress,
    ) -> Result<(usize, usize, bool), InflateError> {
        let in_before = self.inner.total_in();
        let out_before = self.inner.total_out();
        let status = self
            .inner
            .decompress(input, output, flush)
            .map_err(|e| InflateError::Corrupt(e.to_string()))?;
        Ok((
            (self.inner.total_in() - in_before) as usize,
            (self.inner.total_out() - out_before) as usize,
            status == Status::StreamEnd,
        ))
    }
}

impl ZlibInflate for ZlibRsInflater {
    fn inflate_exact(
        &mut self,
        input: &[u8],
        size: usize,
        out: &mut Vec<u8>,
    ) -> Result<usize, InflateError> {
        self.inner.reset(true);
        super::exact_buffer(out, size)?;
        let mut consumed = 0;
        let mut produced = 0;
        loop {
            let (c, p, done) = self.step(
                &input[consumed..],
                &mut out[produced..],
                FlushDecompress::Finish,
            )?;
            consumed += c;
            produced += p;
            if done {
                break;
            }
            if produced > size {
                return Err(InflateError::SizeMismatch {
                    declared: size as u64,
                    actual: produced as u64,
                });
            }
            if c == 0 && p == 0 {
                return Err(InflateError::Truncated);
            }
        }
        super::finish_exact(out, size, produced, consumed)
    }

    fn begin(&mut self) {
        self.inner.reset(true);
    }

    fn feed(
        &mut self,
        input: &[u8],
        end_of_input: bool,
        _keep: bool,
    ) -> Result<Fed<'_>, InflateError> {
        let mut chunk = std::mem::take(&mut self.chunk);
        chunk.resize(CHUNK, 0);
        let result = self.step(input, &mut chunk, FlushDecompress::None);
        self.chunk = chunk;
        let (consumed, produced, done) = result?;
        if !done && end_of_input && consumed == input.len() && produced < CHUNK {
            return Err(InflateError::Truncated);
        }
        Ok(Fed {
            consumed,
            produced,
            output: &self.chunk[..produced],
            done,
        })
    }
}
