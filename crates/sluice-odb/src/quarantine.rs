//! The quarantine of a push, as git's receive-pack keeps one: objects arrive in
//! `objects/tmp_objdir-incoming-XXXXXX`, an object directory of its own that the repository
//! does not read, and enter the repository only when every check and hook has accepted them.
//! A refused or interrupted push removes the directory: no object of it is left behind.
//!
//! Moving in goes file by file, loose objects first, then for packs the `.keep`, the `.pack`,
//! the `.rev` and the `.idx` last, so that a reader that finds an index always finds its pack.
//! An object already in the repository is kept as it is.

use crate::tempfiles;
use std::path::{Path, PathBuf};

/// Why a quarantine could not be made or emptied into the repository.
#[derive(Debug, thiserror::Error)]
pub enum QuarantineError {
    /// Creating the directory failed.
    #[error("unable to create temporary object directory in {}: {source}", dir.display())]
    Create {
        /// The repository's object directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Moving a file into the repository failed.
    #[error("unable to migrate objects to permanent storage: {}: {source}", path.display())]
    Migrate {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A quarantine directory, removed with everything in it when dropped unless
/// [`Quarantine::migrate`] moved its objects into the repository.
#[derive(Debug)]
pub struct Quarantine {
    dir: PathBuf,
    objects: PathBuf,
}

impl Quarantine {
    /// Creates `tmp_objdir-incoming-XXXXXX` in the object directory `objects`.
    pub fn create(objects: &Path) -> Result<Quarantine, QuarantineError> {
        let dir = tempfile::Builder::new()
            .prefix("tmp_objdir-incoming-")
            .rand_bytes(6)
            .tempdir_in(objects)
            .map_err(|source| QuarantineError::Create {
                dir: objects.to_owned(),
                source,
            })?
            .keep();
        tempfiles::register_dir(&dir);
        Ok(Quarantine {
            dir,
            objects: objects.to_owned(),
        })
    }

    /// The quarantine's object directory (where received packs and objects go).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What a hook run during the push is given, as git gives it: the quarantine as its object
    /// directory, the repository's objects as an alternate, and `GIT_QUARANTINE_PATH`.
    pub fn hook_environment(&self) -> Vec<(String, std::ffi::OsString)> {
        let mut alternates = self.objects.clone().into_os_string();
        if let Some(more) = std::env::var_os("GIT_ALTERNATE_OBJECT_DIRECTORIES") {
            alternates.push(":");
            alternates.push(more);
        }
        let dir = || self.dir.clone().into_os_string();
        vec![
            ("GIT_QUARANTINE_PATH".to_owned(), dir()),
            ("GIT_OBJECT_DIRECTORY".to_owned(), dir()),
            ("GIT_ALTERNATE_OBJECT_DIRECTORIES".to_owned(), alternates),
        ]
    }

    /// Moves every object into the repository, then removes the quarantine.
    pub fn migrate(self) -> Result<(), QuarantineError> {
        let migrated = migrate_dir(&self.dir, &self.objects);
        // Even a migration that failed halfway has moved some objects in.
        crate::written::note_written();
        migrated
    }
}

impl Drop for Quarantine {
    fn drop(&mut self) {
        // After a migration only empty directories are left.
        let _ = std::fs::remove_dir_all(&self.dir);
        tempfiles::forget_dir(&self.dir);
    }
}

/// Where a file goes in the order of moving in: loose objects first, a pack's index last.
fn priority(name: &str) -> u8 {
    if !name.starts_with("pack") {
        return 0;
    }
    match name.rsplit('.').next() {
        Some("keep") => 1,
        Some("pack") => 2,
        Some("rev") => 3,
        Some("idx") => 4,
        _ => 5,
    }
}

fn migrate_dir(from: &Path, to: &Path) -> Result<(), QuarantineError> {
    let failed = |path: &Path| {
        let path = path.to_owned();
        move |source| QuarantineError::Migrate { path, source }
    };
    let mut entries: Vec<(u8, String, PathBuf, bool)> = Vec::new();
    for entry in std::fs::read_dir(from).map_err(failed(from))? {
        let entry = entry.map_err(failed(from))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().map_err(failed(&entry.path()))?.is_dir();
        entries.push((priority(&name), name, entry.path(), is_dir));
    }
    entries.sort();
    for (_, name, path, is_dir) in entries {
        let target = to.join(&name);
        if is_dir {
            match std::fs::create_dir(&target) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(failed(&target)(e)),
            }
            migrate_dir(&path, &target)?;
            continue;
        }
        // A hard link never replaces what is there: an object the repository has already
        // stays as it is, as git keeps it.
        match std::fs::hard_link(&path, &target) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) if !target.exists() => {
                std::fs::rename(&path, &target).map_err(failed(&target))?;
                continue;
            }
            Err(e) => return Err(failed(&target)(e)),
        }
        let _ = std::fs::remove_file(&path);
    }
    Ok(())
}
