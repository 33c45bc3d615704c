//! One remote's fetch, in its steps: connect, list the refs the plan asks for, map them to ref
//! updates (with followed tags, tracking in passing, duplicates settled), receive what the
//! repository lacks, then move the refs, prune, write FETCH_HEAD and `--set-upstream`, with the
//! report as data for the command line to print.

use super::fetch_head::write_fetch_head;
use super::mapping::{
    drop_duplicates, follow_known_tags, track_in_passing, Listed, Mapping, MappingError, RefPlan,
    Update,
};
use super::negotiation_tips::{negotiation_tips, TipError};
use super::report::Report;
use super::update::{
    any_rejected, conflicts, prune_stale, stale_refs, update_refs, Changes, Refused, RemoteCut,
    UpdateError,
};
use super::upstream::set_upstream;
use crate::negotiate::NegotiationAlgorithm;
use crate::promised::Promised;
use crate::receive::{self, unpack_if_small, PackProgress, ReceiveError, Receiving};
use crate::reference::alternate_tips;
use crate::refspec::Refspec;
use crate::HistoryNegotiator;
use sluice_object::progress::Progress;
use sluice_object::ObjectId;
use sluice_odb::pack_store::{self, StoreError};
use sluice_odb::{ConfigError, LockError, ObjectDb, OdbError};
use sluice_pack::ObjectLookup;
use sluice_remote::{
    ConnectOptions, Connection, Deepen, FetchError, FetchRequest, Remote, RemoteRef,
};
use sluice_repo::fetch_head::{clear as clear_fetch_head, display_url};
use sluice_repo::refs::reflog_identity;
use sluice_repo::{RefError, RepoError, Repository};
use std::path::Path;

/// Why a fetch failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The server failed or broke the protocol.
    // Not transparent: the FetchError stays in the chain of causes, where the binary
    // finds what the server said.
    #[error("{0}")]
    Fetch(#[from] FetchError),
    /// The refspecs cannot be applied to the remote's refs.
    #[error(transparent)]
    Mapping(#[from] MappingError),
    /// The pack could not be stored.
    #[error(transparent)]
    Receive(#[from] ReceiveError),
    /// The refs could not be moved.
    #[error(transparent)]
    Update(#[from] UpdateError),
    /// A ref could not be read.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// The shallow file could not be read or written.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// A setting has a value of the wrong type.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The object database could not be opened.
    #[error(transparent)]
    Odb(#[from] OdbError),
    /// FETCH_HEAD could not be written.
    #[error(transparent)]
    FetchHead(#[from] LockError),
    /// `--negotiate-only` without `--negotiation-tip`.
    #[error("--negotiate-only needs one or more --negotiation-tip=*")]
    NegotiateOnlyWithoutTips,
    /// `--negotiate-only` with a server that does not speak protocol v2.
    #[error("--negotiate-only requires protocol v2")]
    NegotiateOnlyNeedsV2,
    /// A `--negotiation-tip` names nothing.
    #[error(transparent)]
    Tip(#[from] TipError),
}

/// Where a fetch's messages go, as they happen.
pub trait FetchMessages {
    /// A warning, in git's words.
    fn warning(&self, message: &str);
    /// The server's progress (band 2), as it arrives.
    fn remote_progress(&self, text: &[u8]);
}

/// How one remote is fetched: the plan and the flags, decided by the command line.
pub struct FetchOptions<'a> {
    /// The refspecs in force and what shapes them.
    pub refs: RefPlan,
    /// Which haves are offered (the plan's).
    pub negotiation: NegotiationAlgorithm,
    /// Take the newer bundles the server advertises first (`transfer.bundleURI`, on by
    /// default in Sluice).
    pub bundle_uri: bool,
    /// The filter sent (a partial clone's fetch, or `--filter`).
    pub filter: Option<String>,
    /// `--prune`, and the refspecs whose destinations it cleans.
    pub prune: Option<Vec<Refspec>>,
    /// How far to cut (or extend) history.
    pub deepen: Deepen,
    /// `--unshallow` (which the caller has checked against the repository: see
    /// [`sluice_remote::fetch_depth`]).
    pub unshallow: bool,
    /// `--refetch`: offer nothing, as if the repository had nothing.
    pub refetch: bool,
    /// `--keep`: the pack stays a pack, however small (`fetch.unpackLimit` does not apply).
    pub keep: bool,
    /// `--negotiation-tip`: offer only these refs' (or objects') history.
    pub negotiation_tips: Vec<String>,
    /// `--update-shallow`.
    pub update_shallow: bool,
    /// `--atomic`.
    pub atomic: bool,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `-v`: report refs that are up to date too.
    pub verbose: bool,
    /// Whether moves are checked to be fast-forwards (`--[no-]show-forced-updates`, else
    /// `fetch.showForcedUpdates`, on by default).
    pub show_forced_updates: bool,
    /// Whether FETCH_HEAD is written, and whether added to.
    pub fetch_head: Option<bool>,
    /// `--set-upstream`.
    pub set_upstream: bool,
    /// The reflog's action (`fetch` and the arguments).
    pub action: String,
    /// How to reach the remote.
    pub connect: ConnectOptions,
    /// Whether the server is asked for its progress.
    pub remote_progress: bool,
    /// index-pack's progress.
    pub receive_progress: &'a dyn Progress,
    /// unpack-objects' progress, for a pack small enough to be unpacked: git's fetch passes it
    /// no `--progress`, so it shows on a terminal only.
    pub unpack_progress: &'a dyn Progress,
    /// Where a promisor remote's relative path is taken from.
    pub cwd: &'a Path,
}

/// How a fetch ended.
#[derive(Debug)]
pub enum FetchOutcome {
    /// A refspec names an object the server does not allow asking for; nothing changed.
    Unadvertised(ObjectId),
    /// The server did not send all that the new tips need; nothing was stored or moved.
    NotConnected(ObjectId),
    /// The refs were moved, as the report says.
    Moved(Moved),
}

/// The refs moved, as data: the report's lines, the conflicts `--atomic` refused, the worst
/// refusal, and `--set-upstream`'s warning.
#[derive(Debug)]
pub struct Moved {
    /// The report, a line (or a warning) per ref.
    pub lines: Vec<Report>,
    /// Refs in the way of new ones, which under `--atomic` kept every ref where it was.
    pub in_the_way: Vec<RefError>,
    /// Whether some update did not happen.
    pub refused: Refused,
    /// `--set-upstream`'s warning, where it set nothing.
    pub upstream_warning: Option<String>,
    /// The `reference-transaction` hook refused a transaction: the fetch stopped there.
    pub aborted_by_hook: bool,
    /// The width of the report's summary column (`old..new`), as git's transport sizes it
    /// from the ids it abbreviates.
    pub summary_width: usize,
}

/// `fetch --negotiate-only`: negotiates with `remote` from the history of `tips` alone (see
/// `--negotiation-tip`) and returns the commits the server has in common; nothing is fetched,
/// nothing moves. Protocol v2 only, as in git.
pub fn negotiate_only(
    remote: &Remote,
    repo: &Repository,
    tips: &[String],
    connect: &ConnectOptions,
) -> Result<Vec<ObjectId>, RunError> {
    if tips.is_empty() {
        return Err(RunError::NegotiateOnlyWithoutTips);
    }
    let mut connection = remote.connect(connect)?;
    if connection.version() != sluice_remote::ProtocolVersion::V2 {
        // The server is told the session is over rather than left to find it closed.
        let _ = connection.finish();
        return Err(RunError::NegotiateOnlyNeedsV2);
    }
    let tips = negotiation_tips(repo, tips)?;
    let mut negotiator = HistoryNegotiator::new(repo.objects(), tips);
    Ok(connection.negotiate_only(&mut negotiator)?)
}

/// Fetches `remote` into `repo`.
pub fn fetch_remote(
    remote: &Remote,
    repo: &Repository,
    options: &FetchOptions,
    messages: &dyn FetchMessages,
) -> Result<FetchOutcome, RunError> {
    let mut connection = remote.connect(&options.connect)?;
    if let Some(url) = connection.redirected_to() {
        messages.warning(&format!("redirecting to {url}"));
    }
    let plan = &options.refs;
    let prefixes = plan.ref_prefixes();
    let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
    let advertised = connection.ls_refs(&prefixes)?;
    let mut updates = match plan.map_refs(repo, &advertised, &connection)? {
        Mapping::Updates(updates) => updates,
        Mapping::Unadvertised(id) => {
            connection.finish()?;
            return Ok(FetchOutcome::Unadvertised(id));
        }
    };
    let backfill = match plan.follow_tags {
        true => {
            let before = updates.len();
            let later = follow_known_tags(repo, &advertised, &mut updates)?;
            match options.dry_run {
                false => later,
                // A dry run writes no tag, so git's second pass finds the ones followed in
                // the first still new and says them again; in the order the server listed
                // them.
                true => {
                    let again: std::collections::HashSet<&str> = (later.iter())
                        .map(|tag| tag.name.as_str())
                        .chain(updates[before..].iter().map(|u| u.remote.name.as_str()))
                        .collect();
                    (advertised.iter())
                        .filter(|r| again.contains(r.name.as_str()))
                        .cloned()
                        .collect()
                }
            }
        }
        false => Vec::new(),
    };
    if plan.explicit {
        let tracking = plan.refmap.as_ref().unwrap_or(&plan.configured);
        track_in_passing(&mut updates, tracking, plan.force);
    }
    let (updates, warnings) = drop_duplicates(updates)?;
    for warning in warnings {
        messages.warning(&warning);
    }
    plan.check_destinations(repo, &updates)?;
    bundles(&mut connection, repo, options, messages);
    let cut = match receive_missing(&mut connection, repo, &updates, options, messages)? {
        Ok(cut) => cut,
        Err(missing) => return Ok(FetchOutcome::NotConnected(missing)),
    };
    connection.finish()?;
    let fetched = Fetched {
        updates,
        backfill,
        cut,
    };
    let moved = move_refs(remote, repo, fetched, &advertised, options)?;
    Ok(FetchOutcome::Moved(moved))
}

/// The bundles the server advertises that are newer than those taken before, brought in
/// before the fetch (their branches as refs/bundles/*, so their tips are offered as haves);
/// not for a fetch that cuts history, filters or refetches. A bundle that fails only means the
/// server sends its objects.
fn bundles(
    connection: &mut Connection,
    repo: &Repository,
    options: &FetchOptions,
    messages: &dyn FetchMessages,
) {
    let usable = options.bundle_uri
        && options.filter.is_none()
        && !options.refetch
        && !options.deepen.is_set()
        && !options.unshallow;
    if !usable {
        return;
    }
    if let Err(e) = crate::bundle_uri::fetch_bundles(connection, repo, &options.connect) {
        messages.warning(&format!("failed to fetch advertised bundles: {e}"));
    }
}

/// Where history is cut after a fetch: this repository's cut before it, and the server's own
/// when the server is shallow.
struct Cut {
    ours: Vec<ObjectId>,
    remote: Vec<ObjectId>,
}

/// Fetches what the updates need that the repository lacks, and moves the shallow boundary as
/// the server says. `Err(missing)` when the server did not send all that the new tips need
/// (nothing was stored).
fn receive_missing(
    connection: &mut Connection,
    repo: &Repository,
    updates: &[Update],
    options: &FetchOptions,
    messages: &dyn FetchMessages,
) -> Result<Result<Cut, ObjectId>, RunError> {
    let deepen = options.deepen.clone();
    let shallow = repo.shallow_commits()?;
    let mut wants: Vec<ObjectId> = updates
        .iter()
        .map(|u| u.remote.id)
        .filter(|id| deepen.is_set() || options.refetch || !repo.objects().contains(id))
        .collect();
    wants.sort_unstable();
    wants.dedup();
    let mut cut = Cut {
        ours: shallow,
        remote: Vec::new(),
    };
    if wants.is_empty() {
        return Ok(Ok(cut));
    }
    // A filtered fetch's pack is a promisor pack, kept whatever its size, as in git.
    let promisor = options.filter.is_some();
    // `--refetch` offers nothing, so that the server sends all the wants reach.
    let mut tips: Vec<ObjectId> = Vec::new();
    if !options.refetch && options.negotiation != NegotiationAlgorithm::Noop {
        match options.negotiation_tips.is_empty() {
            true => tips.extend(repo.refs().list()?.into_iter().map(|(_, id)| id)),
            false => tips.extend(negotiation_tips(repo, &options.negotiation_tips)?),
        }
        tips.extend(alternate_tips(repo.objects()));
    }
    let mut negotiator = HistoryNegotiator::new(repo.objects(), tips);
    let request = FetchRequest {
        wants,
        shallow: cut.ours.clone(),
        deepen,
        filter: options.filter.clone(),
        include_tag: options.refs.follow_tags,
        progress: options.remote_progress,
        reject_shallow_remote: false,
    };
    // The configuration read at the start does not show a promisor remote `--filter` has just
    // made.
    let remote_name = &options.refs.remote_name;
    let promised = match promisor {
        true => Some(Promised::from(options.cwd, repo, remote_name)),
        false => Promised::of(options.cwd, repo, remote_name)?,
    };
    let promised = promised.map(|promised| promised.cancelled_by(&options.connect.cancel));
    let objects: &dyn ObjectLookup = match &promised {
        Some(promised) => promised,
        None => repo.objects(),
    };
    if request.filter.is_some() && !connection.filters() {
        messages.warning("filtering not recognized by server, ignoring");
    }
    // Decided once: a pack of fewer objects is unpacked (below), and its progress is
    // unpack-objects'.
    let unpack_below = match promisor || options.keep {
        true => None,
        false => u64::try_from(pack_store::unpack_limit(repo.config(), "fetch")?).ok(),
    };
    let unpack_below = unpack_below.filter(|&limit| limit > 0);
    let shown = match unpack_below {
        Some(limit) => {
            let unpacking = options.unpack_progress;
            PackProgress::unpacking_below(limit, options.receive_progress, unpacking)
        }
        None => PackProgress::indexing(options.receive_progress),
    };
    let receiving = Receiving {
        progress: &shown,
        objects: Some(objects),
        ..Receiving::default()
    };
    let remote_progress = |text: &[u8]| messages.remote_progress(text);
    let fetched = receive::fetch_into(
        connection,
        repo,
        &request,
        &mut negotiator,
        receiving,
        remote_progress,
    );
    let received = match fetched {
        Ok(received) => received,
        Err(
            ReceiveError::Store(StoreError::NotConnected { missing })
            | ReceiveError::Incomplete { missing },
        ) => return Ok(Err(missing)),
        Err(other) => return Err(other.into()),
    };
    for finding in &received.fsck_warnings {
        messages.warning(&finding.to_string());
    }
    repo.update_shallow(&received.shallow, &received.unshallow)?;
    cut.remote = received.remote_shallow.clone();
    if promisor {
        received.mark_promisor(&[])?;
    } else if let Some(limit) = unpack_below {
        unpack_if_small(&received, repo, limit)?;
    }
    Ok(Ok(cut))
}

/// The updates of a fetch whose objects are in, with the tags to follow once they are.
struct Fetched {
    updates: Vec<Update>,
    backfill: Vec<RemoteRef>,
    cut: Cut,
}

/// Moves the refs (now that the objects are in), prunes, writes FETCH_HEAD and sets the
/// upstream, as git does.
fn move_refs(
    remote: &Remote,
    repo: &Repository,
    fetched: Fetched,
    advertised: &[RemoteRef],
    options: &FetchOptions,
) -> Result<Moved, RunError> {
    let odb = repo.objects();
    let updates = in_order(repo, odb, fetched, options.update_shallow)?;
    // With --atomic, one refused update keeps every ref (pruned ones included) and FETCH_HEAD
    // as they were; the report still says what each would have been, as git's does.
    let stale = match &options.prune {
        Some(specs) => stale_refs(repo, specs, advertised)?,
        None => Vec::new(),
    };
    let in_the_way = match options.atomic && !options.dry_run {
        true => conflicts(repo, odb, &updates, &stale)?,
        false => Vec::new(),
    };
    let held_back = options.atomic
        && (!in_the_way.is_empty()
            || any_rejected(repo, odb, &updates, options.show_forced_updates));
    let dry_run = options.dry_run || held_back;
    // git prunes before it updates (a branch `a` pruned makes room for a new `a/b`), and says
    // so first.
    let Some(mut lines) = prune_stale(repo, &stale, dry_run)? else {
        // git dies there: nothing else moves, and FETCH_HEAD stays as the fetch's start left
        // it (emptied, unless appended to).
        if options.fetch_head == Some(false) {
            clear_fetch_head(repo)?;
        }
        return Ok(Moved {
            lines: Vec::new(),
            in_the_way: Vec::new(),
            refused: Refused::None,
            upstream_warning: None,
            aborted_by_hook: true,
            summary_width: summary_width(repo, &[]),
        });
    };
    let who = reflog_identity(repo.config());
    let changes = Changes {
        dry_run,
        verbose: options.verbose,
        action: &options.action,
        who: &who,
        atomic: options.atomic,
        checked: options.show_forced_updates,
    };
    let updated = update_refs(repo, odb, &updates, &changes, &mut lines)?;
    if let Some(append) = options.fetch_head {
        // As git's: the refs the fetch took before a refusing reference-transaction hook
        // stopped it, nothing under --atomic.
        let recorded: &[Update] = match (held_back, updated.aborted_at) {
            (true, _) | (_, Some(_)) if options.atomic => &[],
            (_, Some(at)) => &updates[..=at],
            _ => &updates,
        };
        write_fetch_head(repo, recorded, display_url(&remote.shown), append)?;
    }
    if updated.aborted_at.is_some() && !options.atomic {
        // git says nothing of the refs before the one refused.
        lines.clear();
    }
    let mut upstream_warning = None;
    if options.set_upstream {
        let fetched: Vec<&RemoteRef> = updates
            .iter()
            .filter(|u| u.local.is_none() && u.listed != Listed::CutOff)
            .map(|u| &u.remote)
            .collect();
        let plan = &options.refs;
        let current = plan.current_branch.as_deref();
        upstream_warning = set_upstream(repo, current, &plan.remote_name, &fetched)?;
    }
    Ok(Moved {
        summary_width: summary_width(repo, &lines),
        lines,
        in_the_way,
        refused: updated.refused,
        upstream_warning,
        aborted_by_hook: updated.aborted_at.is_some(),
    })
}

/// The summary column's width for the ids the report's `lines` abbreviate.
fn summary_width(repo: &Repository, lines: &[Report]) -> usize {
    let ids = lines.iter().flat_map(|report| match report {
        Report::Line(line) => vec![line.old, line.new],
        Report::Warning(_) => Vec::new(),
    });
    sluice_repo::abbrev::summary_width(repo, ids)
}

/// The updates in the order git makes and reports them, tags followed after the pack last, with
/// a shallow remote's cut applied (see [`RemoteCut`]).
fn in_order(
    repo: &Repository,
    odb: &ObjectDb,
    fetched: Fetched,
    update_shallow: bool,
) -> Result<Vec<Update>, RunError> {
    let Fetched {
        mut updates,
        backfill,
        cut,
    } = fetched;
    // Tags followed once their objects are in are taken and reported after the rest, as git
    // takes them in a second fetch.
    let mut later: Vec<Update> = backfill
        .into_iter()
        .filter(|tag| odb.contains(&tag.id))
        .map(|tag| Update {
            local: Some(tag.name.clone()),
            remote: tag,
            force: false,
            listed: Listed::NotForMerge,
        })
        .collect();
    if !cut.remote.is_empty() {
        let remote_cut = RemoteCut {
            ours: &cut.ours,
            remote: &cut.remote,
            update_shallow,
        };
        let mut known: Vec<ObjectId> = repo.refs().list()?.into_iter().map(|(_, id)| id).collect();
        known.extend(repo.refs().resolve("HEAD").ok().and_then(|(_, id)| id));
        remote_cut.apply(repo, odb, &known, &mut updates)?;
        // The second fetch comes after the first moved its refs.
        known.extend(
            updates
                .iter()
                .filter(|u| u.local.is_some() && u.listed != Listed::CutOff)
                .map(|u| u.remote.id),
        );
        remote_cut.apply(repo, odb, &known, &mut later)?;
    }
    // What is no commit (a tag of a tree or a blob) is nothing `git pull` could merge.
    for update in updates.iter_mut().filter(|u| u.listed == Listed::ForMerge) {
        if odb.peel_to_commit(update.remote.id).is_none() {
            update.listed = Listed::NotForMerge;
        }
    }
    updates.sort_by_key(|u| u.listed.pass());
    later.sort_by_key(|u| u.listed.pass());
    updates.append(&mut later);
    Ok(updates)
}
