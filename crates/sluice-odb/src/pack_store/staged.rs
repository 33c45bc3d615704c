//! Files written the way git writes them: under a temporary name in the destination directory,
//! flushed, synced, made read-only and renamed into place. A failure or a signal leaves nothing.

use super::StoreError;
use crate::tempfiles;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A temporary file that is removed unless [`Staged::commit`] renames it into place.
#[derive(Debug)]
pub struct Staged {
    path: Option<PathBuf>,
    file: File,
}

impl Staged {
    /// Creates `dir/<prefix>XXXXXX`.
    pub fn create(dir: &Path, prefix: &str) -> Result<Staged, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
            path: dir.to_owned(),
            source,
        })?;
        let temp = |source| StoreError::CreateTemp {
            dir: dir.to_owned(),
            source,
        };
        let (file, path) = tempfile::Builder::new()
            .prefix(prefix)
            .rand_bytes(6)
            .tempfile_in(dir)
            .map_err(temp)?
            .keep()
            .map_err(|e| temp(e.error))?;
        tempfiles::register(&path);
        Ok(Staged {
            path: Some(path),
            file,
        })
    }

    /// Writes a whole file through `write` into a new staged file.
    pub fn write(
        dir: &Path,
        prefix: &str,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<Staged, StoreError> {
        let staged = Staged::create(dir, prefix)?;
        let mut out = BufWriter::new(&staged.file);
        write(&mut out)
            .and_then(|_| out.flush())
            .map_err(|source| StoreError::Write {
                path: dir.to_owned(),
                source,
            })?;
        drop(out);
        Ok(staged)
    }

    /// The open file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Flushes the file to disk if `fsync` (before [`Self::commit`], to sync several files at
    /// once).
    pub fn sync(&self, fsync: bool) -> Result<(), StoreError> {
        if fsync {
            self.file.sync_all().map_err(StoreError::Sync)?;
        }
        Ok(())
    }

    /// Syncs if asked, makes the file read-only (as git's packs and indexes are), and renames
    /// it to `dest`.
    pub fn commit(self, dest: &Path, fsync: bool) -> Result<(), StoreError> {
        self.commit_with_mode(dest, fsync, 0o444)
    }

    /// Renames the file to `dest` readable by all and writable by its owner: what git's 0666
    /// gives under the usual umask for a file it rewrites whole later, like `info/refs`.
    pub fn commit_rewritable(self, dest: &Path) -> Result<(), StoreError> {
        self.commit_with_mode(dest, false, 0o644)
    }

    fn commit_with_mode(mut self, dest: &Path, fsync: bool, mode: u32) -> Result<(), StoreError> {
        let path = self.path.take().expect("committed once");
        let result = (|| -> std::io::Result<()> {
            if fsync {
                self.file.sync_all()?;
            }
            self.file
                .set_permissions(std::fs::Permissions::from_mode(mode))?;
            std::fs::rename(&path, dest)
        })();
        if let Err(source) = result {
            let _ = std::fs::remove_file(&path);
            tempfiles::forget(&path);
            return Err(StoreError::Write {
                path: dest.to_owned(),
                source,
            });
        }
        tempfiles::forget(&path);
        crate::written::note_written();
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(&path);
            tempfiles::forget(&path);
        }
    }
}

/// `path` with its extension `from` replaced by `to`, as git derives `.idx` from `.pack`.
pub fn replace_extension(path: &Path, from: &str, to: &str) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(&format!(".{from}"))?;
    Some(path.with_file_name(format!("{stem}.{to}")))
}
