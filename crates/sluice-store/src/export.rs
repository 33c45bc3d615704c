//! `sluice store export`: a stored repository into a new local bare repository that git reads
//! (a backup, or a check with `git fsck`).

use crate::manifest::Manifest;
use crate::scratch::Scratch;
use crate::stored::StoredRepo;
use crate::StoreError;
use sluice_object::progress::Progress;
use std::path::Path;

/// Exports the current generation of `source` to `dest`, which must not exist or be an empty
/// directory. The repository is made beside `dest` and renamed onto it whole, so a failure
/// leaves nothing.
pub fn export(
    source: &StoredRepo,
    dest: &Path,
    progress: &dyn Progress,
) -> Result<Manifest, StoreError> {
    let empty = std::fs::read_dir(dest).map(|mut d| d.next().is_none());
    let replace_empty = match empty {
        Ok(true) => true,
        Ok(false) => return Err(StoreError::DestinationExists(dest.to_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(StoreError::file(dest)(e)),
    };
    let Some(read) = source.read()? else {
        return Err(StoreError::NoRepository(source.folder().to_owned()));
    };
    let manifest = read.manifest;
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let scratch = Scratch::new(parent, "export").map_err(StoreError::file(parent))?;
    let dir = scratch.path();
    crate::local::make(dir, &manifest)?;
    let pack_dir = dir.join("objects/pack");
    let files: usize = manifest.packs.iter().map(|p| p.files().count()).sum();
    progress.phase("Downloading packs", Some(files as u64));
    for pack in &manifest.packs {
        let mut files: Vec<&str> = pack.files().collect();
        // The index last: a pack is in use once its index is there.
        files.rotate_left(1);
        for extension in files {
            let key = source.pack_key(&pack.name, extension);
            let file = pack_dir.join(format!("{}.{extension}", pack.name));
            let bytes = source.bucket().download(&key, &file)?;
            progress.add(1);
            progress.add_bytes(bytes);
        }
    }
    progress.finish();
    crate::local::write_refs(dir, &manifest, None)?;
    if replace_empty {
        std::fs::remove_dir(dest).map_err(StoreError::file(dest))?;
    }
    scratch.keep_as(dest).map_err(StoreError::file(dest))?;
    Ok(manifest)
}
