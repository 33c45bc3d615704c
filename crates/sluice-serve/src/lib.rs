//! The serving side of fetch and clone (`gitprotocol-pack`, `gitprotocol-v2`): upload-pack's
//! ref advertisement and negotiation, object counting through a revision walk (or bitmaps), and
//! the pack sent through `sluice-generate` and the pack cache, in 64 KiB side-band packets.
//!
//! Requests are hostile until proven otherwise: every line is bounded by the pkt-line limit,
//! every wanted object is checked against what may be served, and a malformed request ends with
//! git's error message on the wire, never with a panic.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod advertise;
mod clone_warmup;
pub mod daemon;
mod filter_policy;
mod http;
pub mod metrics;
mod negotiate;
pub mod pack_cache;
pub mod receive_pack;
mod remote_progress;
mod request_error;
mod server;
mod shallow;
mod upload_pack;

pub use daemon::serve_git;
pub use http::{serve_http, tls_config, AuthFileError, Credentials, TlsError};
pub use pack_cache::PackCache;
pub use request_error::RequestError;
pub use server::{ServerMemory, ServerOptions, Shutdown};
pub use upload_pack::{upload_pack, Protocol, UploadPackOptions};

use sluice_generate::GenerateError;
use sluice_object::parse::ParseError;
use sluice_object::ObjectId;

/// Why a request could not be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Reading the request or writing the response failed (often: the client went away).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// `uploadpack.packObjectsHook` could not be run.
    #[error("cannot run the pack-objects hook '{hook}'")]
    PackHook {
        /// The hook.
        hook: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The hook (standing in for pack-objects) failed.
    #[error("git upload-pack: git-pack-objects died with error.")]
    PackHookFailed {
        /// The hook.
        hook: String,
    },
    /// The request's framing is broken.
    #[error(transparent)]
    PktLine(#[from] sluice_wire::pktline::PktLineError),
    /// A push failed as a whole.
    #[error(transparent)]
    Receive(#[from] receive_pack::ReceiveError),
    /// The object database failed.
    #[error(transparent)]
    Odb(#[from] sluice_odb::OdbError),
    /// Counting objects failed.
    #[error(transparent)]
    Walk(#[from] sluice_graph::WalkError),
    /// Reading refs failed.
    #[error(transparent)]
    Refs(#[from] sluice_repo::RefError),
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] sluice_odb::ConfigError),
    /// The repository's own files (its shallow list) could not be read.
    #[error(transparent)]
    Repo(#[from] sluice_repo::RepoError),
    /// Generating the pack failed.
    #[error(transparent)]
    Generate(GenerateError),
    /// The client broke the protocol or asked for what may not be served; the message is
    /// git's.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The client wants an object it may not have.
    #[error("upload-pack: not our ref {0}")]
    NotOurRef(ObjectId),
    /// An object to send is missing.
    #[error("upload-pack: missing object {0}")]
    MissingObject(ObjectId),
    /// A setting of the repository has a value the server does not know.
    #[error("invalid value for '{key}': '{value}'")]
    BadSetting {
        /// The setting.
        key: &'static str,
        /// Its value.
        value: String,
    },
    /// An annotated tag of the repository does not parse.
    #[error("tag {id}: {source}")]
    BadTag {
        /// The tag.
        id: ObjectId,
        /// Why.
        source: ParseError,
    },
    /// A chain of annotated tags longer than any git makes.
    #[error("tag {id}: chain too long")]
    TagChain {
        /// The first tag of the chain.
        id: ObjectId,
    },
    /// A commit of the repository does not parse.
    #[error("commit {id}: {source}")]
    BadCommit {
        /// The commit.
        id: ObjectId,
        /// Why.
        source: ParseError,
    },
}

impl From<GenerateError> for ServeError {
    /// A write that failed is the client going away, as for every other write; a missing
    /// object is upload-pack's own message.
    fn from(e: GenerateError) -> ServeError {
        match e {
            GenerateError::Io(e) => ServeError::Io(e),
            GenerateError::MissingObject(id) => ServeError::MissingObject(id),
            other => ServeError::Generate(other),
        }
    }
}
