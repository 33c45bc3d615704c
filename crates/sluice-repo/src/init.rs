//! A new, empty repository as `git init` makes it: the directories, `HEAD` on an unborn branch,
//! and the `core` settings.

use crate::RefTarget;
use sluice_odb::config::{ConfigError, ConfigFile, ConfigKey};
use std::path::{Path, PathBuf};

/// Why the repository could not be made.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// A directory could not be made.
    #[error("cannot create '{}'", path.display())]
    Create {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `HEAD` could not be written.
    #[error(transparent)]
    Head(crate::RefError),
    /// The configuration could not be written.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// The branch a clone of an empty repository starts on: `init.defaultBranch`, or `master`,
/// which git 2.47's clone takes too where the setting names no possible branch (2.39's
/// refused the clone).
pub fn initial_branch(config: &sluice_odb::Config) -> String {
    let named = (config.get("init.defaultBranch")).map(|name| format!("refs/heads/{name}"));
    named
        .filter(|full| crate::refs::is_valid_ref_name(full))
        .unwrap_or_else(|| "refs/heads/master".to_owned())
}

/// What kind of repository to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitOptions<'a> {
    /// The branch `HEAD` names (`refs/heads/…`), unborn.
    pub initial: &'a str,
    /// A bare repository (no work tree, no reflogs by default).
    pub bare: bool,
    /// `core.repositoryformatversion=1`, which extensions (a partial clone's promisor remote)
    /// need.
    pub extensions: bool,
    /// The template directory copied in first ([`crate::template::template_dir`]).
    pub template: Option<&'a Path>,
}

/// Makes an empty repository at `git_dir`: the directories, `HEAD` and the `core` settings
/// `git init` writes.
pub fn init(git_dir: &Path, options: InitOptions<'_>) -> Result<(), InitError> {
    let create = |path: PathBuf| move |source| InitError::Create { path, source };
    for dir in ["objects/pack", "objects/info", "refs/heads", "refs/tags"] {
        let path = git_dir.join(dir);
        std::fs::create_dir_all(&path).map_err(create(path.clone()))?;
    }
    if let Some(template) = options.template {
        crate::template::copy_template(template, git_dir)?;
    }
    let head = RefTarget::Symbolic(options.initial.to_owned());
    let refs = crate::Refs::new(git_dir, git_dir, sluice_object::HashKind::default());
    refs.write("HEAD", &head).map_err(InitError::Head)?;
    let bare = if options.bare { "true" } else { "false" };
    let version = if options.extensions { "1" } else { "0" };
    let mut core = vec![
        ("repositoryformatversion", version),
        ("filemode", "true"),
        ("bare", bare),
    ];
    if !options.bare {
        core.push(("logallrefupdates", "true"));
    }
    let mut config = ConfigFile::of_repository(git_dir)?;
    for (name, value) in core {
        config.add(&ConfigKey::new("core", None, name), value);
    }
    config.write().map_err(InitError::from)
}
