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

/// [`create_lock`], trying again while someone else holds the lock, for up to `timeout`, as
/// git waits for a ref's lock (`core.filesRefLockTimeout`): waits that grow about
/// quadratically from 1 ms (to at most a second), each jittered by ±25% so that two waiting
/// writers do not keep colliding.
pub fn create_lock_waiting(
    path: &Path,
    timeout: std::time::Duration,
) -> (PathBuf, std::io::Result<std::fs::File>) {
    let start = std::time::Instant::now();
    let (mut multiplier, mut n) = (1u64, 1u64);
    loop {
        let (lock, file) = create_lock(path);
        match &file {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            _ => return (lock, file),
        }
        if start.elapsed() >= timeout {
            return (lock, file);
        }
        // A jitter from the clock's nanoseconds: no generator needed for ±25%.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::from(d.subsec_nanos()));
        let wait_us = multiplier * (750 + nanos % 500);
        std::thread::sleep(std::time::Duration::from_micros(wait_us).min(timeout));
        multiplier += 2 * n + 1;
        match multiplier > 1000 {
            true => multiplier = 1000,
            false => n += 1,
        }
    }
}

/// A lock file held, so that what the file holds can be read under it before it is replaced
/// (a read then a locked write would lose another writer's change made in between):
/// [`HeldLock::commit`] writes the new content and renames it into place; dropped uncommitted,
/// the lock is removed and the file stays as it was.
#[derive(Debug)]
pub struct HeldLock {
    path: PathBuf,
    lock: PathBuf,
    file: Option<std::fs::File>,
}

impl HeldLock {
    /// Takes `path`'s lock, waiting up to `timeout` for another writer's (see
    /// [`create_lock_waiting`]).
    pub fn take(path: &Path, timeout: std::time::Duration) -> Result<HeldLock, LockError> {
        let (lock, file) = opened(create_lock_waiting(path, timeout))?;
        Ok(HeldLock {
            path: path.to_owned(),
            lock,
            file: Some(file),
        })
    }

    /// Writes `bytes` and renames the lock over the file.
    pub fn commit(mut self, bytes: &[u8]) -> Result<(), LockError> {
        let file = self.file.take().ok_or_else(|| LockError::Io {
            path: self.lock.clone(),
            source: std::io::ErrorKind::NotFound.into(),
        })?;
        let held = (self.lock.clone(), file);
        write_through(&self.path, held, false, |out| out.write_all(bytes))
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.lock);
        }
    }
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
    write_through(path, opened(create_lock(path))?, stamp_now, write)
}

/// [`write_locked`], waiting up to `timeout` for a lock another writer holds (see
/// [`create_lock_waiting`]).
pub fn write_locked_waiting(
    path: &Path,
    bytes: &[u8],
    timeout: std::time::Duration,
) -> Result<(), LockError> {
    HeldLock::take(path, timeout)?.commit(bytes)
}

/// The lock file just created (its path, and the file or why not), or why it could not be.
fn opened(
    (lock, file): (PathBuf, std::io::Result<std::fs::File>),
) -> Result<(PathBuf, std::fs::File), LockError> {
    match file {
        Ok(file) => Ok((lock, file)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(LockError::Locked(lock)),
        Err(source) => Err(LockError::Io { path: lock, source }),
    }
}

/// Writes through the lock file just created (`locked`: its path and the file), then renames
/// it over `path`.
fn write_through(
    path: &Path,
    (lock, mut file): (PathBuf, std::fs::File),
    stamp_now: bool,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), LockError> {
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
