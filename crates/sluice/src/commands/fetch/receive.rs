//! Receiving what a fetch's updates need: the wants, the haves, the shallow request and the
//! pack, stored before any ref moves.

use super::plan::Plan;
use super::{display_url, FetchArgs, INFINITE_DEPTH};
use crate::commands::remote::fetch_into;
use crate::commands::Context;
use crate::progress::TerminalProgress;
use anyhow::bail;
use sluice_fetch::date::parse_since;
use sluice_fetch::fetch::Update;
use sluice_fetch::promised::Promised;
use sluice_fetch::receive::{unpack_if_small, ReceiveError, Receiving};
use sluice_fetch::reference::alternate_tips;
use sluice_fetch::{Connection, Deepen, FetchRequest, HistoryNegotiator};
use sluice_object::ObjectId;
use sluice_odb::pack_store::StoreError;
use sluice_odb::Repository;
use sluice_pack::ObjectLookup;

/// Where history is cut after a fetch: this repository's cut before it, and the server's own
/// when the server is shallow.
pub(super) struct Cut {
    pub(super) ours: Vec<ObjectId>,
    pub(super) remote: Vec<ObjectId>,
}

/// Fetches what the updates need that the repository lacks, and moves the shallow boundary as
/// the server says. `None` when the server did not send all that the new tips need (reported
/// as git reports it; nothing was stored).
pub(super) fn fetch_missing(
    plan: &Plan,
    args: &FetchArgs,
    context: &Context,
    repo: &Repository,
    connection: &mut Connection,
    updates: &[Update],
) -> anyhow::Result<Option<Cut>> {
    let deepen = Deepen {
        depth: if args.unshallow {
            Some(INFINITE_DEPTH)
        } else {
            args.depth.or(args.deepen)
        },
        since: parse_since(args.shallow_since.as_deref())?,
        not: args.shallow_exclude.clone(),
        relative: args.deepen.is_some(),
    };
    let shallow = repo.shallow_commits()?;
    if args.unshallow && shallow.is_empty() {
        bail!("--unshallow on a complete repository does not make sense");
    }
    let mut wants: Vec<ObjectId> = updates
        .iter()
        .map(|u| u.remote.id)
        .filter(|id| deepen.is_set() || args.refetch || !repo.objects().contains(id))
        .collect();
    wants.sort_unstable();
    wants.dedup();
    let mut cut = Cut {
        ours: shallow,
        remote: Vec::new(),
    };
    if wants.is_empty() {
        return Ok(Some(cut));
    }
    // A filtered fetch's pack is a promisor pack, kept whatever its size, as in git.
    let promisor = plan.filter.is_some();
    let show_progress = crate::progress::enabled(!args.quiet, args.progress);
    // `--refetch` offers nothing, so that the server sends all the wants reach.
    let mut tips: Vec<ObjectId> = Vec::new();
    if !args.refetch {
        tips.extend(repo.refs().list()?.into_iter().map(|(_, id)| id));
        tips.extend(alternate_tips(repo.objects()));
    }
    let mut negotiator = HistoryNegotiator::new(repo.objects(), tips);
    let request = FetchRequest {
        wants,
        shallow: cut.ours.clone(),
        deepen,
        filter: plan.filter.clone(),
        include_tag: plan.refs.follow_tags,
        progress: show_progress,
        reject_shallow_remote: false,
    };
    // The configuration read at the start does not show a promisor remote `--filter` has just
    // made.
    let promised = match promisor {
        true => Some(Promised::from(&context.cwd, repo, &plan.refs.remote_name)),
        false => Promised::of(&context.cwd, repo, &plan.refs.remote_name)?,
    };
    let objects: &dyn ObjectLookup = match &promised {
        Some(promised) => promised,
        None => repo.objects(),
    };
    let progress = TerminalProgress::new(show_progress);
    let receiving = Receiving {
        progress: &progress,
        objects: Some(objects),
        ..Receiving::default()
    };
    let received = match fetch_into(connection, repo, &request, &mut negotiator, receiving) {
        Ok(received) => received,
        Err(error) => match error.downcast_ref::<ReceiveError>() {
            // git's words and exit code; nothing was stored and no ref moves.
            Some(
                ReceiveError::Store(StoreError::NotConnected { missing })
                | ReceiveError::Incomplete { missing },
            ) => {
                eprintln!("error: missing object {missing}");
                eprintln!(
                    "error: {} did not send all necessary objects",
                    display_url(&plan.remote.shown)
                );
                return Ok(None);
            }
            _ => return Err(error),
        },
    };
    repo.update_shallow(&received.shallow, &received.unshallow)?;
    cut.remote = received.remote_shallow.clone();
    if promisor {
        std::fs::write(received.pack.with_extension("promisor"), "")?;
    } else {
        unpack_if_small(&received, repo, objects)?;
    }
    Ok(Some(cut))
}
