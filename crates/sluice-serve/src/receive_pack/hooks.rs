//! The hooks of a push, run as git runs them (githooks): `pre-receive` once, with every
//! command on its standard input and the quarantine as its object directory, before any ref
//! moves (a failure refuses the whole push); `update` for each ref, with its name, old and new
//! ids (a failure refuses that ref); `post-receive` and `post-update` once the refs moved. They
//! run in the git directory, from `core.hooksPath` or `hooks/`; what they print goes to the
//! client (`remote:` lines).

use sluice_odb::Repository;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Where a repository's hooks are.
#[derive(Debug)]
pub(super) struct Hooks {
    dir: PathBuf,
    git_dir: PathBuf,
    /// What every hook of this push is given beside its own variables (who pushed).
    environment: Vec<(String, OsString)>,
}

/// What one hook run did.
#[derive(Debug)]
pub(super) struct Ran {
    pub(super) success: bool,
    /// Its standard output and error, as they came.
    pub(super) output: Vec<u8>,
}

impl Hooks {
    pub(super) fn of(repo: &Repository, environment: Vec<(String, OsString)>) -> Hooks {
        let git_dir = repo.git_dir().to_owned();
        let dir = match repo.config().get_path("core.hookspath") {
            Some(path) if path.is_absolute() => path,
            // A relative hooks path is taken from where hooks run: the git directory.
            Some(path) => git_dir.join(path),
            None => repo.common_dir().join("hooks"),
        };
        Hooks {
            dir,
            git_dir,
            environment,
        }
    }

    /// Runs hook `name` if the repository has it (an executable file); `None` if not.
    pub(super) fn run(
        &self,
        name: &str,
        args: &[&str],
        input: &[u8],
        env: &[(String, OsString)],
    ) -> Option<Ran> {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.join(name);
        let meta = std::fs::metadata(&path).ok()?;
        if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
            return None;
        }
        let failed = |e: std::io::Error| Ran {
            success: false,
            output: format!("error: cannot run {name}: {e}\n").into_bytes(),
        };
        // Both its outputs into one pipe, in the order it writes them, as git relays them.
        let (mut reader, writer) = match std::io::pipe() {
            Ok(pipe) => pipe,
            Err(e) => return Some(failed(e)),
        };
        let stdout = match writer.try_clone() {
            Ok(copy) => copy,
            Err(e) => return Some(failed(e)),
        };
        let mut command = Command::new(&path);
        command
            .args(args)
            .current_dir(&self.git_dir)
            .env("GIT_DIR", ".")
            .envs(self.environment.iter().map(|(k, v)| (k, v)))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(stdout)
            .stderr(writer);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => return Some(failed(e)),
        };
        drop(command);
        let mut stdin = child.stdin.take();
        // A hook that does not read its input must not block the push: write from a thread.
        let input = input.to_vec();
        let feeder = std::thread::spawn(move || {
            if let Some(stdin) = stdin.as_mut() {
                let _ = stdin.write_all(&input);
            }
        });
        let mut output = Vec::new();
        let _ = reader.read_to_end(&mut output);
        let _ = feeder.join();
        let success = child.wait().is_ok_and(|status| status.success());
        Some(Ran { success, output })
    }
}
