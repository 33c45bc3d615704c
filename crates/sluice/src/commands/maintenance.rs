//! `sluice maintenance run [--task=<task>]… [--auto | --schedule=<frequency>] [-q]`: git
//! maintenance's tasks (`prefetch`, `loose-objects`, `incremental-repack`, `gc`,
//! `commit-graph`, `pack-refs`), named or as configured; `register` and `unregister
//! [--force]`, the user's list of repositories to maintain; `start [--scheduler=<scheduler>]`
//! and `stop`, the scheduler that visits them.

use super::Context;
use anyhow::bail;
use clap::{Args, Subcommand};
use sluice_maintain::schedule::{self, Scheduled, Scheduler, Schedulers};
use sluice_maintain::{
    register, run_maintenance_command, unregister, MaintenanceCommandError, MaintenanceEnd,
    MaintenanceHost, MaintenanceRequest,
};
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
    // git shows the lock's path from the process's working directory.
    let here = std::env::current_dir().unwrap_or_default();
    let request = MaintenanceRequest {
        tasks: &task,
        auto,
        schedule: schedule.as_deref(),
        detach: foreground.detach() == Some(true),
        quiet: foreground.quiet(),
        cwd: &here,
        cancel: context.cancel.clone(),
    };
    let host = MaintenanceStderr {
        quiet: foreground.quiet(),
        cwd: &context.cwd,
    };
    match run_maintenance_command(&repo, &request, &foreground.progress(), &host) {
        Ok(MaintenanceEnd::Done) => Ok(ExitCode::SUCCESS),
        Ok(MaintenanceEnd::TaskFailed) => Ok(ExitCode::from(1)),
        // A usage error to git's option parser: said as an error, exit code 129.
        Err(MaintenanceCommandError::Task(refused)) => {
            eprintln!("error: {refused}");
            Ok(ExitCode::from(129))
        }
        Err(error) => Err(error.into()),
    }
}

/// What a scheduler runs: this program, at a minute picked at random.
fn scheduled() -> anyhow::Result<Scheduled> {
    Ok(Scheduled {
        program: std::env::current_exe()?,
        minute: schedule::random_minute(),
    })
}

/// The run's words on standard error, its run in the background, and the prefetch task's
/// fetch: `sluice fetch` run as git runs `git fetch` for it, one process per remote.
struct MaintenanceStderr<'a> {
    quiet: bool,
    cwd: &'a std::path::Path,
}

impl MaintenanceHost for MaintenanceStderr<'_> {
    fn say(&self, line: &str) {
        eprintln!("{line}");
    }

    fn detach(&self) -> bool {
        super::detach::run_detached(std::process::Stdio::null(), &[])
    }

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
