//! A partial clone's promisor packs (marked `.promisor`: their objects came from a promisor
//! remote, and what they name may be missing by design), consolidated by `repack -a` into one
//! new promisor pack as git does, so that the packs of lazy fetches do not pile up; the new
//! pack of the repository's own objects leaves those objects out.

use crate::pack_objects::objects_of_packs;
use crate::repack::RepackError;
use crate::stats::PackStats;
use crate::stored::write_into;
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_odb::Pack;
use sluice_repo::Repository;
use std::path::{Path, PathBuf};

/// A partial clone's promisor packs, as a repack finds them.
pub(crate) struct Promised {
    /// Kept only by their `.promisor` file: replaced by the new promisor pack.
    pub(crate) replaced: Vec<PathBuf>,
    /// Kept by a `.keep` file too: they stay, and their objects go into the new promisor pack
    /// as well (git's repack writes every promisor object anew).
    pub(crate) kept: Vec<PathBuf>,
}

impl Promised {
    /// Every promisor pack, replaced or kept.
    pub(crate) fn all(&self) -> Vec<PathBuf> {
        self.replaced.iter().chain(&self.kept).cloned().collect()
    }
}

/// Takes out of `kept` the packs kept only by a `.promisor` file (a `.keep` file keeps a
/// pack as it is), for [`write_promisor_pack`] to replace; notes the promisor packs it keeps.
pub(crate) fn take_promised(kept: &mut Vec<PathBuf>) -> Promised {
    let promisor = |p: &PathBuf| p.with_extension("promisor").exists();
    let (replaced, still): (Vec<PathBuf>, Vec<PathBuf>) = std::mem::take(kept)
        .into_iter()
        .partition(|p| promisor(p) && !p.with_extension("keep").exists());
    *kept = still;
    Promised {
        replaced,
        kept: kept.iter().filter(|p| promisor(p)).cloned().collect(),
    }
}

/// Writes every object of the packs `promised` into one pack with an empty `.promisor` file
/// beside it (as git writes it); returns that pack and what went in (`None`: no such packs).
pub(crate) fn write_promisor_pack(
    repo: &Repository,
    promised: &[PathBuf],
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Option<(PathBuf, PackStats)>, RepackError> {
    if promised.is_empty() {
        return Ok(None);
    }
    let odb = repo.objects().with_alternate_packs();
    let promised: Vec<&Path> = promised.iter().map(PathBuf::as_path).collect();
    let walked = objects_of_packs(&odb, &promised, &[])?;
    let (stored, stats) = write_into(repo, &odb, &walked, None, progress, cancel)?;
    let marker = stored.pack.with_extension("promisor");
    if !marker.exists() {
        std::fs::write(&marker, b"").map_err(crate::repack::file_error("write", &marker))?;
    }
    Ok(Some((stored.pack, stats)))
}

/// Removes the packs `promised` that `written` replaces (one written again with the same
/// objects keeps its name, and stays); returns `written`, opened.
pub(crate) fn replace_promised(
    repo: &Repository,
    promised: &[PathBuf],
    written: Option<(PathBuf, PackStats)>,
) -> Result<Option<Pack>, RepackError> {
    let Some((written, _)) = written else {
        return Ok(None);
    };
    for old in promised.iter().filter(|old| **old != written) {
        crate::repack::remove_pack(old)?;
    }
    Ok(Some(Pack::open(
        &written.with_extension("idx"),
        repo.hash(),
    )?))
}
