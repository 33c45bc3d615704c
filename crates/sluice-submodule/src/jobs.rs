//! Sluice run in many repositories at once, as git runs its submodule clones and fetches:
//! `--jobs` (else the configuration) at a time. One at a time, a job's messages go straight to
//! the terminal; beside others, each job's are held and said whole when it ends, as git holds
//! them, so that two jobs' lines never interleave.

use crate::Host;
use crate::SubmoduleError;
use sluice_odb::Config;
use std::process::{Command, ExitStatus};

/// Where a job's messages go: straight to the host, or held until the job ends.
pub struct JobOutput<'h> {
    host: &'h dyn Host,
    held: Option<(Vec<u8>, Vec<u8>)>,
}

impl JobOutput<'_> {
    /// Says `line` on standard error.
    pub fn line(&mut self, line: &str) {
        match &mut self.held {
            None => self.host.err_line(line),
            Some((_, err)) => {
                err.extend_from_slice(line.as_bytes());
                err.push(b'\n');
            }
        }
    }

    /// Runs `command` to its end, its output said as this job's; how it ended.
    pub fn run(&mut self, command: &mut Command) -> std::io::Result<ExitStatus> {
        match &mut self.held {
            None => command.status(),
            Some((out, err)) => {
                let ran = command.output()?;
                out.extend_from_slice(&ran.stdout);
                err.extend_from_slice(&ran.stderr);
                Ok(ran.status)
            }
        }
    }

    /// Says what was held.
    fn flush(self) {
        if let Some((out, err)) = self.held {
            self.host.out(&out);
            self.host.err(&err);
        }
    }
}

/// How many jobs at once: `given` (`-j`), else the first of the settings `keys` that is set,
/// else one; zero is one a core, as git. Every one of `keys` is read, and a negative one
/// refused, whether or not it decides, as git reads them all with its configuration.
pub fn job_count(
    given: Option<u32>,
    config: &Config,
    keys: &[&str],
) -> Result<usize, SubmoduleError> {
    let mut configured = None;
    for key in keys {
        let value = config.get_int(key)?;
        if value.is_some_and(|n| n < 0) {
            return Err(SubmoduleError::NegativeJobs((*key).to_owned()));
        }
        configured = configured.or(value.map(|n| n as usize));
    }
    Ok(
        match given.map(|n| n as usize).or(configured).unwrap_or(1) {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        },
    )
}

/// Runs `job` on each of `items`, `jobs` at a time, and gives `then` each item with what its
/// job returned, in the order they end, until `then` says to stop (`false`: no job starts
/// after, those running end).
pub fn for_each<'a, T: Sync, R: Send, E: Send>(
    host: &dyn Host,
    items: &[&'a T],
    jobs: usize,
    job: impl Fn(&'a T, &mut JobOutput) -> Result<R, E> + Sync,
    mut then: impl FnMut(&'a T, R) -> Result<bool, E>,
) -> Result<(), E> {
    if jobs <= 1 || items.len() < 2 {
        for &item in items {
            let done = job(item, &mut JobOutput { host, held: None })?;
            if !then(item, done)? {
                break;
            }
        }
        return Ok(());
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (sender, ended) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(items.len()) {
            let (next, sender, job) = (&next, sender.clone(), &job);
            scope.spawn(move || loop {
                let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&item) = items.get(at) else { break };
                let mut output = JobOutput {
                    host,
                    held: Some((Vec::new(), Vec::new())),
                };
                let done = job(item, &mut output);
                if sender.send((item, output, done)).is_err() {
                    break;
                }
            });
        }
        drop(sender);
        let mut going = true;
        for (item, output, done) in ended {
            output.flush();
            let carry_on = done.and_then(|done| match going {
                true => then(item, done),
                false => Ok(false),
            });
            // On an error or a stop, no job starts after; those running end.
            if !matches!(carry_on, Ok(true)) {
                going = false;
                next.store(items.len(), std::sync::atomic::Ordering::Relaxed);
            }
            carry_on?;
        }
        Ok(())
    })
}
