//! The configuration a clone writes once its refs are known, as git clone writes it: the
//! remote's url, fetch refspec and options, and the checked-out branch's upstream, into the
//! sections `--config` may have started (a setting replacing what it gave).

use super::plan::{ClonePlan, Origin};
use sluice_odb::{ConfigError, ConfigFile, ConfigKey};
use sluice_remote::Remote;
use sluice_repo::Repository;
use std::path::Path;

/// What of the clone's options its configuration records.
#[derive(Debug, Clone, Copy)]
pub struct Recorded<'a> {
    /// `--no-tags`: `remote.<name>.tagOpt=--no-tags`.
    pub no_tags: bool,
    /// `--mirror`: `remote.<name>.mirror=true`.
    pub mirror: bool,
    /// `--filter`: the remote becomes the promisor remote with this default filter.
    pub filter: Option<&'a str>,
    /// `--sparse`: the worktree's own settings are read (`extensions.worktreeConfig`).
    pub sparse: bool,
}

/// Writes the remote's settings and, in a clone with a work tree, the branch's upstream.
pub fn write_config(
    repo: &Repository,
    remote: &Remote,
    origin: &Origin,
    plan: &ClonePlan,
    recorded: Recorded<'_>,
) -> Result<(), ConfigError> {
    let mut config = repo.config_file()?;
    let key = |name| ConfigKey::new("remote", Some(&origin.name), name);
    config.set(&key("url"), &remote.recorded)?;
    if recorded.no_tags {
        config.set(&key("tagOpt"), "--no-tags")?;
    }
    if let Some(refspec) = &plan.refspec {
        config.add(&key("fetch"), refspec);
    }
    if recorded.mirror {
        config.set(&key("mirror"), "true")?;
    }
    if let Some(filter) = recorded.filter {
        config.set(&key("promisor"), "true")?;
        config.set(&key("partialclonefilter"), filter)?;
    }
    if let (Some(branch), false) = (&plan.head_branch, plan.bare) {
        let short = branch.trim_start_matches("refs/heads/");
        sluice_repo::upstream::record(&mut config, repo.config(), short, &origin.name, branch)?;
    }
    // After the branch, as git 2.47 writes it (2.39 wrote it before).
    if recorded.sparse && !plan.bare {
        config.set(
            &ConfigKey::new("extensions", None, "worktreeConfig"),
            "true",
        )?;
    }
    config.write()
}

/// Why `--config`'s settings could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    /// A key git would refuse (the whole command is refused, after this error).
    #[error(transparent)]
    BadKey(ConfigError),
    /// The configuration file could not be read or written.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// The `--config` settings (`key=value`, a bare key meaning `true`), written into the new
/// repository at `git_dir` as git writes them, each added to what is there; before anything is
/// fetched, so that they apply to the clone itself.
pub fn write_settings(git_dir: &Path, settings: &[String]) -> Result<(), SettingError> {
    if settings.is_empty() {
        return Ok(());
    }
    let mut config = ConfigFile::of_repository(git_dir)?;
    for setting in settings {
        let (key, value) = setting.split_once('=').unwrap_or((setting, "true"));
        let key = ConfigKey::parse(key).map_err(SettingError::BadKey)?;
        // As git reads `-c`: section and variable names in lowercase.
        config.add(&key.lowercased(), value);
    }
    Ok(config.write()?)
}
