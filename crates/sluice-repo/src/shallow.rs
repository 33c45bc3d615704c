//! The shallow file (`gitrepository-layout`, "shallow"): the commits whose parents a shallow
//! repository lacks, one id a line, sorted. This module is its one reader and one writer.
//!
//! git runs the index-pack of a shallow fetch as `git --shallow-file <file> index-pack …`, the
//! file being the shallow list the fetch will have once it lands: [`use_file`] makes that file
//! the shallow file of every repository the process reads (an empty path: none at all).

use sluice_object::{HashKind, ObjectId};
use sluice_odb::lockfile::LockError;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The file given by `--shallow-file`, for the whole process (as git keeps it).
static GIVEN_FILE: OnceLock<PathBuf> = OnceLock::new();

/// Uses `path` instead of `<git dir>/shallow` from now on, in every repository (git's global
/// `--shallow-file`); the first call wins. An empty path means no shallow file.
pub fn use_file(path: PathBuf) {
    let _ = GIVEN_FILE.set(path);
}

/// The shallow file of the repository whose (common) git directory is `dir`; `None` when
/// `--shallow-file ""` said there is none.
fn file_of(dir: &Path) -> Option<PathBuf> {
    match GIVEN_FILE.get() {
        Some(given) if given.as_os_str().is_empty() => None,
        Some(given) => Some(given.clone()),
        None => Some(dir.join("shallow")),
    }
}

/// Whether the repository whose (common) git directory is `dir` is shallow: another
/// repository's, read as it is (this process's `--shallow-file` is not about it).
pub fn is_shallow(dir: &Path) -> bool {
    dir.join("shallow").exists()
}

/// Why the shallow file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ShallowError {
    /// The file holds something other than object ids.
    #[error("bad line '{line}' in '{path}'")]
    BadLine {
        /// The file.
        path: PathBuf,
        /// The line.
        line: String,
    },
    /// The file could not be read.
    #[error("cannot read '{path}': {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file could not be written.
    #[error(transparent)]
    Write(#[from] LockError),
}

/// The commits `<dir>/shallow` lists. Empty when there is no such file, for a complete
/// repository.
pub fn read(dir: &Path, hash: HashKind) -> Result<Vec<ObjectId>, ShallowError> {
    let Some(path) = file_of(dir) else {
        return Ok(Vec::new());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(ShallowError::Io { path, source }),
    };
    text.lines()
        .map(|line| {
            ObjectId::from_hex(hash, line.trim().as_bytes()).map_err(|_| ShallowError::BadLine {
                path: path.clone(),
                line: line.to_owned(),
            })
        })
        .collect()
}

/// Adds `cut` to `<dir>/shallow` and takes `uncut` out of it, through its lock; the file is
/// removed when nothing is left, as git leaves a complete repository without one.
pub fn update(
    dir: &Path,
    hash: HashKind,
    cut: &[ObjectId],
    uncut: &[ObjectId],
) -> Result<(), ShallowError> {
    let Some(path) = file_of(dir).filter(|_| !(cut.is_empty() && uncut.is_empty())) else {
        return Ok(());
    };
    let mut ids = read(dir, hash)?;
    ids.extend_from_slice(cut);
    ids.retain(|id| !uncut.contains(id));
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(ShallowError::Io { path, source: e })
            }
            _ => Ok(()),
        };
    }
    let text: String = ids.iter().map(|id| format!("{id}\n")).collect();
    sluice_odb::lockfile::write_locked(&path, text.as_bytes(), false)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_read_back_sorted_and_the_last_uncut_removes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let id = |b: u8| ObjectId::from_hex(HashKind::Sha1, &[b; 40]).unwrap();
        update(dir.path(), HashKind::Sha1, &[id(b'b'), id(b'a')], &[]).unwrap();
        assert_eq!(
            read(dir.path(), HashKind::Sha1).unwrap(),
            [id(b'a'), id(b'b')]
        );
        update(dir.path(), HashKind::Sha1, &[id(b'c')], &[id(b'a')]).unwrap();
        assert_eq!(
            read(dir.path(), HashKind::Sha1).unwrap(),
            [id(b'b'), id(b'c')]
        );
        update(dir.path(), HashKind::Sha1, &[], &[id(b'b'), id(b'c')]).unwrap();
        assert!(!dir.path().join("shallow").exists());
    }
}
