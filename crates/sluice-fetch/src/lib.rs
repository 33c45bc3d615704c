//! The fetching side of git's transfer protocols: reaching an upload-pack (local and ssh
//! processes, `git://`, smart HTTP), reading what it advertises in protocol v2 or v0, listing
//! refs, negotiating, and receiving the pack as a byte stream for the indexer. Everything the
//! server sends is checked as it is read: ref names are refused unless git would accept them,
//! ids must parse, every section must come where the protocol puts it, and a server that falls
//! silent is given up on after the configured time.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod connection;
mod negotiate;
mod request;
mod transport;
mod url;
mod v0;
mod v2;

pub use connection::Connection;
pub use negotiate::HistoryNegotiator;
pub use request::{Deepen, FetchRequest, Fetched, Negotiator, NoHaves, RemoteRef};
pub use transport::{stop_servers, ConnectOptions, ProtocolVersion, TlsTrust};
pub use url::{anonymized, RemoteUrl};

/// Why talking to the server failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The repository's URL cannot be used.
    #[error("bad repository URL {0}")]
    Url(String),
    /// The server could not be reached.
    #[error("{0}")]
    Connect(String),
    /// An HTTP request failed.
    #[error("{0}")]
    Http(String),
    /// Talking to the server failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The server's framing is broken.
    #[error(transparent)]
    PktLine(#[from] sluice_wire::pktline::PktLineError),
    /// The server broke the protocol; what it sent is named.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The server reported an error (an `ERR` packet).
    #[error("remote error: {0}")]
    Remote(String),
    /// The server lacks a capability the request needs.
    #[error("{0}")]
    Unsupported(&'static str),
    /// The server's repository is shallow, and the request refused that (`--reject-shallow`).
    #[error("source repository is shallow, reject to clone.")]
    ShallowRemote,
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

    /// Negotiates with the haves `negotiator` offers, asks for `request` and returns the
    /// answer with the pack as a stream (band 2 goes to `progress`).
    pub fn fetch<'a, F: FnMut(&[u8]) + 'a>(
        &'a mut self,
        request: &FetchRequest,
        negotiator: &mut dyn Negotiator,
        progress: F,
    ) -> Result<Fetched<'a>, FetchError> {
        if request.wants.is_empty() {
            return Err(FetchError::Protocol("nothing to fetch".into()));
        }
        match self.version {
            ProtocolVersion::V2 => self.fetch_v2(request, negotiator, progress),
            ProtocolVersion::V0 => self.fetch_v0(request, negotiator, progress),
        }
    }
}
