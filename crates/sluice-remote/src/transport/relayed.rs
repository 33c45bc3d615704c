//! git's `--stateless-rpc`: another program holds the connection and relays the conversation
//! through this process's standard streams, as git's HTTP helper (remote-curl) does for the
//! `send-pack` it starts. The server's advertisement, then each of its answers, arrive on
//! standard input; each request leaves on standard output as pkt-lines whose payloads are its
//! bytes, ended by a flush (the relay's cue to send it, as one POST); a last flush says the
//! conversation is over.

use super::{Link, Producer, Response};
use crate::FetchError;
use sluice_wire::pktline::{write_flush, write_packet, MAX_PAYLOAD};
use std::io::Write;

/// The relay on standard input and output.
pub(crate) struct RelayedLink;

/// Opens the relayed link; its advertisement is the relay's first bytes on standard input.
pub(crate) fn open() -> (Box<dyn Link>, Response) {
    (Box::new(RelayedLink), Box::new(std::io::stdin()))
}

/// Wraps what is written into pkt-lines of the largest payload, on `out`.
struct Framed<W: Write> {
    out: W,
    pending: Vec<u8>,
}

impl<W: Write> Framed<W> {
    fn new(out: W) -> Self {
        Framed {
            out,
            pending: Vec::with_capacity(MAX_PAYLOAD),
        }
    }

    /// Frames what is left, then the flush that ends the request.
    fn finish(mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            write_packet(&mut self.out, &self.pending)?;
        }
        write_flush(&mut self.out)?;
        self.out.flush()
    }
}

impl<W: Write> Write for Framed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = buf.len().min(MAX_PAYLOAD - self.pending.len());
        self.pending.extend_from_slice(&buf[..n]);
        if self.pending.len() == MAX_PAYLOAD {
            write_packet(&mut self.out, &self.pending)?;
            self.pending.clear();
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Link for RelayedLink {
    fn send(&mut self, request: &[u8]) -> Result<Option<Response>, FetchError> {
        self.send_streamed(&mut |out: &mut dyn Write| out.write_all(request))
    }

    fn send_streamed(&mut self, produce: Producer<'_>) -> Result<Option<Response>, FetchError> {
        let mut framed = Framed::new(std::io::stdout().lock());
        produce(&mut framed)?;
        framed.finish()?;
        Ok(Some(Box::new(std::io::stdin())))
    }

    fn stateless(&self) -> bool {
        true
    }

    fn finish(self: Box<Self>) -> Result<(), FetchError> {
        let mut out = std::io::stdout().lock();
        write_flush(&mut out)?;
        out.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_wire::pktline::{Packet, PktReader};

    /// A request of any length comes out as packets whose payloads are its bytes, then a flush.
    #[test]
    fn requests_are_framed_whole() {
        for len in [
            0,
            1,
            MAX_PAYLOAD - 1,
            MAX_PAYLOAD,
            MAX_PAYLOAD + 1,
            3 * MAX_PAYLOAD + 7,
        ] {
            let request: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let mut wire = Vec::new();
            let mut framed = Framed::new(&mut wire);
            for piece in request.chunks(1000) {
                framed.write_all(piece).unwrap();
            }
            framed.finish().unwrap();
            let mut reader = PktReader::new(&wire[..]);
            let mut back = Vec::new();
            loop {
                match reader.read().unwrap() {
                    Some(Packet::Data(data)) => {
                        assert!(data.len() <= MAX_PAYLOAD);
                        back.extend_from_slice(data);
                    }
                    Some(Packet::Flush) => break,
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(back, request, "{len} bytes");
            assert_eq!(reader.read().unwrap(), None);
        }
    }
}
