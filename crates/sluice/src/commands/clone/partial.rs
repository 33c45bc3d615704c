//! A partial clone's second fetch: the blobs of the tree it checks out, which its filtered
//! pack left out, and the `.promisor` files that mark both packs as the promisor remote's.

use super::CloneArgs;
use crate::commands::remote::{connect, fetch_into};
use crate::progress::TerminalProgress;
use anyhow::Context as _;
use sluice_checkout::tree::flatten;
use sluice_fetch::receive::Receiving;
use sluice_fetch::ConnectOptions;
use sluice_fetch::Remote;
use sluice_fetch::{FetchRequest, NoHaves, RemoteRef};
use sluice_object::ObjectId;
use sluice_odb::{ObjectDb, Repository};
use std::path::Path;

/// A partial clone cannot check out blobs it lacks: one more fetch asks for exactly those of
/// the tree being checked out, as git's lazy fetch does, into a second promisor pack.
pub(super) fn fetch_missing_blobs(
    args: &CloneArgs,
    remote: &Remote,
    repo: &Repository,
    tree: &ObjectId,
    advertised: &[RemoteRef],
) -> anyhow::Result<()> {
    let odb = ObjectDb::open(repo.objects().dir(), repo.hash())?;
    let flat = flatten(&odb, tree)?;
    let mut missing: Vec<ObjectId> = flat
        .files
        .iter()
        .filter(|f| f.mode != 0o160000 && !odb.contains(&f.id))
        .map(|f| f.id)
        .collect();
    missing.sort_unstable();
    missing.dedup();
    if missing.is_empty() {
        return Ok(());
    }
    let options = ConnectOptions::from_config(repo.config(), args.upload_pack.as_deref())?;
    let mut connection = connect(remote, &options)?;
    let show_progress = crate::progress::enabled(!args.quiet, args.progress);
    let request = FetchRequest {
        wants: missing,
        progress: show_progress,
        ..FetchRequest::default()
    };
    let progress = TerminalProgress::new(show_progress);
    let receiving = Receiving {
        progress: &progress,
        ..Receiving::default()
    };
    let got = fetch_into(&mut connection, repo, &request, &mut NoHaves, receiving)?;
    connection.finish()?;
    write_promisor(&got.pack, advertised)
}

/// The `.promisor` file of a partial clone's pack: the refs it was fetched for, as git lists
/// them.
pub(super) fn write_promisor(pack: &Path, advertised: &[RemoteRef]) -> anyhow::Result<()> {
    let text: String = advertised
        .iter()
        .map(|r| format!("{} {}\n", r.id, r.name))
        .collect();
    let path = pack.with_extension("promisor");
    std::fs::write(&path, text).with_context(|| format!("cannot write '{}'", path.display()))
}
