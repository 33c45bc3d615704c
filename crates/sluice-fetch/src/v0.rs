//! Protocol v0/v1 fetches (`gitprotocol-pack`), for servers that do not speak v2: the refs
//! came with the advertisement, so a fetch is one request (wants with capabilities, the
//! shallow lines, a flush, the haves and `done`) and one answer (the shallow boundary, the
//! acknowledgements ending in one unmarked `ACK` or `NAK`, the pack). One round only: up to 256 haves, newest first, which is enough for
//! any fetch whose common history is recent; the server sends more when it is not.

use crate::connection::{next_line, parse_id};
use crate::{Connection, FetchError, FetchRequest, Fetched, Negotiator, RemoteRef};
use sluice_wire::demux::Demux;
use sluice_wire::pktline::{write_flush, write_packet, Packet, PktReader};

/// Haves offered in the one round.
const HAVES: usize = 256;

impl Connection {
    pub(crate) fn ls_refs_v0(&self, prefixes: &[&str]) -> Vec<RemoteRef> {
        self.advertised
            .iter()
            .filter(|r| prefixes.is_empty() || prefixes.iter().any(|p| r.name.starts_with(p)))
            .cloned()
            .collect()
    }

    pub(crate) fn fetch_v0<'a, F: FnMut(&[u8]) + 'a>(
        &'a mut self,
        request: &FetchRequest,
        negotiator: &mut dyn Negotiator,
        progress: F,
    ) -> Result<Fetched<'a>, FetchError> {
        // Without multi_ack a server ACKs each common have with no way to tell the last, so
        // haves go only to servers that end their answer with one unmarked ACK or NAK.
        let multi_ack = ["multi_ack_detailed", "multi_ack"]
            .into_iter()
            .find(|c| self.has_capability(c));
        let haves = match multi_ack {
            Some(_) => negotiator.next_haves(HAVES),
            None => Vec::new(),
        };
        let band = if self.has_capability("side-band-64k") {
            Some("side-band-64k")
        } else if self.has_capability("side-band") {
            Some("side-band")
        } else {
            None
        };
        let mut capabilities: Vec<&str> = band.into_iter().chain(multi_ack).collect();
        for (wanted, name) in [
            (true, "ofs-delta"),
            (!haves.is_empty(), "thin-pack"),
            (!request.progress, "no-progress"),
            (request.include_tag, "include-tag"),
        ] {
            if wanted && self.has_capability(name) {
                capabilities.push(name);
            }
        }
        let deepen = &request.deepen;
        let shallow = deepen.is_set() || !request.shallow.is_empty();
        if shallow {
            if !self.has_capability("shallow") {
                return Err(FetchError::Unsupported(
                    "Server does not support shallow clients",
                ));
            }
            capabilities.push("shallow");
            if deepen.since.is_some() {
                if !self.has_capability("deepen-since") {
                    return Err(FetchError::Unsupported(
                        "Server does not support --shallow-since",
                    ));
                }
                capabilities.push("deepen-since");
            }
            if !deepen.not.is_empty() {
                if !self.has_capability("deepen-not") {
                    return Err(FetchError::Unsupported(
                        "Server does not support --shallow-exclude",
                    ));
                }
                capabilities.push("deepen-not");
            }
            if deepen.relative {
                capabilities.push("deepen-relative");
            }
        }
        let filter = match &request.filter {
            Some(filter) if self.has_capability("filter") => {
                capabilities.push("filter");
                Some(filter)
            }
            Some(_) => {
                eprintln!("warning: filtering not recognized by server, ignoring");
                None
            }
            None => None,
        };
        let agent = format!("agent=sluice/{}", env!("CARGO_PKG_VERSION"));
        if self.has_capability("agent") {
            capabilities.push(&agent);
        }
        let mut out = Vec::new();
        let mut line = |text: String| {
            let _ = write_packet(&mut out, format!("{text}\n").as_bytes());
        };
        for (i, id) in request.wants.iter().enumerate() {
            if i == 0 {
                line(format!("want {id} {}", capabilities.join(" ")));
            } else {
                line(format!("want {id}"));
            }
        }
        for id in &request.shallow {
            line(format!("shallow {id}"));
        }
        if let Some(depth) = deepen.depth {
            line(format!("deepen {depth}"));
        }
        if let Some(since) = deepen.since {
            line(format!("deepen-since {since}"));
        }
        for not in &deepen.not {
            line(format!("deepen-not {not}"));
        }
        if let Some(filter) = filter {
            line(format!("filter {filter}"));
        }
        let _ = write_flush(&mut out);
        for id in &haves {
            let _ = write_packet(&mut out, format!("have {id}\n").as_bytes());
        }
        let _ = write_packet(&mut out, b"done\n");
        self.send(&out)?;

        let mut fetched = Fetched::empty();
        // The boundary comes back only when the history is cut (not for shallow lines alone).
        if deepen.is_set() {
            loop {
                match next_line(&mut self.input, "the shallow list")? {
                    Ok(text) => {
                        if !fetched.record_boundary(&text)? {
                            return Err(FetchError::Protocol(format!(
                                "expected shallow/unshallow, got '{text}'"
                            )));
                        }
                    }
                    Err(Packet::Flush) => break,
                    Err(_) => {
                        return Err(FetchError::Protocol(
                            "unexpected packet in the shallow list".into(),
                        ))
                    }
                }
            }
        }
        // `ACK <id> common|continue|ready` lines as the haves are read, then one `ACK <id>` or
        // `NAK` for `done`.
        loop {
            match next_line(&mut self.input, "the acknowledgments")? {
                Ok(text) if text == "NAK" => break,
                Ok(text) => match text.strip_prefix("ACK ") {
                    Some(rest) => {
                        let id = parse_id(rest.split(' ').next().unwrap_or(rest))?;
                        negotiator.acknowledged(&id);
                        if !rest.contains(' ') {
                            break;
                        }
                    }
                    None => {
                        return Err(FetchError::Protocol(format!(
                            "expected ACK/NAK, got '{text}'"
                        )))
                    }
                },
                Err(_) => return Err(FetchError::Protocol("expected ACK/NAK, got a flush".into())),
            }
        }
        fetched.pack = match band {
            Some(_) => Box::new(Demux::new(PktReader::new(self.input.get_mut()), progress)),
            None => Box::new(self.input.get_mut()),
        };
        Ok(fetched)
    }
}
