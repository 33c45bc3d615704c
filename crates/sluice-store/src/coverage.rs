//! What the packs of the next generation hold, checked before its manifest is committed.
//!
//! A push and a maintenance run both work in a private copy under the node's cache, which may
//! be wiped at any moment. A pack file removed before its directory was listed is neither
//! uploaded nor named, and a manifest committed then would name refs, or drop packs, whose
//! objects the store never got. So the commit goes ahead only when the packs it will name
//! hold every ref it moves and every object of every pack it takes out; a file gone counts as
//! holding nothing, which refuses the commit (the push is not acknowledged, maintenance
//! waits for its next run).

use crate::manifest::PackEntry;
use crate::StoreError;
use sluice_object::{HashKind, ObjectId};
use sluice_odb::ranged::PackSource;
use sluice_odb::Pack;
use std::path::Path;
use std::sync::Arc;

/// Checks that each of `tips` is in one of `packs` (their files in `dir`); names the first
/// that is not. The packs are opened in turn until every tip is found: a push's own pack,
/// given first, usually holds them all.
pub(crate) fn tips_held<'a>(
    dir: &Path,
    packs: impl Iterator<Item = &'a PackEntry>,
    tips: &[ObjectId],
    hash: HashKind,
    source: Option<&Arc<dyn PackSource>>,
) -> Result<(), StoreError> {
    let mut missing = tips.to_vec();
    for entry in packs {
        if missing.is_empty() {
            break;
        }
        if let Some(pack) = open(dir, entry, hash, source) {
            missing.retain(|tip| !pack.contains(tip));
        }
    }
    match missing.first() {
        Some(tip) => Err(StoreError::NotStored(*tip)),
        None => Ok(()),
    }
}

/// Checks that every object of the packs `replaced` (their files in `replaced_dir`) is in
/// one of `next` (their files in `next_dir`); names the first that is not. A replaced pack
/// that cannot be opened fails the check as well: what it held cannot be vouched for.
pub(crate) fn objects_kept<'a>(
    (replaced_dir, replaced): (&Path, &[&PackEntry]),
    (next_dir, next): (&Path, impl Iterator<Item = &'a PackEntry>),
    hash: HashKind,
    source: Option<&Arc<dyn PackSource>>,
) -> Result<(), StoreError> {
    if replaced.is_empty() {
        return Ok(());
    }
    let held: Vec<Pack> = next
        .filter_map(|p| open(next_dir, p, hash, source))
        .collect();
    for entry in replaced {
        let path = replaced_dir.join(format!("{}.idx", entry.name));
        let pack = Pack::open_from(&path, hash, source)?;
        let index = pack.index();
        let lost = (0..index.len())
            .map(|i| index.id(i))
            .find(|id| !held.iter().any(|pack| pack.contains(id)));
        if let Some(id) = lost {
            return Err(StoreError::NotStored(id));
        }
    }
    Ok(())
}

/// The pack `entry` from its files in `dir` (a ranged pack's bytes from `source`); `None`
/// when they do not open (gone, damaged).
fn open(
    dir: &Path,
    entry: &PackEntry,
    hash: HashKind,
    source: Option<&Arc<dyn PackSource>>,
) -> Option<Pack> {
    Pack::open_from(&dir.join(format!("{}.idx", entry.name)), hash, source).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_odb::testing::git;

    /// The packs in `dir`, as manifest entries.
    fn packs(dir: &Path) -> Vec<PackEntry> {
        let mut names: Vec<String> = (std::fs::read_dir(dir).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "pack"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        (names.into_iter())
            .map(|name| PackEntry {
                name,
                size: 0,
                extras: Vec::new(),
            })
            .collect()
    }

    #[test]
    fn what_replaced_packs_held_must_be_in_the_next_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("r");
        std::fs::create_dir(&repo).unwrap();
        git(&repo, &["init", "-q"]);
        std::fs::write(repo.join("a"), "a\n").unwrap();
        git(&repo, &["add", "a"]);
        git(&repo, &["commit", "-qm", "one"]);
        git(&repo, &["repack", "-q", "-d"]);
        std::fs::write(repo.join("b"), "b\n").unwrap();
        git(&repo, &["add", "b"]);
        git(&repo, &["commit", "-qm", "two"]);
        git(&repo, &["repack", "-q", "-d"]);
        let pack_dir = repo.join(".git/objects/pack");
        let old = tmp.path().join("old");
        std::fs::create_dir(&old).unwrap();
        for entry in std::fs::read_dir(&pack_dir).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, old.join(path.file_name().unwrap())).unwrap();
        }
        let two = packs(&old);
        assert_eq!(two.len(), 2);
        let hash = HashKind::Sha1;
        let each: Vec<&PackEntry> = two.iter().collect();
        // Either pack alone lacks what the other holds.
        for (i, kept) in two.iter().enumerate() {
            let other = [each[1 - i]];
            let lost = objects_kept((&old, &other), (&old, std::iter::once(kept)), hash, None);
            assert!(matches!(lost, Err(StoreError::NotStored(_))), "{lost:?}");
        }
        git(&repo, &["repack", "-q", "-a", "-d"]);
        let one = packs(&pack_dir);
        objects_kept((&old, &each), (&pack_dir, one.iter()), hash, None).unwrap();
        // A pack whose files are gone holds nothing.
        let gone = (tmp.path(), one.iter());
        assert!(objects_kept((&old, &each), gone, hash, None).is_err());
        let missing = (tmp.path(), &each[..]);
        assert!(objects_kept(missing, (&pack_dir, one.iter()), hash, None).is_err());
    }
}
