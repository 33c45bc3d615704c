//! Protocol v0 and v1 (`gitprotocol-pack`): the advertisement with capabilities on the first
//! ref, wants with capabilities, the shallow exchange, and multi_ack negotiation.

use super::{agent, push_bounded, Line, MultiAck, Protocol, Request, Session, MAX_LINES};
use crate::negotiate::{Have, Negotiator};
use crate::request_error::RequestError;
use crate::ServeError;
use sluice_object::{IdSet, ObjectId};
use sluice_wire::session_id::session_id;
use sluice_wire::sideband::{LARGE_PAYLOAD, SMALL_PAYLOAD};
use std::io::{Read, Write};

impl<R: Read, W: Write + Send + 'static> Session<'_, R, W> {
    fn capabilities_v0(&self) -> Result<String, ServeError> {
        let mut caps = String::from(
            "multi_ack thin-pack side-band side-band-64k ofs-delta shallow deepen-since \
             deepen-not deepen-relative no-progress include-tag multi_ack_detailed",
        );
        let any = self.bool_config("uploadpack.allowanysha1inwant")?;
        if any || self.bool_config("uploadpack.allowtipsha1inwant")? {
            caps.push_str(" allow-tip-sha1-in-want");
        }
        if any || self.bool_config("uploadpack.allowreachablesha1inwant")? {
            caps.push_str(" allow-reachable-sha1-in-want");
        }
        caps.push_str(" no-done");
        if let Some(target) = self.refs.head().and_then(|h| h.symref_target.as_deref()) {
            caps.push_str(&format!(" symref=HEAD:{target}"));
        }
        if self.allow_filter()? {
            caps.push_str(" filter");
        }
        if self.bool_config("transfer.advertisesid")? {
            caps.push_str(&format!(" session-id={}", session_id()));
        }
        caps.push_str(&format!(
            " object-format={} agent={}",
            self.hash().name(),
            agent()
        ));
        Ok(caps)
    }

    fn advertise_v0(&mut self) -> Result<(), ServeError> {
        if self.options.protocol == Protocol::V1 {
            self.send("version 1\n")?;
        }
        let caps = self.capabilities_v0()?;
        let mut lines = Vec::new();
        for (i, r) in self.refs.refs.iter().enumerate() {
            // A namespace's HEAD listed again among its refs goes out once here, as git's.
            if i > 0 && r.name == "HEAD" {
                continue;
            }
            if i == 0 {
                lines.push(format!("{} {}\0{caps}\n", r.id, r.name));
            } else {
                lines.push(format!("{} {}\n", r.id, r.name));
            }
            if let Some(peeled) = r.peeled {
                lines.push(format!("{peeled} {}^{{}}\n", r.name));
            }
        }
        if lines.is_empty() {
            lines.push(format!(
                "{} capabilities^{{}}\0{caps}\n",
                self.hash().null_id()
            ));
        }
        let mut own_shallow: Vec<&ObjectId> = self.own_shallow.iter().collect();
        own_shallow.sort_unstable();
        lines.extend(own_shallow.iter().map(|id| format!("shallow {id}\n")));
        for line in lines {
            self.send(&line)?;
        }
        self.flush()
    }

    pub(super) fn serve_v0(&mut self) -> Result<(), ServeError> {
        // git reads its settings before it says anything.
        self.load_filters()?;
        if !self.options.stateless_rpc || self.options.advertise_refs {
            self.advertise_v0()?;
        }
        if self.options.advertise_refs {
            return Ok(());
        }
        let Some(mut request) = self.read_wants_v0()? else {
            return Ok(());
        };
        self.check_wants_v0(&request.wants)?;
        let shallow = self.shallow_v0(&mut request)?;
        let mut negotiator = Negotiator::new(self.repo.objects());
        if !self.negotiate_v0(&mut request, &mut negotiator)? {
            return Ok(());
        }
        request.haves = negotiator.common().to_vec();
        self.send_pack(&request, &shallow)
    }

    /// The `want` lines and what follows them up to the flush; `None` when the client only
    /// wanted the advertisement.
    fn read_wants_v0(&mut self) -> Result<Option<Request>, ServeError> {
        let mut request = Request::default();
        let mut first = true;
        let mut said_anything = false;
        loop {
            let line = match self.read_line()? {
                // As git's: a client gone before saying anything, not even the flush that
                // ends a look at the refs, hung up.
                None if !said_anything => return Err(RequestError::HungUp.into()),
                None if request.wants.is_empty() => return Ok(None),
                None => return Err(RequestError::UnexpectedEndOfRequest.into()),
                Some(Line::Flush) => break,
                Some(Line::Text(text)) => text,
                Some(_) => return Err(RequestError::UnexpectedPacketInWants.into()),
            };
            said_anything = true;
            if let Some(rest) = line.strip_prefix("want ") {
                let (hex, caps) = rest.split_once(' ').unwrap_or((rest, ""));
                if first {
                    self.parse_capabilities_v0(caps, &mut request)?;
                    first = false;
                }
                let id = self.parse_id(hex, "wanted")?;
                push_bounded(&mut request.wants, id)?;
            } else if !self.parse_deepen_line(&line, &mut request)? {
                return Err(RequestError::ExpectedObjectId {
                    line: line.to_owned(),
                }
                .into());
            }
        }
        Ok((!request.wants.is_empty()).then_some(request))
    }

    fn parse_capabilities_v0(&self, caps: &str, request: &mut Request) -> Result<(), ServeError> {
        for cap in caps.split(' ').filter(|c| !c.is_empty()) {
            match cap {
                "multi_ack" if request.multi_ack == MultiAck::None => {
                    request.multi_ack = MultiAck::Plain
                }
                "multi_ack_detailed" => request.multi_ack = MultiAck::Detailed,
                "no-done" => request.no_done = true,
                "thin-pack" => request.thin = true,
                "ofs-delta" => request.ofs_delta = true,
                "no-progress" => request.no_progress = true,
                "include-tag" => request.include_tag = true,
                "side-band-64k" => request.side_band = Some(LARGE_PAYLOAD),
                "side-band" if request.side_band.is_none() => {
                    request.side_band = Some(SMALL_PAYLOAD)
                }
                "deepen-relative" => request.deepen_relative = true,
                _ => {}
            }
        }
        Ok(())
    }

    /// v0 serves only advertised tips unless configured otherwise; a stateless request (its
    /// advertisement came from another process, perhaps of an earlier state) may name anything
    /// reachable from them or from the tips an earlier state advertised.
    fn check_wants_v0(&self, wants: &[ObjectId]) -> Result<(), ServeError> {
        let mut tips: IdSet = self
            .refs
            .refs
            .iter()
            .flat_map(|r| std::iter::once(r.id).chain(r.peeled))
            .collect();
        let strays: Vec<ObjectId> = wants
            .iter()
            .filter(|w| !tips.contains(w))
            .copied()
            .collect();
        if strays.is_empty() {
            return Ok(());
        }
        if self.bool_config("uploadpack.allowanysha1inwant")? {
            return match strays
                .iter()
                .find(|id| !self.repo.objects().contains_or_rescan(id))
            {
                Some(id) => Err(ServeError::NotOurRef(*id)),
                None => Ok(()),
            };
        }
        let reachable_allowed = self.options.stateless_rpc
            || self.bool_config("uploadpack.allowreachablesha1inwant")?;
        if !reachable_allowed {
            if self.bool_config("uploadpack.allowtipsha1inwant")? {
                // Hidden refs are tips too.
                let all: IdSet = self
                    .repo
                    .refs()
                    .list()?
                    .into_iter()
                    .map(|(_, id)| id)
                    .collect();
                if let Some(id) = strays.iter().find(|id| !all.contains(id)) {
                    return Err(ServeError::NotOurRef(*id));
                }
                return Ok(());
            }
            return Err(ServeError::NotOurRef(strays[0]));
        }
        if self.options.stateless_rpc {
            let objects = self.repo.objects();
            let earlier = self.options.earlier_tips.iter();
            tips.extend(earlier.filter(|id| objects.contains_or_rescan(id)));
        }
        let strays: Vec<ObjectId> = strays.into_iter().filter(|w| !tips.contains(w)).collect();
        if strays.is_empty() {
            return Ok(());
        }
        self.check_reachable(&tips, &strays)
    }

    /// The v0 shallow exchange; returns the commits whose parents the pack leaves out.
    fn shallow_v0(&mut self, request: &mut Request) -> Result<IdSet, ServeError> {
        let (info, deepens) = self.shallow(request)?;
        if deepens {
            for id in &info.shallow {
                self.send(&format!("shallow {id}\n"))?;
            }
            for id in &info.unshallow {
                self.send(&format!("unshallow {id}\n"))?;
            }
            self.flush()?;
        }
        Ok(info.cut)
    }

    /// v0 negotiation; `false` when a stateless request ended before the client was done.
    fn negotiate_v0(
        &mut self,
        request: &mut Request,
        negotiator: &mut Negotiator<'_>,
    ) -> Result<bool, ServeError> {
        let mut got_common = false;
        let mut got_other = false;
        let mut sent_ready = false;
        let mut last_common: Option<ObjectId> = None;
        let mut haves_seen = 0usize;
        loop {
            let line = match self.read_line()? {
                None if self.options.stateless_rpc => return Ok(false),
                None => return Err(RequestError::EndOfHaves.into()),
                Some(line) => line,
            };
            match line {
                Line::Flush => {
                    if request.multi_ack == MultiAck::Detailed
                        && got_common
                        && !got_other
                        && negotiator.ok_to_give_up(&request.wants)?
                    {
                        sent_ready = true;
                        let last = last_common.expect("got_common implies an id");
                        self.send(&format!("ACK {last} ready\n"))?;
                    }
                    if negotiator.common().is_empty() || request.multi_ack != MultiAck::None {
                        self.send("NAK\n")?;
                    }
                    self.out.flush()?;
                    if request.no_done && sent_ready {
                        let last = last_common.expect("ready implies a common commit");
                        self.send(&format!("ACK {last}\n"))?;
                        return Ok(true);
                    }
                    if self.options.stateless_rpc {
                        return Ok(false);
                    }
                    got_common = false;
                    got_other = false;
                }
                Line::Text(text) if text.starts_with("have ") => {
                    haves_seen += 1;
                    if haves_seen > MAX_LINES {
                        return Err(RequestError::TooManyHaves.into());
                    }
                    let id = self.parse_id(&text[5..], "have")?;
                    match negotiator.have(&id)? {
                        Have::Unknown => {
                            got_other = true;
                            if request.multi_ack != MultiAck::None
                                && negotiator.ok_to_give_up(&request.wants)?
                            {
                                if request.multi_ack == MultiAck::Detailed {
                                    sent_ready = true;
                                    self.send(&format!("ACK {id} ready\n"))?;
                                } else {
                                    self.send(&format!("ACK {id} continue\n"))?;
                                }
                            }
                        }
                        Have::Common => {
                            got_common = true;
                            last_common = Some(id);
                            match request.multi_ack {
                                MultiAck::Detailed => self.send(&format!("ACK {id} common\n"))?,
                                MultiAck::Plain => self.send(&format!("ACK {id} continue\n"))?,
                                MultiAck::None if negotiator.common().len() == 1 => {
                                    self.send(&format!("ACK {id}\n"))?
                                }
                                MultiAck::None => {}
                            }
                        }
                    }
                }
                Line::Text(text) if text == "done" => {
                    match last_common {
                        Some(last) if !negotiator.common().is_empty() => {
                            if request.multi_ack != MultiAck::None {
                                self.send(&format!("ACK {last}\n"))?;
                            }
                        }
                        _ => self.send("NAK\n")?,
                    }
                    request.done = true;
                    return Ok(true);
                }
                Line::Text(text) => {
                    return Err(RequestError::ExpectedHaves {
                        got: text.to_owned(),
                    }
                    .into())
                }
                _ => return Err(RequestError::SpecialPacketInHaves.into()),
            }
        }
    }
}
