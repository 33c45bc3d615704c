//! The objects of a clone from a path on this machine, as `git clone` gets them by default:
//! every file of the source's object directory linked into the new one (copied where links
//! fail, or with `--no-hardlinks`), or with `--shared` none at all, only an alternate pointing
//! at the source. The refs still come from the source's upload-pack; only the pack transfer,
//! and the work of indexing it, is skipped.

use sluice_odb::alternates::{self, AlternatesError};
use std::fs::{self, FileTimes};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Why the source's objects could not be brought over; each names the file at fault.
#[derive(Debug, thiserror::Error)]
pub enum LocalCloneError {
    /// A directory of the source could not be opened.
    #[error("failed to start iterator over '{}'", path.display())]
    OpenDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A directory of the source could not be read.
    #[error("failed to iterate over '{}'", path.display())]
    ReadDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An entry of the source could not be examined.
    #[error("failed to stat '{}'", path.display())]
    Stat {
        /// The entry.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The source's object directory holds a symbolic link, which could lead outside it.
    #[error("symlink '{}' exists, refusing to clone with --local", path.display())]
    Symlink {
        /// The link, relative to the object directory.
        path: PathBuf,
    },
    /// A directory of the new repository could not be made.
    #[error("failed to create directory '{}'", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file in the way could not be removed.
    #[error("failed to unlink '{}'", path.display())]
    Unlink {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A hard link could not be made (`--local`).
    #[error("failed to create link '{}'", path.display())]
    Link {
        /// The new file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be copied.
    #[error("failed to copy file to '{}'", path.display())]
    Copy {
        /// The new file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The source's alternates could not be read, or the new repository's written.
    #[error(transparent)]
    Alternates(#[from] AlternatesError),
}

/// How the source's object files reach the new repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectTransfer {
    /// Hard links, falling back to copies for good at the first link that fails.
    LinkOrCopy,
    /// Hard links, and an error if one fails (`--local` given explicitly).
    LinkOnly,
    /// Copies (`--no-hardlinks`).
    Copy,
    /// No files: an alternate naming the source's object directory (`--shared`).
    Shared,
}

/// Fills `dest_objects` (a new repository's object directory) from `source_objects`; returns
/// git's warnings for alternates of the source that were left out.
pub fn transfer_objects(
    source_objects: &Path,
    dest_objects: &Path,
    transfer: ObjectTransfer,
) -> Result<Vec<String>, LocalCloneError> {
    let mut warnings = Vec::new();
    if transfer == ObjectTransfer::Shared {
        alternates::add(dest_objects, &source_objects.to_string_lossy())?;
        return Ok(warnings);
    }
    let mut linking = transfer != ObjectTransfer::Copy;
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let dir = source_objects.join(&relative);
        let entries = fs::read_dir(&dir).map_err(|source| LocalCloneError::OpenDir {
            path: dir.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| LocalCloneError::ReadDir {
                path: dir.clone(),
                source,
            })?;
            let relative = relative.join(entry.file_name());
            let from = source_objects.join(&relative);
            let to = dest_objects.join(&relative);
            // The type of the entry itself: a symlink is refused rather than followed, so a
            // crafted source cannot make the clone read files outside its object directory.
            let kind = entry.file_type().map_err(|source| LocalCloneError::Stat {
                path: from.clone(),
                source,
            })?;
            if kind.is_symlink() {
                return Err(LocalCloneError::Symlink { path: relative });
            }
            if kind.is_dir() {
                fs::create_dir_all(&to).map_err(|source| LocalCloneError::CreateDir {
                    path: to.clone(),
                    source,
                })?;
                pending.push(relative);
                continue;
            }
            if source_objects.join(&relative) == alternates::path(source_objects) {
                warnings.extend(copy_alternates(source_objects, dest_objects)?);
                continue;
            }
            // A file the new repository already has is replaced, as git replaces it.
            if let Err(source) = fs::remove_file(&to) {
                if source.kind() != std::io::ErrorKind::NotFound {
                    return Err(LocalCloneError::Unlink { path: to, source });
                }
            }
            if linking {
                match fs::hard_link(&from, &to) {
                    Ok(()) => continue,
                    Err(source) if transfer == ObjectTransfer::LinkOnly => {
                        return Err(LocalCloneError::Link { path: to, source });
                    }
                    // Another file system, or one without links: copy this and every later
                    // file, as git does, rather than fail each link in turn.
                    Err(_) => linking = false,
                }
            }
            copy_with_time(&from, &to)
                .map_err(|source| LocalCloneError::Copy { path: to, source })?;
        }
    }
    sluice_odb::written::note_written();
    Ok(warnings)
}

/// A copy that keeps the source's access and modification times, in whole seconds, as git's
/// copies of object files do.
fn copy_with_time(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::copy(from, to)?;
    let meta = fs::metadata(from)?;
    let whole_seconds = |time: SystemTime| {
        let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        UNIX_EPOCH + Duration::from_secs(since.as_secs())
    };
    let times = FileTimes::new()
        .set_accessed(whole_seconds(meta.accessed()?))
        .set_modified(whole_seconds(meta.modified()?));
    fs::File::options().write(true).open(to)?.set_times(times)
}

/// The source's alternates, each made absolute: a relative one is relative to the source's
/// object directory, which the new repository does not share. Returns git's warning for each
/// that climbs out of the file system's root.
fn copy_alternates(
    source_objects: &Path,
    dest_objects: &Path,
) -> Result<Vec<String>, LocalCloneError> {
    let mut warnings = Vec::new();
    for line in alternates::read(source_objects)? {
        let line = line.as_str();
        if Path::new(line).is_absolute() {
            alternates::add(dest_objects, line)?;
            continue;
        }
        match normalize(&source_objects.join(line)) {
            Some(path) => alternates::add(dest_objects, &path.to_string_lossy())?,
            None => warnings.push(format!(
                "skipping invalid relative alternate: {}/{line}",
                source_objects.display()
            )),
        }
    }
    Ok(warnings)
}

/// `path` with `.` and `..` taken out; `None` when `..` would climb above the root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            other => out.push(other),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::normalize;
    use std::path::{Path, PathBuf};

    #[test]
    fn normalize_removes_dots_and_refuses_to_climb_out() {
        assert_eq!(
            normalize(Path::new("/a/b/objects/../../c/./objects")),
            Some(PathBuf::from("/a/c/objects"))
        );
        assert_eq!(normalize(Path::new("/a/../..")), None);
    }
}
