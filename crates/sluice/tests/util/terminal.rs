//! Running a command at a terminal, as a user does: git shows the progress of a repack, a
//! gc or a commit-graph only there. Python's `pty` gives the terminal (Python is on every
//! machine the tests run on).

use std::process::Command;

/// Spawns the command named by its arguments on a new terminal and copies what it writes to
/// stdout; exits with its exit code.
const SPAWN: &str = "import os, pty, sys; \
                     sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))";

/// Runs `command` (its program, arguments, directory and environment) with a terminal for its
/// output, no input: its exit code, and what it wrote on stdout and stderr, as one text with
/// the terminal's `\r\n` line ends made `\n`.
pub fn on_terminal(command: &Command) -> (Option<i32>, String) {
    let mut spawned = Command::new("python3");
    spawned.arg("-c").arg(SPAWN).arg(command.get_program());
    spawned.args(command.get_args());
    if let Some(dir) = command.get_current_dir() {
        spawned.current_dir(dir);
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => spawned.env(key, value),
            None => spawned.env_remove(key),
        };
    }
    let out = super::run_with_input(spawned, b"");
    let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    (out.status.code(), text)
}

/// The lines that end each phase of progress in `text` (and any other whole line), as a user
/// sees them last: each update's text up to its `\r` left out, trailing spaces trimmed.
pub fn final_lines(text: &str) -> Vec<String> {
    (text.lines())
        .map(|line| {
            line.rsplit('\r')
                .next()
                .unwrap_or(line)
                .trim_end()
                .to_owned()
        })
        .filter(|line| !line.is_empty())
        .collect()
}
