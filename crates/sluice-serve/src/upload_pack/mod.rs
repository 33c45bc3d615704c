//! upload-pack: the conversation of `gitprotocol-pack` (v0, v1) and `gitprotocol-v2` with a
//! fetching client, over any byte stream: a pipe from `git clone --upload-pack`, ssh, git://
//! or one HTTP request (`--stateless-rpc`).

use crate::advertise::{list_refs, RefList};
use crate::filter_policy::FilterPolicy;
use crate::pack_cache::PackCache;
use crate::request_error::RequestError;
use crate::shallow::{shallow_info, Deepen, ShallowInfo};
use crate::ServeError;
use sluice_graph::{walk_objects, ObjectFilter, WalkRequest};
use sluice_object::{IdSet, ObjectId};
use sluice_repo::Repository;
use sluice_wire::pktline::{write_flush, write_packet, Packet, PktLineError, PktReader};
use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex};

mod pack_hook;
mod send;
mod v0;
mod v2;

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
    /// What a server remembers between its requests (the checksums of copied packs, what
    /// sets of tips reach); none by default.
    pub memory: Option<Arc<crate::ServerMemory>>,
    /// For a store's repository: its name and generation (`<name>@<generation>-<transaction>`),
    /// under which generated packs are shared with the other nodes; `None` for a directory.
    pub shared_as: Option<String>,
    /// The bundle list for protocol v2's `bundle-uri` command (`bundle.*` keys and values);
    /// `None`: the command is not advertised.
    pub bundles: Option<Arc<Vec<(String, String)>>>,
    /// Tips an earlier state of the repository advertised (a store's recent generations): a
    /// stateless request may want them, as its refs may have come from that state.
    pub earlier_tips: Arc<[ObjectId]>,
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
    /// The filters the settings grant, once read.
    filters: Option<FilterPolicy>,
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
        filters: None,
    };
    let result = match options.protocol {
        Protocol::V2 => session.serve_v2(),
        Protocol::V0 | Protocol::V1 => session.serve_v0(),
    };
    // git's clients print an ERR packet as "remote error: …"; a broken pipe gets nothing.
    let told = match &result {
        // Nobody is there to tell of a hang-up.
        Err(ServeError::Request(RequestError::HungUp)) => None,
        Err(
            e @ (ServeError::Request(_)
            | ServeError::BadTag { .. }
            | ServeError::BadCommit { .. }
            | ServeError::TagChain { .. }
            | ServeError::NotOurRef(_)),
        ) => Some(e.to_string()),
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
        let packet = self.input.read().map_err(|error| match error {
            // As git: a stream that ends inside a packet is a client that hung up.
            PktLineError::Truncated => ServeError::from(RequestError::HungUp),
            other => other.into(),
        })?;
        Ok(match packet {
            None => None,
            Some(Packet::Flush) => Some(Line::Flush),
            Some(Packet::Delimiter) => Some(Line::Delimiter),
            Some(Packet::ResponseEnd) => Some(Line::ResponseEnd),
            Some(Packet::Data(data)) => {
                let data = data.strip_suffix(b"\n").unwrap_or(data);
                let text = std::str::from_utf8(data)
                    .map_err(|_| ServeError::from(RequestError::LineNotUtf8))?;
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

    fn parse_id(&self, hex: &str, what: &'static str) -> Result<ObjectId, ServeError> {
        ObjectId::from_hex(self.hash(), hex.as_bytes()).map_err(|_| {
            ServeError::from(RequestError::BadObjectId {
                what,
                hex: hex.to_owned(),
            })
        })
    }

    fn bool_config(&self, key: &str) -> Result<bool, ServeError> {
        Ok(self.repo.config().get_bool(key)?.unwrap_or(false))
    }

    /// Reads the `uploadpackfilter.*` settings (once): where git reads them, so that a bad
    /// value ends the conversation at the same point.
    fn load_filters(&mut self) -> Result<&FilterPolicy, ServeError> {
        let policy = match self.filters.take() {
            Some(policy) => policy,
            None => FilterPolicy::from_config(self.repo.config())?,
        };
        Ok(self.filters.insert(policy))
    }

    fn allow_filter(&self) -> Result<bool, ServeError> {
        self.bool_config("uploadpack.allowfilter")
    }

    /// `shallow`, `deepen*` and `filter` lines, shared by v0 and v2.
    fn parse_deepen_line(&mut self, line: &str, request: &mut Request) -> Result<bool, ServeError> {
        if let Some(hex) = line.strip_prefix("shallow ") {
            let id = self.parse_id(hex, "shallow")?;
            push_bounded(&mut request.client_shallow, id)?;
        } else if let Some(n) = line.strip_prefix("deepen ") {
            let depth: u32 = n.parse().map_err(|_| {
                ServeError::from(RequestError::InvalidDeepen {
                    value: n.to_owned(),
                })
            })?;
            if depth == 0 {
                return Err(ServeError::from(RequestError::InvalidDeepen {
                    value: n.to_owned(),
                }));
            }
            request.depth = Some(depth);
        } else if let Some(t) = line.strip_prefix("deepen-since ") {
            let since = t.parse().map_err(|_| {
                ServeError::from(RequestError::InvalidDeepenSince {
                    line: line.to_owned(),
                })
            })?;
            request.deepen_since = Some(since);
        } else if let Some(name) = line.strip_prefix("deepen-not ") {
            if request.deepen_not.len() >= 1024 {
                return Err(RequestError::TooManyDeepenNot.into());
            }
            request.deepen_not.push(name.to_owned());
        } else if line == "deepen-relative" {
            request.deepen_relative = true;
        } else if let Some(spec) = line.strip_prefix("filter ") {
            if !self.allow_filter()? {
                return Err(RequestError::FilterNotAllowed.into());
            }
            request.filter = self.load_filters()?.judge(spec)?;
        } else {
            return Ok(false);
        }
        Ok(true)
    }
    /// Fails unless every one of `strays` is reachable from `tips`.
    fn check_reachable(&self, tips: &IdSet, strays: &[ObjectId]) -> Result<(), ServeError> {
        for id in strays {
            if !self.repo.objects().contains_or_rescan(id) {
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
                reach_memo: None,
                cores: sluice_graph::WalkCores::One,
                // A request runs to its end: a client that leaves fails the next write.
                missing: Default::default(),
                cancel: Default::default(),
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
                ServeError::from(RequestError::AmbiguousDeepenNot {
                    name: name.to_owned(),
                })
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
}

fn push_bounded(list: &mut Vec<ObjectId>, id: ObjectId) -> Result<(), ServeError> {
    if list.len() >= MAX_LINES {
        return Err(RequestError::TooManyIds.into());
    }
    list.push(id);
    Ok(())
}

/// What a server calls itself in `agent=`.
pub(crate) fn agent() -> String {
    sluice_wire::agent::user_agent(concat!("sluice/", env!("CARGO_PKG_VERSION")))
}
