//! Judging each ref update before anything is sent, as git does: up to date, or refused
//! because it would lose history the client cannot see (`fetch first`), would not
//! fast-forward, would move a tag, or because the remote moved since the lease was taken.

use super::lease::Leased;
use super::spec::Paired;
use super::{PushedRef, RefStatus};
use sluice_object::ObjectId;
use sluice_remote::RemoteRef;
use sluice_repo::Repository;

/// The status of each paired update (with what its lease says, if one protects it) against
/// the remote's advertised values.
pub(crate) fn judge(
    repo: &Repository,
    paired: Vec<(Paired, Option<Leased>)>,
    advertised: &[RemoteRef],
    force_all: bool,
    deletes_allowed: bool,
) -> Vec<PushedRef> {
    paired
        .into_iter()
        .map(|(p, leased)| {
            let old = advertised.iter().find(|r| r.name == p.dst).map(|r| r.id);
            let new = p.src.as_ref().map(|s| s.id);
            let lease = leased.map(|l| l.expected);
            let forced_by_user = p.force || force_all;
            let (mut status, mut forced) = status_of(
                repo,
                &p.dst,
                (old, new),
                forced_by_user,
                lease,
                deletes_allowed,
            );
            // Only a push the lease lets through (and no --force or `+`) is checked against
            // the local history.
            let checked = leased.filter(|_| !forced_by_user);
            if checked.is_some_and(|l| !l.includes_remote_work) && status == RefStatus::Pending {
                (status, forced) = (RefStatus::RemoteUpdated, false);
            }
            PushedRef {
                src: p.src.map(|s| s.shown),
                dst: p.dst,
                old,
                new,
                status,
                forced,
                rewrites: Vec::new(),
            }
        })
        .collect()
}

/// The status of one update, and whether it is forced, as git judges it: a lease that holds
/// forces the update; one that does not (stale) refuses it, unless the user forced it
/// (`--force`, a `+` refspec), which overrides every refusal and says so ("forced update").
fn status_of(
    repo: &Repository,
    dst: &str,
    (old, new): (Option<ObjectId>, Option<ObjectId>),
    forced_by_user: bool,
    lease: Option<Option<ObjectId>>,
    deletes_allowed: bool,
) -> (RefStatus, bool) {
    if new.is_some() && old == new {
        return (RefStatus::UpToDate, false);
    }
    let stale = lease.is_some_and(|expected| expected != old);
    let force = forced_by_user || lease.is_some() && !stale;
    if stale && !forced_by_user {
        return (RefStatus::Stale, false);
    }
    let Some(new) = new else {
        return match deletes_allowed {
            true => (RefStatus::Pending, false),
            false => (RefStatus::NoDelete, false),
        };
    };
    let Some(old) = old else {
        return (RefStatus::Pending, false);
    };
    let objects = repo.objects();
    // As git: tags are peeled to the commits they name.
    let commits = (
        repo.objects().peel_to_commit(old),
        repo.objects().peel_to_commit(new),
    );
    let refused = if stale {
        Some(RefStatus::Stale)
    } else if dst.starts_with("refs/tags/") {
        Some(RefStatus::AlreadyExists)
    } else if !objects.contains(&old) {
        Some(RefStatus::FetchFirst)
    } else {
        match commits {
            (Some(old), Some(new)) if sluice_graph::ancestry::is_ancestor(objects, &old, &new) => {
                None
            }
            (Some(_), Some(_)) => Some(RefStatus::NonFastForward),
            _ => Some(RefStatus::NeedsForce),
        }
    };
    match (refused, force) {
        (None, _) => (RefStatus::Pending, false),
        (Some(_), true) => (RefStatus::Pending, true),
        (Some(refused), false) => (refused, false),
    }
}

/// `--atomic`: one update refused before sending fails all the others.
pub(crate) fn fail_atomically(refs: &mut [PushedRef]) -> Option<super::AtomicFailure> {
    let refused = refs.iter().find(|r| r.status.refused())?;
    let first = (refused.dst.clone(), refused.status.clone());
    for r in refs.iter_mut() {
        if r.status == RefStatus::Pending {
            r.status = RefStatus::AtomicFailed;
        }
    }
    Some(first)
}
