//! `repack [-d]` without `-a`: the reachable objects not in a pack yet go into one new pack,
//! the packs already there stay as they are, and with `-d` the loose copies of what is now
//! packed are removed (`prune-packed`). What no ref reaches stays loose, for prune to judge.
//! This is git's plain `repack`, what a script runs after a batch of pushes.

use crate::repack::{prune_packed, RepackError};
use crate::stored::{stored_pack_options, write_one};
use crate::{IslandRules, PackStats, SearchLimits};
use sluice_graph::{walk_objects, WalkRequest};
use sluice_object::cancel::Cancel;
use sluice_object::progress::{Discard, Progress};
use sluice_object::ObjectId;
use sluice_odb::Pack;
use sluice_repo::Repository;

/// Packs the loose objects the repository's roots reach (refs, `HEAD`s, reflogs, indexes:
/// [`sluice_repo::Roots`], as git's repack passes `--all --reflog --indexed-objects`), each
/// tried against the others within `limits` as git's pack-objects tries them, no delta
/// crossing the bounds of `islands` when given (marked over the loose objects alone, as git's
/// `--unpacked` walk marks them); `None` when there were none.
pub fn repack_loose(
    repo: &Repository,
    (delete, skip_server_info): (bool, bool),
    (limits, islands): (SearchLimits, Option<&IslandRules>),
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Option<PackStats>, RepackError> {
    // Roots first, then the objects: what they name is in place before they are read.
    let roots = sluice_repo::Roots::read(repo)?;
    let odb = repo.objects().with_alternate_packs();
    let tips = crate::tips::walk_tips(&roots, &odb);
    let shallow = repo.shallow_set()?;
    let request = WalkRequest {
        shallow: &shallow,
        ..WalkRequest::reachable(&tips, &[], cancel.clone())
    };
    let mut walked = walk_objects(&odb, &request, &Discard)?;
    // Only what no pack (of this repository or an alternate) holds, which is what git 2.47's
    // `pack-objects --unpacked` enumerates (2.39's counted the packed objects it met too).
    walked.objects.retain(|o| odb.locate(&o.id).is_none());
    walked.located = None;
    progress.phase("Enumerating objects", None);
    progress.add(walked.objects.len() as u64);
    progress.finish();
    if walked.objects.is_empty() {
        // As git's `repack -d`: the loose copies of packed objects go all the same.
        if delete {
            prune_packed(&odb, |id| odb.locate(id).is_some())?;
        }
        return Ok(None);
    }
    let mut options = stored_pack_options(repo, Some(limits), cancel)?;
    if let Some(rules) = islands {
        let refs = repo.refs().list()?;
        let marked = crate::islands::mark(&odb, rules, &refs, &walked, progress)?;
        options.islands = Some(std::sync::Arc::new(marked));
    }
    let (stored, stats) = write_one(repo, &odb, &walked, &options, progress)?;
    progress.note(&stats.to_string());
    if delete {
        // Every loose copy of a packed object, as git's prune-packed after its repack.
        let packed = Pack::open(&stored.pack.with_extension("idx"), repo.hash())?;
        prune_packed(&odb, |id| packed.contains(id) || odb.locate(id).is_some())?;
    }
    crate::repack::refresh_server_info(repo, skip_server_info)?;
    Ok(Some(stats))
}

/// The most loose objects one pass packs (git's `maintenance.loose-objects.batchSize`).
pub const LOOSE_BATCH: usize = 50_000;

/// git maintenance's loose-objects task: the loose copies of packed objects removed, then up
/// to `batch` loose objects (reachable or not) written into a pack named
/// `loose-<checksum>.pack`; their loose files go at the next run, once the pack is in place
/// for every reader. Returns the pack, if there was anything to pack.
pub fn pack_loose_objects(
    repo: &Repository,
    batch: usize,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Option<std::path::PathBuf>, RepackError> {
    let odb = repo.objects();
    prune_packed(odb, |id| odb.locate(id).is_some())?;
    let dir = repo.objects().dir();
    let loose = (odb.loose().list()).map_err(crate::repack::file_error("list", dir))?;
    let mut objects = Vec::new();
    for file in loose.iter().take(batch) {
        if let Some((kind, _)) = odb.read(&file.id)? {
            let (name_hash, previous) = (0, None);
            objects.push(sluice_graph::WalkedObject {
                id: file.id,
                kind,
                name_hash,
                previous,
            });
        }
    }
    // As git's pack-objects, given the loose objects' ids.
    progress.phase("Enumerating objects", None);
    progress.add(objects.len() as u64);
    progress.finish();
    if objects.is_empty() {
        return Ok(None);
    }
    let walked = sluice_graph::Walked {
        objects,
        ..sluice_graph::Walked::default()
    };
    let options = crate::PackOptions {
        compression: crate::PackOptions::compression_of(repo.config())?,
        show_writing: true,
        cancel: cancel.clone(),
        ..crate::PackOptions::default()
    };
    let pack_dir = sluice_odb::pack_dir(dir);
    let named = |checksum: ObjectId| pack_dir.join(format!("loose-{checksum}.pack"));
    let (stored, stats) =
        crate::write_stored(repo, odb, &walked, &options, &named, progress, None)?;
    progress.note(&stats.to_string());
    Ok(Some(stored.pack))
}
