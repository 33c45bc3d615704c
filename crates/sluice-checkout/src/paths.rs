//! `checkout [<tree-ish>] [--] <pathspec>…`: the index's version of files written over the
//! work tree's (git's way to discard changes), or a commit's written over both, each pathspec
//! a file or a directory of files, relative to where the command runs.

use crate::checkout::{checkout_index, read_index_or_empty, write_index_file, IndexCheckout};
use crate::tree::flatten;
use crate::{CheckoutError, CheckoutOptions};
use sluice_index::{Index, IndexEntry, Stat};
use sluice_object::progress::Progress;
use sluice_object::ObjectId;
use sluice_repo::Repository;
use std::collections::{HashMap, HashSet};

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
    let mut seen = HashSet::new();
    for spec in specs {
        let matched = matching(repo, &index, prefix, spec)?;
        if matched.is_empty() {
            unmatched.push(spec.clone());
        }
        paths.extend(
            (matched.into_iter())
                .filter(|p| seen.insert(p.as_slice()))
                .cloned(),
        );
    }
    if !unmatched.is_empty() || paths.is_empty() {
        return Ok(PathsChecked {
            unmatched,
            written: 0,
        });
    }
    write_listed(repo, &paths, unmatched, options, progress)
}

/// [`checkout_paths`] from the tree `tree` (a commit's): the files `specs` name there go
/// into the index and the work tree, as git's `checkout <tree-ish> -- <pathspec>` (in its
/// default overlay mode: files the tree lacks stay). A pathspec must match a file of the tree.
pub fn checkout_paths_from(
    repo: &Repository,
    tree: &ObjectId,
    (prefix, specs): (&str, &[String]),
    options: &CheckoutOptions,
    progress: &dyn Progress,
) -> Result<PathsChecked, CheckoutError> {
    let files = flatten(repo.objects(), tree)?.files;
    let mut unmatched = Vec::new();
    let mut chosen = Vec::new();
    for spec in specs {
        let full = in_work_tree(prefix, spec).ok_or_else(|| outside(repo, spec))?;
        let before = chosen.len();
        chosen.extend(files.iter().filter(|file| under(&full, &file.path)));
        if chosen.len() == before {
            unmatched.push(spec.clone());
        }
    }
    if !unmatched.is_empty() {
        return Ok(PathsChecked {
            unmatched,
            written: 0,
        });
    }
    let mut index = read_index_or_empty(repo)?;
    let mut paths: Vec<Vec<u8>> = Vec::new();
    let mut seen = HashSet::new();
    let mut replaced: HashMap<&[u8], IndexEntry> = HashMap::new();
    for file in chosen
        .into_iter()
        .filter(|file| seen.insert(file.path.as_slice()))
    {
        paths.push(file.path.clone());
        // What the index holds there as the tree does keeps its stat data (the file is left
        // alone where it is unchanged); anything else is replaced, conflicts resolved.
        let held = index.find(&file.path);
        if held.is_some_and(|e| e.id == file.id && e.mode == file.mode) {
            continue;
        }
        let entry = IndexEntry::new(file.path.clone(), file.mode, file.id, Stat::default());
        replaced.insert(&file.path, entry);
        if let Some(cache) = index.tree.as_mut() {
            cache.invalidate(&file.path);
        }
    }
    index
        .entries
        .retain(|e| !replaced.contains_key(e.path.as_slice()));
    index.entries.extend(replaced.into_values());
    index.sort();
    write_index_file(repo, &index)?;
    write_listed(repo, &paths, unmatched, options, progress)
}

/// Writes the index's files at `paths` over what the work tree has, their stat data recorded,
/// as a checkout of paths does.
fn write_listed(
    repo: &Repository,
    paths: &[Vec<u8>],
    unmatched: Vec<String>,
    options: &CheckoutOptions,
    progress: &dyn Progress,
) -> Result<PathsChecked, CheckoutError> {
    let request = IndexCheckout {
        paths: Some(paths),
        force: true,
        update_index: true,
        ..IndexCheckout::default()
    };
    let report = checkout_index(repo, &request, options, progress)?;
    Ok(PathsChecked {
        unmatched,
        written: report.written,
    })
}

/// The paths of the index's files `spec`, relative to `prefix`, names; refused in git's
/// words where it leaves the work tree.
fn matching<'i>(
    repo: &Repository,
    index: &'i Index,
    prefix: &str,
    spec: &str,
) -> Result<Vec<&'i Vec<u8>>, CheckoutError> {
    let full = in_work_tree(prefix, spec).ok_or_else(|| outside(repo, spec))?;
    Ok((index.entries.iter())
        .filter(|entry| entry.stage() == 0 && under(&full, &entry.path))
        .map(|entry| &entry.path)
        .collect())
}

/// Whether `path` is the file `full` names, or below the directory it names (everything,
/// for the top).
fn under(full: &str, path: &[u8]) -> bool {
    let full = full.as_bytes();
    full.is_empty()
        || path == full
        || (path.starts_with(full) && path.get(full.len()) == Some(&b'/'))
}

/// git's refusal of a pathspec that leaves the work tree.
fn outside(repo: &Repository, spec: &str) -> CheckoutError {
    CheckoutError::OutsideRepository {
        spec: spec.to_owned(),
        top: repo.work_tree().unwrap_or(repo.git_dir()).to_owned(),
    }
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
