//! `checkout [--] <pathspec>…`: the index's version of files written over the work tree's
//! (git's way to discard changes), each pathspec a file of the index or a directory of some,
//! relative to where the command runs.

use crate::checkout::{checkout_index, read_index_or_empty};
use crate::{CheckoutError, CheckoutOptions};
use sluice_index::Index;
use sluice_object::progress::Progress;
use sluice_repo::Repository;

/// What a checkout of paths did.
#[derive(Debug, Default)]
pub struct PathsChecked {
    /// The pathspecs that match no file of the index, in the order given: where there is
    /// one, nothing was written (git's "pathspec … did not match").
    pub unmatched: Vec<String>,
    /// How many files were written (those the work tree had as the index has them were not).
    pub written: usize,
}

/// Writes the index's version of the files `specs` name (each relative to `prefix`, where
/// the command runs below the top of the work tree) over the work tree's, as git's
/// `checkout -- <pathspec>`: all of them, or none where one matches nothing.
pub fn checkout_paths(
    repo: &Repository,
    (prefix, specs): (&str, &[String]),
    options: &CheckoutOptions,
    progress: &dyn Progress,
) -> Result<PathsChecked, CheckoutError> {
    let index = read_index_or_empty(repo)?;
    let mut unmatched = Vec::new();
    let mut paths: Vec<Vec<u8>> = Vec::new();
    for spec in specs {
        let matched = matching(repo, &index, prefix, spec)?;
        if matched.is_empty() {
            unmatched.push(spec.clone());
        }
        for path in matched {
            if !paths.contains(path) {
                paths.push(path.clone());
            }
        }
    }
    if !unmatched.is_empty() || paths.is_empty() {
        return Ok(PathsChecked {
            unmatched,
            written: 0,
        });
    }
    let report = checkout_index(repo, Some(&paths), true, None, options, progress)?;
    Ok(PathsChecked {
        unmatched,
        written: report.written,
    })
}

/// Whether `name` (relative to `prefix`) is a file of the index or a directory of some: what
/// git's checkout takes as a path where it names no commit.
pub fn names_a_path(repo: &Repository, prefix: &str, name: &str) -> Result<bool, CheckoutError> {
    let index = read_index_or_empty(repo)?;
    // One that leaves the work tree is taken as a path, for git's refusal of it.
    Ok(matching(repo, &index, prefix, name).map_or(true, |matched| !matched.is_empty()))
}

/// The paths of the index's files `spec`, relative to `prefix`, names; refused in git's
/// words where it leaves the work tree.
fn matching<'i>(
    repo: &Repository,
    index: &'i Index,
    prefix: &str,
    spec: &str,
) -> Result<Vec<&'i Vec<u8>>, CheckoutError> {
    let Some(full) = in_work_tree(prefix, spec) else {
        return Err(CheckoutError::OutsideRepository {
            spec: spec.to_owned(),
            top: repo.work_tree().unwrap_or(repo.git_dir()).to_owned(),
        });
    };
    let full = full.as_bytes();
    let under = |path: &[u8]| {
        full.is_empty()
            || path == full
            || (path.starts_with(full) && path.get(full.len()) == Some(&b'/'))
    };
    Ok((index.entries.iter())
        .filter(|entry| entry.stage() == 0 && under(&entry.path))
        .map(|entry| &entry.path)
        .collect())
}

/// `spec` below `prefix`, as a path from the top of the work tree (`.`, `..` and doubled
/// slashes taken away); `None` where it leaves the work tree.
fn in_work_tree(prefix: &str, spec: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in prefix.split('/').chain(spec.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}
