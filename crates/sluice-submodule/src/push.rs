//! `push --recurse-submodules=on-demand|only`: a submodule whose commits the superproject's
//! push needs and no remote of its has is pushed first, by Sluice run inside it, as git runs
//! its own push there.

use crate::Host;
use std::path::Path;

/// What the superproject's push passes on to a submodule's.
#[derive(Debug, Clone, Copy)]
pub struct PassedOn<'a> {
    /// `--dry-run`.
    pub dry_run: bool,
    /// `--push-option`s.
    pub push_options: &'a [String],
    /// The remote pushed to, when it is a configured one: the submodule pushes to its own
    /// remote of that name, with the same refspecs; else to its default.
    pub remote: Option<&'a str>,
    /// The refspecs of the command line.
    pub refspecs: &'a [String],
}

/// Pushes the submodule at `path` (under `work_tree`) as git does, saying so first; whether
/// the push went through.
pub fn push_submodule(host: &dyn Host, work_tree: &Path, path: &str, passed: PassedOn) -> bool {
    host.err_line(&format!("Pushing submodule '{path}'"));
    let Ok(mut command) = host.sluice_in(&work_tree.join(path)) else {
        return false;
    };
    command.arg("push");
    if passed.dry_run {
        command.arg("--dry-run");
    }
    for option in passed.push_options {
        command.arg(format!("--push-option={option}"));
    }
    if let Some(remote) = passed.remote {
        command.arg(remote).args(passed.refspecs);
    }
    command.status().is_ok_and(|status| status.success())
}
