//! `sluice update-server-info`: the files dumb HTTP clients read.

use super::Context;
use clap::Args;
use std::process::ExitCode;

/// `git update-server-info`'s arguments.
#[derive(Debug, Args)]
pub struct UpdateServerInfoArgs {
    /// Rewrite the files even when unchanged (they are always rewritten here).
    #[arg(short, long)]
    force: bool,
}

/// Runs update-server-info.
pub fn run(args: UpdateServerInfoArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let _ = args.force;
    let repo = context.require_repository()?;
    sluice_repo::server_info::update_server_info(&repo)?;
    Ok(ExitCode::SUCCESS)
}
