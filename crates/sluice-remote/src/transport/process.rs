//! upload-pack as a child process: run through the shell for local repositories, as git runs
//! `git-upload-pack '<path>'`, or through ssh for `ssh://` and scp-like URLs.

use super::{ConnectOptions, IdleTimeout, Link, Producer, ProtocolVersion, Response};
use crate::FetchError;
use sluice_object::shell;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};

/// A running upload-pack: its stdin takes requests, its stdout (read elsewhere) answers.
struct ProcessLink {
    child: Arc<Mutex<Child>>,
    stdin: Option<BufWriter<ChildStdin>>,
    what: String,
}

/// Every server process running now, for [`stop_servers`].
static RUNNING: Mutex<Vec<Arc<Mutex<Child>>>> = Mutex::new(Vec::new());

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kills every upload-pack (or ssh) a link has started and not yet finished with. For a
/// process about to exit on a signal, which does not unwind and so never drops its links: git
/// too stops its transport's child then, rather than leave it running.
pub fn stop_servers() {
    for child in lock(&RUNNING).iter() {
        // A child locked elsewhere is being waited for: it has been told to end already.
        if let Ok(mut child) = child.try_lock() {
            let _ = child.kill();
        }
    }
}

impl Link for ProcessLink {
    fn send(&mut self, request: &[u8]) -> Result<Option<Response>, FetchError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(FetchError::RequestClosed);
        };
        stdin.write_all(request)?;
        stdin.flush()?;
        Ok(None)
    }

    fn send_streamed(&mut self, produce: Producer<'_>) -> Result<Option<Response>, FetchError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(FetchError::RequestClosed);
        };
        produce(stdin)?;
        stdin.flush()?;
        Ok(None)
    }

    fn stateless(&self) -> bool {
        false
    }

    fn finish(mut self: Box<Self>) -> Result<(), FetchError> {
        drop(self.stdin.take());
        let status = lock(&self.child).wait()?;
        if !status.success() {
            return Err(FetchError::Exited {
                what: self.what.clone(),
                status,
            });
        }
        Ok(())
    }
}

impl Drop for ProcessLink {
    /// A session abandoned on an error does not leave its server behind.
    fn drop(&mut self) {
        lock(&RUNNING).retain(|running| !Arc::ptr_eq(running, &self.child));
        let mut child = lock(&self.child);
        if let Ok(None) = child.try_wait() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub(super) fn spawn(
    mut command: Command,
    options: &ConnectOptions,
    what: String,
) -> Result<(Box<dyn Link>, Response), FetchError> {
    if options.protocol == ProtocolVersion::V2 {
        command.env("GIT_PROTOCOL", "version=2");
    }
    for name in sluice_repo::LOCAL_REPO_ENV {
        command.env_remove(name);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|source| FetchError::Spawn {
            what: what.to_string(),
            source,
        })?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(FetchError::NoPipes {
            what: what.to_string(),
        });
    };
    widen_pipe(&stdout);
    let child = Arc::new(Mutex::new(child));
    lock(&RUNNING).push(Arc::clone(&child));
    let link = ProcessLink {
        child,
        stdin: Some(BufWriter::new(stdin)),
        what,
    };
    let response = IdleTimeout::new(stdout, options.idle_timeout);
    Ok((Box::new(link), Box::new(response)))
}

/// The capacity asked for the pipe the server writes into: 1 MiB, Linux's default ceiling for
/// an unprivileged process (`/proc/sys/fs/pipe-max-size`).
#[cfg(target_os = "linux")]
const PIPE_SIZE: usize = 1 << 20;

/// Widens the pipe from the server. With the default 64 KiB, a side-band packet fills it: the
/// server blocks on every packet until the reading thread is scheduled, and on two busy cores
/// that wait is long. On a file:// clone of git/git the pack arrived 0.2-0.6 s sooner with
/// 1 MiB. A pipe that cannot grow (a lowered limit) is used as it is.
#[cfg(target_os = "linux")]
fn widen_pipe(stdout: &std::process::ChildStdout) {
    let _ = rustix::pipe::fcntl_setpipe_size(stdout, PIPE_SIZE);
}

#[cfg(not(target_os = "linux"))]
fn widen_pipe(_: &std::process::ChildStdout) {}

/// upload-pack on a repository of this machine.
pub(super) fn local(
    path: &Path,
    options: &ConnectOptions,
) -> Result<(Box<dyn Link>, Response), FetchError> {
    let script = format!(
        "{} {}",
        options.program(),
        shell::quote(&path.to_string_lossy())
    );
    let mut command = Command::new("sh");
    command.arg("-c").arg(&script);
    spawn(command, options, format!("'{}'", options.program()))
}
