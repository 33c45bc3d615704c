//! The clone's settings before anything is fetched: `--config`'s, written into the new
//! repository, and `--reject-shallow` or its setting.

use super::CloneArgs;
use anyhow::bail;
use sluice_odb::{Config, ConfigFile, ConfigKey};
use std::path::Path;

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
