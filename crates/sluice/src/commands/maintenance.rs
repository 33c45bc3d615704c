//! `sluice maintenance run [--task=<task>]… [--auto] [-q]`: git maintenance's tasks (`gc`,
//! `commit-graph`, `loose-objects`, `pack-refs`), named or as configured; `register` and
//! `unregister [--force]`, the user's list of repositories to maintain.

use super::Context;
use anyhow::bail;
use clap::{Args, Subcommand};
use sluice_maintain::{configured_tasks, register, run_tasks, unregister, Task};
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
    let (task, auto, foreground) = match args.action {
        Action::Run {
            task,
            auto,
            foreground,
        } => (task, auto, foreground),
        Action::Register { config_file } => {
            let file = config_file.map(|f| context.cwd.join(f));
            register(&repo, file.as_deref())?;
            return Ok(ExitCode::SUCCESS);
        }
        Action::Unregister { config_file, force } => {
            let file = config_file.map(|f| context.cwd.join(f));
            unregister(&repo, file.as_deref(), force)?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    let mut tasks = Vec::new();
    for name in &task {
        let Some(task) = Task::named(name) else {
            bail!("'{name}' is not a valid task");
        };
        if tasks.contains(&task) {
            bail!("task '{name}' cannot be selected multiple times");
        }
        tasks.push(task);
    }
    if tasks.is_empty() {
        tasks = configured_tasks(&repo)?;
    }
    let progress = foreground.progress();
    run_tasks(&repo, &tasks, auto, &progress, &context.cancel)?;
    Ok(ExitCode::SUCCESS)
}
