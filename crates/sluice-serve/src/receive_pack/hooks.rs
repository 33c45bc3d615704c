//! The hooks of a push, run as git runs them (githooks): `pre-receive` once, with every
//! command on its standard input and the quarantine as its object directory, before any ref
//! moves (a failure refuses the whole push); `update` for each ref, with its name, old and new
//! ids (a failure refuses that ref); `post-receive` and `post-update` once the refs moved. They
//! run in the git directory, from `core.hooksPath` or `hooks/`; what they print goes to the
//! client (`remote:` lines).

use sluice_object::HashKind;
use sluice_repo::refs::TransactionObserver;
use sluice_repo::{Expected, RefUpdate, Repository};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use super::messenger::Messenger;

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
        // receive-pack's hooks run in the git directory.
        let dir = sluice_repo::hooks::dir(repo, &git_dir);
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
        self.run_live(name, args, input, env, None)
    }

    /// [`Self::run`], its output relayed by `live` as it comes (with keepalives while it is
    /// silent) rather than returned.
    pub(super) fn run_live(
        &self,
        name: &str,
        args: &[&str],
        input: &[u8],
        env: &[(String, OsString)],
        live: Option<&Messenger<'_>>,
    ) -> Option<Ran> {
        let git_dir = self.git_dir.clone();
        let mut env = env.to_vec();
        env.insert(0, ("GIT_DIR".to_owned(), ".".into()));
        self.run_in(&git_dir, name, args, input, &env, live)
    }

    /// Starts hook `name` in the git directory with its standard input, output and error
    /// piped, for a hook that talks with receive-pack in pkt-lines; `None` if the repository
    /// has no such hook.
    pub(super) fn spawn_piped(&self, name: &str) -> Option<std::io::Result<std::process::Child>> {
        let path = self.dir.join(name);
        if !sluice_repo::hooks::runnable(&path) {
            return None;
        }
        let mut command = Command::new(&path);
        command
            .current_dir(&self.git_dir)
            .env("GIT_DIR", ".")
            .envs(self.environment.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Some(command.spawn())
    }

    /// [`Self::run`] in directory `dir` (a work tree's hook), with only `env` beside the
    /// push's own variables.
    pub(super) fn run_in(
        &self,
        dir: &std::path::Path,
        name: &str,
        args: &[&str],
        input: &[u8],
        env: &[(String, OsString)],
        live: Option<&Messenger<'_>>,
    ) -> Option<Ran> {
        let path = self.dir.join(name);
        if !sluice_repo::hooks::runnable(&path) {
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
            .current_dir(dir)
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
        let output = collect_output(&mut reader, live);
        let _ = feeder.join();
        let success = child.wait().is_ok_and(|status| status.success());
        Some(Ran { success, output })
    }
}

/// Reads a hook's output to its end: relayed by `live` chunk by chunk, with a keepalive for
/// every stretch of silence as long as its interval, or returned whole.
fn collect_output(reader: &mut std::io::PipeReader, live: Option<&Messenger<'_>>) -> Vec<u8> {
    let mut output = Vec::new();
    let Some(live) = live else {
        let _ = reader.read_to_end(&mut output);
        return output;
    };
    let (sender, chunks) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut buffer = vec![0u8; 8192];
            while let Ok(read @ 1..) = reader.read(&mut buffer) {
                if sender.send(buffer[..read].to_vec()).is_err() {
                    break;
                }
            }
        });
        let wait = live.keepalive_after().unwrap_or(Duration::MAX);
        loop {
            match chunks.recv_timeout(wait) {
                Ok(chunk) => live.relay(&chunk),
                Err(RecvTimeoutError::Timeout) => live.keepalive(),
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
    });
    output
}

/// The `reference-transaction` hook watching a ref transaction: run with `prepared` (where a
/// failure aborts the transaction), `committed` or `aborted`, the updates on its standard
/// input (`<old> <new> <ref>`, the null id for a ref that is created, deleted or not checked).
/// As in git, what it prints goes to receive-pack's own standard error, not to the client's
/// side band.
pub(super) struct TransactionHook<'a> {
    pub(super) hooks: &'a Hooks,
    pub(super) hash: HashKind,
    pub(super) said: std::sync::Mutex<Vec<u8>>,
    /// The quarantine's environment while the objects wait there (a `prepared` transaction
    /// comes before they move in); empty once they are in.
    pub(super) env: std::sync::Mutex<Vec<(String, OsString)>>,
}

impl TransactionHook<'_> {
    fn run(&self, state: &str, updates: &[RefUpdate]) -> bool {
        let null = self.hash.null_id();
        let input = sluice_repo::hooks::transaction_lines(updates.iter().map(|update| {
            let old = match update.expected {
                Expected::Id(id) => id,
                _ => null,
            };
            (old, update.new.unwrap_or(null), update.name.as_str())
        }));
        let env = self.env.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match self
            .hooks
            .run("reference-transaction", &[state], input.as_bytes(), &env)
        {
            None => true,
            Some(ran) => {
                let mut said = self.said.lock().unwrap_or_else(|e| e.into_inner());
                said.extend_from_slice(&ran.output);
                ran.success
            }
        }
    }
}

impl TransactionObserver for TransactionHook<'_> {
    fn prepared(&self, updates: &[RefUpdate]) -> bool {
        self.run("prepared", updates)
    }
    fn committed(&self, updates: &[RefUpdate]) {
        self.run("committed", updates);
    }
    fn aborted(&self, updates: &[RefUpdate]) {
        self.run("aborted", updates);
    }
}
