//! Cruft packs (`repack --cruft`, and gc as git's runs it): what no ref reaches, kept in one
//! pack with each object's date in a `.mtimes` file rather than as thousands of loose files,
//! until it is older than the expiration. An object's date is that of its loose file, its
//! old cruft pack's record, or its old pack's file; the newest wins when there are several.

use crate::repack::{file_error, CruftOptions, RepackError};
use crate::stored::{stored_pack_options, write_packs_into};
use sluice_graph::{Walked, WalkedObject};
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_object::{IdMap, ObjectId, ObjectKind};
use sluice_odb::pack_store::Stored;
use sluice_odb::{ObjectDb, Pack};
use sluice_repo::Repository;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// A cruft object: its kind and its date in seconds.
struct Cruft {
    kind: ObjectKind,
    time: u32,
}

/// Writes the cruft packs of what `survivors` (the repack's new packs, and the cruft packs it
/// keeps) leave out of the packs `before` and of the loose objects, less what is older than
/// the cruft's expiration, cut under its `max_size`; returns the new packs (none when there
/// was nothing to keep).
pub(crate) fn write_cruft_packs(
    repo: &Repository,
    odb: &ObjectDb,
    (survivors, before): (&[&Pack], &[PathBuf]),
    cruft_options: &CruftOptions,
    (progress, cancel): (&dyn Progress, &Cancel),
) -> Result<Vec<PathBuf>, RepackError> {
    let found = cruft_of(repo, odb, (survivors, before), cruft_options, progress)?;
    let Some(cruft) = found else {
        return Ok(Vec::new());
    };
    let options = stored_pack_options(repo, None, cancel)?;
    let limits = (&options, cruft_options.max_size);
    let (packs, stats) = write_packs_into(repo, odb, &cruft.0, limits, progress)?;
    // As git's pack-objects --cruft ends.
    progress.note(&stats.to_string());
    date_cruft(repo, &cruft, &packs)?;
    Ok(packs.into_iter().map(|stored| stored.pack).collect())
}

/// Writes the `.mtimes` of each of the cruft `packs` made of `walked` (in id order, with each
/// object's date in `times`): the dates of its own objects.
pub(crate) fn date_cruft(
    repo: &Repository,
    (walked, times): &(Walked, Vec<u32>),
    packs: &[Stored],
) -> Result<(), RepackError> {
    let dated: IdMap<u32> = (walked.objects.iter().zip(times))
        .map(|(object, time)| (object.id, *time))
        .collect();
    for stored in packs {
        let times: Vec<u32> = match packs {
            // One pack: its index lists the ids sorted, as `walked` does.
            [_] => times.clone(),
            _ => {
                let pack = Pack::open(&stored.pack.with_extension("idx"), repo.hash())?;
                let index = pack.index();
                (0..index.len()).map(|i| dated[&index.id(i)]).collect()
            }
        };
        sluice_odb::mtimes::write_mtimes(&stored.pack, &stored.checksum, &times, repo.hash())?;
    }
    Ok(())
}

/// git 2.47's `--max-cruft-size=<n>` without an expiration: the cruft packs among `before`,
/// smallest first, are combined (rewritten into the new cruft pack) while together they stay
/// within `n` bytes; the rest are kept as they are. Returns those kept.
pub(crate) fn retained_cruft_packs(
    before: &[PathBuf],
    n: u64,
) -> Result<Vec<PathBuf>, RepackError> {
    let mut cruft = Vec::new();
    for pack in before
        .iter()
        .filter(|p| p.with_extension("mtimes").exists())
    {
        let size = std::fs::metadata(pack)
            .map_err(file_error("read", pack))?
            .len();
        cruft.push((size, pack.clone()));
    }
    cruft.sort();
    let mut total = 0u64;
    let mut retained = Vec::new();
    for (size, pack) in cruft {
        match total.checked_add(size).filter(|sum| *sum <= n) {
            Some(sum) => total = sum,
            None => retained.push(pack),
        }
    }
    Ok(retained)
}

/// The cruft of a repack: what the packs `survivors` leave out of the packs `before` and of
/// the loose objects, less what is older than the expiration (unless a younger one reaches
/// it); in id order, with each object's date for the `.mtimes` file. `None`: nothing.
pub(crate) fn cruft_of(
    repo: &Repository,
    odb: &ObjectDb,
    (survivors, before): (&[&Pack], &[PathBuf]),
    cruft_options: &CruftOptions,
    progress: &dyn Progress,
) -> Result<Option<(Walked, Vec<u32>)>, RepackError> {
    let survives = |id: &ObjectId| survivors.iter().any(|pack| pack.contains(id));
    let expiration = cruft_options.expiration;
    let mut cruft: IdMap<Cruft> = IdMap::default();
    let mut keep = |id: ObjectId, kind: ObjectKind, time: u32| {
        let entry = cruft.entry(id).or_insert(Cruft { kind, time });
        entry.time = entry.time.max(time);
    };
    // git's enumeration without an expiration meets every object of the old packs and every
    // loose object, those that survive too.
    let mut met = 0;
    for old in before {
        let pack = Pack::open(&old.with_extension("idx"), repo.hash())?;
        let index = pack.index();
        met += index.len();
        let recorded =
            sluice_odb::mtimes::read_mtimes(old, &index.pack_checksum(), index.len(), repo.hash());
        let pack_time = seconds(std::fs::metadata(old).and_then(|m| m.modified()).ok());
        for position in 0..index.len() {
            let id = index.id(position);
            if survives(&id) {
                continue;
            }
            let time = recorded.as_ref().map_or(pack_time, |t| t[position]);
            if let Some(kind) = pack.kind_at(position)? {
                keep(id, kind, time);
            }
        }
    }
    let dir = repo.objects().dir();
    for file in odb.loose().list().map_err(file_error("list", dir))? {
        met += 1;
        if survives(&file.id) {
            continue;
        }
        let modified = std::fs::metadata(&file.path)
            .and_then(|m| m.modified())
            .ok();
        if let Some((kind, _)) = odb.read(&file.id)? {
            keep(file.id, kind, seconds(modified));
        }
    }
    match expiration {
        Some(expiration) => {
            // As git prunes: what is as old as the limit goes too (`--prune=now` keeps nothing).
            let limit = seconds(Some(expiration));
            // git enumerates the recent cruft, then traverses what it reaches.
            let recent = cruft.values().filter(|c| c.time > limit).count();
            show_counted(progress, "Enumerating cruft objects", recent);
            rescue_reached(odb, &mut cruft, limit)?;
            cruft.retain(|_, c| c.time > limit);
            show_counted(progress, "Traversing cruft objects", cruft.len());
        }
        None => show_counted(progress, "Enumerating cruft objects", met),
    }
    if cruft.is_empty() {
        return Ok(None);
    }
    let mut ids: Vec<ObjectId> = cruft.keys().copied().collect();
    ids.sort_unstable();
    let walked = Walked {
        objects: (ids.iter())
            .map(|id| WalkedObject {
                id: *id,
                kind: cruft[id].kind,
                name_hash: 0,
                previous: None,
            })
            .collect(),
        ..Walked::default()
    };
    // The pack's index lists the ids sorted, as `ids` is.
    let times: Vec<u32> = ids.iter().map(|id| cruft[id].time).collect();
    Ok(Some((walked, times)))
}

/// A phase of `count` objects, shown done at once (a count without a total, as git's).
fn show_counted(progress: &dyn Progress, title: &str, count: usize) {
    progress.phase(title, None);
    progress.add(count as u64);
    progress.finish();
}

/// Seconds since the epoch, as the `.mtimes` file records them (0 when unknown).
fn seconds(time: Option<SystemTime>) -> u32 {
    time.and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs().min(u64::from(u32::MAX)) as u32)
}

/// Dates what a recent cruft object reaches at least as the object, so that the age limit
/// never keeps a commit and drops its tree (git keeps what recent objects reach as well).
fn rescue_reached(odb: &ObjectDb, cruft: &mut IdMap<Cruft>, limit: u32) -> Result<(), RepackError> {
    let mut pending: Vec<(ObjectId, u32)> = (cruft.iter())
        .filter(|(_, c)| c.time > limit && c.kind != ObjectKind::Blob)
        .map(|(id, c)| (*id, c.time))
        .collect();
    while let Some((id, time)) = pending.pop() {
        let Some((kind, data)) = odb.read(&id)? else {
            continue;
        };
        for link in links(odb.hash(), kind, &data) {
            if let Some(reached) = cruft.get_mut(&link) {
                if reached.time < time {
                    reached.time = time;
                    if reached.kind != ObjectKind::Blob {
                        pending.push((link, time));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The objects `data` names (a malformed object names none: fsck is where it is judged).
fn links(hash: sluice_object::HashKind, kind: ObjectKind, data: &[u8]) -> Vec<ObjectId> {
    use sluice_object::parse::{parse_commit, parse_tag, tree_entries};
    match kind {
        ObjectKind::Commit => parse_commit(hash, data)
            .map(|c| std::iter::once(c.tree).chain(c.parents).collect())
            .unwrap_or_default(),
        ObjectKind::Tag => parse_tag(hash, data)
            .map(|t| vec![t.object])
            .unwrap_or_default(),
        ObjectKind::Tree => tree_entries(hash, data)
            .map_while(Result::ok)
            .filter(|e| !e.is_gitlink())
            .map(|e| e.id)
            .collect(),
        ObjectKind::Blob => Vec::new(),
    }
}
