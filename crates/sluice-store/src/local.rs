//! A generation of a stored repository as a local bare repository (a node's materialised
//! generation, an export): the repository made on HEAD's branch, then, once its packs are in,
//! its refs written as `packed-refs`.

use crate::manifest::Manifest;
use crate::StoreError;
use sluice_odb::ranged::PackSource;
use sluice_repo::init::{init, InitOptions};
use sluice_repo::refs::Peeled;
use sluice_repo::Repository;
use std::path::Path;
use std::sync::Arc;

/// Makes the bare repository at `dir`, HEAD naming `manifest`'s.
pub(crate) fn make(dir: &Path, manifest: &Manifest) -> Result<(), StoreError> {
    let options = InitOptions {
        initial: &manifest.head,
        bare: true,
        extensions: false,
        template: None,
    };
    Ok(init(dir, options)?)
}

/// Writes `manifest`'s refs into the repository at `dir` (whose packs are in; ranged ones read
/// from `source`).
pub(crate) fn write_refs(
    dir: &Path,
    manifest: &Manifest,
    source: Option<&Arc<dyn PackSource>>,
) -> Result<(), StoreError> {
    let repo = match source {
        Some(source) => Repository::open_served_from(dir, Arc::clone(source))?,
        None => Repository::open_served(dir, true)?,
    };
    let refs = (manifest.refs.iter())
        .map(|(name, id)| (name.clone(), *id, Peeled::Unknown))
        .collect();
    Ok(repo.refs().write_packed(refs)?)
}
