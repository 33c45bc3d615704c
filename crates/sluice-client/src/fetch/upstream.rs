//! `fetch --set-upstream`: the branch checked out gets the one branch fetched for merging as
//! its upstream, as `git branch --set-upstream-to` would record it, so that `git pull` with no
//! arguments fetches and merges it.

use sluice_odb::ConfigError;
use sluice_remote::RemoteRef;
use sluice_repo::Repository;

/// Records `fetched` (the refs fetched without a local destination) as the upstream of
/// `current` (the branch checked out), where that is one branch; otherwise changes nothing and
/// returns git's warning.
pub fn set_upstream(
    repo: &Repository,
    current: Option<&str>,
    remote: &str,
    fetched: &[&RemoteRef],
) -> Result<Option<String>, ConfigError> {
    let source = match fetched {
        [one] => *one,
        [] => {
            return Ok(Some("no source branch found;\nyou need to specify exactly one branch with the --set-upstream option".to_owned()));
        }
        _ => {
            return Ok(Some(
                "multiple branches detected, incompatible with --set-upstream".to_owned(),
            ));
        }
    };
    let Some(branch) = current.and_then(|c| c.strip_prefix("refs/heads/")) else {
        let shown = source
            .name
            .strip_prefix("refs/heads/")
            .unwrap_or(&source.name);
        return Ok(Some(format!("could not set upstream of HEAD to '{shown}' from '{remote}' when it does not point to any branch.")));
    };
    let name = source.name.as_str();
    if name.starts_with("refs/remotes/") {
        return Ok(Some(
            "not setting upstream for a remote remote-tracking branch".to_owned(),
        ));
    }
    if name.starts_with("refs/tags/") {
        return Ok(Some("not setting upstream for a remote tag".to_owned()));
    }
    if name != "HEAD" && !name.starts_with("refs/heads/") {
        return Ok(Some("unknown branch type".to_owned()));
    }
    let mut file = repo.config_file()?;
    sluice_repo::upstream::record(&mut file, repo.config(), branch, remote, name)?;
    file.write()?;
    Ok(None)
}
