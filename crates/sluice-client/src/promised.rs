//! The objects of a partial clone, as fix-thin reads delta bases: the server sends deltas
//! against anything reachable from the haves, and a partial clone lacks some of that by
//! design. Those bases are fetched from the promisor remote first, all in one request, into a
//! promisor pack, as git's index-pack does.

use crate::partial::is_promisor;
use crate::receive::{self, ReceiveError, Receiving};
use sluice_generate::pack_objects::{Filters, Selection};
use sluice_graph::{walk_objects, Missing, WalkRequest, Walked};
use sluice_object::cancel::Cancel;
use sluice_object::progress::{Discard, Progress};
use sluice_object::{ObjectId, ObjectKind};
use sluice_odb::ConfigError;
use sluice_pack::{LookupError, ObjectLookup};
use sluice_remote::{ConnectOptions, FetchError, FetchRequest, NoHaves, Remote, SettingsError};
use sluice_repo::Repository;
use std::path::Path;

/// Why the promisor remote could not give the objects asked for.
#[derive(Debug, thiserror::Error)]
pub enum LazyFetchError {
    /// The remote could not be reached or failed.
    // Not transparent: the FetchError stays in the chain of causes, where the binary
    // finds what the server said.
    #[error("{0}")]
    Fetch(#[from] FetchError),
    /// The connection settings are bad.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The pack could not be stored.
    #[error(transparent)]
    Receive(#[from] ReceiveError),
}

/// A repository's objects, with what its promisor remote sent on request.
pub struct Promised<'a> {
    /// Where a relative remote path is taken from.
    cwd: &'a Path,
    repo: &'a Repository,
    /// The promisor remote: a remote's name, or a URL fetched from with `--filter`.
    remote: String,
    /// Stops a fetch from it (the command's signal).
    cancel: Cancel,
}

impl<'a> Promised<'a> {
    /// The objects of `repo`, if it has a promisor remote to ask for missing ones: `fetching`
    /// when it is one, else the first of them.
    pub fn of(
        cwd: &'a Path,
        repo: &'a Repository,
        fetching: &str,
    ) -> Result<Option<Self>, ConfigError> {
        let config = repo.config();
        let candidates = std::iter::once(fetching.to_owned())
            .chain(config.get("extensions.partialclone").map(str::to_owned))
            .chain(config.subsection_names("remote"));
        for name in candidates {
            if is_promisor(config, &name)? {
                return Ok(Some(Self::from(cwd, repo, &name)));
            }
        }
        Ok(None)
    }

    /// The objects of `repo` with `remote` to ask for missing ones.
    pub fn from(cwd: &'a Path, repo: &'a Repository, remote: &str) -> Self {
        Promised {
            cwd,
            repo,
            remote: remote.to_owned(),
            cancel: Cancel::default(),
        }
    }

    /// The same, its fetches stopped by `cancel`.
    pub fn cancelled_by(self, cancel: &Cancel) -> Self {
        Promised {
            cancel: cancel.clone(),
            ..self
        }
    }

    /// One fetch of exactly `missing`, as git's lazy fetch asks: no haves, no blobs beyond
    /// those named, no progress.
    fn fetch(&self, missing: &[ObjectId]) -> Result<(), LazyFetchError> {
        let config = self.repo.config();
        let key = |name: &str| format!("remote.{}.{name}", self.remote);
        let url = config.get(&key("url")).unwrap_or(&self.remote);
        let remote = Remote::resolve(self.cwd, &sluice_remote::fetch_url(config, url))?;
        let options = ConnectOptions {
            cancel: self.cancel.clone(),
            ..ConnectOptions::from_config(config, config.get(&key("uploadpack")))?
        };
        let mut connection = remote.connect(&options)?;
        let request = FetchRequest {
            wants: missing.to_vec(),
            filter: Some("blob:none".to_owned()),
            ..FetchRequest::default()
        };
        let receiving = Receiving::default();
        let got = receive::fetch_into(
            &mut connection,
            self.repo,
            &request,
            &mut NoHaves,
            receiving,
            |_| {},
        )?;
        connection.finish()?;
        // The repository's next view of its objects has the pack just stored.
        got.mark_promisor(&[])?;
        Ok(())
    }
}

/// Before a checkout of `tree` in a partial clone: the blobs it names that the repository
/// lacks, fetched from its promisor remote in one request, as git's checkout fetches them
/// (in a sparse checkout, only those inside its `cone`). Nothing happens in a repository
/// without a promisor remote; `cancel` stops the fetch.
pub fn fetch_blobs_of_tree(
    cwd: &Path,
    repo: &Repository,
    (tree, cone): (&ObjectId, Option<&sluice_repo::sparse::SparseCone>),
    cancel: &Cancel,
) -> Result<(), LookupError> {
    let Some(promised) = Promised::of(cwd, repo, "origin").map_err(LookupError::new)? else {
        return Ok(());
    };
    let promised = promised.cancelled_by(cancel);
    let missing = missing_blobs(repo, tree, cone).map_err(LookupError::new)?;
    match missing.is_empty() {
        true => Ok(()),
        false => promised.prefetch(&missing),
    }
}

/// The blobs `tree` names (submodules aside) that `repo` lacks, each once, in id order; only
/// those inside `cone`, where a sparse checkout leaves the rest out.
pub(crate) fn missing_blobs(
    repo: &Repository,
    tree: &ObjectId,
    cone: Option<&sluice_repo::sparse::SparseCone>,
) -> Result<Vec<ObjectId>, sluice_checkout::CheckoutError> {
    let odb = repo.objects();
    let flat = sluice_checkout::tree::flatten(odb, tree)?;
    let inside = |path: &[u8]| cone.is_none_or(|cone| cone.includes(path));
    let mut missing: Vec<ObjectId> = (flat.files.iter())
        .filter(|file| file.mode != 0o160000 && inside(&file.path) && !odb.contains(&file.id))
        .map(|file| file.id)
        .collect();
    missing.sort_unstable();
    missing.dedup();
    Ok(missing)
}

/// Why a walk could not be completed with what the promisor remote sends.
#[derive(Debug, thiserror::Error)]
pub enum PromisedWalkError {
    /// The walk failed (a missing object nothing promised, a damaged one).
    #[error(transparent)]
    Walk(#[from] sluice_graph::WalkError),
    /// The promisor remote did not give what was missing.
    #[error(transparent)]
    Fetch(#[from] LookupError),
    /// The promisor remote's settings could not be read.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// In a partial clone, what pack-objects is to pack and the repository lacks, fetched from the
/// promisor remote before it packs, as git's pack-objects does: what the revisions of
/// `selection` reach (walked as `filters` say), or the objects it lists; elsewhere nothing (and
/// no walk).
pub fn fetch_to_pack(
    repo: &Repository,
    selection: &Selection,
    filters: &Filters<'_>,
) -> Result<(), PromisedWalkError> {
    match selection {
        Selection::Revs { include, exclude } => {
            let request = WalkRequest {
                filter: filters.object_filter,
                shallow: filters.shallow,
                ..WalkRequest::reachable(include, exclude, filters.cancel.clone())
            };
            fetch_missing(repo, request)
        }
        Selection::Listed(listed) => {
            let ids: Vec<_> = listed.iter().map(|(id, _)| *id).collect();
            fetch_absent(repo, &ids, &filters.cancel)
        }
        Selection::Packs { .. } => Ok(()),
    }
}

/// In a partial clone, fetches from the promisor remote what the walk `request` asks for meets
/// missing; elsewhere nothing (and no walk).
fn fetch_missing(repo: &Repository, request: WalkRequest<'_>) -> Result<(), PromisedWalkError> {
    let cwd = relative_base(repo);
    match Promised::of(&cwd, repo, "origin")? {
        Some(promised) => {
            let promised = promised.cancelled_by(&request.cancel);
            walk_with(&promised, repo, request, &Discard).map(drop)
        }
        None => Ok(()),
    }
}

/// In a partial clone, fetches from the promisor remote those of `ids` the repository lacks, in
/// one request; elsewhere nothing.
fn fetch_absent(
    repo: &Repository,
    ids: &[ObjectId],
    cancel: &Cancel,
) -> Result<(), PromisedWalkError> {
    let cwd = relative_base(repo);
    let Some(promised) = Promised::of(&cwd, repo, "origin")? else {
        return Ok(());
    };
    let promised = promised.cancelled_by(cancel);
    let odb = repo.objects().with_alternate_packs();
    let mut absent: Vec<ObjectId> = ids.iter().filter(|id| !odb.contains(id)).copied().collect();
    absent.sort_unstable();
    absent.dedup();
    if !absent.is_empty() {
        promised.prefetch(&absent)?;
    }
    Ok(())
}

/// The walk `request` asks for. In a partial clone, what it meets missing (by design: the
/// promisor remote has it) is fetched from the promisor remote first, as git's pack-objects
/// fetches what it must send.
pub fn walk_fetching_missing(
    repo: &Repository,
    request: WalkRequest<'_>,
    progress: &dyn Progress,
) -> Result<Walked, PromisedWalkError> {
    let cwd = relative_base(repo);
    match Promised::of(&cwd, repo, "origin")? {
        Some(promised) => {
            let promised = promised.cancelled_by(&request.cancel);
            walk_with(&promised, repo, request, progress)
        }
        None => {
            let odb = repo.objects().with_alternate_packs();
            Ok(walk_objects(&odb, &request, progress)?)
        }
    }
}

/// Where a promisor remote given by a relative path is taken from: the work tree, else the
/// repository.
fn relative_base(repo: &Repository) -> std::path::PathBuf {
    repo.work_tree().unwrap_or(repo.git_dir()).to_owned()
}

/// The walk `request` asks for, each round's missing trees and blobs fetched from `promised`
/// in one request, then the walk again for what those trees name, until nothing is missing.
fn walk_with(
    promised: &Promised<'_>,
    repo: &Repository,
    request: WalkRequest<'_>,
    progress: &dyn Progress,
) -> Result<Walked, PromisedWalkError> {
    let request = WalkRequest {
        missing: Missing::SetAside,
        ..request
    };
    // Each round fetches a level of trees at least: a history deeper than this is hostile.
    for _ in 0..=MAX_ROUNDS {
        let odb = repo.objects().with_alternate_packs();
        let walked = walk_objects(&odb, &request, progress)?;
        if walked.missing.is_empty() {
            return Ok(walked);
        }
        let missing: Vec<ObjectId> = walked.missing.iter().map(|o| o.id).collect();
        promised.prefetch(&missing)?;
    }
    Err(LookupError::new("the promisor remote did not send what was missing").into())
}

/// Rounds of fetching what a partial clone lacks before a walk gives up.
const MAX_ROUNDS: usize = 64;

/// `error` and its causes on one line, each once, as git prints a chain of reasons.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let said = inner.to_string();
        if !text.ends_with(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = inner.source();
    }
    text
}

impl ObjectLookup for Promised<'_> {
    fn contains(&self, id: &ObjectId) -> bool {
        self.repo.objects().contains(id)
    }

    fn read(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, LookupError> {
        self.repo.objects().read(id).map_err(LookupError::new)
    }

    fn prefetch(&self, missing: &[ObjectId]) -> Result<(), LookupError> {
        // `--no-lazy-fetch` (`GIT_NO_LAZY_FETCH`): the objects stay missing, as git leaves them.
        let off = std::env::var("GIT_NO_LAZY_FETCH").ok();
        if off
            .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
        {
            return Err(LookupError::new(
                "lazy fetching disabled; some objects may not be available",
            ));
        }
        self.fetch(missing).map_err(|e| {
            LookupError::new(format!(
                "could not fetch missing objects from promisor remote '{}': {}",
                self.remote,
                with_causes(&e)
            ))
        })
    }
}
