//! A directory that is removed when dropped (and by the temporary-file cleanup if the process
//! is stopped first): a staging repository, a push's private copy.

use std::path::{Path, PathBuf};

/// A directory removed with its contents when dropped.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
    kept: bool,
}

impl Scratch {
    /// Makes a new directory `<parent>/.tmp-<unique>-<what>`.
    pub fn new(parent: &Path, what: &str) -> std::io::Result<Scratch> {
        std::fs::create_dir_all(parent)?;
        let path = crate::temporary_beside(&parent.join(what));
        std::fs::create_dir(&path)?;
        sluice_odb::tempfiles::register_dir(&path);
        Ok(Scratch { path, kept: false })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the directory to `to` and keeps it.
    pub fn keep_as(mut self, to: &Path) -> std::io::Result<()> {
        std::fs::rename(&self.path, to)?;
        sluice_odb::tempfiles::forget_dir(&self.path);
        self.kept = true;
        Ok(())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.path);
        sluice_odb::tempfiles::forget_dir(&self.path);
    }
}
