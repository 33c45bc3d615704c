//! Protocol v0/v1 fetches (`gitprotocol-pack`), for servers that do not speak v2: the refs
//! came with the advertisement, so a fetch sends its wants (capabilities on the first), the
//! shallow lines and a flush, then negotiates in rounds as git's default negotiator does:
//! haves newest first, 16 in the first round and more in each next, each round ending in a
//! flush that the server answers with `ACK <id> common|continue|ready` lines and a `NAK`;
//! then `done`, answered by one unmarked `ACK` or `NAK` before the pack. Over a stateless link
//! (smart HTTP) every round is a request of its own that repeats the wants and the haves the
//! server acknowledged, and every answer repeats the shallow list.

use crate::connection::{next_line, parse_id, write_line};
use crate::protocol_error::{Got, ProtocolError};
use crate::rounds::Rounds;
use crate::{Connection, FetchError, FetchRequest, Fetched, Negotiator, RemoteRef};
use sluice_object::ObjectId;
use sluice_wire::demux::Demux;
use sluice_wire::pktline::{write_flush, Packet, PktReader};
use sluice_wire::session_id::session_id;

/// How the server acknowledges haves, by the capability the request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MultiAck {
    /// `multi_ack_detailed`: `ACK <id> common` and `ACK <id> ready`.
    Detailed,
    /// `multi_ack`: `ACK <id> continue`.
    Plain,
}

/// What one round's answer said.
#[derive(Debug, Default)]
struct RoundAnswer {
    /// Haves acknowledged for the first time.
    new_common: usize,
    ready: bool,
}

impl Connection {
    pub(crate) fn ls_refs_v0(&self, prefixes: &[&str]) -> Vec<RemoteRef> {
        self.advertised
            .iter()
            .filter(|r| prefixes.is_empty() || prefixes.iter().any(|p| r.name.starts_with(p)))
            .cloned()
            .collect()
    }

    /// Whether a v0 server takes a want for `id`: the tip of a ref it advertised, or any object
    /// when it offers `allow-tip-sha1-in-want` or `allow-reachable-sha1-in-want` (git's
    /// client asks no more of it; what the server then refuses, it says).
    pub(crate) fn takes_want_v0(&self, id: &ObjectId) -> bool {
        self.has_capability("allow-tip-sha1-in-want")
            || self.has_capability("allow-reachable-sha1-in-want")
            || self.advertised.iter().any(|r| r.id == *id)
    }

    /// The capabilities of the first want line, by what the server offers.
    fn v0_capabilities(
        &self,
        request: &FetchRequest,
        multi_ack: Option<MultiAck>,
        thin: bool,
    ) -> Result<Vec<String>, FetchError> {
        let band = ["side-band-64k", "side-band"]
            .into_iter()
            .find(|c| self.has_capability(c));
        let multi_ack = multi_ack.map(|m| match m {
            MultiAck::Detailed => "multi_ack_detailed",
            MultiAck::Plain => "multi_ack",
        });
        let mut capabilities: Vec<String> = band
            .into_iter()
            .chain(multi_ack)
            .map(str::to_owned)
            .collect();
        for (wanted, name) in [
            (true, "ofs-delta"),
            (thin, "thin-pack"),
            (!request.progress, "no-progress"),
            (request.include_tag, "include-tag"),
        ] {
            if wanted && self.has_capability(name) {
                capabilities.push(name.to_owned());
            }
        }
        let deepen = &request.deepen;
        if deepen.is_set() || !request.shallow.is_empty() {
            if !self.has_capability("shallow") {
                return Err(FetchError::Unsupported(
                    "Server does not support shallow clients",
                ));
            }
            capabilities.push("shallow".to_owned());
            if deepen.since.is_some() {
                if !self.has_capability("deepen-since") {
                    return Err(FetchError::Unsupported(
                        "Server does not support --shallow-since",
                    ));
                }
                capabilities.push("deepen-since".to_owned());
            }
            if !deepen.not.is_empty() {
                if !self.has_capability("deepen-not") {
                    return Err(FetchError::Unsupported(
                        "Server does not support --shallow-exclude",
                    ));
                }
                capabilities.push("deepen-not".to_owned());
            }
            if deepen.relative {
                capabilities.push("deepen-relative".to_owned());
            }
        }
        if request.filter.is_some() && self.has_capability("filter") {
            capabilities.push("filter".to_owned());
        }
        if self.has_capability("agent") {
            capabilities.push(format!("agent={}", crate::agent()));
        }
        if self.advertise_sid && self.has_capability("session-id") {
            capabilities.push(format!("session-id={}", session_id()));
        }
        Ok(capabilities)
    }

    /// The wants, shallow lines, deepen and filter lines and their flush: the whole of a
    /// stateful fetch's first words, and the start of every stateless request.
    fn v0_request_head(&self, request: &FetchRequest, capabilities: &[String]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, id) in request.wants.iter().enumerate() {
            if i == 0 {
                write_line(&mut out, &format!("want {id} {}", capabilities.join(" ")));
            } else {
                write_line(&mut out, &format!("want {id}"));
            }
        }
        for id in &request.shallow {
            write_line(&mut out, &format!("shallow {id}"));
        }
        let deepen = &request.deepen;
        if let Some(depth) = deepen.depth {
            write_line(&mut out, &format!("deepen {depth}"));
        }
        if let Some(since) = deepen.since {
            write_line(&mut out, &format!("deepen-since {since}"));
        }
        for not in &deepen.not {
            write_line(&mut out, &format!("deepen-not {not}"));
        }
        if let (Some(filter), true) = (&request.filter, self.has_capability("filter")) {
            write_line(&mut out, &format!("filter {filter}"));
        }
        let _ = write_flush(&mut out);
        out
    }

    /// The shallow list a deepening request is answered with first, into `fetched`.
    fn read_v0_shallow_list(&mut self, fetched: &mut Fetched<'_>) -> Result<(), FetchError> {
        loop {
            match next_line(&mut self.input, "the shallow list")? {
                Ok(text) => {
                    if !fetched.record_boundary(&text)? {
                        return Err(ProtocolError::Expected {
                            expected: "shallow/unshallow",
                            got: Got::Line(text),
                        }
                        .into());
                    }
                }
                Err(Packet::Flush) => return Ok(()),
                Err(_) => {
                    return Err(ProtocolError::UnexpectedPacket {
                        place: "the shallow list",
                    }
                    .into())
                }
            }
        }
    }

    /// One round's acknowledgements, up to the `NAK` that ends them.
    fn read_v0_round(
        &mut self,
        negotiator: &mut dyn Negotiator,
        common: &mut Vec<ObjectId>,
    ) -> Result<RoundAnswer, FetchError> {
        let mut answer = RoundAnswer::default();
        loop {
            let text = match next_line(&mut self.input, "the acknowledgments")? {
                Ok(text) => text,
                Err(_) => {
                    return Err(ProtocolError::Expected {
                        expected: "ACK/NAK",
                        got: Got::Flush,
                    }
                    .into())
                }
            };
            if text == "NAK" {
                return Ok(answer);
            }
            let acked = text
                .strip_prefix("ACK ")
                .and_then(|rest| rest.split_once(' '));
            let Some((hex, status)) = acked else {
                return Err(ProtocolError::Expected {
                    expected: "ACK <id> common|continue|ready or NAK",
                    got: Got::Line(text),
                }
                .into());
            };
            if !matches!(status, "common" | "continue" | "ready") {
                return Err(ProtocolError::UnknownAcknowledgment { line: text }.into());
            }
            let id = parse_id(hex)?;
            answer.ready |= status == "ready";
            negotiator.acknowledged(&id);
            if !common.contains(&id) {
                common.push(id);
                answer.new_common += 1;
            }
        }
    }

    pub(crate) fn fetch_v0<'a, F: FnMut(&[u8]) + 'a>(
        &'a mut self,
        request: &FetchRequest,
        negotiator: &mut dyn Negotiator,
        progress: F,
    ) -> Result<Fetched<'a>, FetchError> {
        // Without multi_ack a server ACKs each common have with no way to tell the last, so
        // haves go only to servers that end every round with a NAK.
        let multi_ack = if self.has_capability("multi_ack_detailed") {
            Some(MultiAck::Detailed)
        } else if self.has_capability("multi_ack") {
            Some(MultiAck::Plain)
        } else {
            None
        };
        let stateless = self.stateless();
        let mut rounds = Rounds::new(stateless);
        let mut haves = match multi_ack {
            Some(_) => negotiator.next_haves(rounds.size()),
            None => Vec::new(),
        };
        let capabilities = self.v0_capabilities(request, multi_ack, !haves.is_empty())?;
        let head = self.v0_request_head(request, &capabilities);
        let mut fetched = Fetched::empty();
        // The boundary comes back only when the history is cut (not for shallow lines alone).
        let deepen = request.deepen.is_set();
        if !deepen {
            fetched.remote_shallow = self.advertised_shallow.clone();
        }
        let mut common: Vec<ObjectId> = Vec::new();
        let mut first = true;
        loop {
            let give_up = haves.is_empty() || rounds.in_vain(!common.is_empty());
            let mut out = if first || stateless {
                head.clone()
            } else {
                Vec::new()
            };
            if stateless {
                for id in &common {
                    write_line(&mut out, &format!("have {id}"));
                }
            }
            for id in &haves {
                write_line(&mut out, &format!("have {id}"));
            }
            if give_up {
                write_line(&mut out, "done");
            } else {
                let _ = write_flush(&mut out);
            }
            self.send(&out)?;
            // A stateful server sends the shallow list once, a stateless one in every answer.
            if deepen && (first || stateless) {
                let mut list = Fetched::empty();
                let into = if first { &mut fetched } else { &mut list };
                self.read_v0_shallow_list(into)?;
            }
            first = false;
            if give_up {
                break;
            }
            let answer = self.read_v0_round(negotiator, &mut common)?;
            rounds.answered(haves.len(), answer.new_common);
            if answer.ready {
                haves.clear();
                continue;
            }
            haves = negotiator.next_haves(rounds.size());
        }
        // `ACK <id> common` lines for haves sent with `done`, then one `ACK <id>` or `NAK`.
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
                        return Err(ProtocolError::Expected {
                            expected: "ACK/NAK",
                            got: Got::Line(text),
                        }
                        .into())
                    }
                },
                Err(_) => {
                    return Err(ProtocolError::Expected {
                        expected: "ACK/NAK",
                        got: Got::Flush,
                    }
                    .into())
                }
            }
        }
        // Refused where git refuses it, once the server has read all it will read: a server
        // left waiting for a request would complain of the hang-up.
        if request.reject_shallow_remote && !fetched.remote_shallow.is_empty() {
            return Err(FetchError::ShallowRemote);
        }
        fetched.pack = match capabilities.iter().any(|c| c.starts_with("side-band")) {
            true => Box::new(Demux::new(PktReader::new(self.input.get_mut()), progress)),
            false => Box::new(self.input.get_mut()),
        };
        Ok(fetched)
    }
}
