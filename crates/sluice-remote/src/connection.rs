//! A session with upload-pack (or receive-pack): the link, the version the server speaks and
//! what it advertised on connecting (its capabilities, and in protocol v0 its refs too).

use crate::protocol_error::ProtocolError;
use crate::transport::{self, ConnectOptions, Link, Producer, ProtocolVersion, Response};
use crate::{FetchError, RemoteRef, RemoteUrl};
use sluice_object::cancel::Cancel;
use sluice_object::{HashKind, ObjectId};
use sluice_wire::pktline::{Packet, PktReader};

/// A session with an upload-pack.
pub struct Connection {
    link: Box<dyn Link>,
    pub(crate) input: PktReader<Response>,
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: Vec<String>,
    /// Protocol v0 advertises every ref on connecting.
    pub(crate) advertised: Vec<RemoteRef>,
    /// The branch an empty remote's HEAD names, when the server told.
    pub(crate) unborn_head: Option<String>,
    /// Where a shallow server's history is cut, as protocol v0 advertises after the refs.
    pub(crate) advertised_shallow: Vec<ObjectId>,
    /// `.have` lines: tips of the repositories a receive-pack's repository borrows from.
    pub(crate) advertised_haves: Vec<ObjectId>,
    /// `-o` / `--server-option`: sent with every protocol v2 command.
    pub(crate) server_options: Vec<String>,
    /// `transfer.advertiseSID`: name this session to a server that names its own.
    pub(crate) advertise_sid: bool,
    /// Checked before every read from the server.
    cancel: Cancel,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("version", &self.version)
            .field("capabilities", &self.capabilities)
            .finish()
    }
}

pub(crate) use sluice_wire::pktline::write_line;

pub(crate) fn text_line(line: &[u8]) -> Result<&str, FetchError> {
    std::str::from_utf8(line)
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
        .map_err(|_| FetchError::from(ProtocolError::NotUtf8))
}

pub(crate) fn parse_id(hex: &str) -> Result<ObjectId, FetchError> {
    ObjectId::from_hex(HashKind::Sha1, hex.as_bytes()).map_err(|_| {
        FetchError::from(ProtocolError::BadObjectId {
            hex: hex.to_owned(),
        })
    })
}

/// A ref name from the server, refused unless git would accept it.
pub(crate) fn checked_name(name: &str) -> Result<&str, FetchError> {
    if sluice_object::ref_name::is_valid_ref_name(name)
        && (name == "HEAD" || name.starts_with("refs/"))
    {
        Ok(name)
    } else {
        Err(ProtocolError::BadRefName {
            name: name.to_owned(),
        }
        .into())
    }
}

/// One data line of a section, or `None` at its end (flush, delimiter or response end, which
/// is returned). An `ERR` line is the server's error.
pub(crate) fn next_line(
    input: &mut PktReader<Response>,
    what: &'static str,
) -> Result<Result<String, Packet<'static>>, FetchError> {
    match input.read()? {
        Some(Packet::Data(line)) => {
            let line = text_line(line)?;
            if let Some(message) = line.strip_prefix("ERR ") {
                return Err(FetchError::Remote(message.to_owned()));
            }
            Ok(Ok(line.to_owned()))
        }
        Some(Packet::Flush) => Ok(Err(Packet::Flush)),
        Some(Packet::Delimiter) => Ok(Err(Packet::Delimiter)),
        Some(Packet::ResponseEnd) => Ok(Err(Packet::ResponseEnd)),
        None => Err(FetchError::HungUp { place: what }),
    }
}

impl Connection {
    /// Connects to the repository at `url` and reads what the server advertises.
    pub fn open(url: &RemoteUrl, options: &ConnectOptions) -> Result<Connection, FetchError> {
        let (link, response) = transport::open(url, options)?;
        let mut connection = Connection {
            link,
            input: PktReader::new(Box::new(options.cancel.reader(response))),
            version: ProtocolVersion::V0,
            capabilities: Vec::new(),
            advertised: Vec::new(),
            unborn_head: None,
            advertised_shallow: Vec::new(),
            advertised_haves: Vec::new(),
            server_options: options.server_options.clone(),
            advertise_sid: options.advertise_sid,
            cancel: options.cancel.clone(),
        };
        connection.read_advertisement()?;
        Ok(connection)
    }

    /// The version the server answered in.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// Whether the link is stateless (smart HTTP).
    pub fn stateless(&self) -> bool {
        self.link.stateless()
    }

    /// The server's first words: in v2 `version 2` and its capabilities; in v0 its refs, the
    /// first carrying the capabilities after a NUL. Smart HTTP puts `# service=…` and a flush
    /// before either.
    fn read_advertisement(&mut self) -> Result<(), FetchError> {
        let mut first = match next_line(&mut self.input, "the advertisement") {
            // Nothing at all, or no packet: git's words for a server that said nothing.
            Err(FetchError::Protocol(_) | FetchError::HungUp { .. }) => {
                return Err(FetchError::NoContact)
            }
            other => other?,
        };
        if first.as_ref().is_ok_and(|l| l.starts_with("# service=")) {
            match next_line(&mut self.input, "the advertisement")? {
                Err(Packet::Flush) => {}
                _ => return Err(ProtocolError::NoFlushAfterService.into()),
            }
            first = next_line(&mut self.input, "the advertisement")?;
        }
        match first {
            Ok(line) if line == "version 2" => {
                self.version = ProtocolVersion::V2;
                loop {
                    match next_line(&mut self.input, "the capability advertisement")? {
                        Ok(capability) => self.capabilities.push(capability),
                        Err(Packet::Flush) => return Ok(()),
                        Err(_) => {
                            return Err(ProtocolError::UnexpectedPacket {
                                place: "the capability advertisement",
                            }
                            .into())
                        }
                    }
                }
            }
            Ok(line) if line == "version 1" => {
                let next = next_line(&mut self.input, "the ref advertisement")?;
                self.read_v0_refs(next)
            }
            other => self.read_v0_refs(other),
        }
    }

    /// Protocol v0's ref list: `<id> <name>`, the first with `\0<capabilities>`, `^{}` lines
    /// peeling the tag before; an empty repository sends `capabilities^{}` with the null id.
    fn read_v0_refs(
        &mut self,
        mut line: Result<String, Packet<'static>>,
    ) -> Result<(), FetchError> {
        let mut first = true;
        loop {
            let text = match line {
                Ok(text) => text,
                Err(Packet::Flush) => break,
                Err(_) => {
                    return Err(ProtocolError::UnexpectedPacket {
                        place: "the ref advertisement",
                    }
                    .into())
                }
            };
            let text = if first {
                first = false;
                match text.split_once('\0') {
                    Some((refline, capabilities)) => {
                        self.capabilities = capabilities
                            .split(' ')
                            .filter(|c| !c.is_empty())
                            .map(str::to_owned)
                            .collect();
                        refline.to_owned()
                    }
                    None => text,
                }
            } else {
                text
            };
            // A shallow server lists its boundary after the refs, and nothing follows.
            if let Some(hex) = text.strip_prefix("shallow ") {
                self.advertised_shallow.push(parse_id(hex)?);
                line = next_line(&mut self.input, "the ref advertisement")?;
                continue;
            }
            if !self.advertised_shallow.is_empty() {
                return Err(ProtocolError::AfterShallowList { line: text }.into());
            }
            let (hex, name) = text
                .split_once(' ')
                .ok_or_else(|| ProtocolError::BadRefLine { line: text.clone() })?;
            let id = parse_id(hex)?;
            if name == "capabilities^{}" {
                // The empty repository's placeholder.
            } else if name == ".have" {
                self.advertised_haves.push(id);
            } else if let Some(tag) = name.strip_suffix("^{}") {
                match self.advertised.last_mut() {
                    Some(last) if last.name == tag => last.peeled = Some(id),
                    _ => {
                        return Err(ProtocolError::PeeledOutOfPlace {
                            tag: tag.to_owned(),
                        }
                        .into())
                    }
                }
            } else {
                self.advertised.push(RemoteRef {
                    name: checked_name(name)?.to_owned(),
                    id,
                    symref_target: None,
                    peeled: None,
                });
            }
            line = next_line(&mut self.input, "the ref advertisement")?;
        }
        for capability in &self.capabilities {
            if let Some((from, to)) = capability
                .strip_prefix("symref=")
                .and_then(|s| s.split_once(':'))
            {
                let to = checked_name(to)?.to_owned();
                match self.advertised.iter_mut().find(|r| r.name == from) {
                    Some(remote) => remote.symref_target = Some(to),
                    None if from == "HEAD" => self.unborn_head = Some(to),
                    None => {}
                }
            }
        }
        Ok(())
    }

    /// The value the server gave a capability (`push-cert=<nonce>`), if it advertised it so.
    pub fn capability_value(&self, name: &str) -> Option<&str> {
        (self.capabilities.iter())
            .find_map(|c| c.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))
    }

    /// Whether the server advertised `name` (alone or as `name=…`; in v2, `fetch=name …`
    /// features count too).
    pub fn has_capability(&self, name: &str) -> bool {
        self.capabilities.iter().any(|c| {
            c == name
                || c.strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with('='))
        })
    }

    /// Whether the v2 `command` lists `feature` among its values (`fetch=shallow filter`).
    pub(crate) fn has_feature(&self, command: &str, feature: &str) -> bool {
        self.capabilities.iter().any(|c| {
            c.strip_prefix(command)
                .and_then(|rest| rest.strip_prefix('='))
                .is_some_and(|features| features.split(' ').any(|f| f == feature))
        })
    }

    /// Where the server moved the repository on connecting (an HTTP redirect), which git
    /// warns about: `warning: redirecting to <url>`.
    pub fn redirected_to(&self) -> Option<&str> {
        self.link.redirected_to()
    }

    /// Whether the server takes a `--filter`; a request's filter goes only to one that does,
    /// and git warns "filtering not recognized by server, ignoring" for the others.
    pub fn filters(&self) -> bool {
        match self.version {
            ProtocolVersion::V2 => self.has_feature("fetch", "filter"),
            _ => self.has_capability("filter"),
        }
    }

    /// The server's bundle list (protocol v2's `bundle-uri`), as `bundle.*` keys and values;
    /// `None` when it offers none.
    pub fn bundle_list(&mut self) -> Result<Option<Vec<(String, String)>>, FetchError> {
        if self.version != ProtocolVersion::V2 || !self.has_capability("bundle-uri") {
            return Ok(None);
        }
        self.bundle_uri_v2().map(Some)
    }

    /// The branch an empty remote's HEAD points to, if it said (after `ls_refs`).
    pub fn unborn_head(&self) -> Option<&str> {
        self.unborn_head.as_deref()
    }

    /// Sends one whole request; on a stateless link its response becomes the input.
    pub(crate) fn send(&mut self, request: &[u8]) -> Result<(), FetchError> {
        let sent = self.link.send(request).map_err(|error| match error {
            // The server left before it read the request: it hung up, as git says it.
            FetchError::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe => {
                FetchError::HungUp {
                    place: "the request",
                }
            }
            error => error,
        });
        if let Some(response) = sent? {
            self.input = PktReader::new(Box::new(self.cancel.reader(response)));
        }
        Ok(())
    }

    /// What stops this connection's transfers: checked before every read from the server.
    pub fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    /// The refs a protocol v0 server (a receive-pack) advertised on connecting.
    pub fn advertised(&self) -> &[RemoteRef] {
        &self.advertised
    }

    /// The `.have` lines of the advertisement: tips of the repositories the server's
    /// repository borrows objects from, which a push need not send.
    pub fn advertised_haves(&self) -> &[ObjectId] {
        &self.advertised_haves
    }

    /// What the server sends, packet by packet.
    pub fn input(&mut self) -> &mut PktReader<Response> {
        &mut self.input
    }

    /// Takes what the server sends from here on, to read it as one stream (a side-band
    /// report); the connection reads nothing more.
    pub fn take_input(&mut self) -> PktReader<Response> {
        let empty: Response = Box::new(std::io::empty());
        std::mem::replace(&mut self.input, PktReader::new(empty))
    }

    /// Sends a request written as it is produced; on a stateless link its response becomes the
    /// input.
    pub fn send_streamed(&mut self, produce: Producer<'_>) -> Result<(), FetchError> {
        if let Some(response) = self.link.send_streamed(produce)? {
            self.input = PktReader::new(Box::new(self.cancel.reader(response)));
        }
        Ok(())
    }

    /// Ends a push's session, whose request said all there was to say; the server must exit
    /// cleanly.
    pub fn finish_push(self) -> Result<(), FetchError> {
        self.link.finish()
    }

    /// Gives the session up without a word, as git's client does where it dies: a v0 server
    /// finds the connection closed (git's receive-pack says the remote end hung up).
    pub fn abandon(self) -> Result<(), FetchError> {
        self.link.finish()
    }

    /// Ends the session: in v2 the client says nothing more; the server must exit cleanly.
    pub fn finish(mut self) -> Result<(), FetchError> {
        if self.version == ProtocolVersion::V0 && !self.link.stateless() {
            // A v0 server that was asked for nothing waits for a flush before it hangs up.
            let _ = self.link.send(b"0000");
        }
        self.link.finish()
    }
}
