//! Writing a repository file as git does: into `<path>.lock`, created exclusively (so a second
//! writer fails instead of interleaving), then renamed over `<path>`. Readers see the old file
//! or the new one, never a mix; a failure removes the lock and leaves the old file.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a locked write failed.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the lock.
    #[error("unable to create '{0}': File exists; another git process seems to be running")]
    Locked(PathBuf),
    /// Writing or renaming failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The lock file for `path`: `<path>.lock`.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// Creates the lock file of `path` exclusively: the lock's path, and the file or why not
/// (`AlreadyExists`: someone else holds it).
pub fn create_lock(path: &Path) -> (PathBuf, std::io::Result<std::fs::File>) {
    let lock = lock_path(path);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock);
    (lock, file)
}

/// Writes `bytes` to `path` through its lock file. With `stamp_now`, the file's mtime is set
/// from the fine system clock after writing (see the index writer for why).
pub fn write_locked(path: &Path, bytes: &[u8], stamp_now: bool) -> Result<(), LockError> {
    write_locked_with(path, stamp_now, |out| out.write_all(bytes))
}

/// [`write_locked`] for content that `write` produces piece by piece (through a buffer), so
/// that a large file (an index of 100,000 entries is 9 MB) is never held whole.
pub fn write_locked_with(
    path: &Path,
    stamp_now: bool,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), LockError> {
    let (lock, file) = create_lock(path);
    let mut file = match file {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(LockError::Locked(lock))
        }
        Err(source) => return Err(LockError::Io { path: lock, source }),
    };
    let written = {
        let mut buffered = std::io::BufWriter::with_capacity(64 << 10, &mut file);
        write(&mut buffered).and_then(|_| buffered.flush())
    };
    let result = written
        .and_then(|_| {
            if stamp_now {
                file.set_modified(std::time::SystemTime::now())
            } else {
                Ok(())
            }
        })
        .and_then(|_| std::fs::rename(&lock, path));
    if let Err(source) = result {
        let _ = std::fs::remove_file(&lock);
        return Err(LockError::Io {
            path: path.to_owned(),
            source,
        });
    }
    Ok(())
}
