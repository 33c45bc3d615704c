//! The default inflater, on sirocco: its decoder writes into a buffer that doubles as the
//! stream's history (moved down with `make_room` when full), and its scanner finds a stream's
//! end without writing anything, which is all pass 1 of index-pack needs for a delta.

use super::{Fed, InflateError, ZlibInflate};
use ::sirocco::inflate::{Decoder, Error, Scanner};
use ::sirocco::Format;

/// Streaming output buffer: large enough that `make_room` (which keeps the last 32 KiB) runs
/// rarely.
const STREAM_BUFFER: usize = 256 << 10;

/// Inflates with sirocco.
pub struct SiroccoInflater {
    decoder: Decoder,
    scanner: Scanner,
    buf: Vec<u8>,
    /// The last `feed` filled the buffer: make room before the next.
    full: bool,
    /// Output bytes of the current scanned stream so far.
    scanned: u64,
}

impl Default for SiroccoInflater {
    fn default() -> Self {
        SiroccoInflater {
            decoder: Decoder::new(Format::Zlib),
            scanner: Scanner::new(Format::Zlib),
            buf: Vec::new(),
            full: false,
            scanned: 0,
        }
    }
}

impl std::fmt::Debug for SiroccoInflater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SiroccoInflater")
    }
}

impl SiroccoInflater {
    /// A new inflater.
    pub fn new() -> Self {
        Self::default()
    }
}

fn map(error: Error) -> InflateError {
    match error {
        Error::Truncated => InflateError::Truncated,
        other => InflateError::Corrupt(other.to_string()),
    }
}

impl ZlibInflate for SiroccoInflater {
    fn inflate_exact(
        &mut self,
        input: &[u8],
        size: usize,
        out: &mut Vec<u8>,
    ) -> Result<usize, InflateError> {
        self.decoder.reset();
        super::exact_buffer(out, size)?;
        let result = self.decoder.decompress(input, out, true);
        let (consumed, produced, done) = match result {
            Ok(p) => (p.consumed, p.output.len(), p.done),
            Err(Error::BufferFull) => (0, size + 1, false),
            Err(e) => {
                self.decoder.reset();
                return Err(map(e));
            }
        };
        if !done {
            // Only a full buffer stops a stream whose input is all there: it is too long.
            self.decoder.reset();
            return Err(InflateError::SizeMismatch {
                declared: size as u64,
                actual: produced as u64,
            });
        }
        super::finish_exact(out, size, produced, consumed)
    }

    fn begin(&mut self) {
        self.decoder.reset();
        self.scanner.reset();
        self.full = false;
        self.scanned = 0;
    }

    fn feed(
        &mut self,
        input: &[u8],
        end_of_input: bool,
        keep: bool,
    ) -> Result<Fed<'_>, InflateError> {
        if !keep {
            let end = self.scanner.scan(input, end_of_input).map_err(map)?;
            let total = self.scanner.total_out();
            let produced = (total - self.scanned) as usize;
            self.scanned = total;
            return Ok(Fed {
                consumed: end.unwrap_or(input.len()),
                produced,
                output: &[],
                done: end.is_some(),
            });
        }
        if self.buf.len() < STREAM_BUFFER {
            self.buf.resize(STREAM_BUFFER, 0);
        }
        if self.full {
            self.decoder.make_room(&mut self.buf);
            self.full = false;
        }
        let progress = self
            .decoder
            .decompress(input, &mut self.buf, end_of_input)
            .map_err(map)?;
        self.full = progress.full;
        Ok(Fed {
            consumed: progress.consumed,
            produced: progress.output.len(),
            output: progress.output,
            done: progress.done,
        })
    }
}
