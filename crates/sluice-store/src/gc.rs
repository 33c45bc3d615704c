//! `sluice store gc`: deletes, under the repository's lease, what no generation younger than
//! the grace period needs: packs taken out of the manifest longer ago than that, and uploads
//! no manifest names (a push that lost its race, an import or a maintenance run that died,
//! bundles no longer listed) once older than any push can take. The grace period should be
//! longer than the longest request and than the life of the bundle URLs handed out: a request
//! pinned to an older generation may still read what it names. However short it is, nothing a
//! manifest names or a push in flight uploaded is deleted.

use crate::lease::Lease;
use crate::manifest::Manifest;
use crate::stored::StoredRepo;
use crate::StoreError;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How old an upload that no manifest names must be before it is deleted, whatever grace the
/// sweep is given: longer than any push may take (a node ends a connection after an hour by
/// default), so that a push whose pack is uploaded but whose manifest write is still to come
/// never loses it. The grace period applies to packs the manifest removed.
const UPLOAD_AGE: Duration = Duration::from_secs(2 * 3600);

/// How long a pack the nodes shared stays (by when it was made): requests repeat within a
/// day, and a generation older than that is rarely asked for again.
const SHARED_PACK_AGE: Duration = Duration::from_secs(24 * 3600);

/// What a sweep deleted.
#[derive(Debug, Default)]
pub struct Swept {
    /// Objects deleted (pack files and bundles).
    pub deleted: usize,
    /// Objects no manifest names that were kept: removed within the grace period, or
    /// uploaded too recently for a push or maintenance run to have finished.
    pub young: usize,
}

/// Sweeps `repo`, deleting what has been unneeded for longer than `grace`.
pub fn gc(repo: &StoredRepo, grace: Duration) -> Result<Swept, StoreError> {
    let lease = Lease::acquire(repo, grace.max(Duration::from_secs(600)))?;
    let swept = sweep(repo, grace);
    let released = lease.release();
    let swept = swept?;
    released?;
    Ok(swept)
}

fn sweep(repo: &StoredRepo, grace: Duration) -> Result<Swept, StoreError> {
    let Some(read) = repo.read()? else {
        return Err(StoreError::NoRepository(repo.folder().to_owned()));
    };
    let manifest = read.manifest;
    let now = SystemTime::now();
    let cutoff = now.checked_sub(grace).unwrap_or(UNIX_EPOCH);
    let cutoff_secs = cutoff.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let upload_cutoff = now.checked_sub(UPLOAD_AGE.max(grace)).unwrap_or(UNIX_EPOCH);
    let mut swept = Swept::default();
    for (key, written) in repo.bucket().list(&repo.key("packs/"))? {
        let name = pack_of(&key);
        if manifest.has_pack(name) {
            continue;
        }
        let removed = manifest.removed.iter().find(|(removed, _)| removed == name);
        let expired = match removed {
            Some((_, when)) => *when <= cutoff_secs && written <= cutoff,
            None => written <= upload_cutoff,
        };
        if !expired {
            swept.young += 1;
            continue;
        }
        repo.bucket().delete(&key)?;
        swept.deleted += 1;
    }
    // A bundle is uploaded before the manifest lists it, as a pack is: a listed bundle's file,
    // or the refs kept beside it, stays.
    let listed = |key: &str| {
        (manifest.bundles.iter()).any(|(name, _)| {
            key.ends_with(&format!("/{name}.bundle")) || key.ends_with(&format!("/{name}.refs"))
        })
    };
    sweep_unnamed(repo, "bundles/", listed, upload_cutoff, &mut swept)?;
    let shared_cutoff = now.checked_sub(SHARED_PACK_AGE).unwrap_or(UNIX_EPOCH);
    // Signed bundle lists (`signed::shared_presigned`) go by age as the shared packs do: a
    // node whose list is gone signs a new one.
    for (key, written) in repo.bucket().list(&repo.key("signed/"))? {
        if written <= shared_cutoff {
            repo.bucket().delete(&key)?;
            swept.deleted += 1;
        }
    }
    for (key, written) in repo.bucket().list(&repo.key(crate::PACK_CACHE))? {
        if written <= shared_cutoff {
            repo.bucket().delete(&key)?;
            swept.deleted += 1;
        }
    }
    // A multi-pack-index no manifest names goes as an unnamed upload does (a generation
    // pinned to one that is gone is served without it).
    let midx = manifest.midx.as_ref().map(|m| m.checksum.as_str());
    let named =
        |key: &str| midx.is_some_and(|sum| key.contains(&format!("/multi-pack-index-{sum}")));
    sweep_unnamed(repo, "midx/", named, upload_cutoff, &mut swept)?;
    // A snapshot is written before the manifest that names it, as a pack is.
    let snapshot = manifest.snapshot.as_ref().map(|s| s.name.as_str());
    let named = |key: &str| snapshot.is_some_and(|name| key.ends_with(&format!("/{name}")));
    sweep_unnamed(repo, "refs/", named, upload_cutoff, &mut swept)?;
    // The records of packs now gone go too (only those: a pack removed meanwhile stays).
    let forgotten = |m: &Manifest| m.removed.iter().any(|(_, when)| *when <= cutoff_secs);
    if forgotten(&manifest) {
        let committed = repo.commit(|current| {
            let mut next = current.clone();
            next.removed.retain(|(_, when)| *when > cutoff_secs);
            Ok::<_, std::convert::Infallible>(next)
        })?;
        let Ok(_) = committed;
    }
    Ok(swept)
}

/// Deletes the objects under `prefix` that `named` does not keep, once written before
/// `cutoff` (younger ones may be named by a manifest about to be committed).
fn sweep_unnamed(
    repo: &StoredRepo,
    prefix: &str,
    named: impl Fn(&str) -> bool,
    cutoff: SystemTime,
    swept: &mut Swept,
) -> Result<(), StoreError> {
    for (key, written) in repo.bucket().list(&repo.key(prefix))? {
        if named(&key) || written > cutoff {
            continue;
        }
        repo.bucket().delete(&key)?;
        swept.deleted += 1;
    }
    Ok(())
}

/// `pack-<hex>` of a key `…/packs/pack-<hex>.<extension>`.
fn pack_of(key: &str) -> &str {
    let file = key.rsplit('/').next().unwrap_or(key);
    file.split('.').next().unwrap_or(file)
}
