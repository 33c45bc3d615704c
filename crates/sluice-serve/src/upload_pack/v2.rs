//! Protocol v2 (`gitprotocol-v2`): the capability advertisement, the command loop, `ls-refs`
//! and `fetch` with its sections.

use super::{agent, push_bounded, Line, Request, Session, MAX_LINES};
use crate::negotiate::Negotiator;
use crate::request_error::RequestError;
use crate::ServeError;
use sluice_wire::session_id::session_id;
use sluice_wire::sideband::LARGE_PAYLOAD;
use std::io::{Read, Write};

impl<R: Read, W: Write + Send + 'static> Session<'_, R, W> {
    /// Sends each capability as it is worked out, as git does: a bad setting ends the
    /// advertisement where it is read (the client then finds no flush).
    fn advertise_v2(&mut self) -> Result<(), ServeError> {
        self.send("version 2\n")?;
        self.send(&format!("agent={}\n", agent()))?;
        let ls_refs = match self.unborn()? {
            Unborn::Advertise => "ls-refs=unborn\n",
            Unborn::Allow | Unborn::Ignore => "ls-refs\n",
        };
        self.send(ls_refs)?;
        let mut fetch = String::from("fetch=shallow wait-for-done");
        self.load_filters()?;
        if self.allow_filter()? {
            fetch.push_str(" filter");
        }
        if self.bool_config("uploadpack.allowrefinwant")? {
            fetch.push_str(" ref-in-want");
        }
        self.send(&format!("{fetch}\n"))?;
        if self.options.bundles.is_some() {
            self.send("bundle-uri\n")?;
        }
        self.send("server-option\n")?;
        self.send(&format!("object-format={}\n", self.hash().name()))?;
        if self.bool_config("transfer.advertisesid")? {
            self.send(&format!("session-id={}\n", session_id()))?;
        }
        self.flush()
    }

    pub(super) fn serve_v2(&mut self) -> Result<(), ServeError> {
        if !self.options.stateless_rpc || self.options.advertise_refs {
            self.advertise_v2()?;
        }
        if self.options.advertise_refs {
            return Ok(());
        }
        loop {
            let first = match self.read_line() {
                // Between requests, a stream that ends, even inside a packet's length, is
                // the end of the conversation, as git takes it.
                Ok(None | Some(Line::Flush)) | Err(ServeError::Request(RequestError::HungUp)) => {
                    return Ok(())
                }
                Err(error) => return Err(error),
                Ok(Some(line)) => line,
            };
            // The command and the capabilities, in any order (git's client names the command
            // last for bundle-uri), up to the delimiter or the flush that ends an
            // argument-less request.
            let mut command = None;
            let mut first_text = None;
            let mut has_args = false;
            let mut line = Some(first);
            loop {
                match line.take() {
                    Some(Line::Delimiter) => {
                        has_args = true;
                        break;
                    }
                    Some(Line::Flush) => break,
                    Some(Line::Text(text)) => {
                        first_text.get_or_insert_with(|| text.to_owned());
                        match text.strip_prefix("command=") {
                            Some(name) => command = Some(name.to_owned()),
                            None => self.check_capability(&text)?,
                        }
                    }
                    _ => return Err(RequestError::UnexpectedEndOfCommand.into()),
                }
                line = self.read_line()?;
            }
            let Some(command) = command else {
                return Err(match first_text {
                    Some(got) => RequestError::ExpectedCommand { got }.into(),
                    None => RequestError::NoCommand.into(),
                });
            };
            let mut args = Vec::new();
            if has_args {
                loop {
                    match self.read_line()? {
                        Some(Line::Flush) => break,
                        Some(Line::Text(arg)) => {
                            if args.len() >= MAX_LINES {
                                return Err(RequestError::TooManyArguments.into());
                            }
                            args.push(arg)
                        }
                        _ => return Err(RequestError::UnexpectedPacketInArguments.into()),
                    }
                }
            }
            match command.as_str() {
                "ls-refs" => self.ls_refs(&args)?,
                "fetch" => self.fetch_v2(&args)?,
                "bundle-uri" if self.options.bundles.is_some() => self.bundle_uri()?,
                other => {
                    return Err(RequestError::InvalidCommand {
                        name: other.to_owned(),
                    }
                    .into())
                }
            }
            if self.options.stateless_rpc {
                return Ok(());
            }
        }
    }

    /// `lsrefs.unborn`: whether ls-refs names a HEAD whose branch does not exist yet, and
    /// whether the capability says so.
    fn unborn(&self) -> Result<Unborn, ServeError> {
        match self.repo.config().get("lsrefs.unborn") {
            None | Some("advertise") => Ok(Unborn::Advertise),
            Some("allow") => Ok(Unborn::Allow),
            Some("ignore") => Ok(Unborn::Ignore),
            Some(value) => Err(ServeError::BadSetting {
                key: "lsrefs.unborn",
                value: value.to_owned(),
            }),
        }
    }

    /// A capability of the request: an object format other than the repository's is refused.
    fn check_capability(&self, capability: &str) -> Result<(), ServeError> {
        match capability.strip_prefix("object-format=") {
            Some(format) if format != self.hash().name() => Err(RequestError::ObjectFormat {
                server: self.hash().name(),
                client: format.to_owned(),
            }
            .into()),
            _ => Ok(()),
        }
    }

    /// `bundle-uri`: the bundle list, one `key=value` a line.
    fn bundle_uri(&mut self) -> Result<(), ServeError> {
        let list = self.options.bundles.clone().unwrap_or_default();
        if let Some(memory) = &self.options.memory {
            memory.metrics.bundle_list();
        }
        for (key, value) in list.iter() {
            self.send(&format!("{key}={value}\n"))?;
        }
        self.flush()
    }

    fn ls_refs(&mut self, args: &[String]) -> Result<(), ServeError> {
        let mut symrefs = false;
        let mut peel = false;
        let mut unborn = false;
        let mut prefixes = Vec::new();
        for arg in args {
            match arg.as_str() {
                "symrefs" => symrefs = true,
                "peel" => peel = true,
                "unborn" => unborn = self.unborn()? != Unborn::Ignore,
                _ => {
                    if let Some(prefix) = arg.strip_prefix("ref-prefix ") {
                        prefixes.push(prefix.to_owned());
                    } else {
                        return Err(RequestError::UnexpectedLine {
                            line: arg.to_owned(),
                        }
                        .into());
                    }
                }
            }
        }
        // git stops filtering when a client sends absurdly many prefixes.
        if prefixes.len() > 65536 {
            prefixes.clear();
        }
        let wanted = |name: &str| {
            prefixes.is_empty() || prefixes.iter().any(|p| name.starts_with(p.as_str()))
        };
        let mut lines = Vec::new();
        if let (Some(target), true) = (&self.refs.unborn_head, unborn) {
            if wanted("HEAD") {
                if symrefs {
                    lines.push(format!("unborn HEAD symref-target:{target}\n"));
                } else {
                    lines.push("unborn HEAD\n".to_owned());
                }
            }
        }
        for r in &self.refs.refs {
            if !wanted(&r.name) {
                continue;
            }
            let mut line = format!("{} {}", r.id, r.name);
            if let (true, Some(target)) = (symrefs, &r.symref_target) {
                line.push_str(&format!(" symref-target:{target}"));
            }
            if let (true, Some(peeled)) = (peel, r.peeled) {
                line.push_str(&format!(" peeled:{peeled}"));
            }
            line.push('\n');
            lines.push(line);
        }
        for line in lines {
            self.send(&line)?;
        }
        self.flush()
    }

    fn fetch_v2(&mut self, args: &[String]) -> Result<(), ServeError> {
        let mut request = Request {
            side_band: Some(LARGE_PAYLOAD),
            ..Request::default()
        };
        let mut wanted_refs = Vec::new();
        let allow_ref_in_want = self.bool_config("uploadpack.allowrefinwant")?;
        for arg in args {
            if let Some(hex) = arg.strip_prefix("want ") {
                let id = self.parse_id(hex, "wanted")?;
                if !self.repo.objects().contains_or_rescan(&id) {
                    return Err(ServeError::NotOurRef(id));
                }
                push_bounded(&mut request.wants, id)?;
            } else if let Some(hex) = arg.strip_prefix("have ") {
                let id = self.parse_id(hex, "have")?;
                push_bounded(&mut request.haves, id)?;
            } else if let (true, Some(name)) = (allow_ref_in_want, arg.strip_prefix("want-ref ")) {
                let r = self
                    .refs
                    .refs
                    .iter()
                    .find(|r| r.name == name)
                    .ok_or_else(|| {
                        ServeError::from(RequestError::UnknownRef {
                            name: name.to_owned(),
                        })
                    })?;
                wanted_refs.push((r.id, r.name.clone()));
                push_bounded(&mut request.wants, r.id)?;
            } else {
                match arg.as_str() {
                    "done" => request.done = true,
                    "thin-pack" => request.thin = true,
                    "ofs-delta" => request.ofs_delta = true,
                    "no-progress" => request.no_progress = true,
                    "include-tag" => request.include_tag = true,
                    "wait-for-done" => request.wait_for_done = true,
                    "sideband-all" => {}
                    _ => {
                        if !self.parse_deepen_line(arg, &mut request)? {
                            return Err(RequestError::UnexpectedLine {
                                line: arg.to_owned(),
                            }
                            .into());
                        }
                    }
                }
            }
        }
        let mut negotiator = Negotiator::new(self.repo.objects());
        for have in &request.haves {
            negotiator.have(have)?;
        }
        if !request.done {
            self.send("acknowledgments\n")?;
            if negotiator.common().is_empty() {
                self.send("NAK\n")?;
            }
            let common = negotiator.common().to_vec();
            for id in &common {
                self.send(&format!("ACK {id}\n"))?;
            }
            if !request.wait_for_done && negotiator.ok_to_give_up(&request.wants)? {
                self.send("ready\n")?;
                write_packet_delim(&mut self.out)?;
            } else {
                return self.flush();
            }
        }
        request.haves = negotiator.common().to_vec();
        let (info, deepens) = self.shallow(&mut request)?;
        if deepens || !request.client_shallow.is_empty() || !self.own_shallow.is_empty() {
            let mut lines = Vec::new();
            lines.extend(info.shallow.iter().map(|id| format!("shallow {id}\n")));
            lines.extend(info.unshallow.iter().map(|id| format!("unshallow {id}\n")));
            self.send("shallow-info\n")?;
            for line in lines {
                self.send(&line)?;
            }
            write_packet_delim(&mut self.out)?;
        }
        if !wanted_refs.is_empty() {
            self.send("wanted-refs\n")?;
            for (id, name) in wanted_refs {
                self.send(&format!("{id} {name}\n"))?;
            }
            write_packet_delim(&mut self.out)?;
        }
        self.send("packfile\n")?;
        self.send_pack(&request, &info.cut)
    }

    // ---- the pack ----
}

fn write_packet_delim(out: &mut dyn Write) -> Result<(), ServeError> {
    out.write_all(b"0001")?;
    Ok(())
}

/// What `lsrefs.unborn` allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unborn {
    /// Answered and advertised (git's default).
    Advertise,
    /// Answered when asked, not advertised.
    Allow,
    /// Never answered.
    Ignore,
}
