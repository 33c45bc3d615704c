//! The receiving half of the side band (`gitprotocol-pack`, "side-band"): band 1 is handed on
//! as a plain byte stream, band 2 (progress) goes to a callback, band 3 is the remote's fatal
//! error. The stream ends at a flush packet, and the callback is then called once with nothing,
//! so that a last line the server did not end is shown where the band ends, as git shows it
//! (an empty band-2 packet is passed over, never handed on).

use crate::pktline::{Packet, PktLineError, PktReader};
use std::io::{self, Read};

/// Band-1 data of a side-band stream, as a reader.
pub struct Demux<R, F> {
    packets: PktReader<R>,
    progress: F,
    pending: Vec<u8>,
    taken: usize,
    done: bool,
}

impl<R, F> std::fmt::Debug for Demux<R, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Demux").field("done", &self.done).finish()
    }
}

impl<R: Read, F: FnMut(&[u8])> Demux<R, F> {
    /// Reads side-band packets from `packets`, passing band 2 to `progress` (and, at the end,
    /// an empty slice).
    pub fn new(packets: PktReader<R>, progress: F) -> Self {
        Demux {
            packets,
            progress,
            pending: Vec::new(),
            taken: 0,
            done: false,
        }
    }
}

fn broken(error: PktLineError) -> io::Error {
    match error {
        PktLineError::Io(e) => e,
        other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
    }
}

impl<R: Read, F: FnMut(&[u8])> Read for Demux<R, F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.taken == self.pending.len() {
            if self.done {
                return Ok(0);
            }
            match self.packets.read().map_err(broken)? {
                None => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the remote hung up before the end of the side band",
                    ))
                }
                Some(Packet::Flush) => {
                    self.done = true;
                    (self.progress)(&[]);
                }
                Some(Packet::Data(data)) => match data.split_first() {
                    Some((1, rest)) => {
                        self.pending.clear();
                        self.pending.extend_from_slice(rest);
                        self.taken = 0;
                    }
                    Some((2, [])) => {}
                    Some((2, rest)) => (self.progress)(rest),
                    Some((3, rest)) => {
                        let message = String::from_utf8_lossy(rest);
                        return Err(io::Error::other(format!(
                            "remote error: {}",
                            message.trim_end()
                        )));
                    }
                    _ => {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "side-band packet with no valid band",
                        ))
                    }
                },
                Some(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "unexpected packet in the side band",
                    ))
                }
            }
        }
        let n = buf.len().min(self.pending.len() - self.taken);
        buf[..n].copy_from_slice(&self.pending[self.taken..self.taken + n]);
        self.taken += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pktline::{write_flush, write_packet};

    #[test]
    fn bands_are_separated_and_errors_end_the_stream() {
        let mut wire = Vec::new();
        write_packet(&mut wire, b"\x01PACK").unwrap();
        write_packet(&mut wire, b"\x02Counting objects\r").unwrap();
        write_packet(&mut wire, b"\x01data").unwrap();
        write_flush(&mut wire).unwrap();
        let mut progress = Vec::new();
        let mut out = Vec::new();
        Demux::new(PktReader::new(&wire[..]), |p: &[u8]| {
            progress.extend_from_slice(p)
        })
        .read_to_end(&mut out)
        .unwrap();
        assert_eq!(out, b"PACKdata");
        assert_eq!(progress, b"Counting objects\r");

        let mut wire = Vec::new();
        write_packet(&mut wire, b"\x03upload-pack: not our ref").unwrap();
        let error = Demux::new(PktReader::new(&wire[..]), |_: &[u8]| {})
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        assert!(error.to_string().contains("not our ref"));
        let truncated = b"0009\x01PA";
        assert!(Demux::new(PktReader::new(&truncated[..]), |_: &[u8]| {})
            .read_to_end(&mut Vec::new())
            .is_err());
    }
}
