//! The worktrees of a repository (`git help worktree`), listed in one place: the main one,
//! whose git directory is the common one, and each linked one under `worktrees/<id>/`, each
//! with its own `HEAD`, index, reflogs and the refs git keeps per worktree (`refs/bisect/`,
//! `refs/worktree/`, `refs/rewritten/`). What keeps objects alive (`roots`), reflog expiry and
//! receive-pack's guard of checked-out branches read them here.

use crate::refs::Refs;
use crate::{RefError, RefTarget, Repository};
use sluice_object::ObjectId;
use std::path::{Path, PathBuf};

/// One worktree of a repository.
#[derive(Debug)]
pub struct Worktree {
    git_dir: PathBuf,
    linked: bool,
    refs: Refs,
}

/// A reflog file and the ref it records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reflog {
    /// The ref (`HEAD`, `refs/heads/main`).
    pub name: String,
    /// Its file.
    pub path: PathBuf,
}

impl Repository {
    /// Every worktree: the main one first, then each linked one that has a `HEAD`.
    pub fn worktrees(&self) -> Result<Vec<Worktree>, RefError> {
        let common = self.common_dir();
        let worktree = |git_dir: PathBuf, linked| Worktree {
            refs: Refs::new(&git_dir, common, self.hash()),
            git_dir,
            linked,
        };
        let mut all = vec![worktree(common.to_owned(), false)];
        let dir = linked_dir(common);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(all),
            Err(source) => return Err(RefError::Io { path: dir, source }),
        };
        for entry in entries {
            let path = entry.map_err(io(&dir))?.path();
            if path.join("HEAD").is_file() {
                all.push(worktree(path, true));
            }
        }
        Ok(all)
    }
}

impl Worktree {
    /// Its refs: its own `HEAD` and per-worktree refs, the shared ones beside them.
    pub fn refs(&self) -> &Refs {
        &self.refs
    }

    /// Whether it is a linked worktree (not the main one).
    pub fn is_linked(&self) -> bool {
        self.linked
    }

    /// Its git directory (a linked one's is under the common directory's `worktrees/`).
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// Where its files are checked out: a linked one's as its `gitdir` file names its `.git`
    /// file, the main one's above a git directory named `.git`; none for a bare repository.
    pub fn work_tree(&self) -> Option<PathBuf> {
        match self.linked {
            true => {
                let text = std::fs::read_to_string(self.git_dir.join("gitdir")).ok()?;
                Some(Path::new(text.trim_end()).parent()?.to_owned())
            }
            false => {
                // The common directory may be named through a linked one's `commondir`
                // (`../..`).
                let dir = std::fs::canonicalize(&self.git_dir).ok()?;
                (dir.file_name()? == ".git")
                    .then(|| dir.parent().map(Path::to_owned))
                    .flatten()
            }
        }
    }

    /// Its index file.
    pub fn index_path(&self) -> PathBuf {
        default_index(&self.git_dir)
    }

    /// The branch its `HEAD` names, if it names one.
    pub fn branch(&self) -> Option<String> {
        match self.refs.read("HEAD") {
            Ok(Some(RefTarget::Symbolic(branch))) => Some(branch),
            _ => None,
        }
    }

    /// What the refs a linked worktree keeps for itself point at (loose files under its own
    /// `refs/`); none for the main worktree, whose refs are the shared ones.
    pub fn own_ref_ids(&self) -> Result<Vec<ObjectId>, RefError> {
        if !self.linked {
            return Ok(Vec::new());
        }
        let dir = self.git_dir.join("refs");
        let mut ids = Vec::new();
        for path in files_under(&dir)? {
            let bytes = std::fs::read(&path).map_err(io(&path))?;
            let name = path.strip_prefix(&self.git_dir).unwrap_or(&path);
            // A file that is no ref keeps nothing alive (and stops nothing).
            let id = match self.refs.parse_loose(&name.to_string_lossy(), &bytes) {
                Ok(RefTarget::Symbolic(to)) => self.refs.resolve(&to).ok().and_then(|(_, id)| id),
                Ok(RefTarget::Id(id)) => Some(id),
                Err(_) => None,
            };
            ids.extend(id);
        }
        Ok(ids)
    }

    /// Its reflogs: `HEAD`'s, and those under `logs/refs/` of its git directory (for the main
    /// worktree every shared ref's, for a linked one its own refs'). Lock files are not
    /// reflogs.
    pub fn reflogs(&self) -> Result<Vec<Reflog>, RefError> {
        let logs = self.git_dir.join("logs");
        let head = logs.join("HEAD");
        let mut all = Vec::new();
        if head.is_file() {
            all.push(Reflog {
                name: "HEAD".to_owned(),
                path: head,
            });
        }
        for path in files_under(&logs.join("refs"))? {
            let Ok(name) = path.strip_prefix(&logs) else {
                continue;
            };
            let name = name.to_string_lossy().into_owned();
            if !name.ends_with(".lock") {
                all.push(Reflog { name, path });
            }
        }
        Ok(all)
    }
}

/// The index file of the worktree whose git directory is `git_dir` (a linked one's is its
/// administrative directory), unless `GIT_INDEX_FILE` names another for the current one
/// ([`Repository::index_path`]).
pub fn default_index(git_dir: &Path) -> PathBuf {
    git_dir.join("index")
}

/// The directory of the linked worktrees' administrative directories, `worktrees/<id>/`, in
/// the repository's common directory.
pub fn linked_dir(common_dir: &Path) -> PathBuf {
    common_dir.join("worktrees")
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RefError + '_ {
    move |source| RefError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Every file under `dir`, however deep (none when it does not exist).
fn files_under(dir: &Path) -> Result<Vec<PathBuf>, RefError> {
    let (mut files, mut dirs) = (Vec::new(), vec![dir.to_owned()]);
    while let Some(dir) = dirs.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(RefError::Io { path: dir, source }),
        };
        for entry in entries {
            let entry = entry.map_err(io(&dir))?;
            match entry.file_type() {
                Ok(t) if t.is_dir() => dirs.push(entry.path()),
                _ => files.push(entry.path()),
            }
        }
    }
    Ok(files)
}
