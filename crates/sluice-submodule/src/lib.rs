//! A superproject's submodules, and the clones and fetches that recurse into them, as git's
//! `clone --recurse-submodules` and `fetch --recurse-submodules` do: which submodules the index
//! and `.gitmodules` name ([`registry`]), which of them a fetch must visit ([`fetch`],
//! [`recursion`]), and Sluice run inside each, `--jobs` at a time ([`jobs`]), the clone's
//! ([`clone`]) and the fetch's ([`fetch`]) in git's order and words, and the push of a
//! submodule a superproject's push needs first ([`push`]).
//!
//! The program this runs in says how Sluice is started in a submodule and where words go
//! ([`Host`]): a library prints nothing.
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod clone;
mod error;
pub mod fetch;
pub mod jobs;
pub mod push;
pub mod recursion;
pub mod registry;

pub use error::SubmoduleError;
pub use recursion::Recursion;

use std::path::Path;
use std::process::Command;

/// What the recursion needs of the program it runs in.
pub trait Host: Sync {
    /// Sluice itself, the program this process runs.
    fn sluice(&self) -> std::io::Result<Command>;
    /// Bytes for standard output (git's "Submodule path '…': checked out '…'").
    fn out(&self, bytes: &[u8]);
    /// Bytes for standard error (warnings, "Fetching submodule …", a failed clone's words).
    fn err(&self, bytes: &[u8]);

    /// One line on standard error.
    fn err_line(&self, line: &str) {
        self.err(format!("{line}\n").as_bytes());
    }

    /// Sluice with `cwd` as its working directory, as git runs itself in a submodule: without
    /// the variables that name the superproject's repository, but with the `-c` settings,
    /// which git passes on to the submodule's command.
    fn sluice_in(&self, cwd: &Path) -> std::io::Result<Command> {
        let mut command = self.sluice()?;
        command.current_dir(cwd);
        let settings = ["GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"];
        for variable in sluice_repo::LOCAL_REPO_ENV {
            if !settings.contains(&variable) {
                command.env_remove(variable);
            }
        }
        Ok(command)
    }
}
