//! `sluice store maintain`: a stored repository compacted, under its lease, into one pack
//! with a bitmap of everything the refs reach (what no ref reaches into a cruft pack, so
//! nothing is lost to a push that moved a ref meanwhile), and a full bundle of that pack for
//! clients to download straight from the store. A node after pushes rolls the small packs
//! geometrically instead (the big pack and its bitmap kept), compacting fully only when the
//! roll would take the big pack in. The packs replaced are taken out of the manifest with the
//! time, and deleted only by a later sweep, after a grace period. Before the lease is let go,
//! the refs the newest bundle lacks (pushes meanwhile) go into an increment.

use crate::bundle::write_bundle;
use crate::import::upload_packs;
use crate::lease::Lease;
use crate::manifest::{Manifest, PackEntry};
use crate::node::Node;
use crate::stored::StoredRepo;
use crate::StoreError;
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_repo::Repository;
use std::path::Path;
use std::time::Duration;

/// How long one maintenance run may hold the lease.
const LEASE: Duration = Duration::from_secs(3600);

/// What a maintenance run did.
#[derive(Debug)]
pub struct Maintained {
    /// The manifest it committed (or found, when there was nothing to do).
    pub manifest: Manifest,
    /// The packs it took out of the manifest.
    pub replaced: usize,
    /// The bundle it wrote, if any (the full one when it wrote an increment too).
    pub bundle: Option<String>,
}

/// Maintains `repo`, working in `work` (a directory of this machine's); `cancel` stops it
/// early, the lease given back.
pub fn maintain(
    repo: &StoredRepo,
    work: &Path,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Maintained, StoreError> {
    let node = Node::new(repo.bucket().clone(), work.to_owned()).with_cancel(cancel.clone());
    maintain_on(&node, repo, Compaction::Full, progress)
}

/// How a maintenance run packs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compaction {
    /// Everything into one pack with a bitmap, and a full bundle.
    Full,
    /// The small packs rolled into one so that every pack holds at least twice the next
    /// smaller; fully when that would take the largest in.
    Geometric,
}

/// Maintains `repo` with the packs of `node`'s cache (a serving node after pushes): only what
/// the cache lacks is downloaded, and the new packs stay in it.
pub fn maintain_on(
    node: &Node,
    repo: &StoredRepo,
    how: Compaction,
    progress: &dyn Progress,
) -> Result<Maintained, StoreError> {
    let lease = Lease::acquire(repo, LEASE)?;
    let done = compact(node, repo, how, progress).and_then(|mut done| {
        // The refs of pushes that landed while the packs were compacted, or whose node could
        // not write their increment (the lease was held, or the node was busy), go into an
        // increment now: the bundles then cover the refs of the generation left behind (a
        // geometric roll, or a repository already compacted, writes no full bundle).
        if let Some((name, manifest)) = crate::increment::increment(node, repo, progress)? {
            done.bundle = done.bundle.or(Some(name));
            done.manifest = manifest;
        }
        Ok(done)
    });
    // The lease expires by itself if this fails; a failure to compact is the one to report.
    let released = lease.release();
    let done = done?;
    released?;
    Ok(done)
}

fn compact(
    node: &Node,
    repo: &StoredRepo,
    how: Compaction,
    progress: &dyn Progress,
) -> Result<Maintained, StoreError> {
    let Some(pinned) = node.pin(repo.folder())? else {
        return Err(StoreError::NoRepository(repo.folder().to_owned()));
    };
    let before = &pinned.manifest;
    let token = before.generation;
    // One pack with a bitmap (and the cruft pack), and a bundle: no push came since.
    let with_bitmap = before
        .packs
        .iter()
        .any(|p| p.extras.iter().any(|e| e == "bitmap"));
    let compacted = before.packs.len() <= 2 && with_bitmap && !before.bundles.is_empty();
    if compacted || before.refs.is_empty() {
        return Ok(Maintained {
            manifest: before.clone(),
            replaced: 0,
            bundle: None,
        });
    }
    let workspace = node.workspace(&pinned)?;
    let staged = node.open_dir(workspace.dir())?;
    let full_repack = how == Compaction::Full || !rolled(&staged, node.cancel())?;
    if full_repack {
        let options = sluice_generate::RepackOptions {
            bitmap: sluice_generate::BitmapChoice::Asked,
            cruft: Some(sluice_generate::CruftOptions::default()),
            cancel: node.cancel().clone(),
            ..Default::default()
        };
        sluice_generate::repack_all_with(&staged, &options, progress)?;
    }
    let pack_dir = workspace.dir().join("objects/pack");
    let after: Vec<String> = crate::import::packs_in(&pack_dir)?
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    // A roll leaves several packs: a multi-pack-index bitmap keeps counting on bitmaps.
    let midx = match full_repack {
        true => None,
        false => crate::midx::write_and_upload(&staged, &after, repo, progress, node.cancel())?,
    };
    let uploaded = upload_packs(repo, &pack_dir, |n| !before.has_pack(n))?;
    node.keep_packs(repo, &pack_dir, &uploaded);
    // After a full repack, the pack with the bitmap holds every object the refs reach: the
    // full bundle's pack. (A geometric roll leaves the old big pack's bitmap: no bundle.)
    let full = (after.iter())
        .filter(|_| full_repack)
        .find(|name| pack_dir.join(format!("{name}.bitmap")).exists());
    let bundle = match full {
        Some(pack) => {
            let name = format!("full-{token}");
            let file = workspace.dir().join(format!("{name}.bundle"));
            let refs = before.refs.iter().map(|(n, id)| (n.as_str(), id));
            let pack = pack_dir.join(format!("{pack}.pack"));
            write_bundle(&file, refs, &[], &pack).map_err(StoreError::file(&file))?;
            let uploaded = repo.bucket().upload(&bundle_key(repo, &name), &file);
            let _ = std::fs::remove_file(&file);
            uploaded?;
            crate::increment::keep_refs(repo, &name, &before.refs)?;
            Some(name)
        }
        None => None,
    };
    let replaced: Vec<String> = (before.packs.iter())
        .filter(|p| !after.contains(&p.name))
        .map(|p| p.name.clone())
        .collect();
    // Nothing a replaced pack held may be lost with it (see `coverage`).
    let taken_out: Vec<&PackEntry> = (before.packs.iter())
        .filter(|p| replaced.contains(&p.name))
        .collect();
    let kept = (before.packs.iter()).filter(|p| after.contains(&p.name));
    let next = (pack_dir.as_path(), kept.chain(&uploaded));
    let old_dir = pinned.dir.join("objects/pack");
    let source = Some(node.source());
    crate::coverage::objects_kept((&old_dir, &taken_out), next, staged.hash(), source)?;
    let now = crate::unix_now();
    let committed = repo.commit(|current| {
        let mut next = current.clone();
        next.packs.retain(|p| !replaced.contains(&p.name));
        let fresh = uploaded.iter().filter(|p| !next.has_pack(&p.name));
        next.packs.extend(fresh.cloned().collect::<Vec<_>>());
        next.removed
            .extend(replaced.iter().map(|name| (name.clone(), now)));
        next.midx = midx.clone();
        if let Some(name) = &bundle {
            // A newer full bundle makes the older ones useless to a new clone.
            next.bundles = vec![(name.clone(), token)];
        }
        Ok::<_, std::convert::Infallible>(next)
    })?;
    let Ok(manifest) = committed;
    Ok(Maintained {
        manifest,
        replaced: replaced.len(),
        bundle,
    })
}

/// Rolls the small packs of `staged` geometrically, sparing the largest; whether it did.
fn rolled(staged: &Repository, cancel: &Cancel) -> Result<bool, StoreError> {
    let options = sluice_generate::GeometricOptions {
        factor: 2,
        spare_largest: true,
        loose: false,
        skip_server_info: false,
    };
    let discard = sluice_object::progress::Discard;
    let rolled = sluice_generate::repack_geometric(staged, &options, &discard, cancel)?;
    Ok(matches!(rolled, sluice_generate::Rolled::Into { .. }))
}

/// The key of a bundle.
pub fn bundle_key(repo: &StoredRepo, name: &str) -> String {
    repo.key(&format!("bundles/{name}.bundle"))
}
