//! The configuration a clone writes once its refs are known, as git clone writes it: the
//! remote's url, fetch refspec and options, and the checked-out branch's upstream, into the
//! sections `--config` may have started (a setting replacing what it gave).

use super::plan::{ClonePlan, Origin};
use sluice_odb::{ConfigError, ConfigFile, ConfigKey};
use sluice_remote::Remote;
use sluice_repo::Repository;

/// What of the clone's options its configuration records.
#[derive(Debug, Clone, Copy)]
pub struct Recorded<'a> {
    /// `--no-tags`: `remote.<name>.tagOpt=--no-tags`.
    pub no_tags: bool,
    /// `--mirror`: `remote.<name>.mirror=true`.
    pub mirror: bool,
    /// `--filter`: the remote becomes the promisor remote with this default filter.
    pub filter: Option<&'a str>,
}

/// Writes the remote's settings and, in a clone with a work tree, the branch's upstream.
pub fn write_config(
    repo: &Repository,
    remote: &Remote,
    origin: &Origin,
    plan: &ClonePlan,
    recorded: Recorded<'_>,
) -> Result<(), ConfigError> {
    let mut config = ConfigFile::open(&repo.git_dir().join("config"))?;
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
        let key = |name| ConfigKey::new("branch", Some(short), name);
        config.set(&key("remote"), &origin.name)?;
        config.set(&key("merge"), branch)?;
    }
    config.write()
}
