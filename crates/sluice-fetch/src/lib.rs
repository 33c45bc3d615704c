//! The fetching side of the transfer protocol (`gitprotocol-v2`): a connection to an
//! upload-pack, its capability advertisement, `ls-refs`, and a `fetch` whose pack arrives as a
//! byte stream for the indexer. Everything the server sends is checked as it is read: ref names
//! are refused unless git would accept them, ids must parse, and the pack must come in the
//! section where the protocol puts it.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod connection;
mod v2;

pub use connection::Connection;
pub use v2::{FetchRequest, RemoteRef};

/// Why talking to the server failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Starting the server command or talking to it failed.
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
}
