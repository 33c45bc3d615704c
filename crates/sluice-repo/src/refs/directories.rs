//! The directories loose refs and reflogs live in, kept as git keeps them: a deleted ref takes
//! the directories it leaves empty with it, and empty directories left in the way of a new ref
//! (by an older tool, or a crash) are removed, so that `refs/remotes/origin/a/b` once deleted
//! never stops `refs/remotes/origin/a` from being created.

use std::io::ErrorKind;
use std::path::Path;

/// Removes the directories of `name` under `base` that are now empty, deepest first, up to but
/// not including `refs/<kind>/` (git keeps `refs/heads` and `refs/tags` even when empty).
pub(super) fn remove_empty_parents(base: &Path, name: &str) {
    let components: Vec<&str> = name.split('/').collect();
    for depth in (3..components.len()).rev() {
        if std::fs::remove_dir(base.join(components[..depth].join("/"))).is_err() {
            break;
        }
    }
}

/// Makes room for a file at `path`: removes it if it is a directory holding nothing but empty
/// directories. Returns false when something else is in the way (a file somewhere below).
pub(super) fn clear_empty_directory(path: &Path) -> std::io::Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => return Ok(true),
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e),
    }
    if !only_empty_directories(path)? {
        return Ok(false);
    }
    std::fs::remove_dir_all(path)?;
    Ok(true)
}

fn only_empty_directories(dir: &Path) -> std::io::Result<bool> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_type()?.is_dir() || !only_empty_directories(&entry.path())? {
            return Ok(false);
        }
    }
    Ok(true)
}
