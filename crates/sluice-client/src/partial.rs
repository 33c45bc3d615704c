//! Partial clones as git records them: the filter spec sent to the server, which remotes are
//! promisor remotes, and the settings a `--filter` fetch adds so later fetches (and git's lazy
//! fetches of missing objects) keep to it.

use sluice_graph::ObjectFilter;
use sluice_odb::{Config, ConfigError, ConfigFile, ConfigKey};
use std::path::Path;

/// A filter spec git would refuse.
#[derive(Debug, thiserror::Error)]
#[error("invalid filter-spec '{0}'")]
pub struct InvalidFilter(
    /// The spec as given.
    pub String,
);

/// `--filter`'s spec as git sends and records it, sizes in bytes (`blob:limit=1k` is
/// `blob:limit=1024`); a kind of filter only other servers implement goes as given.
pub fn filter_spec(spec: &str) -> Result<String, InvalidFilter> {
    if let Some(filter) = ObjectFilter::parse(spec) {
        return Ok(filter.to_string());
    }
    let other_kinds = ["sparse:oid=", "object:type=", "combine:"];
    if other_kinds.iter().any(|kind| spec.starts_with(kind)) {
        return Ok(spec.to_owned());
    }
    Err(InvalidFilter(spec.to_owned()))
}

/// Whether git counts `remote` as a promisor remote: `remote.<name>.promisor`, or the older
/// `extensions.partialClone` naming it.
pub fn is_promisor(config: &Config, remote: &str) -> Result<bool, ConfigError> {
    Ok(config
        .get_bool(&format!("remote.{remote}.promisor"))?
        .unwrap_or(false)
        || config.get("extensions.partialclone") == Some(remote))
}

/// Makes `remote` a promisor remote with `filter` as its default, as a `--filter` fetch does in
/// git: a remote not yet a promisor is marked one (the repository going to format version 1);
/// a promisor remote that has a filter already keeps it.
pub fn register(
    git_dir: &Path,
    config: &Config,
    remote: &str,
    filter: &str,
) -> Result<(), ConfigError> {
    let promisor = is_promisor(config, remote)?;
    if promisor
        && config
            .get(&format!("remote.{remote}.partialclonefilter"))
            .is_some()
    {
        return Ok(());
    }
    let mut file = ConfigFile::of_repository(git_dir)?;
    if !promisor {
        let version = config.get_int("core.repositoryformatversion")?.unwrap_or(0);
        if version < 1 {
            file.set(
                &ConfigKey::new("core", None, "repositoryformatversion"),
                "1",
            )?;
        }
        file.set(&ConfigKey::new("remote", Some(remote), "promisor"), "true")?;
    }
    file.set(
        &ConfigKey::new("remote", Some(remote), "partialclonefilter"),
        filter,
    )?;
    file.write()?;
    Ok(())
}

/// The filter a fetch from `remote` sends: `given` (`--filter`, which first makes the remote a
/// promisor remote with it as its default, as git does, even for a URL), else a promisor
/// remote's default; none when `off` (`--no-filter`).
pub fn fetch_filter(
    repo: &sluice_repo::Repository,
    remote: &str,
    given: Option<&str>,
    off: bool,
) -> Result<Option<String>, ConfigError> {
    let config = repo.config();
    if off {
        return Ok(None);
    }
    if let Some(spec) = given {
        register(repo.git_dir(), config, remote, spec)?;
        return Ok(Some(spec.to_owned()));
    }
    Ok(match is_promisor(config, remote)? {
        true => config
            .get(&format!("remote.{remote}.partialclonefilter"))
            .map(str::to_owned),
        false => None,
    })
}
