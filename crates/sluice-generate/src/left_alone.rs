//! What a repack leaves alone or adds beyond the refs: packs with a `.keep` file and those
//! named by `--keep-pack` stay as they are (never deleted, their objects left out of the new
//! pack unless `--pack-kept-objects`, which bitmaps need); and with `-k` the objects of the
//! replaced packs that no ref reaches go into the new pack instead of away; otherwise those
//! of packs written lately (or older, with `--unpack-unreachable`) are kept loose. With
//! `--local`, what only an alternate has stays out.

use crate::repack::{file_error, RepackError};
use sluice_graph::{Walked, WalkedObject};
use sluice_object::{HashKind, IdSet, ObjectId};
use sluice_odb::{ObjectDb, Pack};
use sluice_repo::Repository;
use std::path::{Path, PathBuf};

/// The packs a repack finds, split by what it may do with them.
pub(crate) struct PackSplit {
    /// Replaced by the new pack, then removed.
    pub replaced: Vec<PathBuf>,
    /// Kept by a `.keep` file, or promised (`.promisor`: its objects came from a promisor
    /// remote, and what they name may be missing by design): untouched; their objects left out
    /// unless packing kept objects.
    pub kept: Vec<PathBuf>,
    /// Named by `--keep-pack`: untouched, their objects always left out.
    pub named: Vec<PathBuf>,
}

/// Splits `packs` into those replaced and those kept (by a `.keep` or `.promisor` file, or
/// named in `keep_names` by file name).
pub(crate) fn split_packs(packs: Vec<PathBuf>, keep_names: &[String]) -> PackSplit {
    let mut split = PackSplit {
        replaced: Vec::new(),
        kept: Vec::new(),
        named: Vec::new(),
    };
    for pack in packs {
        let name = pack
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if keep_names.iter().any(|k| k == name) {
            split.named.push(pack);
        } else if sluice_repo::roots::kept_pack(&pack) {
            split.kept.push(pack);
        } else {
            split.replaced.push(pack);
        }
    }
    split
}

/// Removes from `walked` the objects the packs `left_alone` hold; returns whether any was.
pub(crate) fn leave_out(
    walked: &mut Walked,
    left_alone: &[&Path],
    hash: HashKind,
) -> Result<bool, RepackError> {
    let mut packs = Vec::with_capacity(left_alone.len());
    for pack in left_alone {
        packs.push(Pack::open(&pack.with_extension("idx"), hash)?);
    }
    let before = walked.objects.len();
    walked
        .objects
        .retain(|o| !packs.iter().any(|p| p.contains(&o.id)));
    let removed = walked.objects.len() != before;
    if removed {
        // The positions a bitmap gave no longer line up with the objects.
        walked.located = None;
    }
    Ok(removed)
}

/// Adds to `walked` the objects of `replaced` that it does not list (`-k`): what no ref
/// reaches stays, in the new pack.
pub(crate) fn keep_unreachable(
    walked: &mut Walked,
    replaced: &[PathBuf],
    hash: HashKind,
) -> Result<(), RepackError> {
    let mut listed: IdSet = walked.objects.iter().map(|o| o.id).collect();
    for old in replaced {
        let pack = Pack::open(&old.with_extension("idx"), hash)?;
        for position in 0..pack.index().len() {
            let id = pack.index().id(position);
            if !listed.insert(id) {
                continue;
            }
            if let Some(kind) = pack.kind_at(position)? {
                walked.objects.push(WalkedObject {
                    id,
                    kind,
                    name_hash: 0,
                    previous: None,
                });
            }
        }
    }
    Ok(())
}

/// Every loose object under `objects_dir` with its kind, unnamed (as git adds them after what
/// a walk found), and the loose files that could not be read.
pub(crate) fn loose_objects(
    objects_dir: &Path,
    hash: HashKind,
) -> Result<(Vec<WalkedObject>, Vec<PathBuf>), RepackError> {
    let loose = sluice_odb::LooseObjects::new(objects_dir, hash);
    let files = (loose.list()).map_err(file_error("read", objects_dir))?;
    let (mut objects, mut unreadable) = (Vec::new(), Vec::new());
    for file in files {
        match loose.read(&file.id) {
            Ok(Some((kind, _))) => objects.push(WalkedObject {
                id: file.id,
                kind,
                name_hash: 0,
                previous: None,
            }),
            _ => unreadable.push(file.path),
        }
    }
    Ok((objects, unreadable))
}

/// Adds to `walked` the loose objects under `objects_dir` it does not list (`-k`, as git's
/// repack passes `--pack-loose-unreachable`): their loose copies then go as packed. A loose
/// file that cannot be read stays as it is.
pub(crate) fn keep_loose(
    walked: &mut Walked,
    objects_dir: &Path,
    hash: HashKind,
) -> Result<(), RepackError> {
    let mut listed: IdSet = walked.objects.iter().map(|o| o.id).collect();
    let (loose, _) = loose_objects(objects_dir, hash)?;
    // After what the walk located: they are stored elsewhere.
    walked
        .objects
        .extend(loose.into_iter().filter(|o| listed.insert(o.id)));
    Ok(())
}

/// Writes the objects of the old pack `old` that `packed` leaves out as loose objects dated as
/// the pack, if the pack was written after `since` (git's `--unpack-unreachable`).
pub(crate) fn loosen_left_out(
    old: &Path,
    packed: &[Pack],
    objects_dir: &Path,
    repo: &Repository,
    since: std::time::SystemTime,
) -> Result<(), RepackError> {
    let modified = std::fs::metadata(old)
        .and_then(|m| m.modified())
        .map_err(file_error("read", old))?;
    if modified <= since {
        return Ok(());
    }
    let pack = Pack::open(&old.with_extension("idx"), repo.hash())?;
    let level = sluice_odb::pack_store::loose_compression(repo.config())?;
    let loose = sluice_odb::LooseObjects::new(objects_dir, repo.hash());
    for position in 0..pack.index().len() {
        let id = pack.index().id(position);
        if packed.iter().any(|new| new.contains(&id)) {
            continue;
        }
        let (kind, data) = pack.read_position(position)?;
        loose.write(kind, &data, level)?;
        let hex = id.to_string();
        let path = objects_dir.join(&hex[..2]).join(&hex[2..]);
        // An owner may date a file it can only read.
        std::fs::File::open(&path)
            .and_then(|f| f.set_modified(modified))
            .map_err(file_error("date", &path))?;
    }
    Ok(())
}

/// `--local`: leaves out of `walked` the objects only an alternate has; returns whether any
/// was (a bitmap then cannot be written).
pub(crate) fn leave_out_borrowed(odb: &ObjectDb, walked: &mut Walked) -> bool {
    let borrowed = |id: &ObjectId| odb.alternates().iter().any(|a| a.contains(id));
    let before = walked.objects.len();
    walked.objects.retain(|o| !borrowed(&o.id));
    let removed = walked.objects.len() != before;
    if removed {
        // The positions no longer line up with the objects.
        walked.located = None;
    }
    removed
}
