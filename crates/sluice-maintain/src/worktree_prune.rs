//! What gc removes beside objects, as git's gc does after its prune: the administrative files
//! of linked worktrees gone from disk (`worktree prune --expire`, `gc.worktreePruneExpire`,
//! 3 months), and the conflict resolutions rerere recorded long ago (`rerere gc`,
//! `gc.rerereResolved`, 60 days, `gc.rerereUnresolved`, 15 days).

use crate::gc::to_seconds as seconds;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Removes `<common dir>/worktrees/<id>` for every linked worktree git's `worktree prune`
/// would: not a directory, no `gitdir` file or an empty one, or one naming a path that is gone
/// while the worktree's index is older than `expire` (or missing); one `locked` stays; of two
/// naming one path (or the main worktree's), the later goes. The `worktrees` directory goes
/// when it is left empty. Returns the ids removed.
pub fn prune_worktrees(common_dir: &Path, expire: SystemTime) -> std::io::Result<Vec<String>> {
    let dir = sluice_repo::worktrees::linked_dir(common_dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut removed = Vec::new();
    // Each kept worktree's path, with its id.
    let mut kept: Vec<(PathBuf, Option<String>)> = Vec::new();
    for entry in entries.flatten() {
        let id = entry.file_name().to_string_lossy().into_owned();
        match worktree_path(&entry.path(), expire) {
            Some(path) => kept.push((path, Some(id))),
            None => {
                remove(&entry.path())?;
                removed.push(id);
            }
        }
    }
    let main = std::path::absolute(common_dir)?;
    kept.push((main, None));
    // The main worktree first among equal paths: it is never removed.
    kept.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| a.1.is_some().cmp(&b.1.is_some()))
    });
    for pair in kept.windows(2) {
        if let ((first, _), (second, Some(id))) = (&pair[0], &pair[1]) {
            if first == second {
                remove(&dir.join(id))?;
                removed.push(id.clone());
            }
        }
    }
    // Only when empty (git ignores a failure too).
    let _ = std::fs::remove_dir(&dir);
    Ok(removed)
}

/// The path the worktree whose administrative directory is `admin` lives at (its `gitdir`
/// file's content), or `None` when it is to be pruned.
fn worktree_path(admin: &Path, expire: SystemTime) -> Option<PathBuf> {
    if !admin.is_dir() {
        return None;
    }
    let named = std::fs::read(admin.join("gitdir")).ok();
    if admin.join("locked").exists() {
        // Kept whatever its gitdir says; a locked worktree's path still counts for duplicates.
        return Some(named.map(|bytes| path_in(&bytes)).unwrap_or_default());
    }
    let path = path_in(&named?);
    if path.as_os_str().is_empty() {
        return None;
    }
    if path.exists() {
        return Some(path);
    }
    let index_time =
        std::fs::metadata(sluice_repo::worktrees::default_index(admin)).and_then(|m| m.modified());
    // In whole seconds, as git compares them: an index written in the second of `now` counts
    // as older.
    match index_time {
        Ok(time) if seconds(time) > seconds(expire) => Some(path),
        _ => None,
    }
}

/// A `gitdir` file's path: its content without the line ends after it.
fn path_in(bytes: &[u8]) -> PathBuf {
    let text = String::from_utf8_lossy(bytes);
    PathBuf::from(text.trim_end_matches(['\n', '\r']))
}

fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Removes what rerere recorded long ago from `<git dir>/rr-cache`, as `git rerere gc`: each
/// recorded conflict (a variant: `preimage`, `postimage`, `thisimage`, or their `.<n>` forms)
/// whose resolution was last used before `resolved` (its `postimage`'s time), or, unresolved,
/// that was recorded before `unresolved` (its `preimage`'s time); then every conflict
/// directory left without a variant. Only where rerere is on (`rerere.enabled`, else the
/// directory's existence), as git's.
pub fn rerere_gc(
    git_dir: &Path,
    enabled: Option<bool>,
    (resolved, unresolved): (SystemTime, SystemTime),
) -> std::io::Result<()> {
    let cache = git_dir.join("rr-cache");
    match (enabled, cache.is_dir()) {
        (Some(false), _) | (None, false) => return Ok(()),
        // On, with nothing recorded yet: git makes the directory, as for a first record.
        (Some(true), false) => return std::fs::create_dir(&cache),
        (_, true) => {}
    }
    for conflict in std::fs::read_dir(&cache)?.flatten() {
        let name = conflict.file_name().to_string_lossy().into_owned();
        if name.len() != 40 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let dir = conflict.path();
        for suffix in variants(&dir) {
            let time = |image: &str| {
                std::fs::metadata(dir.join(format!("{image}{suffix}")))
                    .and_then(|m| m.modified())
                    .ok()
                    .map(seconds)
            };
            let stale = match (time("postimage"), time("preimage")) {
                (Some(used), _) => used < seconds(resolved),
                (None, Some(recorded)) => recorded < seconds(unresolved),
                (None, None) => false,
            };
            if stale {
                for image in ["thisimage", "preimage", "postimage"] {
                    remove(&dir.join(format!("{image}{suffix}")))?;
                }
            }
        }
        // Only when no variant is left (git keeps the others the same way).
        let _ = std::fs::remove_dir(&dir);
    }
    Ok(())
}

/// The variants recorded in a conflict directory, as file-name suffixes: "" for the first,
/// ".<n>" for the others.
fn variants(dir: &Path) -> Vec<String> {
    let mut suffixes: Vec<String> = (std::fs::read_dir(dir).into_iter().flatten().flatten())
        .filter_map(|file| {
            let name = file.file_name().to_string_lossy().into_owned();
            let rest = ["preimage", "postimage", "thisimage"]
                .iter()
                .find_map(|image| name.strip_prefix(image))?
                .to_owned();
            let numbered = rest
                .strip_prefix('.')
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            (rest.is_empty() || numbered).then_some(rest)
        })
        .collect();
    suffixes.sort();
    suffixes.dedup();
    suffixes
}
