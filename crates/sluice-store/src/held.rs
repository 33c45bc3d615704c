//! Generation directories shared by every process of one cache. A server is one process, but
//! `sluice upload-pack --store` and `receive-pack --store` run one process per request (ssh),
//! all on one cache: a directory one of them serves must not be removed by another making room
//! for a newer generation. Each process serving a generation holds a shared lock on a file in
//! its directory for as long as it serves it; a directory is removed only under an exclusive
//! lock taken without waiting, so only when no one serves it. The locks go with the process,
//! so one killed holds nothing.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// The file in a generation's directory that its users lock.
const LOCK_FILE: &str = "sluice-held";

/// A generation directory this process serves: held until dropped.
#[derive(Debug)]
pub(crate) struct Held {
    _file: File,
}

/// Holds `dir` for this process, waiting while another process removes it. `None` when it is
/// gone (removed meanwhile): the caller makes it again; `whole` says whether what is held is
/// all there.
pub(crate) fn hold(dir: &Path, whole: impl Fn() -> bool) -> io::Result<Option<Held>> {
    let file = match lock_file(dir) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    file.lock_shared()?;
    // Checked under the lock: a removal that held it before us is over by now.
    Ok(whole().then_some(Held { _file: file }))
}

/// Removes `dir` unless a process holds it.
pub(crate) fn remove_unless_held(dir: &Path) {
    let Ok(file) = lock_file(dir) else {
        return;
    };
    // Held by someone (or the lock failed): it stays.
    if file.try_lock().is_ok() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn lock_file(dir: &Path) -> io::Result<File> {
    if !dir.is_dir() {
        return Err(io::ErrorKind::NotFound.into());
    }
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(LOCK_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_directory_stays_until_its_holder_lets_go() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("gen");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let whole = || dir.join("HEAD").exists();
        let held = hold(&dir, whole).unwrap().expect("whole");
        // Another holder of the same file (a separate open: as another process would be).
        let other = hold(&dir, whole).unwrap().expect("shared");
        remove_unless_held(&dir);
        assert!(dir.join("HEAD").exists());
        drop(held);
        remove_unless_held(&dir);
        assert!(dir.join("HEAD").exists(), "the other still holds it");
        drop(other);
        remove_unless_held(&dir);
        assert!(!dir.exists());
        assert!(hold(&dir, whole).unwrap().is_none(), "gone: made again");
    }
}
