//! The chunked transfer coding of HTTP/1.1, both ways.

use std::io::{self, BufRead, Read, Write};

/// The longest chunk-size line accepted (hex digits and extensions).
const MAX_CHUNK_LINE: usize = 1024;

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_owned())
}

/// Reads a body sent with `Transfer-Encoding: chunked`.
pub(crate) struct ChunkedReader<R> {
    inner: R,
    /// Bytes left in the current chunk.
    left: u64,
    done: bool,
}

impl<R: BufRead> ChunkedReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        ChunkedReader {
            inner,
            left: 0,
            done: false,
        }
    }

    fn read_line(&mut self) -> io::Result<Vec<u8>> {
        let mut line = Vec::new();
        let read = (&mut self.inner)
            .take(MAX_CHUNK_LINE as u64 + 2)
            .read_until(b'\n', &mut line)?;
        if read == 0 || line.last() != Some(&b'\n') {
            return Err(invalid("chunked body: truncated or overlong chunk line"));
        }
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(line)
    }

    /// Starts the next chunk; at the last one, reads the trailer.
    fn next_chunk(&mut self) -> io::Result<()> {
        let line = self.read_line()?;
        let size = line.split(|&b| b == b';').next().unwrap_or_default();
        let size = std::str::from_utf8(size)
            .ok()
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= 15)
            .and_then(|s| u64::from_str_radix(s, 16).ok())
            .ok_or_else(|| invalid("chunked body: bad chunk size"))?;
        if size == 0 {
            // Trailer fields, up to the empty line.
            while !self.read_line()?.is_empty() {}
            self.done = true;
        }
        self.left = size;
        Ok(())
    }
}

impl<R: BufRead> Read for ChunkedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while self.left == 0 && !self.done {
            self.next_chunk()?;
        }
        if self.done {
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let got = self.inner.read(&mut buf[..want])?;
        if got == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.left -= got as u64;
        if self.left == 0 && !self.read_line()?.is_empty() {
            return Err(invalid("chunked body: chunk longer than announced"));
        }
        Ok(got)
    }
}

/// Writes a response body with `Transfer-Encoding: chunked`: data gathers in one buffer with
/// room for the chunk's size line in front, so each chunk leaves in a single write. Dropping
/// the writer sends what is left and the last, empty chunk.
pub(crate) struct ChunkedWriter<W: Write> {
    inner: W,
    buf: Vec<u8>,
}

/// Room for the hex size and its CRLF in front of each chunk.
const HEAD_ROOM: usize = 8;
/// Payload bytes per chunk: one full side-band packet and then some.
const CHUNK: usize = 128 << 10;

impl<W: Write> ChunkedWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        let mut buf = Vec::with_capacity(HEAD_ROOM + CHUNK + 2);
        buf.resize(HEAD_ROOM, 0);
        ChunkedWriter { inner, buf }
    }

    fn send_chunk(&mut self) -> io::Result<()> {
        let len = self.buf.len() - HEAD_ROOM;
        if len == 0 {
            return Ok(());
        }
        let head = format!("{len:x}\r\n");
        let start = HEAD_ROOM - head.len();
        self.buf[start..HEAD_ROOM].copy_from_slice(head.as_bytes());
        self.buf.extend_from_slice(b"\r\n");
        let result = self.inner.write_all(&self.buf[start..]);
        self.buf.truncate(HEAD_ROOM);
        result
    }
}

impl<W: Write> Write for ChunkedWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = HEAD_ROOM + CHUNK - self.buf.len();
        let take = data.len().min(room);
        self.buf.extend_from_slice(&data[..take]);
        if self.buf.len() == HEAD_ROOM + CHUNK {
            self.send_chunk()?;
        }
        Ok(take)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_chunk()?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for ChunkedWriter<W> {
    fn drop(&mut self) {
        if self.send_chunk().is_ok() {
            let _ = self.inner.write_all(b"0\r\n\r\n");
            let _ = self.inner.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(parts: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut writer = ChunkedWriter::new(&mut out);
            for part in parts {
                writer.write_all(part).unwrap();
                writer.flush().unwrap();
            }
        }
        out
    }

    #[test]
    fn chunked_round_trip() {
        let big = vec![7u8; CHUNK * 2 + 5];
        let encoded = encode(&[b"hello ", b"world", &big]);
        let mut decoded = Vec::new();
        ChunkedReader::new(&encoded[..])
            .read_to_end(&mut decoded)
            .unwrap();
        let mut expected = b"hello world".to_vec();
        expected.extend_from_slice(&big);
        assert_eq!(decoded, expected);
    }

    #[test]
    fn chunked_reader_refuses_bad_framing() {
        for bad in [
            &b"zz\r\nab\r\n0\r\n\r\n"[..],
            b"5\r\nab",
            b"2\r\nabcd\r\n0\r\n\r\n",
            b"ffffffffffffffffff\r\n",
        ] {
            let mut out = Vec::new();
            assert!(ChunkedReader::new(bad).read_to_end(&mut out).is_err());
        }
    }
}
