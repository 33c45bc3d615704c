//! `objects/info/alternates` (gitrepository-layout): the object directories a repository
//! borrows objects from, one a line, a relative one taken from the repository's own object
//! directory; empty lines and `#` comments are skipped. Read when the object database opens;
//! written by a clone from a path or with `--reference`, and by a store's import.

use std::path::{Path, PathBuf};

/// The alternates file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum AlternatesError {
    /// Reading failed.
    #[error("unable to read '{}'", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Writing (or removing) failed.
    #[error("unable to write '{}'", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The alternates file of the object directory `objects`.
pub fn path(objects: &Path) -> PathBuf {
    objects.join("info").join("alternates")
}

/// The alternates `objects` lists, as written (relative ones as they are); none when there is
/// no file.
pub fn read(objects: &Path) -> Result<Vec<String>, AlternatesError> {
    let file = path(objects);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(AlternatesError::Read { path: file, source }),
    };
    let lines = text.lines().map(str::trim);
    let listed = lines.filter(|line| !line.is_empty() && !line.starts_with('#'));
    Ok(listed.map(str::to_owned).collect())
}

/// Appends `alternate` to the alternates of `objects`, unless it is listed already.
pub fn add(objects: &Path, alternate: &str) -> Result<(), AlternatesError> {
    let file = path(objects);
    let mut text = std::fs::read_to_string(&file).unwrap_or_default();
    if text.lines().any(|line| line == alternate) {
        return Ok(());
    }
    text.push_str(alternate);
    text.push('\n');
    std::fs::create_dir_all(objects.join("info"))
        .and_then(|()| std::fs::write(&file, text))
        .map_err(|source| AlternatesError::Write { path: file, source })?;
    crate::written::note_written();
    Ok(())
}
