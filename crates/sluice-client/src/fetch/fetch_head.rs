//! What a fetch lists in `FETCH_HEAD` (the format's one writer is `sluice_repo::fetch_head`):
//! merge candidates first, then the rest, as git lists them.

use super::mapping::{Listed, Update};
use sluice_odb::LockError;
use sluice_repo::fetch_head::{self, FetchHeadEntry};
use sluice_repo::Repository;

/// Writes `FETCH_HEAD` (or, with `append`, adds to it): the refs of `updates` that it lists,
/// fetched from `url`, merge candidates first.
pub fn write_fetch_head(
    repo: &Repository,
    updates: &[Update],
    url: &str,
    append: bool,
) -> Result<(), LockError> {
    let listed_as = |listed| updates.iter().filter(move |u| u.listed == listed);
    let entries: Vec<FetchHeadEntry> = (listed_as(Listed::ForMerge))
        .chain(listed_as(Listed::NotForMerge))
        .map(|update| FetchHeadEntry {
            id: update.remote.id,
            name: &update.remote.name,
            for_merge: update.listed == Listed::ForMerge,
        })
        .collect();
    fetch_head::write(repo, &entries, url, append)
}
