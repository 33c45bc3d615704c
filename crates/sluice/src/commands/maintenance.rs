//! `sluice maintenance run [--task=<task>]… [--auto] [-q]`: git maintenance's tasks (`gc`,
//! `commit-graph`, `loose-objects`, `pack-refs`), named or as configured.

use super::Context;
use anyhow::bail;
use clap::{Args, Subcommand};
use sluice_maintain::{configured_tasks, run_tasks, Task};
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
}

/// Runs maintenance.
pub fn run(args: MaintenanceArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let Action::Run {
        task,
        auto,
        foreground,
    } = args.action;
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
