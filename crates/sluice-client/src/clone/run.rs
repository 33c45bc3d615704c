//! A clone into a repository that exists and is empty, in its steps: the plan from the
//! remote's refs, the objects (the source's files for a local clone, else the pack, checked out
//! while its deltas resolve where that can be), the refs and configuration, and the checkout
//! that was not done on the way.

use super::config::{write_config, Recorded};
use super::early::EarlyCheckout;
use super::partial::fetch_missing_blobs;
use super::plan::{guess_remote_head, ClonePlan, CloneShape, Origin};
use super::refs::{write_refs, RefLog};
use super::CloneError;
use crate::local_clone::{transfer_objects, ObjectTransfer};
use crate::receive::{self, Received, Receiving};
use crate::reference::alternate_tips;
use crate::remote_shallow;
use crate::HistoryNegotiator;
use sluice_checkout::{checkout_fresh, commit_tree, CheckoutOptions};
use sluice_object::progress::Progress;
use sluice_object::ObjectId;
use sluice_pack::ArrivingPack;
use sluice_remote::{
    anonymized, ConnectOptions, Connection, Deepen, FetchRequest, Negotiator, NoHaves, Remote,
    RemoteRef,
};
use sluice_repo::refs::reflog_identity;
use sluice_repo::sparse::SparseCone;
use sluice_repo::Repository;
use std::path::PathBuf;

/// What a clone says while it works, for the command line to show (or not, under `-q`).
pub enum CloneNotice<'a> {
    /// The remote has no refs.
    EmptyRepository,
    /// The source's object files are in (a clone from a path).
    ObjectsLinked,
    /// A warning, in git's words.
    Warning(&'a str),
}

/// Where a clone's messages and progress go.
pub trait CloneMessages: Sync {
    /// A message.
    fn tell(&self, told: CloneNotice<'_>);
    /// The server's progress (band 2), as it arrives.
    fn remote_progress(&self, text: &[u8]);
}

/// The object directory a clone from a path takes its objects from, and how.
#[derive(Debug, Clone)]
pub struct LocalSource {
    /// The source's object directory.
    pub objects: PathBuf,
    /// Links, copies or an alternate.
    pub transfer: ObjectTransfer,
}

/// How a clone is made: the command line's flags and the configuration, decided.
pub struct CloneOptions<'a> {
    /// Which refs it takes and how it names them.
    pub shape: CloneShape,
    /// How far to cut history.
    pub deepen: Deepen,
    /// `--filter`: a partial clone.
    pub filter: Option<String>,
    /// Unless `--no-tags`: tags pointing into what is fetched come along.
    pub tags: bool,
    /// Unless `--no-checkout` (or bare): the work tree is checked out.
    pub check_out: bool,
    /// `--reject-shallow`: a shallow source is refused.
    pub reject_shallow: bool,
    /// How to reach the remote.
    pub connect: ConnectOptions,
    /// A clone from a path: the objects come as files.
    pub local: Option<LocalSource>,
    /// Use the bundles the server advertises (bundle-uri; `transfer.bundleURI`, on by
    /// default in Sluice): the history comes from where they are, the server sends the rest.
    pub bundle_uri: bool,
    /// `--bundle-uri=<uri>`: this bundle first (a URL or a path), and not the server's list.
    pub bundle_from: Option<String>,
    /// Whether the server is asked for its progress.
    pub remote_progress: bool,
    /// index-pack's progress.
    pub receive_progress: &'a dyn Progress,
    /// The progress of a checkout during resolution (shown after the pack's, as git orders
    /// them: the caller keeps it until the clone returns).
    pub early_checkout_progress: &'a dyn Progress,
    /// The progress of a checkout after the pack is in.
    pub checkout_progress: &'a dyn Progress,
}

/// What the clone did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cloned {
    /// The commit HEAD points at, if any.
    pub head: Option<ObjectId>,
    /// The work tree was checked out while the pack's deltas were resolved.
    pub checked_out_early: bool,
}

/// Clones `remote` into `repo`, a repository just made empty on the branch `initial`.
pub fn clone_into(
    remote: &Remote,
    origin: &Origin,
    repo: &Repository,
    initial: &str,
    options: &CloneOptions,
    messages: &dyn CloneMessages,
) -> Result<Cloned, CloneError> {
    let mut connection = remote.connect(&options.connect)?;
    if let Some(url) = connection.redirected_to() {
        messages.tell(CloneNotice::Warning(&format!("redirecting to {url}")));
    }
    let prefixes = origin.ref_prefixes(&options.shape);
    let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
    let mut advertised = connection.ls_refs(&prefixes)?;
    guess_remote_head(&mut advertised, initial);
    let mut plan = ClonePlan::new(&options.shape, origin, &advertised)?;
    if advertised.is_empty() {
        // An empty remote: HEAD names the branch its HEAD will make when protocol v2 says
        // ("unborn"), else the one this repository was made on; either way it is the branch
        // whose upstream is configured, as git does.
        let unborn = connection.unborn_head();
        let branch = unborn.filter(|name| name.starts_with("refs/heads/"));
        plan.head_branch = Some(branch.unwrap_or(initial).to_owned());
    }
    let bundled = bundles(&mut connection, repo, options, messages);
    let wants = plan.wants();
    let request = request(repo, &wants, options);
    if wants.is_empty() {
        messages.tell(CloneNotice::EmptyRepository);
    }
    let early = early_checkout(repo, plan.checkout_id(&advertised), options)?;
    let received = receive(
        &mut connection,
        (repo, &bundled),
        &request,
        early.as_ref(),
        options,
        messages,
    )?;
    connection.finish()?;
    if let (Some(received), Some(_)) = (&received, &options.filter) {
        received.mark_promisor(&advertised)?;
    }
    let head = refs_and_config(remote, origin, repo, &plan, &advertised, options)?;
    if let Some(outcome) = early.and_then(EarlyCheckout::finish) {
        for warning in outcome? {
            messages.tell(CloneNotice::Warning(&warning));
        }
        return Ok(Cloned {
            head,
            checked_out_early: true,
        });
    }
    match (head, options.check_out) {
        (Some(id), true) => check_out(remote, repo, &id, &advertised, options, messages)?,
        // The remote's HEAD names a branch it has not (git says so, `-q` or not); an empty
        // remote has said why already.
        (None, true) if !wants.is_empty() => messages.tell(CloneNotice::Warning(
            "remote HEAD refers to nonexistent ref, unable to checkout",
        )),
        _ => {}
    }
    Ok(Cloned {
        head,
        checked_out_early: false,
    })
}

/// The bundle given (`--bundle-uri`), or those the server advertises where they can serve (not
/// for a clone from a path, a partial or a shallow one), brought in before the fetch: the tips
/// they gave. A bundle that fails only means the server sends its objects, as git's client
/// does.
fn bundles(
    connection: &mut Connection,
    repo: &Repository,
    options: &CloneOptions,
    messages: &dyn CloneMessages,
) -> Vec<ObjectId> {
    // A bundle given (`--bundle-uri`) is taken whatever the transport, as git takes it.
    if let Some(uri) = &options.bundle_from {
        return match crate::bundle_uri::fetch_bundle(repo, uri, &options.connect) {
            Ok(tips) => tips,
            Err(e) => {
                for warning in e.warnings(uri) {
                    messages.tell(CloneNotice::Warning(&warning));
                }
                Vec::new()
            }
        };
    }
    let usable = options.bundle_uri
        && options.local.is_none()
        && options.filter.is_none()
        && !options.deepen.is_set();
    if !usable {
        return Vec::new();
    }
    match crate::bundle_uri::fetch_bundles(connection, repo, &options.connect) {
        Ok(tips) => tips,
        Err(e) => {
            let warning = format!("failed to fetch advertised bundles: {e}");
            messages.tell(CloneNotice::Warning(&warning));
            Vec::new()
        }
    }
}

/// What the clone asks the remote for: `wants` less what a reference repository already has
/// (unless the history is cut, where the server decides what "have" means), as git does not
/// ask for what it has.
fn request(repo: &Repository, wants: &[ObjectId], options: &CloneOptions) -> FetchRequest {
    let deepen = options.deepen.clone();
    let missing: Vec<ObjectId> = wants
        .iter()
        .filter(|id| deepen.is_set() || !repo.objects().contains(id))
        .copied()
        .collect();
    FetchRequest {
        wants: missing,
        shallow: Vec::new(),
        deepen,
        filter: options.filter.clone(),
        include_tag: options.tags,
        progress: options.remote_progress,
        reject_shallow_remote: options.reject_shallow,
    }
}

/// The checkout during resolution, where the arriving pack will hold all the files of
/// `commit`: a checkout is wanted, the clone is not partial (a partial clone lacks blobs, so it
/// checks out afterwards) and borrows nothing from a reference repository.
fn early_checkout<'r>(
    repo: &'r Repository,
    commit: Option<ObjectId>,
    options: &CloneOptions<'r>,
) -> Result<Option<EarlyCheckout<'r>>, CloneError> {
    let possible =
        options.check_out && options.filter.is_none() && repo.objects().alternates().is_empty();
    let Some(commit) = commit.filter(|_| possible) else {
        return Ok(None);
    };
    let mut checkout = CheckoutOptions::from_config(repo.config())?;
    checkout.write.cancel = options.connect.cancel.clone();
    checkout.sparse = options.shape.cone();
    let progress = options.early_checkout_progress;
    Ok(Some(EarlyCheckout::new(repo, commit, checkout, progress)))
}

/// Brings the objects in: the source's files for a local clone, else the pack for `request`,
/// offering what the references' refs and the bundles' tips reach as haves, and the shallow
/// file the server's cut makes. Returns the pack received, if one was.
fn receive(
    connection: &mut Connection,
    (repo, bundled): (&Repository, &[ObjectId]),
    request: &FetchRequest,
    early: Option<&EarlyCheckout>,
    options: &CloneOptions,
    messages: &dyn CloneMessages,
) -> Result<Option<Received>, CloneError> {
    if let Some(local) = &options.local {
        let objects = repo.git_dir().join("objects");
        for warning in transfer_objects(&local.objects, &objects, local.transfer)? {
            messages.tell(CloneNotice::Warning(&warning));
        }
        messages.tell(CloneNotice::ObjectsLinked);
        return Ok(None);
    }
    if request.wants.is_empty() {
        return Ok(None);
    }
    if request.filter.is_some() && !connection.filters() {
        messages.tell(CloneNotice::Warning(
            "filtering not recognized by server, ignoring",
        ));
    }
    let alongside = |pack: &ArrivingPack<'_>| {
        if let Some(early) = early {
            early.check_out(pack);
        }
    };
    let shown = crate::receive::PackProgress::indexing(options.receive_progress);
    let receiving = Receiving {
        progress: &shown,
        alongside: early.is_some().then_some(&alongside as _),
        ..Receiving::default()
    };
    let mut borrowed = alternate_tips(repo.objects());
    borrowed.extend_from_slice(bundled);
    let mut history;
    let negotiator: &mut dyn Negotiator = if borrowed.is_empty() {
        &mut NoHaves
    } else {
        history = HistoryNegotiator::new(repo.objects(), borrowed);
        &mut history
    };
    let remote_progress = |text: &[u8]| messages.remote_progress(text);
    let got = receive::fetch_into(
        connection,
        repo,
        request,
        negotiator,
        receiving,
        remote_progress,
    )?;
    for finding in &got.fsck_warnings {
        messages.tell(CloneNotice::Warning(&finding.to_string()));
    }
    // A shallow server's cut is this clone's too, where the pack reached it.
    let mut shallow = got.shallow.clone();
    if !got.remote_shallow.is_empty() {
        let odb = repo.objects();
        shallow.extend(remote_shallow::arrived(odb, &got.remote_shallow));
    }
    repo.update_shallow(&shallow, &got.unshallow)?;
    Ok(Some(got))
}

/// The refs (with the tags that came along and, outside a bare clone, reflogs) and the
/// remote's configuration; returns the commit HEAD points at.
fn refs_and_config(
    remote: &Remote,
    origin: &Origin,
    repo: &Repository,
    plan: &ClonePlan,
    advertised: &[RemoteRef],
    options: &CloneOptions,
) -> Result<Option<ObjectId>, CloneError> {
    // Tags that point into what arrived come along when only part of the remote was asked for.
    let followed = if options.shape.single_branch && options.tags {
        plan.followed_tags(advertised, |id| repo.objects().contains(id))
    } else {
        Vec::new()
    };
    let reflog = (!plan.bare).then(|| RefLog {
        who: reflog_identity(repo.config()),
        message: format!("clone: from {}", anonymized(&remote.recorded)),
    });
    let head = write_refs(repo, origin, plan, advertised, &followed, reflog.as_ref())?;
    let recorded = Recorded {
        no_tags: !options.tags,
        mirror: options.shape.mirror,
        filter: options.filter.as_deref(),
        sparse: options.shape.sparse,
    };
    write_config(repo, remote, origin, plan, recorded)?;
    match (options.shape.sparse, plan.bare) {
        (true, true) => return Err(CloneError::SparseWithoutWorkTree),
        (true, false) => SparseCone::write_top_level(repo.git_dir())?,
        (false, _) => {}
    }
    Ok(head)
}

/// The checkout after the clone, where none ran while the pack arrived; a partial clone
/// first fetches the blobs it lacks.
fn check_out(
    remote: &Remote,
    repo: &Repository,
    commit: &ObjectId,
    advertised: &[RemoteRef],
    options: &CloneOptions,
    messages: &dyn CloneMessages,
) -> Result<(), CloneError> {
    let tree = commit_tree(repo.objects(), commit)?;
    if options.filter.is_some() {
        let progress = (options.remote_progress, options.receive_progress);
        let remote_progress = |text: &[u8]| messages.remote_progress(text);
        fetch_missing_blobs(
            (remote, options.shape.cone().as_ref()),
            &options.connect,
            repo,
            &tree,
            advertised,
            progress,
            remote_progress,
        )?;
    }
    let mut checkout = CheckoutOptions::from_config(repo.config())?;
    checkout.write.cancel = options.connect.cancel.clone();
    checkout.sparse = options.shape.cone();
    for warning in checkout_fresh(repo, &tree, &checkout, options.checkout_progress)? {
        messages.tell(CloneNotice::Warning(&warning));
    }
    Ok(())
}
