//! The multi-pack-index of a geometric roll, with its bitmap. A node's roll after pushes keeps
//! the big pack (and its bitmap) and rolls the small ones into one; without more, counting
//! for a clone would walk every commit of the rolled packs to reach the big pack's bitmap.
//! So the roll also writes a multi-pack-index over every pack with a bitmap of what the refs
//! reach (git's `repack --geometric -d --write-midx -b`), stored as `midx/multi-pack-index-
//! <checksum>` and its `.bitmap`, and named by the manifest with the packs it indexes.
//!
//! A node places it in a generation that has all of those packs (a push's new pack beside it
//! is read as git reads a pack outside a multi-pack-index). It only speeds counting up: a file
//! that cannot be downloaded or linked is left out, and the generation is served without it.

use crate::manifest::{Manifest, MidxEntry};
use crate::stored::StoredRepo;
use crate::StoreError;
use sluice_object::progress::Progress;
use sluice_repo::Repository;
use std::path::{Path, PathBuf};

/// The multi-pack-index's own name in a pack directory.
const MIDX: &str = "multi-pack-index";

/// The stored (and cached) name of the multi-pack-index with `checksum`, and of its bitmap.
fn names(checksum: &str) -> [String; 2] {
    let midx = format!("{MIDX}-{checksum}");
    [midx.clone(), format!("{midx}.bitmap")]
}

/// Writes the multi-pack-index of every pack of `staged` (`packs`, by name) with its bitmap,
/// the largest pack first, and uploads both; `None` when no bitmap was written (no ref
/// reaches anything).
pub(crate) fn write_and_upload(
    staged: &Repository,
    packs: &[String],
    repo: &StoredRepo,
    progress: &dyn Progress,
    cancel: &sluice_object::cancel::Cancel,
) -> Result<Option<MidxEntry>, StoreError> {
    let preferred = sluice_generate::largest_pack(staged)?;
    sluice_generate::write_midx_bitmap(staged, preferred, progress, cancel)?;
    let pack_dir = staged.objects().pack_dir();
    let midx = pack_dir.join(MIDX);
    let checksum = checksum_of(&midx, staged.hash().len_in_bytes())?;
    let [stored_midx, stored_bitmap] = names(&checksum);
    let bitmap = pack_dir.join(&stored_bitmap);
    if !bitmap.exists() {
        return Ok(None);
    }
    // The bitmap first: a multi-pack-index in the store always has the bitmap it names.
    for (name, file) in [(stored_bitmap, &bitmap), (stored_midx, &midx)] {
        repo.bucket()
            .upload(&repo.key(&format!("midx/{name}")), file)?;
    }
    Ok(Some(MidxEntry {
        checksum,
        packs: packs.to_vec(),
    }))
}

/// The checksum of the multi-pack-index at `path`: its trailer (`len` bytes), in hexadecimal.
fn checksum_of(path: &Path, len: usize) -> Result<String, StoreError> {
    let bytes = std::fs::read(path).map_err(StoreError::file(path))?;
    let trailer = bytes
        .get(bytes.len().saturating_sub(len)..)
        .unwrap_or_default();
    Ok(trailer.iter().map(|b| format!("{b:02x}")).collect())
}

/// The manifest's multi-pack-index, when the generation has every pack it indexes.
pub(crate) fn usable(manifest: &Manifest) -> Option<&MidxEntry> {
    (manifest.midx.as_ref()).filter(|midx| midx.packs.iter().all(|p| manifest.has_pack(p)))
}

/// Downloads the usable multi-pack-index of `manifest` and its bitmap into the cache's
/// `packs` directory, unless there already; a download that fails is left out.
pub(crate) fn download(repo: &StoredRepo, manifest: &Manifest, packs: &Path) {
    let Some(midx) = usable(manifest) else {
        return;
    };
    for name in names(&midx.checksum) {
        let file = packs.join(&name);
        if !file.exists() {
            let _ = repo
                .bucket()
                .download(&repo.key(&format!("midx/{name}")), &file);
        }
    }
}

/// Links the usable multi-pack-index of `manifest` and its bitmap from the cache's `packs`
/// into the generation's `pack_dir`, if both are cached; the bitmap first, so that a
/// multi-pack-index is never there without the bitmap it was written with.
pub(crate) fn place(manifest: &Manifest, packs: &Path, pack_dir: &Path) {
    let Some(midx) = usable(manifest) else {
        return;
    };
    let [cached_midx, bitmap] = names(&midx.checksum);
    let links: [(PathBuf, PathBuf); 2] = [
        (packs.join(&bitmap), pack_dir.join(&bitmap)),
        (packs.join(cached_midx), pack_dir.join(MIDX)),
    ];
    for (from, to) in links {
        if crate::node::link_or_copy(&from, &to).is_err() {
            let _ = std::fs::remove_file(pack_dir.join(&bitmap));
            return;
        }
    }
}
