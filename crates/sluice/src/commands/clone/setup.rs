//! The clone's setup, before anything is fetched: the empty repository `git init` would make,
//! the `--config` settings, the remote's name, whether a path is cloned by copying its object
//! files; and the configuration git clone writes once the refs are known.

use super::CloneArgs;
use crate::commands::Context;
use anyhow::bail;
use sluice_fetch::clone::{LocalSource, Origin};
use sluice_fetch::local_clone::ObjectTransfer;
use sluice_fetch::refspec::Refspec;
use sluice_fetch::Remote;
use sluice_fetch::RemoteUrl;
use sluice_odb::{Config, ConfigFile, ConfigKey, Repository};
use std::path::Path;

/// Whether the clone copies the source's objects itself, as git does for a path (not a
/// `file://` URL) to a repository that is not shallow, unless `--no-local`. Says, as git
/// does, which options that leaves without effect.
pub(super) fn local_source(args: &CloneArgs, remote: &Remote) -> Option<LocalSource> {
    // Only where the repository is: its objects are copied as files, never read.
    let source = match &remote.url {
        RemoteUrl::Local(path) if !args.no_local && !args.repository.starts_with("file://") => {
            Repository::find_served(path, false).map(|git_dir| Repository::common_dir_of(&git_dir))
        }
        _ => None,
    };
    let source = source.filter(|common_dir| {
        let shallow = common_dir.join("shallow").exists();
        if shallow && args.local {
            eprintln!("warning: source repository is shallow, ignoring --local");
        }
        !shallow
    });
    let Some(source) = source else {
        if args.local {
            eprintln!("warning: --local is ignored");
        }
        return None;
    };
    for (given, option) in [
        (args.depth.is_some(), "--depth"),
        (args.shallow_since.is_some(), "--shallow-since"),
        (!args.shallow_exclude.is_empty(), "--shallow-exclude"),
        (args.filter.is_some(), "--filter"),
    ] {
        if given {
            eprintln!("warning: {option} is ignored in local clones; use file:// instead.");
        }
    }
    let transfer = if args.shared {
        ObjectTransfer::Shared
    } else if args.no_hardlinks {
        ObjectTransfer::Copy
    } else if args.local {
        ObjectTransfer::LinkOnly
    } else {
        ObjectTransfer::LinkOrCopy
    };
    let objects = std::path::absolute(source.join("objects")).ok()?;
    Some(LocalSource { objects, transfer })
}

/// The branch `git init` starts on: `init.defaultBranch`, or `master`.
pub(super) fn initial_branch(context: &Context) -> anyhow::Result<String> {
    let config = context.config(None)?;
    let name = config.get("init.defaultBranch").unwrap_or("master");
    let full = format!("refs/heads/{name}");
    if !sluice_odb::refs::is_valid_ref_name(&full) {
        bail!("invalid initial branch name: '{name}'");
    }
    Ok(full)
}

/// The `--config` settings, written as git writes them, each added to what is there; before
/// anything is fetched, so that they apply to the clone itself.
pub(super) fn write_settings(git_dir: &Path, settings: &[String]) -> anyhow::Result<()> {
    if settings.is_empty() {
        return Ok(());
    }
    let mut config = ConfigFile::open(&git_dir.join("config"))?;
    for setting in settings {
        let (key, value) = setting.split_once('=').unwrap_or((setting, "true"));
        match ConfigKey::parse(key) {
            // As git reads `-c`: section and variable names in lowercase.
            Ok(key) => config.add(&key.lowercased(), value),
            Err(e) => {
                eprintln!("error: {e}");
                bail!("unable to write parameters to config file");
            }
        }
    }
    config.write()?;
    Ok(())
}

/// `--reject-shallow`, or else `clone.rejectShallow`.
pub(super) fn reject_shallow(args: &CloneArgs, config: &Config) -> anyhow::Result<bool> {
    if args.reject_shallow || args.no_reject_shallow {
        return Ok(args.reject_shallow);
    }
    Ok(config.get_bool("clone.rejectShallow")?.unwrap_or(false))
}

/// The remote's name (`--origin`, else `clone.defaultRemoteName`, else `origin`) and the fetch
/// refspecs `--config` gave it.
pub(super) fn origin(args: &CloneArgs, config: &Config) -> anyhow::Result<Origin> {
    let name = match &args.origin {
        Some(name) => name.clone(),
        None => config
            .get("clone.defaultRemoteName")
            .unwrap_or("origin")
            .to_owned(),
    };
    if !sluice_odb::refs::is_valid_ref_name(&format!("refs/remotes/{name}/test")) {
        bail!("'{name}' is not a valid remote name");
    }
    let extra = config
        .get_all(&format!("remote.{name}.fetch"))
        .into_iter()
        .map(Refspec::parse)
        .collect::<Result<_, _>>()?;
    Ok(Origin { name, extra })
}
