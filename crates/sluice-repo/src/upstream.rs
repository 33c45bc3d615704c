//! A branch's upstream as git records it: `branch.<name>.remote` and `.merge`, and
//! `.rebase = true` where `branch.autoSetupRebase` asks for it (so that `git pull` rebases).
//! The one writer of that record, for every command that sets one: clone's first branch, the
//! branch checkout makes from a remote-tracking one, `push --set-upstream` and `fetch
//! --set-upstream`.

use sluice_odb::config::{Config, ConfigError, ConfigFile, ConfigKey};

/// Whether a branch set to track a branch of a remote also gets `branch.<name>.rebase = true`:
/// `branch.autoSetupRebase` is `always`, or `remote` (`local` is for branches tracking a local
/// one, which no command here sets up).
pub fn rebases(config: &Config) -> bool {
    matches!(
        config.get("branch.autosetuprebase"),
        Some("always" | "remote")
    )
}

/// Records in `file` the branch `merge` of `remote` as the upstream of the local branch
/// `branch` (its short name), with `.rebase` where `config` (the settings in force) asks for
/// it. Returns whether it did: git then says the branch tracks its upstream "by rebasing".
/// The caller writes `file`.
pub fn record(
    file: &mut ConfigFile,
    config: &Config,
    branch: &str,
    remote: &str,
    merge: &str,
) -> Result<bool, ConfigError> {
    let key = |name| ConfigKey::new("branch", Some(branch), name);
    file.set(&key("remote"), remote)?;
    file.set(&key("merge"), merge)?;
    let rebasing = rebases(config);
    if rebasing {
        file.set(&key("rebase"), "true")?;
    }
    Ok(rebasing)
}
