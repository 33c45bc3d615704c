//! Talking to a remote repository's upload-pack and receive-pack: reaching it (local and ssh
//! processes, `git://`, smart HTTP with TLS and credentials), its URL, reading what it
//! advertises in protocol v2 or v0, listing refs, the rounds of a negotiation, and receiving
//! the pack as a byte stream. Everything the server sends is checked as it is read: ref names
//! are refused unless git would accept them, ids must parse, every section must come where the
//! protocol puts it, and a server that falls silent is given up on after the configured time.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod allowed;
mod connection;
mod depth;
mod protocol_error;
mod remote;
pub mod remote_colors;
mod request;
mod rewrite;
mod rounds;
mod transport;
mod url;
mod v0;
mod v2;

pub use allowed::{BadPolicy, Policy, ProtocolPolicy};
pub use connection::Connection;
pub use depth::{fetch_depth, parse_depth, DepthError, FetchDepth, INFINITE_DEPTH};
pub use protocol_error::{Got, ProtocolError};
pub use remote::Remote;
pub use request::{Deepen, FetchRequest, Fetched, Negotiator, NoHaves, RemoteRef};
pub use rewrite::{fetch_url, push_urls};
pub use transport::{
    download, server_options, stop_servers, ConnectOptions, HttpFailure, HttpSettings, IpVersion,
    Producer, ProtocolVersion, Response, Service, SettingsError, TlsTrust,
};
pub use url::{anonymized, RemoteUrl};

/// Why talking to the server failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// An `http.*` setting has a value git refuses (said when HTTP is spoken, as git's HTTP
    /// helper says it, and git then of the helper).
    #[error("{0}\nfatal: remote helper 'http' aborted session")]
    HttpSetting(std::sync::Arc<sluice_odb::ConfigError>),
    /// The repository's URL cannot be used.
    #[error("bad repository URL '{url}': {why}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        why: std::borrow::Cow<'static, str>,
    },
    /// A URL with a host and no path (`file://host`).
    #[error("no path specified; see 'git help pull' for valid url syntax")]
    NoPath,
    /// A local repository that is not there.
    #[error(
        "'{shown}' does not appear to be a git repository\n\
         fatal: Could not read from remote repository.\n\n\
         Please make sure you have the correct access rights\n\
         and the repository exists."
    )]
    NoRepository {
        /// The path as given.
        shown: String,
    },
    /// The remote could not be reached or read.
    #[error("could not read from remote repository '{shown}'")]
    Unreadable {
        /// The remote, as given.
        shown: String,
        /// Why.
        #[source]
        source: Box<FetchError>,
    },
    /// A program the transport needs (upload-pack, ssh) could not be started.
    #[error("cannot run {what}: {source}")]
    Spawn {
        /// The program, as the message names it.
        what: String,
        /// Why.
        source: std::io::Error,
    },
    /// A program started without the pipes it was given.
    #[error("no pipes to {what}")]
    NoPipes {
        /// The program.
        what: String,
    },
    /// The connection ended before the server said anything: it may refuse this client, or
    /// have no such repository (git's words, said alone).
    #[error(
        "Could not read from remote repository.\n\n\
         Please make sure you have the correct access rights\n\
         and the repository exists."
    )]
    NoContact,
    /// The transport is turned off here (`protocol.allow`, `protocol.<name>.allow`,
    /// `GIT_ALLOW_PROTOCOL`, or a submodule's URL reaching local files).
    #[error("transport '{name}' not allowed")]
    TransportNotAllowed {
        /// git's name for it: `file`, `ssh`, `git`, `http`, `https`, a helper's.
        name: String,
    },
    /// `<transport>::<address>` names a remote helper, which Sluice does not run.
    #[error("unable to find remote helper for '{name}'")]
    NoHelper {
        /// The helper's name.
        name: String,
    },
    /// A port for an ssh program of the "simple" kind, which takes none.
    #[error("ssh variant 'simple' does not support setting port")]
    SshPort,
    /// `-4` or `-6` for an ssh program of the "simple" kind.
    #[error("ssh variant 'simple' does not support {flag}")]
    SshIpVersion {
        /// `-4` or `-6`.
        flag: &'static str,
    },
    /// No connection to the host could be made, at any of its addresses (git's words: each
    /// address tried on a line of its own, with the system's reason).
    #[error(
        "unable to connect to {host}:\n{}\n",
        transport::attempts_text(host, tried)
    )]
    Unreachable {
        /// The host.
        host: String,
        /// Each address tried, and why it failed.
        tried: Vec<transport::Attempt>,
    },
    /// The host name could not be looked up.
    #[error(
        "unable to look up {host} (port {port}) ({})",
        sluice_object::errno::system_words(source)
    )]
    Lookup {
        /// The host.
        host: String,
        /// The port.
        port: u16,
        /// Why.
        source: std::io::Error,
    },
    /// The host name has no address.
    #[error("unable to look up {host}: no address")]
    NoAddress {
        /// The host.
        host: String,
    },
    /// A smart HTTP request failed.
    #[error("unable to access '{url}': {source}")]
    Http {
        /// The repository's URL, credentials removed.
        url: String,
        /// What went wrong.
        source: transport::HttpFailure,
    },
    /// The server has no repository at this URL (HTTP 404).
    #[error("repository '{url}' not found")]
    NotFound {
        /// The repository's URL, credentials removed, with git's slash after it.
        url: String,
        /// The server's text, which git shows as `remote:` lines.
        message: Option<String>,
    },
    /// The server refused the credentials.
    #[error("Authentication failed for '{url}'")]
    Authentication {
        /// The repository's URL, credentials removed.
        url: String,
    },
    /// `git credential` could not be run.
    #[error("cannot run 'git credential {action}': {source}")]
    CredentialSpawn {
        /// `fill`, `approve` or `reject`.
        action: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// `git credential` failed.
    #[error("'git credential {action}' failed")]
    Credential {
        /// `fill`, `approve` or `reject`.
        action: &'static str,
    },
    /// Talking to the server failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The server's framing is broken.
    #[error(transparent)]
    PktLine(#[from] sluice_wire::pktline::PktLineError),
    /// The server broke the protocol; what it sent is named.
    #[error("protocol error: {0}")]
    Protocol(#[from] ProtocolError),
    /// The connection ended in the middle of a response, in git's words (which scripts that
    /// retry a fetch look for); `place` names the section it ended in.
    #[error("the remote end hung up unexpectedly")]
    HungUp {
        /// The section.
        place: &'static str,
    },
    /// Protocol v2's ref listing did not end in a flush (the connection ended, or another
    /// packet came), in git's words.
    #[error("expected flush after ref listing")]
    RefListUnterminated,
    /// A fetch was asked for nothing.
    #[error("protocol error: nothing to fetch")]
    NothingToFetch,
    /// The request could not be sent: the process's input is closed.
    #[error("protocol error: the request side is closed")]
    RequestClosed,
    /// The transport's program (upload-pack, ssh) failed.
    #[error("protocol error: {what} exited with {status}")]
    Exited {
        /// The program.
        what: String,
        /// How it ended.
        status: std::process::ExitStatus,
    },
    /// The server reported an error (an `ERR` packet).
    #[error("remote error: {0}")]
    Remote(String),
    /// The server lacks a capability the request needs.
    #[error("{0}")]
    Unsupported(&'static str),
    /// The server's repository uses another hash than SHA-1.
    #[error(
        "the remote repository uses object format '{format}', which Sluice does not support yet"
    )]
    UnsupportedObjectFormat {
        /// The format the server advertised (`sha256`).
        format: String,
    },
    /// The server's repository is shallow, and the request refused that (`--reject-shallow`).
    #[error("source repository is shallow, reject to clone.")]
    ShallowRemote,
}

impl FetchError {
    /// [`FetchError::server_message`] of `error`, when it is a `FetchError`: for a search
    /// along a chain of causes.
    pub fn server_message_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a str> {
        error.downcast_ref::<FetchError>()?.server_message()
    }

    /// What the server said with its refusal (the text of an HTTP error), which git shows
    /// as `remote:` lines before its own message.
    pub fn server_message(&self) -> Option<&str> {
        match self {
            FetchError::NotFound { message, .. } => message.as_deref(),
            FetchError::Http {
                source: transport::HttpFailure::Status { message, .. },
                ..
            } => message.as_deref(),
            FetchError::Unreadable { source, .. } => source.server_message(),
            _ => None,
        }
    }
}

impl Connection {
    /// The refs whose names start with one of `prefixes` (all refs when empty), with symref
    /// targets and peeled tags.
    pub fn ls_refs(&mut self, prefixes: &[&str]) -> Result<Vec<RemoteRef>, FetchError> {
        match self.version {
            ProtocolVersion::V2 => self.ls_refs_v2(prefixes),
            ProtocolVersion::V0 => Ok(self.ls_refs_v0(prefixes)),
        }
    }

    /// Whether the server can be asked for `id` by its id alone, not by a ref's name: in
    /// protocol v2 always; in v0 when a ref it advertised points at it, or it offers
    /// `allow-tip-sha1-in-want` or `allow-reachable-sha1-in-want`.
    pub fn takes_want(&self, id: &sluice_object::ObjectId) -> bool {
        match self.version {
            ProtocolVersion::V2 => true,
            ProtocolVersion::V0 => self.takes_want_v0(id),
        }
    }

    /// Negotiates only (protocol v2's `wait-for-done`): the commits of `negotiator`'s history
    /// the server acknowledges having, in order.
    pub fn negotiate_only(
        &mut self,
        negotiator: &mut dyn Negotiator,
    ) -> Result<Vec<sluice_object::ObjectId>, FetchError> {
        self.negotiate_only_v2(negotiator)
    }

    /// Negotiates with the haves `negotiator` offers, asks for `request` and returns the
    /// answer with the pack as a stream (band 2 goes to `progress`).
    pub fn fetch<'a, F: FnMut(&[u8]) + 'a>(
        &'a mut self,
        request: &FetchRequest,
        negotiator: &mut dyn Negotiator,
        progress: F,
    ) -> Result<Fetched<'a>, FetchError> {
        if request.wants.is_empty() {
            return Err(FetchError::NothingToFetch);
        }
        match self.version {
            ProtocolVersion::V2 => self.fetch_v2(request, negotiator, progress),
            ProtocolVersion::V0 => self.fetch_v0(request, negotiator, progress),
        }
    }
}

/// What the client calls itself in `agent=`: `GIT_USER_AGENT`, or `sluice/<version>`.
fn agent() -> String {
    sluice_wire::agent::user_agent(concat!("sluice/", env!("CARGO_PKG_VERSION")))
}
