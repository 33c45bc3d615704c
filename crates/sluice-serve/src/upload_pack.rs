//! upload-pack: the conversation of `gitprotocol-pack` (v0, v1) and `gitprotocol-v2` with a
//! fetching client, over any byte stream: a pipe from `git clone --upload-pack`, ssh, git://
//! or one HTTP request (`--stateless-rpc`).

use crate::advertise::{list_refs, RefList};
use crate::negotiate::{Have, Negotiator};
use crate::pack_cache::{CacheKey, PackCache, Tee};
use crate::remote_progress::BandSink;
use crate::shallow::{shallow_info, Deepen, ShallowInfo};
use crate::{write_pack, PackOptions, PackStats, ServeError};
use sluice_object::progress::{Progress, ProgressSink, TextProgress};
use sluice_object::{IdSet, ObjectId, ObjectKind};
use sluice_odb::{walk_objects, ObjectFilter, Repository, WalkRequest};
use sluice_wire::pktline::{write_flush, write_packet, Packet, PktReader};
use sluice_wire::sideband::{Band, Sideband, LARGE_PAYLOAD, SMALL_PAYLOAD};
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

/// The protocol version the client asked for (`GIT_PROTOCOL`, the `Git-Protocol` header, the
/// extra parameters of a git:// request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// The original protocol.
    #[default]
    V0,
    /// v0 announced by a `version 1` line.
    V1,
    /// Protocol v2: commands `ls-refs` and `fetch`.
    V2,
}

impl Protocol {
    /// The version a `GIT_PROTOCOL` value asks for: colon-separated `key=value` pairs, the
    /// highest `version=` that this server speaks wins.
    pub fn from_git_protocol(value: &str) -> Protocol {
        value
            .split(':')
            .filter_map(|pair| pair.strip_prefix("version="))
            .fold(Protocol::V0, |best, v| match v {
                "2" => Protocol::V2,
                "1" if best == Protocol::V0 => Protocol::V1,
                _ => best,
            })
    }
}

/// How upload-pack runs.
#[derive(Debug, Clone, Default)]
pub struct UploadPackOptions {
    /// The protocol version asked for.
    pub protocol: Protocol,
    /// One request, one response (smart HTTP): no advertisement unless `advertise_refs`, and
    /// the request carries everything negotiated so far.
    pub stateless_rpc: bool,
    /// Only advertise (the `GET …/info/refs` of smart HTTP).
    pub advertise_refs: bool,
    /// Where generated packs are kept for identical requests; none by default.
    pub pack_cache: Option<Arc<PackCache>>,
}

/// The most `want`, `have` and `shallow` lines one request may carry.
const MAX_LINES: usize = 1 << 20;

/// The output, shared between the conversation and the progress thread.
struct SharedOut<W>(Arc<Mutex<W>>);

impl<W> Clone for SharedOut<W> {
    fn clone(&self) -> Self {
        SharedOut(Arc::clone(&self.0))
    }
}

impl<W: Write> Write for SharedOut<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).flush()
    }
}

/// Notes when the first pack byte is written, which ends the keepalives.
struct NoticeStart<'a, W: Write> {
    inner: W,
    started: &'a AtomicBool,
}

impl<W: Write> Write for NoticeStart<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.started.store(true, Ordering::Relaxed);
        self.inner.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A request line, owned.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Flush,
    Delimiter,
    ResponseEnd,
    Text(String),
}

struct Session<'a, R, W> {
    repo: &'a Repository,
    input: PktReader<R>,
    out: SharedOut<W>,
    options: UploadPackOptions,
    refs: RefList,
    /// Where the repository's own history is cut, when it is shallow: advertised in v0, told
    /// in v2's shallow-info, and never walked past.
    own_shallow: IdSet,
}

/// Serves one upload-pack conversation.
pub fn upload_pack<R: Read, W: Write + Send + 'static>(
    repo: &Repository,
    input: R,
    output: W,
    options: &UploadPackOptions,
) -> Result<(), ServeError> {
    let mut session = Session {
        repo,
        input: PktReader::new(input),
        out: SharedOut(Arc::new(Mutex::new(output))),
        options: options.clone(),
        refs: list_refs(repo)?,
        own_shallow: repo.shallow_commits()?.into_iter().collect(),
    };
    let result = match options.protocol {
        Protocol::V2 => session.serve_v2(),
        Protocol::V0 | Protocol::V1 => session.serve_v0(),
    };
    // git's clients print an ERR packet as "remote error: …"; a broken pipe gets nothing.
    let told = match &result {
        Err(ServeError::Protocol(message) | ServeError::Corrupt(message)) => Some(message.clone()),
        Err(e @ (ServeError::NotOurRef(_) | ServeError::PktLine(_))) => Some(e.to_string()),
        _ => None,
    };
    if let Some(message) = told {
        let _ = write_packet(&mut session.out, format!("ERR {message}\n").as_bytes());
    }
    result
}

/// What the client asked for in its capabilities and arguments.
#[derive(Debug, Default)]
struct Request {
    wants: Vec<ObjectId>,
    haves: Vec<ObjectId>,
    client_shallow: Vec<ObjectId>,
    depth: Option<u32>,
    deepen_since: Option<i64>,
    deepen_not: Vec<String>,
    deepen_relative: bool,
    filter: ObjectFilter,
    thin: bool,
    ofs_delta: bool,
    no_progress: bool,
    include_tag: bool,
    side_band: Option<usize>,
    multi_ack: MultiAck,
    no_done: bool,
    done: bool,
    wait_for_done: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum MultiAck {
    #[default]
    None,
    Plain,
    Detailed,
}

impl<R: Read, W: Write + Send + 'static> Session<'_, R, W> {
    fn hash(&self) -> sluice_object::HashKind {
        self.repo.hash()
    }

    fn read_line(&mut self) -> Result<Option<Line>, ServeError> {
        Ok(match self.input.read()? {
            None => None,
            Some(Packet::Flush) => Some(Line::Flush),
            Some(Packet::Delimiter) => Some(Line::Delimiter),
            Some(Packet::ResponseEnd) => Some(Line::ResponseEnd),
            Some(Packet::Data(data)) => {
                let data = data.strip_suffix(b"\n").unwrap_or(data);
                let text = std::str::from_utf8(data).map_err(|_| {
                    ServeError::Protocol("protocol error: line is not UTF-8".into())
                })?;
                Some(Line::Text(text.to_owned()))
            }
        })
    }

    fn send(&mut self, line: &str) -> Result<(), ServeError> {
        write_packet(&mut self.out, line.as_bytes())?;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ServeError> {
        write_flush(&mut self.out)?;
        self.out.flush()?;
        Ok(())
    }

    fn parse_id(&self, hex: &str, what: &str) -> Result<ObjectId, ServeError> {
        ObjectId::from_hex(self.hash(), hex.as_bytes()).map_err(|_| {
            ServeError::Protocol(format!(
                "protocol error: expected {what} object id, got '{hex}'"
            ))
        })
    }

    fn bool_config(&self, key: &str) -> Result<bool, ServeError> {
        Ok(self.repo.config().get_bool(key)?.unwrap_or(false))
    }

    fn allow_filter(&self) -> Result<bool, ServeError> {
        self.bool_config("uploadpack.allowfilter")
    }

    // ---- protocol v0 / v1 ----

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

    fn serve_v0(&mut self) -> Result<(), ServeError> {
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
        loop {
            let line = match self.read_line()? {
                None if request.wants.is_empty() => return Ok(None),
                None => {
                    return Err(ServeError::Protocol(
                        "protocol error: unexpected end of request".into(),
                    ))
                }
                Some(Line::Flush) => break,
                Some(Line::Text(text)) => text,
                Some(_) => {
                    return Err(ServeError::Protocol(
                        "protocol error: unexpected packet in want list".into(),
                    ))
                }
            };
            if let Some(rest) = line.strip_prefix("want ") {
                let (hex, caps) = rest.split_once(' ').unwrap_or((rest, ""));
                if first {
                    self.parse_capabilities_v0(caps, &mut request)?;
                    first = false;
                }
                let id = self.parse_id(hex, "wanted")?;
                push_bounded(&mut request.wants, id)?;
            } else if !self.parse_deepen_line(&line, &mut request)? {
                return Err(ServeError::Protocol(format!(
                    "git upload-pack: protocol error, expected to get object ID, not '{line}'"
                )));
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

    /// `shallow`, `deepen*` and `filter` lines, shared by v0 and v2.
    fn parse_deepen_line(&self, line: &str, request: &mut Request) -> Result<bool, ServeError> {
        if let Some(hex) = line.strip_prefix("shallow ") {
            let id = self.parse_id(hex, "shallow")?;
            push_bounded(&mut request.client_shallow, id)?;
        } else if let Some(n) = line.strip_prefix("deepen ") {
            let depth: u32 = n
                .parse()
                .map_err(|_| ServeError::Protocol(format!("invalid deepen: {n}")))?;
            if depth == 0 {
                return Err(ServeError::Protocol(format!("invalid deepen: {n}")));
            }
            request.depth = Some(depth);
        } else if let Some(t) = line.strip_prefix("deepen-since ") {
            let since = t
                .parse()
                .map_err(|_| ServeError::Protocol(format!("invalid deepen-since: {line}")))?;
            request.deepen_since = Some(since);
        } else if let Some(name) = line.strip_prefix("deepen-not ") {
            if request.deepen_not.len() >= 1024 {
                return Err(ServeError::Protocol("too many deepen-not lines".into()));
            }
            request.deepen_not.push(name.to_owned());
        } else if line == "deepen-relative" {
            request.deepen_relative = true;
        } else if let Some(spec) = line.strip_prefix("filter ") {
            if !self.allow_filter()? {
                return Err(ServeError::Protocol(
                    "unexpected line: 'filter' (filtering is not allowed)".into(),
                ));
            }
            request.filter = ObjectFilter::parse(spec)
                .ok_or_else(|| ServeError::Protocol(format!("invalid filter-spec '{spec}'")))?;
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// v0 serves only advertised tips unless configured otherwise; a stateless request (its
    /// advertisement came from another process) may name anything reachable from them.
    fn check_wants_v0(&self, wants: &[ObjectId]) -> Result<(), ServeError> {
        let tips: IdSet = self
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
            return match strays.iter().find(|id| !self.repo.objects().contains(id)) {
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
        self.check_reachable(&tips, &strays)
    }

    /// Fails unless every one of `strays` is reachable from `tips`.
    fn check_reachable(&self, tips: &IdSet, strays: &[ObjectId]) -> Result<(), ServeError> {
        for id in strays {
            if !self.repo.objects().contains(id) {
                return Err(ServeError::NotOurRef(*id));
            }
        }
        let tips: Vec<ObjectId> = tips.iter().copied().collect();
        let walked = walk_objects(
            self.repo.objects(),
            &WalkRequest {
                wants: &tips,
                haves: &[],
                shallow: &self.own_shallow,
                filter: ObjectFilter::None,
            },
            &sluice_object::progress::Discard,
        )?;
        let reachable: IdSet = walked.objects.iter().map(|o| o.id).collect();
        match strays.iter().find(|id| !reachable.contains(id)) {
            Some(id) => Err(ServeError::NotOurRef(*id)),
            None => Ok(()),
        }
    }

    /// The boundary a request's shallow and deepen lines ask for; the parents of unshallowed
    /// commits join the wants.
    fn shallow(&self, request: &mut Request) -> Result<(ShallowInfo, bool), ServeError> {
        let mut not = Vec::new();
        for name in &request.deepen_not {
            let full = [
                name.clone(),
                format!("refs/{name}"),
                format!("refs/tags/{name}"),
                format!("refs/heads/{name}"),
            ];
            let found = full
                .iter()
                .find_map(|n| self.refs.refs.iter().find(|r| &r.name == n));
            let r = found.ok_or_else(|| {
                ServeError::Protocol(format!("git upload-pack: ambiguous deepen-not: {name}"))
            })?;
            not.push(r.peeled.unwrap_or(r.id));
        }
        let deepen = Deepen {
            wants: &request.wants,
            client_shallow: &request.client_shallow,
            own_shallow: &self.own_shallow,
            depth: request.depth,
            relative: request.deepen_relative,
            since: request.deepen_since,
            not: &not,
        };
        let deepens = deepen.deepens();
        let info = shallow_info(self.repo, &deepen)?;
        request.wants.extend(info.extra_wants.iter().copied());
        Ok((info, deepens))
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
                None => {
                    return Err(ServeError::Protocol(
                        "git upload-pack: expected SHA1 list, got end of stream".into(),
                    ))
                }
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
                        return Err(ServeError::Protocol("too many have lines".into()));
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
                    return Err(ServeError::Protocol(format!(
                        "git upload-pack: expected SHA1 list, got '{text}'"
                    )))
                }
                _ => {
                    return Err(ServeError::Protocol(
                        "git upload-pack: expected SHA1 list, got a special packet".into(),
                    ))
                }
            }
        }
    }

    // ---- protocol v2 ----

    fn advertise_v2(&mut self) -> Result<(), ServeError> {
        let mut fetch = String::from("fetch=shallow wait-for-done");
        if self.allow_filter()? {
            fetch.push_str(" filter");
        }
        if self.bool_config("uploadpack.allowrefinwant")? {
            fetch.push_str(" ref-in-want");
        }
        let lines = [
            "version 2\n".to_owned(),
            format!("agent={}\n", agent()),
            "ls-refs=unborn\n".to_owned(),
            format!("{fetch}\n"),
            "server-option\n".to_owned(),
            format!("object-format={}\n", self.hash().name()),
        ];
        for line in lines {
            self.send(&line)?;
        }
        self.flush()
    }

    fn serve_v2(&mut self) -> Result<(), ServeError> {
        if !self.options.stateless_rpc || self.options.advertise_refs {
            self.advertise_v2()?;
        }
        if self.options.advertise_refs {
            return Ok(());
        }
        loop {
            let command = match self.read_line()? {
                None | Some(Line::Flush) => return Ok(()),
                Some(Line::Text(text)) => match text.strip_prefix("command=") {
                    Some(command) => command.to_owned(),
                    None => {
                        return Err(ServeError::Protocol(format!(
                            "expected command=<cmd>, got '{text}'"
                        )))
                    }
                },
                Some(_) => return Err(ServeError::Protocol("expected a command".into())),
            };
            // Capabilities up to the delimiter (or the flush that ends an argument-less request).
            let mut has_args = false;
            loop {
                match self.read_line()? {
                    Some(Line::Delimiter) => {
                        has_args = true;
                        break;
                    }
                    Some(Line::Flush) => break,
                    Some(Line::Text(cap)) => {
                        if let Some(format) = cap.strip_prefix("object-format=") {
                            if format != self.hash().name() {
                                return Err(ServeError::Protocol(format!(
                                    "mismatched object format: server {}; client {format}",
                                    self.hash().name()
                                )));
                            }
                        }
                    }
                    _ => return Err(ServeError::Protocol("unexpected end of command".into())),
                }
            }
            let mut args = Vec::new();
            if has_args {
                loop {
                    match self.read_line()? {
                        Some(Line::Flush) => break,
                        Some(Line::Text(arg)) => {
                            if args.len() >= MAX_LINES {
                                return Err(ServeError::Protocol("too many arguments".into()));
                            }
                            args.push(arg)
                        }
                        _ => {
                            return Err(ServeError::Protocol(
                                "unexpected packet in command arguments".into(),
                            ))
                        }
                    }
                }
            }
            match command.as_str() {
                "ls-refs" => self.ls_refs(&args)?,
                "fetch" => self.fetch_v2(&args)?,
                other => return Err(ServeError::Protocol(format!("invalid command '{other}'"))),
            }
            if self.options.stateless_rpc {
                return Ok(());
            }
        }
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
                "unborn" => unborn = true,
                _ => {
                    if let Some(prefix) = arg.strip_prefix("ref-prefix ") {
                        prefixes.push(prefix.to_owned());
                    } else {
                        return Err(ServeError::Protocol(format!("unexpected line: '{arg}'")));
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
                if !self.repo.objects().contains(&id) {
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
                    .ok_or_else(|| ServeError::Protocol(format!("unknown ref {name}")))?;
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
                            return Err(ServeError::Protocol(format!("unexpected line: '{arg}'")));
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

    /// Counts, writes and sends the pack, then the final flush.
    fn send_pack(&mut self, request: &Request, shallow: &IdSet) -> Result<(), ServeError> {
        let Some(max_payload) = request.side_band else {
            // No side band: the pack is the rest of the stream.
            let out = self.out.clone();
            self.generate_cached(request, shallow, out, &sluice_object::progress::Discard)?;
            self.out.flush()?;
            return Ok(());
        };
        let band = Arc::new(Sideband::new(self.out.clone(), max_payload));
        let sink: Option<Box<dyn ProgressSink>> = (!request.no_progress)
            .then(|| Box::new(BandSink(Arc::clone(&band))) as Box<dyn ProgressSink>);
        let progress = TextProgress::new(sink);
        let keepalive = self.keepalive_interval()?;
        let started = AtomicBool::new(false);
        let (stop, stopped) = mpsc::channel::<()>();
        let result = std::thread::scope(|scope| {
            if let Some(interval) = keepalive {
                let (band, started) = (&band, &started);
                // Counting and the delta search can be long and silent: git's clients (and
                // proxies) give up on a connection that says nothing.
                scope.spawn(move || {
                    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(interval)
                    {
                        if started.load(Ordering::Relaxed) || band.keepalive().is_err() {
                            break;
                        }
                    }
                });
            }
            let mut data = NoticeStart {
                inner: band.data(),
                started: &started,
            };
            let result = self.generate_cached(request, shallow, &mut data, &progress);
            let result = result.and_then(|stats| {
                data.flush()?;
                Ok(stats)
            });
            drop(stop);
            result
        });
        drop(progress);
        match result {
            Ok(stats) => {
                if !request.no_progress {
                    band.send(
                        Band::Progress,
                        format!(
                            "Total {} (delta {}), reused {} (delta {}), pack-reused {}\n",
                            stats.total,
                            stats.deltas,
                            stats.reused,
                            stats.reused_deltas,
                            stats.pack_reused
                        )
                        .as_bytes(),
                    )?;
                }
                self.flush()
            }
            Err(error) => {
                let _ = band.send(Band::Error, format!("{error}\n").as_bytes());
                Err(error)
            }
        }
    }

    fn generate<O: Write>(
        &self,
        request: &Request,
        shallow: &IdSet,
        out: O,
        progress: &dyn Progress,
    ) -> Result<PackStats, ServeError> {
        let odb = self.repo.objects();
        let mut walked = walk_objects(
            odb,
            &WalkRequest {
                wants: &request.wants,
                haves: &request.haves,
                shallow,
                filter: request.filter,
            },
            progress,
        )?;
        if request.include_tag {
            let sent: IdSet = walked.objects.iter().map(|o| o.id).collect();
            for r in &self.refs.refs {
                let (Some(target), true) = (r.peeled, r.name.starts_with("refs/tags/")) else {
                    continue;
                };
                if sent.contains(&target) && !sent.contains(&r.id) {
                    walked.objects.push(sluice_odb::WalkedObject {
                        id: r.id,
                        kind: ObjectKind::Tag,
                        name_hash: 0,
                        previous: None,
                    });
                }
            }
        }
        let options = PackOptions {
            thin: request.thin,
            ofs_delta: request.ofs_delta,
            compression: self.compression()?,
        };
        let (_, stats) = write_pack(odb, &walked, &options, out, progress)?;
        Ok(stats)
    }

    /// The identity of the pack `request` gets, for the pack cache.
    fn cache_key(&self, request: &Request, shallow: &IdSet) -> CacheKey {
        let mut key = CacheKey::new();
        key.add(self.repo.git_dir().as_os_str().as_encoded_bytes());
        for id in &request.wants {
            key.add(id.as_bytes());
        }
        key.add(b"haves");
        for id in &request.haves {
            key.add(id.as_bytes());
        }
        key.add(b"shallow");
        let mut shallow: Vec<&ObjectId> = shallow.iter().collect();
        shallow.sort_unstable();
        for id in shallow {
            key.add(id.as_bytes());
        }
        key.add(format!("{:?}", request.filter).as_bytes());
        key.add(&[
            u8::from(request.thin),
            u8::from(request.ofs_delta),
            u8::from(request.include_tag),
        ]);
        if request.include_tag {
            for r in &self.refs.refs {
                key.add(r.name.as_bytes()).add(r.id.as_bytes());
            }
        }
        key
    }

    /// The pack for `request`, from the pack cache when it has it.
    fn generate_cached<O: Write>(
        &self,
        request: &Request,
        shallow: &IdSet,
        mut out: O,
        progress: &dyn Progress,
    ) -> Result<PackStats, ServeError> {
        let Some(cache) = self.options.pack_cache.clone() else {
            return self.generate(request, shallow, out, progress);
        };
        let mut writer = match cache.lookup(self.cache_key(request, shallow), &mut out)? {
            Ok(stats) => return Ok(stats),
            Err(writer) => writer,
        };
        let tee = Tee {
            out,
            cache: &mut writer,
        };
        let stats = self.generate(request, shallow, tee, progress)?;
        writer.commit(&stats);
        Ok(stats)
    }

    /// `uploadpack.keepAlive`: seconds of silence before an empty packet; 0 turns it off.
    fn keepalive_interval(&self) -> Result<Option<std::time::Duration>, ServeError> {
        let seconds = self
            .repo
            .config()
            .get_int("uploadpack.keepalive")?
            .unwrap_or(5);
        Ok((seconds > 0).then(|| std::time::Duration::from_secs(seconds as u64)))
    }

    fn compression(&self) -> Result<u32, ServeError> {
        Ok(PackOptions::compression_of(self.repo.config())?)
    }
}

fn push_bounded(list: &mut Vec<ObjectId>, id: ObjectId) -> Result<(), ServeError> {
    if list.len() >= MAX_LINES {
        return Err(ServeError::Protocol(
            "too many object ids in one request".into(),
        ));
    }
    list.push(id);
    Ok(())
}

fn write_packet_delim(out: &mut dyn Write) -> Result<(), ServeError> {
    out.write_all(b"0001")?;
    Ok(())
}

/// What a server calls itself in `agent=`.
fn agent() -> String {
    format!("sluice/{}", env!("CARGO_PKG_VERSION"))
}
