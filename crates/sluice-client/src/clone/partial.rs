//! A partial clone's second fetch: the blobs of the tree it checks out, which its filtered
//! pack left out, and the `.promisor` files that mark both packs as the promisor remote's.

use super::CloneError;
use crate::receive::{self, Receiving};
use sluice_object::progress::Progress;
use sluice_object::ObjectId;
use sluice_remote::{ConnectOptions, FetchRequest, NoHaves, Remote, RemoteRef};
use sluice_repo::sparse::SparseCone;
use sluice_repo::Repository;

/// One more fetch of exactly the blobs of `tree` the repository lacks (inside `cone`, for a
/// sparse checkout), as git's lazy fetch asks for them, into a second promisor pack.
pub(super) fn fetch_missing_blobs(
    (remote, cone): (&Remote, Option<&SparseCone>),
    options: &ConnectOptions,
    repo: &Repository,
    tree: &ObjectId,
    advertised: &[RemoteRef],
    progress: (bool, &dyn Progress),
    remote_progress: impl FnMut(&[u8]),
) -> Result<(), CloneError> {
    let missing = crate::promised::missing_blobs(repo, tree, cone)?;
    if missing.is_empty() {
        return Ok(());
    }
    let mut connection = remote.connect(options)?;
    let request = FetchRequest {
        wants: missing,
        progress: progress.0,
        ..FetchRequest::default()
    };
    let receiving = Receiving {
        progress: progress.1,
        ..Receiving::default()
    };
    let got = receive::fetch_into(
        &mut connection,
        repo,
        &request,
        &mut NoHaves,
        receiving,
        remote_progress,
    )?;
    connection.finish()?;
    Ok(got.mark_promisor(advertised)?)
}
