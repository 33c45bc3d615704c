//! What keeps an object alive, in one place: every command that deletes, drops or leaves out
//! objects (repack in every mode, gc, prune, maintenance, `pack-objects --all --reflog
//! --indexed-objects`) walks from these roots and from nothing less.
//!
//! The roots are git's (`git prune`, and the `--all --reflog --indexed-objects` its repack
//! passes to pack-objects): every ref, shared and per worktree (`refs/bisect/`,
//! `refs/worktree/`, `refs/rewritten/`), `HEAD` of the main worktree and of every linked one,
//! the old and new ids of every reflog entry (refs, `HEAD`s and the stash's), and what every
//! worktree's index holds (entries' blobs, cache-tree trees, resolve-undo blobs). Packs kept by
//! `.keep` or `.promisor` files and unreachable objects younger than the expiry are the other
//! half of "alive"; the commands that delete apply those to their packs and dates.

use crate::{RefError, Repository};
use sluice_object::{HashKind, ObjectId};
use std::path::{Path, PathBuf};

/// Whether the pack at `pack` (its `.pack` path) must be left as it is by every command that
/// deletes: kept by a `.keep` file, or promised (`.promisor`: its objects came from a promisor
/// remote, and what they name may be missing by design).
pub fn kept_pack(pack: &Path) -> bool {
    ["keep", "promisor"]
        .iter()
        .any(|x| pack.with_extension(x).exists())
}

/// Why the roots could not be listed (nothing may then be deleted).
#[derive(Debug, thiserror::Error)]
pub enum RootsError {
    /// The refs could not be read.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// A reflog, an index or a worktree's directory could not be read.
    #[error("cannot read '{}'", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An index is not one git would read: what it holds cannot be known, so nothing goes.
    #[error("'{}': {source}", path.display())]
    BadIndex {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: sluice_index::IndexFileError,
    },
}

/// The roots of a repository, by where they come from (pack-objects takes each kind by its
/// own option: `--all`, `--reflog`, `--indexed-objects`).
#[derive(Debug, Clone, Default)]
pub struct Roots {
    /// Every ref and every worktree's `HEAD`.
    pub refs: Vec<ObjectId>,
    /// The old and new ids of every reflog entry.
    pub reflogs: Vec<ObjectId>,
    /// What every worktree's index holds.
    pub indexed: Vec<ObjectId>,
}

impl Roots {
    /// Reads every root of `repo` and of each of its linked worktrees.
    pub fn read(repo: &Repository) -> Result<Roots, RootsError> {
        let hash = repo.hash();
        let mut roots = Roots {
            refs: repo.refs().list()?.into_iter().map(|(_, id)| id).collect(),
            ..Roots::default()
        };
        let worktrees = repo.worktrees()?;
        for worktree in &worktrees {
            let head = worktree.refs().resolve("HEAD").ok().and_then(|(_, id)| id);
            roots.refs.extend(head);
            roots.refs.extend(worktree.own_ref_ids()?);
            for reflog in worktree.reflogs()? {
                reflog_ids(&reflog.path, hash, &mut roots.reflogs)?;
            }
            index_objects(&worktree.index_path(), hash, &mut roots.indexed)?;
        }
        // A temporary index (`GIT_INDEX_FILE`, as `git commit -a` uses) keeps its objects too.
        let current = repo.index_path();
        if !worktrees
            .iter()
            .any(|worktree| worktree.index_path() == current)
        {
            index_objects(&current, hash, &mut roots.indexed)?;
        }
        for list in [&mut roots.refs, &mut roots.reflogs, &mut roots.indexed] {
            list.retain(|id| !id.is_null());
            list.sort_unstable();
            list.dedup();
        }
        Ok(roots)
    }

    /// Every root, each once.
    pub fn all(&self) -> Vec<ObjectId> {
        let mut all: Vec<ObjectId> = [&self.refs, &self.reflogs, &self.indexed]
            .into_iter()
            .flatten()
            .copied()
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}

fn read_error(path: &Path) -> impl FnOnce(std::io::Error) -> RootsError {
    let path = path.to_owned();
    move |source| RootsError::Read { path, source }
}

/// The bytes of the file at `path`; `None` when there is none (no reflog, no index).
fn read_if_there(path: &Path) -> Result<Option<Vec<u8>>, RootsError> {
    match std::fs::read(path) {
        Ok(data) => Ok(Some(data)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(read_error(path)(e)),
    }
}

/// The old and new ids of every entry of the reflog at `path`, if there is one.
fn reflog_ids(path: &Path, hash: HashKind, out: &mut Vec<ObjectId>) -> Result<(), RootsError> {
    let Some(text) = read_if_there(path)? else {
        return Ok(());
    };
    for entry in crate::refs::reflog::entries(&text, hash) {
        out.extend([entry.old, entry.new]);
    }
    Ok(())
}

/// What the index at `path` keeps alive, if there is one.
fn index_objects(path: &Path, hash: HashKind, out: &mut Vec<ObjectId>) -> Result<(), RootsError> {
    let Some(data) = read_if_there(path)? else {
        return Ok(());
    };
    let bad = |source| RootsError::BadIndex {
        path: path.to_owned(),
        source,
    };
    let index = sluice_index::read_index(&data, hash).map_err(bad)?;
    out.extend(index.kept_objects().map_err(bad)?);
    Ok(())
}
