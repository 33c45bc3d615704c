//! The objects of a clone from a path on this machine, as `git clone` gets them by default:
//! every file of the source's object directory linked into the new one (copied where links
//! fail, or with `--no-hardlinks`), or with `--shared` none at all, only an alternate pointing
//! at the source. The refs still come from the source's upload-pack; only the pack transfer,
//! and the work of indexing it, is skipped.

use anyhow::{bail, Context as _};
use std::fs::{self, FileTimes};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How the source's object files reach the new repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ObjectTransfer {
    /// Hard links, falling back to copies for good at the first link that fails.
    LinkOrCopy,
    /// Hard links, and an error if one fails (`--local` given explicitly).
    LinkOnly,
    /// Copies (`--no-hardlinks`).
    Copy,
    /// No files: an alternate naming the source's object directory (`--shared`).
    Shared,
}

/// Fills `dest_objects` (a new repository's object directory) from `source_objects`.
pub(crate) fn transfer_objects(
    source_objects: &Path,
    dest_objects: &Path,
    transfer: ObjectTransfer,
) -> anyhow::Result<()> {
    if transfer == ObjectTransfer::Shared {
        return add_alternate(dest_objects, &source_objects.to_string_lossy());
    }
    let mut linking = transfer != ObjectTransfer::Copy;
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let dir = source_objects.join(&relative);
        let entries = fs::read_dir(&dir)
            .with_context(|| format!("failed to start iterator over '{}'", dir.display()))?;
        for entry in entries {
            let entry =
                entry.with_context(|| format!("failed to iterate over '{}'", dir.display()))?;
            let relative = relative.join(entry.file_name());
            let from = source_objects.join(&relative);
            let to = dest_objects.join(&relative);
            // The type of the entry itself: a symlink is refused rather than followed, so a
            // crafted source cannot make the clone read files outside its object directory.
            let kind = entry
                .file_type()
                .with_context(|| format!("failed to stat '{}'", from.display()))?;
            if kind.is_symlink() {
                bail!(
                    "symlink '{}' exists, refusing to clone with --local",
                    relative.display()
                );
            }
            if kind.is_dir() {
                fs::create_dir_all(&to)
                    .with_context(|| format!("failed to create directory '{}'", to.display()))?;
                pending.push(relative);
                continue;
            }
            if relative == Path::new("info").join("alternates") {
                copy_alternates(&from, source_objects, dest_objects)?;
                continue;
            }
            // A file the new repository already has is replaced, as git replaces it.
            if let Err(e) = fs::remove_file(&to) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    return Err(e).with_context(|| format!("failed to unlink '{}'", to.display()));
                }
            }
            if linking {
                match fs::hard_link(&from, &to) {
                    Ok(()) => continue,
                    Err(e) if transfer == ObjectTransfer::LinkOnly => {
                        return Err(e)
                            .with_context(|| format!("failed to create link '{}'", to.display()));
                    }
                    // Another file system, or one without links: copy this and every later
                    // file, as git does, rather than fail each link in turn.
                    Err(_) => linking = false,
                }
            }
            copy_with_time(&from, &to)
                .with_context(|| format!("failed to copy file to '{}'", to.display()))?;
        }
    }
    Ok(())
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
/// object directory, which the new repository does not share.
fn copy_alternates(file: &Path, source_objects: &Path, dest_objects: &Path) -> anyhow::Result<()> {
    let text =
        fs::read_to_string(file).with_context(|| format!("unable to read '{}'", file.display()))?;
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if Path::new(line).is_absolute() {
            add_alternate(dest_objects, line)?;
            continue;
        }
        match normalize(&source_objects.join(line)) {
            Some(path) => add_alternate(dest_objects, &path.to_string_lossy())?,
            None => eprintln!(
                "warning: skipping invalid relative alternate: {}/{line}",
                source_objects.display()
            ),
        }
    }
    Ok(())
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

/// Appends `alternate` to the new repository's `info/alternates`, once.
pub(super) fn add_alternate(dest_objects: &Path, alternate: &str) -> anyhow::Result<()> {
    let file = dest_objects.join("info").join("alternates");
    let mut text = fs::read_to_string(&file).unwrap_or_default();
    if text.lines().any(|line| line == alternate) {
        return Ok(());
    }
    text.push_str(alternate);
    text.push('\n');
    fs::create_dir_all(dest_objects.join("info"))
        .and_then(|()| fs::write(&file, text))
        .with_context(|| format!("unable to write '{}'", file.display()))
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
