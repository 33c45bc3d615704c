//! Temporary files and directories that must not outlive an interrupted command. Each is
//! registered while it exists; the program's signal handler calls [`remove_all`] before it
//! exits, so Ctrl-C in the middle of receiving a pack leaves nothing behind (git leaves
//! `tmp_pack_*`). Process-wide, as signals are.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static FILES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Directories a command created and removes whole if it is interrupted (a clone's).
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn locked(list: &Mutex<Vec<PathBuf>>) -> std::sync::MutexGuard<'_, Vec<PathBuf>> {
    list.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes `path` on [`remove_all`] unless [`forget`] is called first.
pub fn register(path: &Path) {
    locked(&FILES).push(path.to_owned());
}

/// `path` was renamed into place or removed: it no longer needs cleaning up.
pub fn forget(path: &Path) {
    locked(&FILES).retain(|p| p != path);
}

/// Removes the directory `path` with everything in it on [`remove_all`] unless
/// [`forget_dir`] is called first.
pub fn register_dir(path: &Path) {
    locked(&DIRS).push(path.to_owned());
}

/// The directory is finished (or already removed): leave it.
pub fn forget_dir(path: &Path) {
    locked(&DIRS).retain(|p| p != path);
}

/// Removes every registered file, then every registered directory: what a signal handler does
/// before the process exits.
pub fn remove_all() {
    for path in locked(&FILES).iter() {
        let _ = std::fs::remove_file(path);
    }
    for dir in locked(&DIRS).iter() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A directory an operation creates (a clone's): removed when the guard goes before
/// [`NewDirectory::disarm`] (the operation failed), and on a signal; a directory that existed
/// empty before is emptied instead.
#[derive(Debug)]
pub struct NewDirectory {
    path: PathBuf,
    /// The directory existed (empty) before: empty it rather than remove it.
    existed: bool,
    armed: bool,
}

impl NewDirectory {
    /// Guards `path`, which `existed` (empty) or is about to be made.
    pub fn new(path: PathBuf, existed: bool) -> NewDirectory {
        if !existed {
            register_dir(&path);
        }
        NewDirectory {
            path,
            existed,
            armed: true,
        }
    }

    /// The operation succeeded: the directory stays.
    pub fn disarm(&mut self) {
        self.armed = false;
        forget_dir(&self.path);
    }
}

impl Drop for NewDirectory {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        forget_dir(&self.path);
        if self.existed {
            if let Ok(entries) = std::fs::read_dir(&self.path) {
                for entry in entries.flatten() {
                    let path = entry.path();
                    let _ = if path.is_dir() {
                        std::fs::remove_dir_all(&path)
                    } else {
                        std::fs::remove_file(&path)
                    };
                }
            }
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
