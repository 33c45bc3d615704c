//! A branch's upstream as git records it: `branch.<name>.remote` and `.merge`, and
//! `.rebase = true` where `branch.autoSetupRebase` asks for it (so that `git pull` rebases).
//! The one writer of that record, for every command that sets one: clone's first branch, the
//! branch checkout makes from a remote-tracking one, `push --set-upstream` and `fetch
//! --set-upstream`.

use crate::refspec::Refspec;
use crate::Repository;
use sluice_odb::config::{Config, ConfigError, ConfigFile, ConfigKey};

/// What `branch.<name>.remote` and `.merge` record for the local branch `branch` (its short
/// name): the remote (`.` for a branch of this repository) and the remote's ref, the first
/// `.merge` where there are several. `None` without both.
pub fn of<'c>(config: &'c Config, branch: &str) -> Option<(&'c str, &'c str)> {
    let remote = config.get(&format!("branch.{branch}.remote"))?;
    let merge = config.get(&format!("branch.{branch}.merge"))?;
    Some((remote, merge))
}

/// `remote.<name>.fetch`: how the remote's refs are tracked here.
pub fn fetch_specs(repo: &Repository, remote: &str) -> Vec<Refspec> {
    (repo.config().get_all(&format!("remote.{remote}.fetch")))
        .into_iter()
        .filter_map(|spec| Refspec::parse(spec).ok())
        .collect()
}

/// The remote-tracking ref `specs` (a remote's fetch refspecs) give the remote's ref `name`,
/// as git finds it: the first refspec that maps it (a negative one excludes nothing here, as
/// in git's lookup).
pub fn tracking_ref(specs: &[Refspec], name: &str) -> Option<String> {
    (specs.iter().filter(|spec| !spec.negative))
        .find_map(|spec| spec.destination(&spec.matches(name)?))
}

/// The remote-tracking ref of `remote`'s ref `name` (a `branch.<name>.merge`): through the
/// remote's fetch refspecs, or `name` itself for `.`, this repository.
pub fn tracked_as(repo: &Repository, remote: &str, name: &str) -> Option<String> {
    match remote {
        "." => Some(name.to_owned()),
        remote => tracking_ref(&fetch_specs(repo, remote), name),
    }
}

/// The remote a command uses when it names none, as git picks it: the branch's own
/// (`branch.<name>.remote`, for the branch checked out), else the only remote configured, else
/// `origin`.
pub fn default_remote(config: &Config, branch: Option<&str>) -> String {
    let own = branch.and_then(|b| config.get(&format!("branch.{b}.remote")));
    match own {
        Some(remote) => remote.to_owned(),
        None => only_remote(config).unwrap_or_else(|| "origin".to_owned()),
    }
}

/// The one remote configured (any `remote.<name>.*` key makes one, as in git), if there is
/// exactly one.
fn only_remote(config: &Config) -> Option<String> {
    let mut names = config.subsection_names("remote");
    (names.len() == 1).then(|| names.remove(0))
}

/// The remote `git push` sends the branch `branch` (short name) to when the command names
/// none: `branch.<name>.pushRemote`, else `remote.pushDefault`, else `branch.<name>.remote`,
/// else the only remote configured. `None` where none is: git then pushes to `origin`.
pub fn push_remote(config: &Config, branch: Option<&str>) -> Option<String> {
    let of_branch = |key: &str| branch.and_then(|b| config.get(&format!("branch.{b}.{key}")));
    (of_branch("pushremote"))
        .or_else(|| config.get("remote.pushdefault"))
        .or_else(|| of_branch("remote"))
        .map(str::to_owned)
        .or_else(|| only_remote(config))
}

/// `<branch>@{upstream}`: the remote-tracking ref of the ref `branch.<name>.merge` names on
/// `branch.<name>.remote` (the ref itself for `.`).
pub fn upstream_ref(repo: &Repository, branch: &str) -> Option<String> {
    let (remote, merge) = of(repo.config(), branch)?;
    tracked_as(repo, remote, merge)
}

/// `<branch>@{push}`: the remote-tracking ref of where `git push` would send the branch, as
/// git finds it: through the push remote's own push refspecs where it has some (a mirror:
/// the same name), else by `push.default`: the upstream for `upstream` (and for `simple`,
/// only where it is the ref the branch would be pushed to), the same name for `current` and
/// `matching`, nothing for `nothing`.
pub fn push_ref(repo: &Repository, branch: &str) -> Option<String> {
    let config = repo.config();
    let remote = push_remote(config, Some(branch));
    let remote = remote.as_deref().unwrap_or("origin");
    let full = format!("refs/heads/{branch}");
    let specs: Vec<Refspec> = (config.get_all(&format!("remote.{remote}.push")))
        .into_iter()
        .filter_map(|spec| Refspec::parse(spec).ok())
        .collect();
    if !specs.is_empty() {
        return tracked_as(repo, remote, &tracking_ref(&specs, &full)?);
    }
    if matches!(
        config.get_bool(&format!("remote.{remote}.mirror")),
        Ok(Some(true))
    ) {
        return tracked_as(repo, remote, &full);
    }
    match config.get("push.default").unwrap_or("simple") {
        "nothing" => None,
        "upstream" | "tracking" => upstream_ref(repo, branch),
        "simple" => {
            let up = upstream_ref(repo, branch)?;
            (tracked_as(repo, remote, &full)? == up).then_some(up)
        }
        _ => tracked_as(repo, remote, &full),
    }
}

/// Whether a branch set to track a branch of `remote` also gets `branch.<name>.rebase =
/// true`: `branch.autoSetupRebase` is `always`, or `remote` for a remote's branch, `local`
/// for one of this repository (`.`).
pub fn rebases(config: &Config, remote: &str) -> bool {
    let kind = match remote {
        "." => "local",
        _ => "remote",
    };
    (config.get("branch.autosetuprebase")).is_some_and(|value| value == "always" || value == kind)
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
    let rebasing = rebases(config, remote);
    if rebasing {
        file.set(&key("rebase"), "true")?;
    }
    Ok(rebasing)
}
