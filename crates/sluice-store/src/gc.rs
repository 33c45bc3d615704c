//! `sluice store gc`: deletes, under the repository's lease, what no generation younger than
//! the grace period needs: packs taken out of the manifest longer ago than that, bundles no
//! longer listed, and uploads no manifest ever named (a push that lost its race, an import or
//! a maintenance run that died). The grace period must be longer than the longest request and
//! than the life of the bundle URLs handed out: a request pinned to an older generation may
//! still read what it names.

use crate::lease::Lease;
use crate::manifest::Manifest;
use crate::stored::StoredRepo;
use crate::StoreError;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a sweep deleted.
#[derive(Debug, Default)]
pub struct Swept {
    /// Objects deleted (pack files and bundles).
    pub deleted: usize,
    /// Objects kept because they are younger than the grace period though no manifest names
    /// them (yet).
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
    let mut swept = Swept::default();
    for (key, written) in repo.bucket().list(&repo.key("packs/"))? {
        let name = pack_of(&key);
        let live = manifest.has_pack(name);
        let removed_recently =
            (manifest.removed.iter()).any(|(removed, when)| removed == name && *when > cutoff_secs);
        if live || removed_recently || written > cutoff {
            swept.young += usize::from(!live && !removed_recently);
            continue;
        }
        repo.bucket().delete(&key)?;
        swept.deleted += 1;
    }
    for (key, written) in repo.bucket().list(&repo.key("bundles/"))? {
        let listed =
            (manifest.bundles.iter()).any(|(name, _)| key.ends_with(&format!("/{name}.bundle")));
        if listed || written > cutoff {
            continue;
        }
        repo.bucket().delete(&key)?;
        swept.deleted += 1;
    }
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

/// `pack-<hex>` of a key `…/packs/pack-<hex>.<extension>`.
fn pack_of(key: &str) -> &str {
    let file = key.rsplit('/').next().unwrap_or(key);
    file.split('.').next().unwrap_or(file)
}
