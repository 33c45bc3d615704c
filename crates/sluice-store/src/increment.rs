//! Incremental bundles: after pushes, what the refs reach now beyond what the newest bundle's
//! refs reached, as a bundle whose prerequisites are those refs' commits, listed with the next
//! creation token. A clone applies the full bundle and then each increment in token order
//! (git's `creationToken` heuristic); a fetch that already has the full one takes only the new
//! increments. Each bundle's refs are kept beside it (`<name>.refs`, the ref snapshot format),
//! so the next increment knows where this one ended.

use crate::bundle::write_bundle_with;
use crate::lease::Lease;
use crate::maintain::bundle_key;
use crate::node::Node;
use crate::stored::StoredRepo;
use crate::{ref_snapshot, StoreError};
use sluice_object::progress::Progress;
use sluice_object::{HashKind, ObjectId};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long an increment may hold the repository's lease.
const LEASE: Duration = Duration::from_secs(600);

/// The key of the refs a bundle brings.
pub(crate) fn refs_key(repo: &StoredRepo, bundle: &str) -> String {
    repo.key(&format!("bundles/{bundle}.refs"))
}

/// Keeps `refs` as the refs of `bundle`, for the next increment.
pub(crate) fn keep_refs(
    repo: &StoredRepo,
    bundle: &str,
    refs: &BTreeMap<String, ObjectId>,
) -> Result<(), StoreError> {
    repo.bucket()
        .put_immutable(&refs_key(repo, bundle), ref_snapshot::write(refs))
}

/// Writes the increment of `repo` since its newest bundle, on `node`'s cache; `None` when there
/// is no bundle to build on or nothing changed since.
pub fn bundle_increment(
    node: &Node,
    repo: &StoredRepo,
    progress: &dyn Progress,
) -> Result<Option<String>, StoreError> {
    let lease = Lease::acquire(repo, LEASE)?;
    let done = increment(node, repo, progress);
    let released = lease.release();
    let done = done?;
    released?;
    Ok(done.map(|(name, _)| name))
}

/// [`bundle_increment`] for a caller holding the lease: the increment's name and the manifest
/// that lists it.
pub(crate) fn increment(
    node: &Node,
    repo: &StoredRepo,
    progress: &dyn Progress,
) -> Result<Option<(String, crate::manifest::Manifest)>, StoreError> {
    let Some(pinned) = node.pin(repo.folder())? else {
        return Err(StoreError::NoRepository(repo.folder().to_owned()));
    };
    let manifest = &pinned.manifest;
    let Some((last, _)) = manifest.bundles.iter().max_by_key(|(_, token)| *token) else {
        return Ok(None);
    };
    let Some(stored) = repo.bucket().get(&refs_key(repo, last))? else {
        return Ok(None);
    };
    let damaged = |source| StoreError::Manifest {
        repo: repo.folder().to_owned(),
        source,
    };
    let before = ref_snapshot::parse(&stored.bytes, HashKind::Sha1).map_err(damaged)?;
    if before == manifest.refs {
        return Ok(None);
    }
    let served = node.open_dir(&pinned.dir)?;
    let odb = served.objects();
    let mut haves: Vec<ObjectId> = before.values().copied().collect();
    haves.sort_unstable();
    haves.dedup();
    let wants: Vec<ObjectId> = (manifest.refs.values())
        .filter(|id| haves.binary_search(id).is_err())
        .copied()
        .collect();
    let cancel = node.cancel().clone();
    let request = sluice_graph::WalkRequest::reachable(&wants, &haves, cancel.clone());
    let walked = sluice_graph::walk_objects(odb, &request, progress)
        .map_err(|e| StoreError::Walk(Box::new(e)))?;
    // Prerequisites are commits: the haves peeled, as git's bundles name them.
    let mut prerequisites: Vec<ObjectId> = haves
        .iter()
        .filter_map(|id| odb.peel_to_commit(*id))
        .collect();
    prerequisites.sort_unstable();
    prerequisites.dedup();
    let token = manifest.generation;
    let name = format!("inc-{token}");
    let workspace = node.workspace(&pinned)?;
    let file = workspace.dir().join(format!("{name}.bundle"));
    let options = sluice_generate::PackOptions {
        thin: true,
        ofs_delta: true,
        cancel,
        ..Default::default()
    };
    let refs = manifest.refs.iter().map(|(n, id)| (n.as_str(), id));
    write_bundle_with(&file, refs, &prerequisites, |out| {
        sluice_generate::write_pack(odb, &walked, &options, out, progress)
            .map(|_| ())
            .map_err(std::io::Error::other)
    })
    .map_err(StoreError::file(&file))?;
    repo.bucket().upload(&bundle_key(repo, &name), &file)?;
    keep_refs(repo, &name, &manifest.refs)?;
    let committed = repo.commit(|current| {
        // Built on `last`: only while it is still listed (a compaction since replaced it).
        if !current.bundles.iter().any(|(b, _)| b == last) {
            return Err(());
        }
        let mut next = current.clone();
        next.bundles.push((name.clone(), token));
        Ok(next)
    })?;
    Ok(committed.ok().map(|manifest| (name, manifest)))
}
