//! `sluice store fsck`: checks a stored repository's current generation as a node would
//! serve it: every file the manifest names is in the store, every pack matches its index
//! (indexed again, every object hashed), every object the refs reach is there (and what the
//! tips that recently left them reach: stateless requests may still want those), every listed
//! bundle and the ref snapshot exist. Problems are returned, named, not stopped at.

use crate::node::Node;
use crate::stored::StoredRepo;
use crate::StoreError;
use sluice_object::progress::Progress;
use sluice_repo::Repository;
use std::path::Path;

/// What a check found.
#[derive(Debug, Default)]
pub struct Checked {
    /// Packs verified.
    pub packs: usize,
    /// Objects the refs (and the recent former tips) reach.
    pub objects: usize,
    /// Everything wrong, one message each.
    pub problems: Vec<String>,
}

/// Checks `repo`, downloading what it needs into `work`.
pub fn fsck(
    repo: &StoredRepo,
    work: &Path,
    progress: &dyn Progress,
) -> Result<Checked, StoreError> {
    let mut checked = Checked::default();
    let Some(read) = repo.read()? else {
        return Err(StoreError::NoRepository(repo.folder().to_owned()));
    };
    let manifest = &read.manifest;
    let stored: Vec<String> = (repo.bucket().list(&repo.key(""))?.into_iter())
        .map(|(key, _)| key)
        .collect();
    let has = |key: &str| stored.iter().any(|k| k == key);
    for pack in &manifest.packs {
        for extension in pack.files() {
            let key = repo.pack_key(&pack.name, extension);
            if !has(&key) {
                let key = repo.bucket().full_key(&key);
                let problem = format!("{key}: named by the manifest, not in the store");
                checked.problems.push(problem);
            }
        }
    }
    for (name, _) in &manifest.bundles {
        let key = crate::maintain::bundle_key(repo, name);
        if !has(&key) {
            let key = repo.bucket().full_key(&key);
            checked
                .problems
                .push(format!("{key}: listed, not in the store"));
        }
    }
    if !checked.problems.is_empty() {
        return Ok(checked);
    }
    let node = Node::new(repo.bucket().clone(), work.to_owned());
    let Some(pinned) = node.pin(repo.folder())? else {
        return Err(StoreError::NoRepository(repo.folder().to_owned()));
    };
    let indexer = sluice_pack::PackIndexer::new(sluice_pack::IndexOptions::default());
    for pack in &pinned.manifest.packs {
        let path = pinned.dir.join(format!("objects/pack/{}.pack", pack.name));
        match sluice_odb::pack_store::verify(&path, None, &indexer) {
            Ok(_) => checked.packs += 1,
            Err(e) => checked.problems.push(format!("{}: {e}", pack.name)),
        }
    }
    let served = Repository::open_served(&pinned.dir, true)?;
    let odb = served.objects();
    let manifest = &pinned.manifest;
    let former = manifest.former.iter().map(|(id, _)| id);
    let tips: Vec<_> = manifest.refs.values().chain(former).copied().collect();
    let request = sluice_graph::WalkRequest::reachable(&tips, &[], Default::default());
    match sluice_graph::traverse_objects(odb, &request, progress) {
        Ok(walked) => {
            checked.objects = walked.objects.len();
            let missing = walked.objects.iter().filter(|o| !odb.contains(&o.id));
            for object in missing {
                checked
                    .problems
                    .push(format!("missing object {}", object.id));
            }
        }
        Err(e) => checked.problems.push(format!("the refs' history: {e}")),
    }
    Ok(checked)
}
