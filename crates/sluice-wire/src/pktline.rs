//! pkt-line framing: four hex digits of length (counting themselves), then the payload.
//! `0000` is a flush packet, `0001` a delimiter, `0002` a response end. A packet holds at most
//! 65516 bytes of payload; longer announced lengths are refused before anything is allocated.

use std::io::{self, Read, Write};

/// The largest payload of one packet.
pub const MAX_PAYLOAD: usize = 65516;

/// Why a packet could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PktLineError {
    /// The stream failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The length prefix is not four hex digits.
    #[error("protocol error: bad line length character: {}", String::from_utf8_lossy(.0).escape_debug())]
    BadLength([u8; 4]),
    /// The announced length is 3, or the payload (the length less 4, as git names it) is
    /// longer than a packet may carry.
    #[error("protocol error: bad line length {0}")]
    OutOfRange(usize),
    /// The stream ended inside a packet.
    #[error("unexpected end of stream inside a pkt-line")]
    Truncated,
}

/// One packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet<'a> {
    /// `0000`.
    Flush,
    /// `0001`.
    Delimiter,
    /// `0002`.
    ResponseEnd,
    /// A payload.
    Data(&'a [u8]),
}

/// Reads packets into a reused buffer.
#[derive(Debug)]
pub struct PktReader<R> {
    inner: R,
    buf: Vec<u8>,
}

impl<R: Read> PktReader<R> {
    /// Reads packets from `inner`.
    pub fn new(inner: R) -> Self {
        PktReader {
            inner,
            buf: Vec::with_capacity(MAX_PAYLOAD),
        }
    }

    /// The next packet; `None` at a clean end of stream.
    pub fn read(&mut self) -> Result<Option<Packet<'_>>, PktLineError> {
        let mut head = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            match self.inner.read(&mut head[got..]) {
                Ok(0) if got == 0 => return Ok(None),
                Ok(0) => return Err(PktLineError::Truncated),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        let text = std::str::from_utf8(&head).map_err(|_| PktLineError::BadLength(head))?;
        let len = usize::from_str_radix(text, 16).map_err(|_| PktLineError::BadLength(head))?;
        match len {
            0 => return Ok(Some(Packet::Flush)),
            1 => return Ok(Some(Packet::Delimiter)),
            2 => return Ok(Some(Packet::ResponseEnd)),
            3 => return Err(PktLineError::OutOfRange(len)),
            _ if len - 4 > MAX_PAYLOAD => return Err(PktLineError::OutOfRange(len - 4)),
            _ => {}
        }
        self.buf.resize(len - 4, 0);
        self.inner.read_exact(&mut self.buf).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                PktLineError::Truncated
            } else {
                e.into()
            }
        })?;
        Ok(Some(Packet::Data(&self.buf)))
    }

    /// The underlying reader.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }
}

/// Writes `payload` as one packet (header and payload in one write).
pub fn write_packet(out: &mut dyn Write, payload: &[u8]) -> io::Result<()> {
    if payload.len() > MAX_PAYLOAD {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "pkt-line payload too long",
        ));
    }
    let mut packet = Vec::with_capacity(payload.len() + 4);
    packet.extend_from_slice(format!("{:04x}", payload.len() + 4).as_bytes());
    packet.extend_from_slice(payload);
    out.write_all(&packet)
}

/// Appends `text` as one packet ending in a newline, as requests and commands are written in
/// every protocol. A line longer than a packet cannot come from valid arguments; the server
/// would refuse it, so it is not written.
pub fn write_line(out: &mut Vec<u8>, text: &str) {
    let _ = write_packet(out, format!("{text}\n").as_bytes());
}

/// Writes `data` as as many packets as it takes.
pub fn write_data(out: &mut dyn Write, data: &[u8]) -> io::Result<()> {
    for chunk in data.chunks(MAX_PAYLOAD) {
        write_packet(out, chunk)?;
    }
    Ok(())
}

/// Writes a delimiter packet (protocol v2: between a command and its arguments).
pub fn write_delimiter(out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"0001")
}

/// Writes a flush packet.
pub fn write_flush(out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"0000")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_limits() {
        let mut out = Vec::new();
        write_packet(&mut out, b"hello\n").unwrap();
        write_flush(&mut out).unwrap();
        write_data(&mut out, &vec![7u8; MAX_PAYLOAD + 1]).unwrap();
        assert_eq!(&out[..10], b"000ahello\n");
        let mut reader = PktReader::new(&out[..]);
        assert_eq!(reader.read().unwrap(), Some(Packet::Data(b"hello\n")));
        assert_eq!(reader.read().unwrap(), Some(Packet::Flush));
        assert_eq!(
            reader
                .read()
                .unwrap()
                .map(|p| matches!(p, Packet::Data(d) if d.len() == MAX_PAYLOAD)),
            Some(true)
        );
        assert_eq!(reader.read().unwrap(), Some(Packet::Data(&[7])));
        assert_eq!(reader.read().unwrap(), None);
        for bad in [&b"zzzz"[..], b"0003", b"fff0", b"0009abc"] {
            assert!(PktReader::new(bad).read().is_err(), "{bad:?}");
        }
    }
}
