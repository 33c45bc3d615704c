//! `multi-pack-index repack --batch-size=<size>` (git's incremental-repack task): the objects
//! the multi-pack-index finds in a batch of its smaller packs, oldest first, written as one new
//! pack, the multi-pack-index written again; a later `expire` deletes the packs of the batch,
//! which nothing is found in any more.

use crate::repack::RepackError;
use crate::stored::write_rolled;
use sluice_graph::{Walked, WalkedObject};
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_object::IdSet;
use sluice_repo::Repository;
use std::path::PathBuf;

/// Repacks a batch of the multi-pack-index's packs, chosen as git chooses them: from the
/// oldest, each whose objects found there would take under `batch_size` bytes (its size in
/// proportion), until the batch reaches `batch_size`; every pack when `batch_size` is 0. A
/// `.keep` pack is left out unless `repack.packKeptObjects`. Nothing is written for a batch of
/// fewer than two packs or under `batch_size`. Returns the new pack.
pub fn repack_midx(
    repo: &Repository,
    batch_size: u64,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Option<PathBuf>, RepackError> {
    let pack_dir = repo.objects().pack_dir();
    let Some(attribution) = sluice_odb::midx_maintain::attribution(&pack_dir, repo.hash())? else {
        return Ok(None);
    };
    let kept_too = repo
        .config()
        .get_bool("repack.packkeptobjects")?
        .unwrap_or(false);
    let counts = attribution.counts();
    let odb = repo.objects();
    // Each pack: its number in the file, its date, and the bytes its found objects take.
    let mut candidates = Vec::new();
    for (number, name) in attribution.packs.iter().enumerate() {
        let idx = pack_dir.join(name);
        let pack = idx.with_extension("pack");
        let Ok(meta) = std::fs::metadata(&pack) else {
            continue;
        };
        if counts[number] == 0 || (!kept_too && idx.with_extension("keep").exists()) {
            continue;
        }
        let total = odb
            .packs()
            .iter()
            .find(|p| p.path() == pack)
            .map_or(0, |p| p.index().len());
        let expected = meta.len() * counts[number] as u64 / total.max(1) as u64;
        // Whole seconds, as git compares packs' dates; ties keep the file's order.
        let seconds = (meta.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        candidates.push((seconds, number, expected));
    }
    candidates.sort_by_key(|&(seconds, number, _)| (seconds, number));
    let mut batch = Vec::new();
    let mut size = 0u64;
    for (_, number, expected) in candidates {
        if batch_size > 0 && expected >= batch_size {
            continue;
        }
        batch.push(number as u32);
        size += expected;
        if batch_size > 0 && size >= batch_size {
            break;
        }
    }
    // A batch that does not reach its size, or of one pack, is not worth a pack: git writes
    // none either.
    if batch.len() < 2 || size < batch_size {
        return Ok(None);
    }
    let chosen: IdSet = (attribution.objects.iter())
        .filter(|(_, pack)| batch.contains(pack))
        .map(|(id, _)| *id)
        .collect();
    let mut objects = Vec::with_capacity(chosen.len());
    for id in &chosen {
        let (kind, _) = odb
            .read(id)?
            .ok_or(crate::GenerateError::MissingObject(*id))?;
        objects.push(WalkedObject {
            id: *id,
            kind,
            name_hash: 0,
            previous: None,
        });
    }
    objects.sort_by_key(|o| (o.kind as u8, o.id));
    // As git's pack-objects given the ids: enumerated, then searched as a repack is (stored
    // deltas kept, every other object tried), its Total said.
    progress.phase("Enumerating objects", None);
    progress.add(objects.len() as u64);
    progress.finish();
    let walked = Walked {
        objects,
        ..Walked::default()
    };
    let stored = write_rolled(repo, odb, &walked, progress, cancel)?;
    sluice_odb::midx::write_midx(&pack_dir, repo.hash())?;
    Ok(Some(stored.pack))
}
