//! The objects a repository must keep whatever else happens, as git's prune and gc count them:
//! every ref (symbolic ones resolved), `HEAD` of the main worktree and of every linked one, the
//! old and new ids of every reflog entry, and the blobs and cache-tree trees of every index.

use sluice_checkout::index::read_index;
use sluice_object::{HashKind, ObjectId};
use sluice_odb::{RefError, Repository};
use std::path::{Path, PathBuf};

/// Why the roots could not be listed (nothing may then be pruned).
#[derive(Debug, thiserror::Error)]
pub enum RootsError {
    /// The refs could not be read.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// A reflog or an index could not be read.
    #[error("cannot read '{}'", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An index is not one git would read.
    #[error("'{}': {why}", path.display())]
    BadIndex {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

/// Every object id the repository counts as a root of reachability.
pub fn roots(repo: &Repository) -> Result<Vec<ObjectId>, RootsError> {
    let hash = repo.hash();
    let mut roots: Vec<ObjectId> = repo.refs().list()?.into_iter().map(|(_, id)| id).collect();
    let common = repo.common_dir().to_owned();
    let mut git_dirs = vec![repo.git_dir().to_owned()];
    if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
        git_dirs.extend(entries.flatten().map(|e| e.path()));
    }
    if !git_dirs.contains(&common) {
        git_dirs.push(common.clone());
    }
    for git_dir in &git_dirs {
        roots.extend(head_of(git_dir, &common, hash));
        index_objects(&git_dir.join("index"), hash, &mut roots)?;
        reflog_ids(&git_dir.join("logs").join("HEAD"), hash, &mut roots)?;
    }
    let mut logs = vec![common.join("logs").join("refs")];
    while let Some(dir) = logs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => logs.push(entry.path()),
                _ => reflog_ids(&entry.path(), hash, &mut roots)?,
            }
        }
    }
    roots.sort_unstable();
    roots.dedup();
    roots.retain(|id| !id.is_null());
    Ok(roots)
}

/// What a worktree's `HEAD` holds: an id, or the id of the ref it names.
fn head_of(git_dir: &Path, common: &Path, hash: HashKind) -> Option<ObjectId> {
    let text = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let text = text.trim_end();
    match text.strip_prefix("ref: ") {
        None => ObjectId::from_hex(hash, text.as_bytes()).ok(),
        Some(name) => {
            let refs = sluice_odb::Refs::new(git_dir, common, hash);
            refs.resolve(name).ok()?.1
        }
    }
}

/// The old and new ids of every entry of the reflog at `path`, if there is one.
fn reflog_ids(path: &Path, hash: HashKind, out: &mut Vec<ObjectId>) -> Result<(), RootsError> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => return Ok(()),
        Err(source) => {
            return Err(RootsError::Read {
                path: path.to_owned(),
                source,
            })
        }
    };
    let len = 2 * hash.len_in_bytes();
    for line in text.split(|&b| b == b'\n') {
        let (Some(old), Some(new)) = (line.get(..len), line.get(len + 1..2 * len + 1)) else {
            continue;
        };
        out.extend(ObjectId::from_hex(hash, old).ok());
        out.extend(ObjectId::from_hex(hash, new).ok());
    }
    Ok(())
}

/// The blobs of an index's entries (not submodule commits) and its valid cache-tree trees.
fn index_objects(path: &Path, hash: HashKind, out: &mut Vec<ObjectId>) -> Result<(), RootsError> {
    let data = match std::fs::read(path) {
        Ok(data) => data,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(RootsError::Read {
                path: path.to_owned(),
                source,
            })
        }
    };
    let index = read_index(&data, hash).map_err(|e| RootsError::BadIndex {
        path: path.to_owned(),
        why: e.to_string(),
    })?;
    out.extend(
        (index.entries.iter())
            .filter(|e| e.mode != 0o160000)
            .map(|e| e.id),
    );
    let mut trees: Vec<&sluice_checkout::index::CacheTree> = index.tree.iter().collect();
    while let Some(tree) = trees.pop() {
        out.extend(tree.id);
        trees.extend(&tree.children);
    }
    Ok(())
}
