//! `sluice maintenance run [--task=<task>]… [--auto | --schedule=<frequency>] [-q]`: git
//! maintenance's tasks (`prefetch`, `loose-objects`, `incremental-repack`, `gc`,
//! `commit-graph`, `pack-refs`), named or as configured; `register` and `unregister
//! [--force]`, the user's list of repositories to maintain; `start [--scheduler=<scheduler>]`
//! and `stop`, the scheduler that visits them.

use super::Context;
use anyhow::bail;
use clap::{Args, Subcommand};
use sluice_maintain::gc_lock::lock_for_maintenance;
use sluice_maintain::schedule::{self, Scheduled, Scheduler, Schedulers};
use sluice_maintain::{register, run_tasks, select_tasks, unregister, Prefetch, Schedule, Task};
use std::path::PathBuf;
use std::process::ExitCode;

/// `git maintenance`'s arguments.
#[derive(Debug, Args)]
pub struct MaintenanceArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Run maintenance tasks.
    Run {
        /// A task to run (in the order given); without one, those
        /// `maintenance.<task>.enabled` turns on, else gc.
        #[arg(long, value_name = "task")]
        task: Vec<String>,
        /// Each task only when there is enough for it to do.
        #[arg(long)]
        auto: bool,
        /// Only the tasks scheduled at least this often (`hourly`, `daily`, `weekly`).
        #[arg(long, value_name = "frequency")]
        schedule: Option<String>,
        #[command(flatten)]
        foreground: super::Foreground,
    },
    /// Add the repository to the user's `maintenance.repo` list (for a scheduler), and turn
    /// off the maintenance run after commands.
    Register {
        /// Write the list to this file, not the user's global configuration.
        #[arg(long, value_name = "file")]
        config_file: Option<PathBuf>,
    },
    /// Have the user's scheduler run maintenance hourly, daily and weekly (systemd timers
    /// where they work, else cron), and register the repository.
    Start {
        /// `auto`, `crontab`, `systemd-timer` (or `launchctl`, `schtasks`, which are not here).
        #[arg(long, value_name = "scheduler", default_value = "auto")]
        scheduler: String,
    },
    /// Stop every scheduler here from running maintenance (the repositories stay registered).
    Stop,
    /// Take the repository off the `maintenance.repo` list.
    Unregister {
        /// The list is in this file, not the user's global configuration.
        #[arg(long, value_name = "file")]
        config_file: Option<PathBuf>,
        /// No error when the repository is not on the list.
        #[arg(long)]
        force: bool,
    },
}

/// Runs maintenance.
pub fn run(args: MaintenanceArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let (task, auto, schedule, foreground) = match args.action {
        Action::Run {
            task,
            auto,
            schedule,
            foreground,
        } => (task, auto, schedule, foreground),
        Action::Register { config_file } => {
            let file = config_file.map(|f| context.cwd.join(f));
            register(&repo, file.as_deref())?;
            return Ok(ExitCode::SUCCESS);
        }
        Action::Start { scheduler } => {
            let schedulers = Schedulers::of_this_machine();
            // A name git does not know is a usage error, said alone, as git says it.
            let named = match Scheduler::named(&scheduler) {
                Ok(named) => named,
                Err(e) => {
                    eprintln!("error: {e}");
                    return Ok(ExitCode::from(129));
                }
            };
            let scheduler = schedule::resolve(named, &schedulers)?;
            if let Err(e) = schedule::start(&repo, scheduler, &schedulers, &scheduled()?) {
                eprintln!("error: {e}");
                bail!("failed to set up maintenance schedule");
            }
            if let Err(e) = register(&repo, None) {
                eprintln!("warning: failed to add repo to global config: {e}");
            }
            return Ok(ExitCode::SUCCESS);
        }
        Action::Stop => {
            if let Err(e) = schedule::stop(&repo, &Schedulers::of_this_machine(), &scheduled()?) {
                eprintln!("error: {e}");
                bail!("failed to stop maintenance schedule");
            }
            return Ok(ExitCode::SUCCESS);
        }
        Action::Unregister { config_file, force } => {
            let file = config_file.map(|f| context.cwd.join(f));
            unregister(&repo, file.as_deref(), force)?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    let schedule = match schedule.as_deref() {
        Some(_) if auto => bail!("use at most one of --auto and --schedule=<frequency>"),
        Some(given) => match Schedule::named(given) {
            Some(schedule) => Some(schedule),
            None => bail!("unrecognized --schedule argument '{given}'"),
        },
        None => None,
    };
    let named = match Task::named_list(&task) {
        Ok(named) => named,
        // A usage error to git's option parser: said as an error, exit code 129.
        Err(refused) => {
            eprintln!("error: {refused}");
            return Ok(ExitCode::from(129));
        }
    };
    let tasks = select_tasks(&repo, &named, schedule)?;
    let Some(lock) = maintenance_lock(&repo, auto, &foreground)? else {
        return Ok(ExitCode::SUCCESS);
    };
    if foreground.detach() == Some(true) {
        // The other run takes the lock once this one has let it go; when it cannot be
        // started, this one goes on in the foreground, the lock taken again.
        drop(lock);
        if super::detach::run_detached(std::process::Stdio::null(), &[]) {
            return Ok(ExitCode::SUCCESS);
        }
        let Some(_lock) = maintenance_lock(&repo, auto, &foreground)? else {
            return Ok(ExitCode::SUCCESS);
        };
        return run_selected(&repo, (&tasks, auto), &foreground, context);
    }
    let _lock = lock;
    run_selected(&repo, (&tasks, auto), &foreground, context)
}

/// The maintenance lock, as git takes it: one run at a time; a second one says so (but with
/// `--auto`, most likely run by a command the first one runs, or `--quiet`) and does nothing.
fn maintenance_lock(
    repo: &sluice_repo::Repository,
    auto: bool,
    foreground: &super::Foreground,
) -> anyhow::Result<Option<sluice_maintain::gc_lock::MaintenanceLock>> {
    match lock_for_maintenance(repo.objects().dir())? {
        Ok(lock) => Ok(Some(lock)),
        Err(path) => {
            if !auto && !foreground.quiet() {
                let path = super::gc::shown_path(&path);
                eprintln!(
                    "warning: lock file '{}' exists, skipping maintenance",
                    path.display()
                );
            }
            Ok(None)
        }
    }
}

/// Runs `tasks`, saying what failed as git says it.
fn run_selected(
    repo: &sluice_repo::Repository,
    (tasks, auto): (&[Task], bool),
    foreground: &super::Foreground,
    context: &Context,
) -> anyhow::Result<ExitCode> {
    let progress = foreground.progress();
    let prefetch = Fetch {
        quiet: foreground.quiet(),
        cwd: &context.cwd,
    };
    let run = run_tasks(repo, tasks, auto, &prefetch, &progress, &context.cancel)?;
    for warning in &run.warnings {
        eprintln!("warning: {warning}");
    }
    for failure in &run.failed {
        for line in failure.error.lines() {
            eprintln!("error: {line}");
        }
        eprintln!("error: task '{}' failed", failure.task.name());
    }
    Ok(ExitCode::from(u8::from(!run.failed.is_empty())))
}

/// What a scheduler runs: this program, at a minute picked at random.
fn scheduled() -> anyhow::Result<Scheduled> {
    Ok(Scheduled {
        program: std::env::current_exe()?,
        minute: schedule::random_minute(),
    })
}

/// The prefetch task's fetch: `sluice fetch` run as git runs `git fetch` for it, one process
/// per remote.
struct Fetch<'a> {
    quiet: bool,
    cwd: &'a std::path::Path,
}

impl Prefetch for Fetch<'_> {
    fn prefetch(&self, remote: &str) -> bool {
        let Ok(program) = std::env::current_exe() else {
            return false;
        };
        let mut command = std::process::Command::new(program);
        command.current_dir(self.cwd).args([
            "fetch",
            remote,
            "--prefetch",
            "--prune",
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
        ]);
        if self.quiet {
            command.arg("--quiet");
        }
        command.status().is_ok_and(|status| status.success())
    }
}
