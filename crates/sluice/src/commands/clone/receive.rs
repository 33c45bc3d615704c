//! The clone's objects: the source's object files for a clone from a path, else a pack from
//! the remote; and the checkout that runs while that pack's deltas are resolved.

use super::setup::{reject_shallow, LocalSource};
use super::CloneArgs;
use crate::commands::remote::fetch_into;
use crate::progress::{Deferred, TerminalProgress};
use sluice_checkout::CheckoutOptions;
use sluice_fetch::clone::EarlyCheckout;
use sluice_fetch::date::parse_since;
use sluice_fetch::local_clone::transfer_objects;
use sluice_fetch::receive::{Received, Receiving};
use sluice_fetch::reference::alternate_tips;
use sluice_fetch::remote_shallow;
use sluice_fetch::{Connection, Deepen, FetchRequest, HistoryNegotiator, Negotiator, NoHaves};
use sluice_object::ObjectId;
use sluice_odb::pack_store::Alongside;
use sluice_odb::{ObjectDb, Repository};
use sluice_pack::ArrivingPack;

/// What the clone asks the remote for: `wants` less what a reference repository already has
/// (unless the history is cut, where the server decides what "have" means), as git does not
/// ask for what it has.
pub(super) fn request(
    args: &CloneArgs,
    repo: &Repository,
    wants: &[ObjectId],
    show_progress: bool,
) -> anyhow::Result<FetchRequest> {
    let deepen = Deepen {
        depth: args.depth,
        since: parse_since(args.shallow_since.as_deref())?,
        not: args.shallow_exclude.clone(),
        relative: false,
    };
    if args.depth == Some(0) {
        anyhow::bail!("depth 0 is not a positive number");
    }
    let missing: Vec<ObjectId> = wants
        .iter()
        .filter(|id| deepen.is_set() || !repo.objects().contains(id))
        .copied()
        .collect();
    Ok(FetchRequest {
        wants: missing,
        shallow: Vec::new(),
        deepen,
        filter: args.filter.clone(),
        include_tag: !args.no_tags,
        progress: show_progress,
        reject_shallow_remote: reject_shallow(args, repo.config())?,
    })
}

/// Brings the objects in: the source's files for a local clone, else the pack for `request`,
/// offering what the references' refs reach as haves, and the shallow file the server's cut
/// makes. Returns the pack received, if one was.
pub(super) fn receive(
    args: &CloneArgs,
    local: Option<&LocalSource>,
    connection: &mut Connection,
    repo: &Repository,
    request: &FetchRequest,
    early: Option<&EarlyCheckout>,
) -> anyhow::Result<Option<Received>> {
    if let Some(local) = local {
        let objects = repo.git_dir().join("objects");
        for warning in transfer_objects(&local.objects, &objects, local.transfer)? {
            eprintln!("warning: {warning}");
        }
        if !args.quiet {
            eprintln!("done.");
        }
        return Ok(None);
    }
    if request.wants.is_empty() {
        return Ok(None);
    }
    let alongside = |pack: &ArrivingPack<'_>| {
        if let Some(early) = early {
            early.check_out(pack);
        }
    };
    let progress = TerminalProgress::new(request.progress);
    let receiving = Receiving {
        progress: &progress,
        alongside: early.is_some().then_some(&alongside as &Alongside),
        ..Receiving::default()
    };
    let borrowed = alternate_tips(repo.objects());
    let mut history;
    let negotiator: &mut dyn Negotiator = if borrowed.is_empty() {
        &mut NoHaves
    } else {
        history = HistoryNegotiator::new(repo.objects(), borrowed);
        &mut history
    };
    let got = fetch_into(connection, repo, request, negotiator, receiving)?;
    // A shallow server's cut is this clone's too, where the pack reached it.
    let mut shallow = got.shallow.clone();
    if !got.remote_shallow.is_empty() {
        let odb = ObjectDb::open(repo.objects().dir(), repo.hash())?;
        shallow.extend(remote_shallow::arrived(&odb, &got.remote_shallow));
    }
    repo.update_shallow(&shallow, &got.unshallow)?;
    Ok(Some(got))
}

/// The checkout that runs while the pack's deltas are resolved, where the arriving pack will
/// hold all the files of `commit`: a checkout is wanted, the clone is not partial (a partial
/// clone lacks blobs, so it checks out afterwards) and borrows nothing from a reference
/// repository.
pub(super) fn early_checkout<'r>(
    args: &CloneArgs,
    repo: &'r Repository,
    commit: Option<ObjectId>,
    progress: &'r Deferred,
) -> anyhow::Result<Option<EarlyCheckout<'r>>> {
    let possible = !args.bare()
        && !args.no_checkout
        && args.filter.is_none()
        && repo.objects().alternates().is_empty();
    let Some(commit) = commit.filter(|_| possible) else {
        return Ok(None);
    };
    let options = CheckoutOptions::from_config(repo.config())?;
    Ok(Some(EarlyCheckout::new(repo, commit, options, progress)))
}
