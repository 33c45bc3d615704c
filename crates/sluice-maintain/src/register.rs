//! `git maintenance register` and `unregister`: a repository named in the user's
//! `maintenance.repo` values (the global file, or `--config-file`), for a scheduler to visit;
//! registering also turns off the maintenance run after commands (`maintenance.auto=false`)
//! and chooses the `incremental` strategy unless one is set, as git does.

use sluice_odb::config::{global_file, ConfigFile, ConfigKey};
use sluice_odb::ConfigError;
use sluice_repo::Repository;
use std::path::{Path, PathBuf};

/// Why a repository could not be registered or unregistered.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    /// No file to write `maintenance.repo` to: no `GIT_CONFIG_GLOBAL` and no `HOME`.
    #[error("$HOME not set")]
    NoGlobalFile,
    /// `unregister` of a repository no configuration names (without `--force`).
    #[error("repository '{0}' is not registered")]
    NotRegistered(String),
    /// The repository's path could not be resolved.
    #[error("cannot resolve '{}': {source}", path.display())]
    Path {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A configuration file could not be read or written.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// The path `maintenance.repo` names a repository by: its work tree (or, bare, its git
/// directory), with every symbolic link resolved.
fn maintenance_path(repo: &Repository) -> Result<String, RegisterError> {
    let path = repo.work_tree().unwrap_or(repo.git_dir());
    let resolved = std::fs::canonicalize(path).map_err(|source| RegisterError::Path {
        path: path.to_owned(),
        source,
    })?;
    Ok(resolved.to_string_lossy().into_owned())
}

/// Where `maintenance.repo` is written: `config_file`, else the global file.
fn list_file(config_file: Option<&Path>) -> Result<PathBuf, RegisterError> {
    match config_file {
        Some(file) => Ok(file.to_owned()),
        None => global_file().ok_or(RegisterError::NoGlobalFile),
    }
}

/// Whether the repository is already on the list: in `config_file` when one is given, else in
/// any configuration the repository reads.
fn listed(
    repo: &Repository,
    config_file: Option<&Path>,
    path: &str,
) -> Result<bool, RegisterError> {
    let mut from_file = sluice_odb::Config::default();
    let config = match config_file {
        Some(file) => {
            from_file.read_file(file)?;
            &from_file
        }
        None => repo.config(),
    };
    let values = config.get_all("maintenance.repo");
    Ok(values.contains(&path))
}

/// `maintenance register [--config-file <file>]`.
pub fn register(repo: &Repository, config_file: Option<&Path>) -> Result<(), RegisterError> {
    let mut own = repo.config_file()?;
    own.set(&ConfigKey::new("maintenance", None, "auto"), "false")?;
    if repo.config().get("maintenance.strategy").is_none() {
        own.set(
            &ConfigKey::new("maintenance", None, "strategy"),
            "incremental",
        )?;
    }
    own.write()?;
    let path = maintenance_path(repo)?;
    if !listed(repo, config_file, &path)? {
        let mut list = ConfigFile::open(&list_file(config_file)?)?;
        list.add(&ConfigKey::new("maintenance", None, "repo"), &path);
        list.write()?;
    }
    Ok(())
}

/// `maintenance unregister [--config-file <file>] [--force]`: `force` makes a repository
/// that is not registered no error.
pub fn unregister(
    repo: &Repository,
    config_file: Option<&Path>,
    force: bool,
) -> Result<(), RegisterError> {
    let path = maintenance_path(repo)?;
    if !listed(repo, config_file, &path)? {
        return match force {
            true => Ok(()),
            false => Err(RegisterError::NotRegistered(path)),
        };
    }
    let mut list = ConfigFile::open(&list_file(config_file)?)?;
    if list.remove_value(&ConfigKey::new("maintenance", None, "repo"), &path) {
        list.write()?;
    }
    Ok(())
}
