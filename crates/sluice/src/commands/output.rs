//! Files written the way git writes them: under a temporary name in the destination directory,
//! flushed, synced, made read-only and renamed into place. A failure or a signal leaves nothing.

use crate::cleanup;
use anyhow::Context as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A temporary file that is removed unless [`Staged::commit`] renames it into place.
pub struct Staged {
    path: Option<PathBuf>,
    file: File,
}

impl Staged {
    /// Creates `dir/<prefix>XXXXXX`.
    pub fn create(dir: &Path, prefix: &str) -> anyhow::Result<Staged> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("unable to create directory '{}'", dir.display()))?;
        let (file, path) = tempfile::Builder::new()
            .prefix(prefix)
            .rand_bytes(6)
            .tempfile_in(dir)
            .with_context(|| format!("unable to create temporary file in '{}'", dir.display()))?
            .keep()
            .map_err(|e| e.error)?;
        cleanup::register(&path);
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
    ) -> anyhow::Result<Staged> {
        let staged = Staged::create(dir, prefix)?;
        let mut out = BufWriter::new(&staged.file);
        write(&mut out).and_then(|_| out.flush())?;
        drop(out);
        Ok(staged)
    }

    /// The open file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Flushes the file to disk if `fsync` (before [`Self::commit`], to sync several files at
    /// once).
    pub fn sync(&self, fsync: bool) -> anyhow::Result<()> {
        if fsync {
            self.file
                .sync_all()
                .context("unable to sync a written file")?;
        }
        Ok(())
    }

    /// Syncs if asked, makes the file read-only (as git's packs and indexes are), and renames
    /// it to `dest`.
    pub fn commit(mut self, dest: &Path, fsync: bool) -> anyhow::Result<()> {
        let path = self.path.take().expect("committed once");
        let result = (|| -> std::io::Result<()> {
            if fsync {
                self.file.sync_all()?;
            }
            self.file
                .set_permissions(std::fs::Permissions::from_mode(0o444))?;
            std::fs::rename(&path, dest)
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_file(&path);
            cleanup::forget(&path);
            return Err(e).with_context(|| format!("unable to write '{}'", dest.display()));
        }
        cleanup::forget(&path);
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(&path);
            cleanup::forget(&path);
        }
    }
}

/// `path` with its extension `from` replaced by `to`, as git derives `.idx` from `.pack`.
pub fn replace_extension(path: &Path, from: &str, to: &str) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(&format!(".{from}"))?;
    Some(path.with_file_name(format!("{stem}.{to}")))
}
