//! `fetch --set-upstream`: the branch checked out gets the one branch fetched for merging as
//! its upstream, as `git branch --set-upstream-to` would record it, so that `git pull` with no
//! arguments fetches and merges it.

use sluice_fetch::RemoteRef;
use sluice_odb::{ConfigFile, ConfigKey, Repository};

/// Records `fetched` (the refs fetched without a local destination) as the upstream of
/// `current` (the branch checked out), where that is one branch; warns as git does otherwise
/// and changes nothing.
pub(super) fn set_upstream(
    repo: &Repository,
    current: Option<&str>,
    remote: &str,
    fetched: &[&RemoteRef],
) -> anyhow::Result<()> {
    let source = match fetched {
        [one] => *one,
        [] => {
            eprintln!("warning: no source branch found;\nyou need to specify exactly one branch with the --set-upstream option");
            return Ok(());
        }
        _ => {
            eprintln!("warning: multiple branches detected, incompatible with --set-upstream");
            return Ok(());
        }
    };
    let Some(branch) = current.and_then(|c| c.strip_prefix("refs/heads/")) else {
        let shown = source
            .name
            .strip_prefix("refs/heads/")
            .unwrap_or(&source.name);
        eprintln!("warning: could not set upstream of HEAD to '{shown}' from '{remote}' when it does not point to any branch.");
        return Ok(());
    };
    let name = source.name.as_str();
    if name.starts_with("refs/remotes/") {
        eprintln!("warning: not setting upstream for a remote remote-tracking branch");
        return Ok(());
    }
    if name.starts_with("refs/tags/") {
        eprintln!("warning: not setting upstream for a remote tag");
        return Ok(());
    }
    if name != "HEAD" && !name.starts_with("refs/heads/") {
        eprintln!("warning: unknown branch type");
        return Ok(());
    }
    let config = repo.config();
    // `branch.autoSetupRebase` asks for `pull --rebase` on branches that track a remote.
    let rebase = matches!(
        config.get("branch.autosetuprebase"),
        Some("always" | "remote")
    );
    let mut file = ConfigFile::open(&repo.common_dir().join("config"))?;
    file.set(&ConfigKey::new("branch", Some(branch), "remote"), remote)?;
    file.set(&ConfigKey::new("branch", Some(branch), "merge"), name)?;
    if rebase {
        file.set(&ConfigKey::new("branch", Some(branch), "rebase"), "true")?;
    }
    file.write()?;
    Ok(())
}
