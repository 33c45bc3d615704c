//! Running gc and maintenance in the background, as git's `--detach` does: the command runs
//! itself again with `--no-detach` (the last of the two wins), in a process group of its own
//! with nothing on standard input and output, and returns at once. git forks instead; a
//! second process of the same binary is the portable way to the same effect.

use std::ffi::OsString;
use std::process::{Command, Stdio};

/// Starts this command again in the background, its standard error going to `stderr`, with
/// `extra` arguments after `--no-detach`; false when it could not be started (the caller
/// then goes on in the foreground, as git does when it cannot detach).
pub(crate) fn run_detached(stderr: Stdio, extra: &[OsString]) -> bool {
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let mut command = Command::new(exe);
    command
        .args(std::env::args_os().skip(1))
        .arg("--no-detach")
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    // Not waited for: it outlives this process, and init reaps it.
    command.spawn().is_ok()
}
