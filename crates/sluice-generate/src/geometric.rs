//! `repack --geometric=<factor> -d`: the smallest packs, and the loose objects, rolled into one
//! new pack, just enough of them that the packs left, with the new one, grow by at least
//! `factor` from each to the next. After each push only small packs are rewritten, and the
//! number of packs stays logarithmic in the number of objects; the big pack, and its bitmap,
//! are left alone until the small ones together reach half its size.
//!
//! Every object of the rolled packs goes in, reachable or not (no walk decides): a pack that
//! is kept (`.keep`) or promised (`.promisor`) is not rolled. As git's `pack-objects
//! --stdin-packs`, the stored deltas are kept and every other object is searched against the
//! other rolled packs' objects (each pack's writer tried its own), its path found by a walk of
//! the rolled commits: a push's pack completed with whole bases gets its deltas at the roll.

use crate::repack::{file_error, prune_packed, remove_pack, RepackError};
use crate::stored::write_rolled;
use sluice_graph::{walk_objects, Missing, WalkRequest, Walked, WalkedObject};
use sluice_object::cancel::Cancel;
use sluice_object::progress::{Discard, Progress};
use sluice_object::{IdMap, IdSet, ObjectId, ObjectKind};
use sluice_odb::{ObjectDb, Pack};
use sluice_repo::Repository;
use std::path::PathBuf;

/// How a geometric repack runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GeometricOptions {
    /// Each pack left holds at least this many times the objects of the next smaller one.
    pub factor: u64,
    /// Never roll the largest pack: the caller repacks everything instead, with a bitmap
    /// (maintenance after a push keeps the big pack and its bitmap until the small packs
    /// reach half of it). `repack --geometric` rolls it.
    pub spare_largest: bool,
    /// Take the loose objects in too (`repack --geometric`); maintenance after a push leaves
    /// them to `gc.auto`, as git's receive-pack leaves them.
    pub loose: bool,
    /// Leave the dumb-HTTP files as they are (`-n`).
    pub skip_server_info: bool,
}

/// What a geometric repack did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rolled {
    /// The packs already grow geometrically and there are no loose objects.
    Nothing,
    /// Nothing: the roll would have taken in the largest pack, which
    /// [`GeometricOptions::spare_largest`] forbids.
    WouldTakeLargest,
    /// `packs` packs and `loose` loose objects became the pack `into`.
    Into {
        /// The new pack.
        into: PathBuf,
        /// How many packs it replaces.
        packs: usize,
        /// How many loose objects it took in.
        loose: usize,
    },
}

/// How many of the packs (object counts `counts`, ascending) to roll into one pack, so that
/// every pack left holds at least `factor` times the objects of the one below it, the new one
/// counted. As git's, the loose objects that go into the new pack too are not counted.
pub(crate) fn packs_to_roll(counts: &[u64], factor: u64) -> usize {
    // The largest packs that already grow by `factor`, from the top down.
    let mut split = counts.len();
    while split > 1 && counts[split - 1] >= factor.saturating_mul(counts[split - 2]) {
        split -= 1;
    }
    // Below the break, everything goes; when all grow (or there is at most one), nothing.
    let mut split = split.saturating_sub(1);
    let mut total: u64 = counts[..split].iter().sum::<u64>();
    // The new pack must be small enough for the next one up.
    while split < counts.len() && counts[split] < factor.saturating_mul(total) {
        total += counts[split];
        split += 1;
    }
    split
}

/// Rolls the smallest packs of `repo` and its loose objects into one pack as `factor` asks,
/// then removes what the new pack replaces; the writing's phases go to `progress`, `cancel`
/// stops it between two objects.
pub fn repack_geometric(
    repo: &Repository,
    options: &GeometricOptions,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Rolled, RepackError> {
    let objects_dir = repo.objects().dir().to_owned();
    let odb = repo.objects();
    let mut packs: Vec<&Pack> = (odb.packs().iter())
        .map(|pack| &**pack)
        .filter(|pack| {
            // A cruft pack (`.mtimes`) is for gc to judge, not for a roll.
            let path = pack.path();
            let cruft = path.with_extension(sluice_odb::mtimes::EXTENSION).exists();
            !sluice_repo::roots::kept_pack(path) && !cruft
        })
        .collect();
    packs.sort_by_key(|pack| (pack.index().len(), pack.path().to_owned()));
    let loose = match options.loose {
        true => (odb.loose().list()).map_err(file_error("list", &objects_dir))?,
        false => Vec::new(),
    };
    let counts: Vec<u64> = packs.iter().map(|p| p.index().len() as u64).collect();
    let roll = packs_to_roll(&counts, options.factor.max(2));
    // One pack rolled alone would only be written again.
    if loose.is_empty() && roll < 2 {
        return Ok(Rolled::Nothing);
    }
    if options.spare_largest && roll == packs.len() && roll > 0 {
        return Ok(Rolled::WouldTakeLargest);
    }
    let rolled: Vec<PathBuf> = packs[..roll].iter().map(|p| p.path().to_owned()).collect();
    let mut walked = list_objects(odb, &packs[..roll], &packs[roll..], &loose)?;
    // As git's `pack-objects --stdin-packs --unpacked`: every object of the rolled packs and
    // every loose object, the same object counted as often as it is met.
    let met: usize = packs[..roll].iter().map(|p| p.index().len()).sum();
    progress.phase("Enumerating objects", None);
    progress.add((met + loose.len()) as u64);
    progress.finish();
    // A shallow repository's cut: those commits' parents are not walked.
    let shallow: IdSet = repo
        .shallow_commits()
        .unwrap_or_default()
        .into_iter()
        .collect();
    name_objects(odb, (&mut walked, &shallow), cancel)?;
    // As git's pack-objects --stdin-packs: stored deltas kept, every other object tried
    // against the other rolled packs' (each pack's writer tried its own).
    let stored = write_rolled(repo, odb, &walked, progress, cancel)?;
    let packed = Pack::open(&stored.pack.with_extension("idx"), repo.hash())?;
    for old in rolled.iter().filter(|old| **old != stored.pack) {
        remove_pack(old)?;
    }
    prune_packed(odb, |id| packed.contains(id))?;
    crate::repack::refresh_server_info(repo, options.skip_server_info)?;
    Ok(Rolled::Into {
        into: stored.pack,
        packs: rolled.len(),
        loose: loose.len(),
    })
}

/// `repack --geometric=<factor> -d [--write-midx [-b]]`: the roll, then the multi-pack-index
/// of the packs left when `midx` asks, with its bitmap when `bitmap` does (the largest pack of
/// the series first in the bitmap's order, as git orders it).
pub fn repack_geometric_with_midx(
    repo: &Repository,
    options: &GeometricOptions,
    midx: bool,
    bitmap: bool,
    progress: &dyn sluice_object::progress::Progress,
    cancel: &Cancel,
) -> Result<Rolled, RepackError> {
    let rolled = repack_geometric(repo, options, progress, cancel)?;
    match (midx, bitmap) {
        (true, true) => {
            crate::write_midx_bitmap(repo, crate::largest_pack(repo)?, progress, cancel)?;
        }
        (true, false) => {
            sluice_odb::midx::write_midx(&repo.objects().pack_dir(), repo.hash())?;
        }
        _ => {}
    }
    Ok(rolled)
}

/// Every object of the packs `rolled` and of `loose`, except those the packs `kept` hold,
/// with its kind (commits first, as the writer expects a walk's order).
fn list_objects(
    odb: &ObjectDb,
    rolled: &[&Pack],
    kept: &[&Pack],
    loose: &[sluice_odb::LooseFile],
) -> Result<Walked, RepackError> {
    let elsewhere = |id: &ObjectId| kept.iter().any(|p| p.contains(id));
    let mut seen = IdSet::default();
    let mut objects = Vec::new();
    for pack in rolled {
        for position in 0..pack.index().len() {
            let id = pack.index().id(position);
            if elsewhere(&id) || !seen.insert(id) {
                continue;
            }
            let kind = match pack.kind_at(position)? {
                Some(kind) => kind,
                None => pack.read_position(position)?.0,
            };
            objects.push(listed(id, kind));
        }
    }
    for file in loose {
        if elsewhere(&file.id) || !seen.insert(file.id) {
            continue;
        }
        if let Some((kind, _)) = odb.read(&file.id)? {
            objects.push(listed(file.id, kind));
        }
    }
    objects.sort_by_key(|o| o.kind != ObjectKind::Commit);
    Ok(Walked {
        objects,
        ..Walked::default()
    })
}

/// Gives the trees and blobs of `walked` the hash of the path they are found at, which groups
/// versions of a file for the search, as git's `--stdin-packs` does: from a walk of the
/// commits listed down to the commits they build on (or the `shallow` cut). What no such
/// commit reaches keeps none.
fn name_objects(
    odb: &ObjectDb,
    (walked, shallow): (&mut Walked, &IdSet),
    cancel: &Cancel,
) -> Result<(), RepackError> {
    let commits: IdSet = (walked.objects.iter())
        .filter(|o| o.kind == ObjectKind::Commit)
        .map(|o| o.id)
        .collect();
    let mut before = Vec::new();
    for id in &commits {
        if let Some((ObjectKind::Commit, data)) = odb.read(id)? {
            let parents = sluice_object::parse::parse_commit(odb.hash(), &data)
                .map(|commit| commit.parents)
                .unwrap_or_default();
            before.extend(parents.into_iter().filter(|p| !commits.contains(p)));
        }
    }
    let tips: Vec<ObjectId> = commits.into_iter().collect();
    let request = WalkRequest {
        missing: Missing::SetAside,
        shallow,
        ..WalkRequest::reachable(&tips, &before, cancel.clone())
    };
    // Names are hints: a walk that cannot finish (a shallow repository's missing parents, a
    // damaged commit the roll copies as it is) leaves the objects unnamed, not the roll undone.
    let walked_names = match walk_objects(odb, &request, &Discard) {
        Ok(named) => named.objects,
        Err(cancelled @ sluice_graph::WalkError::Cancelled(_)) => return Err(cancelled.into()),
        Err(_) => return Ok(()),
    };
    let named: IdMap<u32> = (walked_names.into_iter())
        .map(|o| (o.id, o.name_hash))
        .collect();
    for object in &mut walked.objects {
        if let Some(&hash) = named.get(&object.id) {
            object.name_hash = hash;
        }
    }
    Ok(())
}

fn listed(id: ObjectId, kind: ObjectKind) -> WalkedObject {
    WalkedObject {
        id,
        kind,
        name_hash: 0,
        previous: None,
    }
}

#[cfg(test)]
mod tests {
    use super::packs_to_roll;

    #[test]
    fn rolls_only_what_breaks_the_progression() {
        // 1, 2, 4, 8 grow by 2 already.
        assert_eq!(packs_to_roll(&[1, 2, 4, 8], 2), 0);
        // 1, 1, 1 then 100: the three small ones go together (3 * 2 <= 100).
        assert_eq!(packs_to_roll(&[1, 1, 1, 100], 2), 3);
        // Small ones rolled become 60: 100 < 2 * 60, so 100 joins them; 1000 does not.
        assert_eq!(packs_to_roll(&[20, 20, 20, 100, 1000], 2), 4);
        assert_eq!(packs_to_roll(&[10, 1000], 2), 0);
        assert_eq!(packs_to_roll(&[1000], 2), 0);
        assert_eq!(packs_to_roll(&[], 2), 0);
    }
}
