//! Side-band multiplexing (`gitprotocol-pack`, "side-band, side-band-64k"): pack data on band
//! 1, progress on band 2, a fatal error on band 3, each packet prefixed by its band byte.
//!
//! Pack data is gathered until a packet is full, and each packet (length, band byte, payload)
//! leaves in one write: many small writes cost a system call each and, over a network, a
//! segment each (git mailing list, 2021, "large side-band writes").

use crate::pktline::MAX_PAYLOAD;
use std::io::{self, Write};
use std::sync::Mutex;

/// A band of the multiplexed stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Band {
    /// Pack data.
    Data = 1,
    /// Progress text for the user.
    Progress = 2,
    /// A fatal error message; the stream ends after it.
    Error = 3,
}

/// The largest band payload of `side-band` (packets of 1000 bytes).
pub const SMALL_PAYLOAD: usize = 999;
/// The largest band payload of `side-band-64k` and of protocol v2.
pub const LARGE_PAYLOAD: usize = MAX_PAYLOAD - 1;

/// The multiplexed output: any thread may send progress while one thread writes data.
#[derive(Debug)]
pub struct Sideband<W: Write> {
    out: Mutex<W>,
    max_payload: usize,
}

impl<W: Write> Sideband<W> {
    /// Multiplexes onto `out` with payloads of at most `max_payload` bytes
    /// ([`SMALL_PAYLOAD`] or [`LARGE_PAYLOAD`]).
    pub fn new(out: W, max_payload: usize) -> Self {
        Sideband {
            out: Mutex::new(out),
            max_payload: max_payload.min(LARGE_PAYLOAD),
        }
    }

    /// Sends `payload` on `band`, split into as many packets as it takes.
    pub fn send(&self, band: Band, payload: &[u8]) -> io::Result<()> {
        let mut packet = Vec::with_capacity(payload.len().min(self.max_payload) + 5);
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        for chunk in payload.chunks(self.max_payload) {
            packet.clear();
            packet.extend_from_slice(format!("{:04x}", chunk.len() + 5).as_bytes());
            packet.push(band as u8);
            packet.extend_from_slice(chunk);
            out.write_all(&packet)?;
        }
        out.flush()
    }

    /// An empty data packet: tells the client the server is alive while it counts.
    pub fn keepalive(&self) -> io::Result<()> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        out.write_all(b"0005\x01")?;
        out.flush()
    }

    /// A writer of band-1 data that fills whole packets.
    pub fn data(&self) -> DataWriter<'_, W> {
        let mut buf = Vec::with_capacity(self.max_payload + 5);
        buf.extend_from_slice(b"0000\x01");
        DataWriter { band: self, buf }
    }

    /// The underlying output.
    pub fn into_inner(self) -> W {
        self.out.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

/// Band-1 data, sent a full packet at a time; [`Write::flush`] sends what is gathered.
#[derive(Debug)]
pub struct DataWriter<'a, W: Write> {
    band: &'a Sideband<W>,
    /// Packet being filled: four length digits, the band byte, then payload.
    buf: Vec<u8>,
}

impl<W: Write> DataWriter<'_, W> {
    fn emit(&mut self) -> io::Result<()> {
        let payload = self.buf.len() - 5;
        if payload == 0 {
            return Ok(());
        }
        self.buf[..4].copy_from_slice(format!("{:04x}", payload + 5).as_bytes());
        {
            let mut out = self.band.out.lock().unwrap_or_else(|e| e.into_inner());
            out.write_all(&self.buf)?;
        }
        self.buf.truncate(5);
        Ok(())
    }
}

impl<W: Write> Write for DataWriter<'_, W> {
    fn write(&mut self, mut data: &[u8]) -> io::Result<usize> {
        let total = data.len();
        while !data.is_empty() {
            let room = self.band.max_payload + 5 - self.buf.len();
            let take = room.min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buf.len() == self.band.max_payload + 5 {
                self.emit()?;
            }
        }
        Ok(total)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.emit()?;
        let mut out = self.band.out.lock().unwrap_or_else(|e| e.into_inner());
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pktline::{Packet, PktReader};

    #[test]
    fn data_fills_whole_packets_and_keeps_order() {
        let band = Sideband::new(Vec::new(), LARGE_PAYLOAD);
        let payload: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        {
            let mut data = band.data();
            for piece in payload.chunks(777) {
                data.write_all(piece).unwrap();
            }
            data.flush().unwrap();
        }
        band.send(Band::Progress, b"done\n").unwrap();
        let bytes = band.into_inner();
        let mut reader = PktReader::new(&bytes[..]);
        let mut got = Vec::new();
        let mut sizes = Vec::new();
        while let Some(Packet::Data(p)) = reader.read().unwrap() {
            if p[0] == 1 {
                sizes.push(p.len() - 1);
                got.extend_from_slice(&p[1..]);
            }
        }
        assert_eq!(got, payload);
        assert!(sizes[..sizes.len() - 1].iter().all(|&s| s == 65515));
    }
}
