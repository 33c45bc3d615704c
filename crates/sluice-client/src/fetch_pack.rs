//! `fetch-pack`'s engine: the named refs (or all) of a remote, fetched into the repository
//! without moving any ref here, as `git fetch-pack` does for scripts and transports.

use crate::receive::ReceiveError;
use crate::receive::{self, Receiving};
use crate::HistoryNegotiator;
use sluice_object::progress::Progress;
use sluice_remote::{Connection, FetchError, FetchRequest, RemoteRef};
use sluice_repo::{RefError, Repository};

/// Why fetch-pack failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchPackError {
    /// A ref asked for is not on the remote.
    #[error("no such remote ref {name}")]
    NoSuchRef {
        /// The ref.
        name: String,
    },
    /// The server failed or broke the protocol.
    // Not transparent: the FetchError stays in the chain of causes, where the binary
    // finds what the server said.
    #[error("{0}")]
    Fetch(#[from] FetchError),
    /// The pack could not be stored.
    #[error(transparent)]
    Receive(#[from] ReceiveError),
    /// The repository's refs could not be read.
    #[error(transparent)]
    Refs(#[from] RefError),
}

/// What fetch-pack asks for and how it stores the pack.
pub struct FetchPackOptions<'a> {
    /// `--all`: every ref the remote has.
    pub all: bool,
    /// The refs to fetch, by full name.
    pub refs: &'a [String],
    /// `--keep`: the pack gets a `.keep` file.
    pub keep: bool,
    /// Whether the server is asked for its progress.
    pub remote_progress: bool,
    /// index-pack's progress.
    pub receive_progress: &'a dyn Progress,
}

/// What was fetched: the refs, and index-pack's report line when a pack came.
#[derive(Debug)]
pub struct FetchedPack {
    /// The remote's refs asked for, in its order.
    pub refs: Vec<RemoteRef>,
    /// `pack\t<checksum>` or `keep\t<checksum>`, when a pack came.
    pub report: Option<String>,
}

/// Fetches the refs `options` names from `connection` into `repo`, with the repository's refs
/// as haves; the server's progress goes to `remote_progress`.
pub fn fetch_pack(
    connection: &mut Connection,
    repo: &Repository,
    options: &FetchPackOptions,
    remote_progress: impl FnMut(&[u8]),
) -> Result<FetchedPack, FetchPackError> {
    let advertised = connection.ls_refs(&[])?;
    if let Some(name) = options
        .refs
        .iter()
        .find(|wanted| !advertised.iter().any(|r| &r.name == *wanted))
    {
        return Err(FetchPackError::NoSuchRef { name: name.clone() });
    }
    let refs: Vec<RemoteRef> = advertised
        .into_iter()
        .filter(|r| options.all || options.refs.contains(&r.name))
        .collect();
    let mut wants: Vec<_> = refs
        .iter()
        .map(|r| r.id)
        .filter(|id| !repo.objects().contains(id))
        .collect();
    wants.sort_unstable();
    wants.dedup();
    if wants.is_empty() {
        return Ok(FetchedPack { refs, report: None });
    }
    let tips = repo.refs().list()?.into_iter().map(|(_, id)| id);
    let mut negotiator = HistoryNegotiator::new(repo.objects(), tips);
    let request = FetchRequest {
        wants,
        progress: options.remote_progress,
        ..FetchRequest::default()
    };
    let shown = crate::receive::PackProgress::indexing(options.receive_progress);
    let receiving = Receiving {
        progress: &shown,
        keep: options.keep.then(String::new),
        ..Receiving::default()
    };
    let received = receive::fetch_into(
        connection,
        repo,
        &request,
        &mut negotiator,
        receiving,
        remote_progress,
    )?;
    Ok(FetchedPack {
        refs,
        report: Some(received.report),
    })
}
