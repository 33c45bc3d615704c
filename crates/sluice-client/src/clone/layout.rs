//! Where a clone puts its repository and its work tree, as git does: `<dir>/.git` and `<dir>`;
//! `<dir>` itself for a bare clone; with `--separate-git-dir=<git-dir>`, the repository there
//! and a `<dir>/.git` file naming it; with `GIT_WORK_TREE` set, the repository in `<dir>` and
//! the work tree where the variable says, recorded as `core.worktree`. Directories the clone
//! makes are removed again if it fails.

use sluice_odb::tempfiles::NewDirectory;
use sluice_odb::{ConfigError, ConfigFile, ConfigKey};
use sluice_repo::init::{init, InitError, InitOptions};
use std::path::{Path, PathBuf};

/// Why the clone's directories could not be laid out.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// The directory to clone into has files.
    #[error("destination path '{}' already exists and is not an empty directory.", .0.display())]
    NotEmpty(PathBuf),
    /// The separate repository directory has files.
    #[error("repository path '{}' already exists and is not an empty directory.", .0.display())]
    GitDirNotEmpty(PathBuf),
    /// The work tree `GIT_WORK_TREE` names has files.
    #[error("working tree '{}' already exists.", .0.display())]
    WorkTreeNotEmpty(PathBuf),
    /// `--bare` with `--separate-git-dir`.
    #[error("options '--bare' and '--separate-git-dir' cannot be used together")]
    BareAndSeparate,
    /// `--ref-format=reftable`: a format Sluice does not read.
    #[error("ref storage format 'reftable' is not supported by sluice")]
    Reftable,
    /// `--ref-format` with a name git does not know.
    #[error("unknown ref storage format '{0}'")]
    UnknownRefFormat(String),
    /// The repository could not be made.
    #[error(transparent)]
    Init(#[from] InitError),
    /// Its configuration could not be written.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A directory or the `.git` file could not be written.
    #[error("could not create '{}'", path.display())]
    Create {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// `--ref-format`: `files` is what Sluice writes; `reftable` is refused.
pub fn check_ref_format(format: Option<&str>) -> Result<(), LayoutError> {
    match format {
        None | Some("files") => Ok(()),
        Some("reftable") => Err(LayoutError::Reftable),
        Some(other) => Err(LayoutError::UnknownRefFormat(other.to_owned())),
    }
}

/// The clone's directories, made and guarded.
#[derive(Debug)]
pub struct Layout {
    /// The repository.
    pub git_dir: PathBuf,
    /// The work tree, unless bare.
    pub work_tree: Option<PathBuf>,
    guards: Vec<NewDirectory>,
}

/// Is `path` missing, or an empty directory?
fn vacant(path: &Path) -> bool {
    std::fs::read_dir(path).map_or(!path.exists(), |mut d| d.next().is_none())
}

impl Layout {
    /// Makes the directories of a clone into `shown` and an empty repository in them
    /// (`init`); `separate` is `--separate-git-dir`, `work_tree_env` `GIT_WORK_TREE`; each
    /// as given, from `cwd`.
    pub fn make(
        cwd: &Path,
        shown: &Path,
        separate_shown: Option<&Path>,
        work_tree_env: Option<&Path>,
        init_options: InitOptions<'_>,
    ) -> Result<Layout, LayoutError> {
        let bare = init_options.bare;
        let target = &cwd.join(shown);
        let separate = separate_shown.map(|dir| cwd.join(dir));
        let separate = separate.as_deref();
        let work_tree_env = work_tree_env.map(|dir| cwd.join(dir));
        let work_tree_env = work_tree_env.as_deref();
        if bare && separate.is_some() {
            return Err(LayoutError::BareAndSeparate);
        }
        if !vacant(target) {
            return Err(LayoutError::NotEmpty(shown.to_owned()));
        }
        if let Some(shown) = separate_shown.filter(|_| separate.is_some_and(|d| !vacant(d))) {
            return Err(LayoutError::GitDirNotEmpty(shown.to_owned()));
        }
        let work_tree_env = work_tree_env.filter(|_| !bare && separate.is_none());
        if let Some(work_tree) = work_tree_env.filter(|dir| !vacant(dir)) {
            return Err(LayoutError::WorkTreeNotEmpty(work_tree.to_owned()));
        }
        let mut guards = vec![NewDirectory::new(target.to_owned(), target.exists())];
        let (git_dir, work_tree) = match (bare, separate, work_tree_env) {
            (true, _, _) => (target.to_owned(), None),
            (false, Some(git_dir), _) => (git_dir.to_owned(), Some(target.to_owned())),
            (false, None, Some(work_tree)) => (target.to_owned(), Some(work_tree.to_owned())),
            (false, None, None) => (target.join(".git"), Some(target.to_owned())),
        };
        for dir in [Some(&git_dir), work_tree.as_ref()].into_iter().flatten() {
            if dir != target {
                guards.push(NewDirectory::new(dir.clone(), dir.exists()));
            }
        }
        init(&git_dir, init_options)?;
        let created = |path: &Path| {
            let path = path.to_owned();
            move |source| LayoutError::Create { path, source }
        };
        if separate.is_some() {
            let link = target.join(".git");
            std::fs::create_dir_all(target).map_err(created(target))?;
            std::fs::write(&link, format!("gitdir: {}\n", git_dir.display()))
                .map_err(created(&link))?;
        }
        if let (Some(work_tree), Some(_)) = (&work_tree, work_tree_env) {
            std::fs::create_dir_all(work_tree).map_err(created(work_tree))?;
            let mut config = ConfigFile::of_repository(&git_dir)?;
            config.set(
                &ConfigKey::new("core", None, "worktree"),
                &work_tree.display().to_string(),
            )?;
            config.write()?;
        }
        Ok(Layout {
            git_dir,
            work_tree,
            guards,
        })
    }

    /// The clone succeeded: everything stays.
    pub fn keep(&mut self) {
        self.guards.iter_mut().for_each(NewDirectory::disarm);
    }
}
