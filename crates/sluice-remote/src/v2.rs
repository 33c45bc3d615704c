//! Protocol v2's `ls-refs` and `fetch` (`gitprotocol-v2`), from the client's side, with
//! negotiation in rounds as git's default negotiator runs it: haves newest first, 16 in the
//! first round and twice as many in each next, every round repeating what the server already
//! acknowledged (v2 servers keep no state between requests); `done` once the server says
//! `ready`, the haves run out, or 256 haves in a row after an acknowledgement found nothing.

use crate::connection::{checked_name, next_line, parse_id, write_line};
use crate::protocol_error::{Got, ProtocolError};
use crate::rounds::Rounds;
use crate::{Connection, FetchError, FetchRequest, Fetched, Negotiator, RemoteRef};
use sluice_object::ObjectId;
use sluice_wire::demux::Demux;
use sluice_wire::pktline::{write_delimiter, write_flush, Packet, PktReader};
use sluice_wire::session_id::session_id;

impl Connection {
    fn check_object_format(&self) -> Result<(), FetchError> {
        let other = self
            .capabilities
            .iter()
            .filter_map(|c| c.strip_prefix("object-format="))
            .find(|format| *format != "sha1");
        match other {
            Some(format) => Err(FetchError::UnsupportedObjectFormat {
                format: format.to_owned(),
            }),
            None => Ok(()),
        }
    }

    /// `command=<name>`, the capabilities it needs, then its arguments and a flush.
    fn command_v2(&mut self, name: &str, arguments: &[String]) -> Result<(), FetchError> {
        self.check_object_format()?;
        let mut request = Vec::new();
        write_line(&mut request, &format!("command={name}"));
        write_line(&mut request, &format!("agent={}", crate::agent()));
        if self.advertise_sid && self.has_capability("session-id") {
            write_line(&mut request, &format!("session-id={}", session_id()));
        }
        if !self.server_options.is_empty() && !self.has_capability("server-option") {
            return Err(FetchError::Unsupported(
                "server does not support feature 'server-option'",
            ));
        }
        for option in &self.server_options {
            write_line(&mut request, &format!("server-option={option}"));
        }
        if self.has_capability("object-format") {
            write_line(&mut request, "object-format=sha1");
        }
        let _ = write_delimiter(&mut request);
        for argument in arguments {
            write_line(&mut request, argument);
        }
        let _ = write_flush(&mut request);
        self.send(&request)
    }

    pub(crate) fn ls_refs_v2(&mut self, prefixes: &[&str]) -> Result<Vec<RemoteRef>, FetchError> {
        let mut arguments = vec!["peel".to_owned(), "symrefs".to_owned()];
        if self.has_feature("ls-refs", "unborn") {
            arguments.push("unborn".to_owned());
        }
        arguments.extend(prefixes.iter().map(|p| format!("ref-prefix {p}")));
        // A server gone before it read the command gave no listing either: said as git says
        // it when it reads none.
        match self.command_v2("ls-refs", &arguments) {
            Err(FetchError::HungUp { .. }) => return Err(FetchError::RefListUnterminated),
            sent => sent?,
        }
        let mut refs = Vec::new();
        loop {
            let line = match next_line(&mut self.input, "the ref list") {
                Ok(Ok(line)) => line,
                Ok(Err(Packet::Flush)) => return Ok(refs),
                // As git reads the listing to its flush, and says so of anything else there,
                // the connection's end too.
                Ok(Err(_)) | Err(FetchError::HungUp { .. }) => {
                    return Err(FetchError::RefListUnterminated)
                }
                Err(error) => return Err(error),
            };
            let mut fields = line.split(' ');
            let (Some(first), Some(name)) = (fields.next(), fields.next()) else {
                return Err(ProtocolError::BadRefLine { line }.into());
            };
            let name = checked_name(name)?.to_owned();
            let mut symref_target = None;
            let mut peeled = None;
            for attribute in fields {
                if let Some(target) = attribute.strip_prefix("symref-target:") {
                    symref_target = Some(checked_name(target)?.to_owned());
                } else if let Some(hex) = attribute.strip_prefix("peeled:") {
                    peeled = Some(parse_id(hex)?);
                }
            }
            if first == "unborn" {
                if name == "HEAD" {
                    self.unborn_head = symref_target;
                }
                continue;
            }
            refs.push(RemoteRef {
                name,
                id: parse_id(first)?,
                symref_target,
                peeled,
            });
        }
    }

    /// `bundle-uri`: the server's bundle list, its `key=value` lines as pairs (lines of
    /// another shape are skipped, as the protocol says clients should).
    pub(crate) fn bundle_uri_v2(&mut self) -> Result<Vec<(String, String)>, FetchError> {
        self.command_v2("bundle-uri", &[])?;
        let mut pairs = Vec::new();
        loop {
            match next_line(&mut self.input, "the bundle list")? {
                Ok(line) => {
                    if let Some((key, value)) = line.split_once('=') {
                        pairs.push((key.to_owned(), value.to_owned()));
                    }
                }
                Err(Packet::Flush) => return Ok(pairs),
                Err(_) => {
                    return Err(ProtocolError::UnexpectedPacket {
                        place: "the bundle list",
                    }
                    .into())
                }
            }
        }
    }

    /// The arguments every round of a fetch repeats: features, wants, shallow and filter.
    fn fetch_arguments(
        &self,
        request: &FetchRequest,
        thin: bool,
    ) -> Result<Vec<String>, FetchError> {
        let mut arguments = vec!["ofs-delta".to_owned()];
        if thin {
            arguments.push("thin-pack".to_owned());
        }
        if !request.progress {
            arguments.push("no-progress".to_owned());
        }
        if request.include_tag {
            arguments.push("include-tag".to_owned());
        }
        arguments.extend(request.wants.iter().map(|id| format!("want {id}")));
        let deepen = &request.deepen;
        if deepen.is_set() || !request.shallow.is_empty() {
            if !self.has_feature("fetch", "shallow") {
                return Err(FetchError::Unsupported(
                    "Server does not support shallow clients",
                ));
            }
            arguments.extend(request.shallow.iter().map(|id| format!("shallow {id}")));
            if let Some(depth) = deepen.depth {
                arguments.push(format!("deepen {depth}"));
                if deepen.relative {
                    arguments.push("deepen-relative".to_owned());
                }
            }
            if let Some(since) = deepen.since {
                arguments.push(format!("deepen-since {since}"));
            }
            arguments.extend(deepen.not.iter().map(|r| format!("deepen-not {r}")));
        }
        if let (Some(filter), true) = (&request.filter, self.filters()) {
            arguments.push(format!("filter {filter}"));
        }
        Ok(arguments)
    }

    /// `fetch --negotiate-only`: rounds of haves with `wait-for-done`, so that the server only
    /// acknowledges; returns what it acknowledged, in order. Nothing is fetched.
    pub(crate) fn negotiate_only_v2(
        &mut self,
        negotiator: &mut dyn Negotiator,
    ) -> Result<Vec<ObjectId>, FetchError> {
        if !self.has_feature("fetch", "wait-for-done") {
            return Err(FetchError::Unsupported(
                "server does not support wait-for-done",
            ));
        }
        let mut common: Vec<ObjectId> = Vec::new();
        let mut rounds = Rounds::new(true);
        loop {
            let haves = negotiator.next_haves(rounds.size());
            if haves.is_empty() || rounds.in_vain(!common.is_empty()) {
                return Ok(common);
            }
            let mut arguments = vec!["wait-for-done".to_owned()];
            arguments.extend(common.iter().chain(&haves).map(|id| format!("have {id}")));
            self.command_v2("fetch", &arguments)?;
            match next_line(&mut self.input, "the acknowledgments")? {
                Ok(line) if line == "acknowledgments" => {}
                other => {
                    let got = other.map_or(Got::Flush, Got::Line);
                    let expected = "'acknowledgments'";
                    return Err(ProtocolError::Expected { expected, got }.into());
                }
            }
            let mut new_common = 0;
            while let Ok(line) = next_line(&mut self.input, "the acknowledgments")? {
                let Some(hex) = line.strip_prefix("ACK ") else {
                    if line == "NAK" || line == "ready" {
                        continue;
                    }
                    return Err(ProtocolError::UnexpectedAcknowledgment { line }.into());
                };
                let id = parse_id(hex)?;
                negotiator.acknowledged(&id);
                if !common.contains(&id) {
                    common.push(id);
                    new_common += 1;
                }
            }
            rounds.answered(haves.len(), new_common);
        }
    }

    pub(crate) fn fetch_v2<'a, F: FnMut(&[u8]) + 'a>(
        &'a mut self,
        request: &FetchRequest,
        negotiator: &mut dyn Negotiator,
        progress: F,
    ) -> Result<Fetched<'a>, FetchError> {
        let mut common: Vec<ObjectId> = Vec::new();
        // v2 servers keep no state between requests.
        let mut rounds = Rounds::new(true);
        let mut thin = false;
        loop {
            let haves = negotiator.next_haves(rounds.size());
            thin |= !haves.is_empty();
            let give_up = haves.is_empty() || rounds.in_vain(!common.is_empty());
            let mut arguments = self.fetch_arguments(request, thin || !common.is_empty())?;
            arguments.extend(common.iter().chain(&haves).map(|id| format!("have {id}")));
            if give_up {
                arguments.push("done".to_owned());
                self.command_v2("fetch", &arguments)?;
                break;
            }
            self.command_v2("fetch", &arguments)?;
            let mut ready = false;
            let mut new_common = 0;
            match next_line(&mut self.input, "the acknowledgments")? {
                Ok(line) if line == "acknowledgments" => {}
                Ok(line) => {
                    return Err(ProtocolError::Expected {
                        expected: "'acknowledgments'",
                        got: Got::Line(line),
                    }
                    .into())
                }
                Err(_) => {
                    return Err(ProtocolError::Expected {
                        expected: "'acknowledgments'",
                        got: Got::Flush,
                    }
                    .into())
                }
            }
            let end = loop {
                match next_line(&mut self.input, "the acknowledgments")? {
                    Ok(line) if line == "NAK" => {}
                    Ok(line) if line == "ready" => ready = true,
                    Ok(line) => match line.strip_prefix("ACK ") {
                        Some(hex) => {
                            let id = parse_id(hex)?;
                            negotiator.acknowledged(&id);
                            if !common.contains(&id) {
                                common.push(id);
                                new_common += 1;
                            }
                        }
                        None => return Err(ProtocolError::UnexpectedAcknowledgment { line }.into()),
                    },
                    Err(end) => break end,
                }
            };
            match (ready, end) {
                (true, Packet::Delimiter) => break,
                (false, Packet::Flush) => {}
                _ => return Err(ProtocolError::AcknowledgmentsOutOfOrder.into()),
            }
            rounds.answered(haves.len(), new_common);
        }
        let mut fetched = Fetched::empty();
        // Sections before the pack: shallow-info and wanted-refs (not asked for), each
        // ending at a delimiter; then `packfile` runs to the final flush. shallow-info answers
        // a request that cut the history, or (any unshallow line aside) tells where a shallow
        // server's history is cut.
        loop {
            let header = match next_line(&mut self.input, "the fetch response")? {
                Ok(header) => header,
                Err(_) => return Err(ProtocolError::NoPackfile.into()),
            };
            match header.as_str() {
                "packfile" => break,
                "shallow-info" | "wanted-refs" | "packfile-uris" => loop {
                    match next_line(&mut self.input, "the fetch response")? {
                        Ok(line) => {
                            fetched.record_boundary(&line)?;
                        }
                        Err(Packet::Delimiter) => break,
                        Err(_) => return Err(ProtocolError::UnterminatedSection { header }.into()),
                    }
                },
                other => {
                    return Err(ProtocolError::UnknownSection {
                        name: other.to_owned(),
                    }
                    .into())
                }
            }
        }
        if !request.deepen.is_set() && fetched.unshallow.is_empty() {
            fetched.remote_shallow = std::mem::take(&mut fetched.shallow);
            if request.reject_shallow_remote && !fetched.remote_shallow.is_empty() {
                return Err(FetchError::ShallowRemote);
            }
        }
        fetched.pack = Box::new(Demux::new(PktReader::new(self.input.get_mut()), progress));
        Ok(fetched)
    }
}
