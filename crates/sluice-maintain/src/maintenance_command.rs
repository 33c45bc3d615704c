//! `git maintenance run` as the command runs it around [`run_tasks`]: the tasks chosen (named
//! with `--task`, else as configured, or as `--schedule` asks), the maintenance lock (a second
//! run says so, unless `--auto` or `--quiet`, and does nothing), the run in the background
//! when `--detach` asks, and git's words on what failed.

use crate::gc_lock::{lock_for_maintenance, MaintenanceLock};
use crate::maintenance::{
    run_tasks, select_tasks, MaintenanceError, Prefetch, Schedule, Task, TaskRefused,
};
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_odb::ConfigError;
use sluice_repo::Repository;
use std::path::Path;

/// Why the command stopped.
#[derive(Debug, thiserror::Error)]
pub enum MaintenanceCommandError {
    /// `--auto` with `--schedule`.
    #[error("use at most one of --auto and --schedule=<frequency>")]
    AutoAndSchedule,
    /// `--schedule` names no frequency.
    #[error("unrecognized --schedule argument '{0}'")]
    UnknownSchedule(String),
    /// A `--task` git refuses: a usage error to git's option parser (exit code 129).
    #[error(transparent)]
    Task(#[from] TaskRefused),
    /// A setting has a value git refuses.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// The maintenance lock could not be taken.
    #[error("{0}")]
    Lock(#[from] std::io::Error),
    /// What the tasks needed before they ran failed.
    #[error("{0}")]
    Maintenance(#[from] MaintenanceError),
}

/// A `maintenance run` command line, its flags merged.
pub struct MaintenanceRequest<'a> {
    /// `--task`, in the order given.
    pub tasks: &'a [String],
    /// `--auto`.
    pub auto: bool,
    /// `--schedule`, as given.
    pub schedule: Option<&'a str>,
    /// `--detach`: the run goes on in the background.
    pub detach: bool,
    /// `-q` (or standard error no terminal): another run holding the lock is not said.
    pub quiet: bool,
    /// Where the lock's path is shown from.
    pub cwd: &'a Path,
    /// Stops the tasks.
    pub cancel: Cancel,
}

/// What runs the command in the background, fetches for it, and where its words go.
pub trait MaintenanceHost {
    /// A line for standard error (with its `warning: ` or `error: `).
    fn say(&self, line: &str);

    /// The prefetch task's fetch of `remote` (see [`Prefetch::prefetch`]).
    fn prefetch(&self, remote: &str) -> bool;

    /// Starts this command again in the background (without `--detach`); false when it
    /// could not be started.
    fn detach(&self) -> bool;
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaintenanceEnd {
    /// Every task done, or another run held the lock, or the run went on in the background.
    Done,
    /// A task failed (git's exit code 1): said to the host.
    TaskFailed,
}

/// Runs `maintenance run` in `repo`; `progress` shows the tasks.
pub fn run_maintenance_command(
    repo: &Repository,
    request: &MaintenanceRequest<'_>,
    progress: &dyn Progress,
    host: &dyn MaintenanceHost,
) -> Result<MaintenanceEnd, MaintenanceCommandError> {
    let schedule = match request.schedule {
        Some(_) if request.auto => return Err(MaintenanceCommandError::AutoAndSchedule),
        Some(given) => match Schedule::named(given) {
            Some(schedule) => Some(schedule),
            None => return Err(MaintenanceCommandError::UnknownSchedule(given.to_owned())),
        },
        None => None,
    };
    let named = Task::named_list(request.tasks)?;
    let tasks = select_tasks(repo, &named, schedule)?;
    let Some(lock) = maintenance_lock(repo, request, host)? else {
        return Ok(MaintenanceEnd::Done);
    };
    if !request.detach {
        return run_selected(repo, (&tasks, request), progress, host);
    }
    // The other run takes the lock once this one has let it go; when it cannot be started,
    // this one goes on in the foreground, the lock taken again.
    drop(lock);
    if host.detach() {
        return Ok(MaintenanceEnd::Done);
    }
    let Some(_lock) = maintenance_lock(repo, request, host)? else {
        return Ok(MaintenanceEnd::Done);
    };
    run_selected(repo, (&tasks, request), progress, host)
}

/// The maintenance lock, as git takes it: one run at a time; a second one says so (but with
/// `--auto`, most likely run by a command the first one runs, or `--quiet`) and does nothing.
fn maintenance_lock(
    repo: &Repository,
    request: &MaintenanceRequest<'_>,
    host: &dyn MaintenanceHost,
) -> Result<Option<MaintenanceLock>, MaintenanceCommandError> {
    match lock_for_maintenance(repo.objects().dir())? {
        Ok(lock) => Ok(Some(lock)),
        Err(path) => {
            if !request.auto && !request.quiet {
                let shown = path.strip_prefix(request.cwd).unwrap_or(&path);
                host.say(&format!(
                    "warning: lock file '{}' exists, skipping maintenance",
                    shown.display()
                ));
            }
            Ok(None)
        }
    }
}

/// Runs `tasks`, saying what failed as git says it.
fn run_selected(
    repo: &Repository,
    (tasks, request): (&[Task], &MaintenanceRequest<'_>),
    progress: &dyn Progress,
    host: &dyn MaintenanceHost,
) -> Result<MaintenanceEnd, MaintenanceCommandError> {
    let (cancel, prefetch) = (&request.cancel, Prefetched(host));
    let run = run_tasks(repo, tasks, request.auto, &prefetch, progress, cancel)?;
    for warning in &run.warnings {
        host.say(&format!("warning: {warning}"));
    }
    for failure in &run.failed {
        for line in failure.error.lines() {
            host.say(&format!("error: {line}"));
        }
        host.say(&format!("error: task '{}' failed", failure.task.name()));
    }
    Ok(match run.failed.is_empty() {
        true => MaintenanceEnd::Done,
        false => MaintenanceEnd::TaskFailed,
    })
}

/// The host's fetch, as the prefetch task takes it.
struct Prefetched<'a>(&'a dyn MaintenanceHost);

impl Prefetch for Prefetched<'_> {
    fn prefetch(&self, remote: &str) -> bool {
        self.0.prefetch(remote)
    }
}
