//! Finding a repository as git does: `GIT_DIR`, or walking up from a directory to a `.git`
//! directory, a `.git` file (`gitdir: …`), or a bare repository.

use crate::object_views::ObjectViews;
use sluice_object::{HashKind, IdSet, ObjectId};
use sluice_odb::config::{Config, ConfigError};
use sluice_odb::ranged::PackSource;
use sluice_odb::{ObjectDb, OdbError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Why a repository could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// No repository at or above the directory.
    #[error("not a git repository (or any of the parent directories): {0}")]
    NotFound(PathBuf),
    /// `GIT_DIR` (or `--git-dir`, `--bare`) names no git directory: the path as given.
    #[error("not a git repository: '{}'", .0.display())]
    NotAGitDir(PathBuf),
    /// A `.git` file that does not name a directory.
    #[error("invalid gitfile format: {0}")]
    BadGitFile(PathBuf),
    /// A repository format this version cannot read.
    #[error("unsupported repository format: {0}")]
    Unsupported(String),
    /// The configuration could not be read.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The object database could not be opened.
    #[error(transparent)]
    Odb(#[from] OdbError),
    /// A file of the repository could not be read.
    #[error("cannot read '{path}': {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The shallow file could not be read or written.
    #[error(transparent)]
    Shallow(#[from] crate::shallow::ShallowError),
}

/// The variables that say which repository a process works on and how (git's
/// `local_repo_env`): a program started for another repository (an upload-pack or
/// receive-pack at the other end of a local or ssh transport) must not inherit them.
pub const LOCAL_REPO_ENV: [&str; 15] = [
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
];

/// An open repository.
#[derive(Debug)]
pub struct Repository {
    git_dir: PathBuf,
    common_dir: PathBuf,
    work_tree: Option<PathBuf>,
    config: Config,
    hash: HashKind,
    objects: ObjectViews,
    /// How long a ref's lock held by another writer is waited for (`core.filesRefLockTimeout`,
    /// read once: every `refs()` hands it on).
    ref_lock_timeout: Duration,
}

fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
        || dir.join("HEAD").is_file() && dir.join("commondir").is_file()
}

/// The git directory a `.git` file (`gitdir: <path>`) names, a relative path taken from the
/// file's directory; `None` for a file that names none.
fn read_git_file(file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let target = text.strip_prefix("gitdir:").map(str::trim)?;
    (!target.is_empty()).then(|| file.parent().unwrap_or(Path::new("")).join(target))
}

impl Repository {
    /// Finds the repository containing `start`, honouring `GIT_DIR` and `GIT_WORK_TREE` as
    /// git does: with `GIT_DIR` and neither `GIT_WORK_TREE` nor `core.worktree`, the work tree
    /// is `start` itself (unless the repository is bare).
    pub fn discover(start: &Path) -> Result<Repository, RepoError> {
        let env_tree =
            (std::env::var_os("GIT_WORK_TREE").filter(|w| !w.is_empty())).map(|w| start.join(w));
        if let Some(dir) = std::env::var_os("GIT_DIR").filter(|d| !d.is_empty()) {
            let git_dir = start.join(&dir);
            if !is_git_dir(&git_dir) {
                return Err(RepoError::NotAGitDir(dir.into()));
            }
            return Self::open_found(git_dir, env_tree, Some(start.to_owned()));
        }
        let start = std::path::absolute(start).unwrap_or_else(|_| start.to_owned());
        let mut dir: &Path = &start;
        loop {
            let dot_git = dir.join(".git");
            if dot_git.is_dir() && is_git_dir(&dot_git) {
                return Self::open_found(dot_git, env_tree, Some(dir.to_owned()));
            }
            if dot_git.is_file() {
                let git_dir = read_git_file(&dot_git)
                    .filter(|git_dir| is_git_dir(git_dir))
                    .ok_or_else(|| RepoError::BadGitFile(dot_git.clone()))?;
                return Self::open_found(git_dir, env_tree, Some(dir.to_owned()));
            }
            if is_git_dir(dir) {
                return Self::open_found(dir.to_owned(), env_tree, None);
            }
            match dir.parent() {
                Some(parent) => dir = parent,
                None => return Err(RepoError::NotFound(start)),
            }
        }
    }

    /// `git_dir` with its work tree: `GIT_WORK_TREE` (`env_tree`) when given, else
    /// `core.worktree` (relative to the git directory), else `default`; none in a bare
    /// repository (`core.bare`).
    fn open_found(
        git_dir: PathBuf,
        env_tree: Option<PathBuf>,
        default: Option<PathBuf>,
    ) -> Result<Repository, RepoError> {
        let mut repo = Self::open_git_dir(git_dir, default)?;
        // As git: a linked worktree has a work tree of its own, whatever the shared
        // configuration's `core.bare` and `core.worktree` say of the main one.
        let linked = repo.common_dir != repo.git_dir;
        if linked || repo.config.get_bool("core.bare")?.unwrap_or(false) {
            return Ok(repo);
        }
        let configured = repo.config.get_path("core.worktree");
        if let Some(tree) = env_tree.or_else(|| configured.map(|w| repo.git_dir.join(w))) {
            repo.work_tree = Some(tree);
        }
        Ok(repo)
    }

    /// This repository without its work tree, as `git --bare` treats it.
    pub fn without_work_tree(mut self) -> Repository {
        self.work_tree = None;
        self
    }

    /// Opens the repository checked out at `dir`, from its `.git` directory or file only: a
    /// submodule's, where [`Repository::discover`] would go on up to the superproject.
    pub fn open_work_tree(dir: &Path) -> Result<Repository, RepoError> {
        let dot_git = dir.join(".git");
        let git_dir = match dot_git.is_file() {
            true => {
                read_git_file(&dot_git).ok_or_else(|| RepoError::BadGitFile(dot_git.clone()))?
            }
            false => dot_git,
        };
        if !is_git_dir(&git_dir) {
            return Err(RepoError::NotFound(git_dir));
        }
        Self::open_git_dir(git_dir, Some(dir.to_owned()))
    }

    /// Opens the repository a server was asked for (git's `enter_repo`): `path` itself, or,
    /// unless `strict`, the first of `path/.git`, `path`, `path.git/.git` and `path.git` that is
    /// a git directory. Servers need no work tree.
    pub fn open_served(path: &Path, strict: bool) -> Result<Repository, RepoError> {
        let git_dir =
            Self::find_served(path, strict).ok_or_else(|| RepoError::NotFound(path.to_owned()))?;
        Self::open_git_dir(git_dir, None)
    }

    /// Opens the bare repository at `git_dir` as a server does, reading the bytes its ranged
    /// packs lack from `source` (one generation of a store, on a node).
    pub fn open_served_from(
        git_dir: &Path,
        source: Arc<dyn PackSource>,
    ) -> Result<Repository, RepoError> {
        let found = Self::find_served(git_dir, true);
        let git_dir = found.ok_or_else(|| RepoError::NotFound(git_dir.to_owned()))?;
        Self::open_with(git_dir, None, Some(source))
    }

    /// The git directory [`Repository::open_served`] would open, found without reading the
    /// repository's configuration or objects.
    pub fn find_served(path: &Path, strict: bool) -> Option<PathBuf> {
        let suffixes: &[&str] = if strict {
            &[""]
        } else {
            &["/.git", "", ".git/.git", ".git"]
        };
        suffixes.iter().find_map(|suffix| {
            let mut candidate = path.as_os_str().to_owned();
            candidate.push(suffix);
            let candidate = PathBuf::from(candidate);
            // A `.git` file (a linked worktree, a submodule, `--separate-git-dir`) is followed,
            // as git's upload-pack follows it.
            let candidate = match candidate.is_file() {
                true => read_git_file(&candidate)?,
                false => candidate,
            };
            is_git_dir(&candidate).then_some(candidate)
        })
    }

    /// The directory shared by every worktree of the repository at `git_dir` (its `commondir`
    /// file), or `git_dir` itself.
    pub fn common_dir_of(git_dir: &Path) -> PathBuf {
        match std::fs::read_to_string(git_dir.join("commondir")) {
            Ok(text) => git_dir.join(text.trim()),
            Err(_) => git_dir.to_owned(),
        }
    }

    /// Opens the repository whose git directory is `git_dir`.
    pub fn open_git_dir(
        git_dir: PathBuf,
        work_tree: Option<PathBuf>,
    ) -> Result<Repository, RepoError> {
        Self::open_with(git_dir, work_tree, None)
    }

    /// The repository opened again, its configuration read anew: for a caller that wrote
    /// settings it now needs (a clone's `remote.origin.*` before its submodules are cloned).
    /// Objects need no reopening: the handle's view renews itself after writes.
    pub fn reopened(&self) -> Result<Repository, RepoError> {
        Self::open_git_dir(self.git_dir.clone(), self.work_tree.clone())
    }

    fn open_with(
        git_dir: PathBuf,
        work_tree: Option<PathBuf>,
        source: Option<Arc<dyn PackSource>>,
    ) -> Result<Repository, RepoError> {
        let common_dir = Self::common_dir_of(&git_dir);
        let config = Config::load_repository(&common_dir, &git_dir)?;
        let hash = match config.get("extensions.objectformat") {
            None => HashKind::Sha1,
            Some(name) => HashKind::from_name(&name.to_ascii_lowercase())
                .ok_or_else(|| RepoError::Unsupported(format!("object format '{name}'")))?,
        };
        let linked = common_dir != git_dir;
        let work_tree = if !linked && config.get_bool("core.bare")?.unwrap_or(false) {
            None
        } else {
            work_tree
        };
        let objects_dir = std::env::var_os("GIT_OBJECT_DIRECTORY")
            .filter(|d| !d.is_empty())
            .map_or_else(|| common_dir.join("objects"), PathBuf::from);
        let extra: Vec<PathBuf> = std::env::var_os("GIT_ALTERNATE_OBJECT_DIRECTORIES")
            .map(|dirs| std::env::split_paths(&dirs).collect())
            .unwrap_or_default();
        let objects = ObjectViews::open(&objects_dir, hash, extra, source)?;
        // As git: negative waits for ever; a bad value as the default.
        let ref_lock_timeout = match config.get_int("core.filesreflocktimeout").ok().flatten() {
            Some(ms) => u64::try_from(ms).map_or(Duration::MAX, Duration::from_millis),
            None => crate::refs::DEFAULT_LOCK_TIMEOUT,
        };
        Ok(Repository {
            git_dir,
            common_dir,
            work_tree,
            config,
            hash,
            objects,
            ref_lock_timeout,
        })
    }

    /// The git directory (`.git`, or the repository itself when bare).
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The directory shared by all worktrees (objects, refs, config).
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// The repository's own configuration file, to record settings in (what it holds is
    /// read by [`Repository::config`] when the repository is opened).
    pub fn config_file(&self) -> Result<sluice_odb::ConfigFile, ConfigError> {
        sluice_odb::ConfigFile::of_repository(&self.common_dir)
    }

    /// The work tree, unless the repository is bare.
    pub fn work_tree(&self) -> Option<&Path> {
        self.work_tree.as_deref()
    }

    /// The index file of this worktree: `GIT_INDEX_FILE` when set (as git reads it), else
    /// `index` in the git directory. Its one home: every reader and writer asks here.
    pub fn index_path(&self) -> PathBuf {
        match std::env::var_os("GIT_INDEX_FILE") {
            Some(file) => PathBuf::from(file),
            None => crate::worktrees::default_index(&self.git_dir),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The hash function of the repository's object ids.
    pub fn hash(&self) -> HashKind {
        self.hash
    }

    /// The object database, as this process left it: a view opened after the process's last
    /// write into an object directory (a pack installed or removed, objects unpacked), so
    /// what was just stored is there. A view once handed out stays as it is, packs numbered
    /// as they were, for as long as the handle lives.
    pub fn objects(&self) -> &ObjectDb {
        self.objects.current()
    }

    /// The commits whose parents this repository lacks: a shallow repository's cut.
    pub fn shallow_commits(&self) -> Result<Vec<ObjectId>, RepoError> {
        Ok(crate::shallow::read(&self.common_dir, self.hash)?)
    }

    /// [`Self::shallow_commits`] as a set, as a walk of the whole repository takes them: the
    /// commits whose parents it does not walk.
    pub fn shallow_set(&self) -> Result<IdSet, RepoError> {
        Ok(self.shallow_commits()?.into_iter().collect())
    }

    /// Moves the repository's cut: adds `cut` to its shallow commits and takes `uncut` out.
    pub fn update_shallow(&self, cut: &[ObjectId], uncut: &[ObjectId]) -> Result<(), RepoError> {
        Ok(crate::shallow::update(
            &self.common_dir,
            self.hash,
            cut,
            uncut,
        )?)
    }

    /// The references.
    pub fn refs(&self) -> crate::refs::Refs {
        crate::refs::Refs::new(&self.git_dir, &self.common_dir, self.hash)
            .with_lock_timeout(self.ref_lock_timeout)
    }
}
