//! `sluice pack-refs [--all] [--[no-]prune]`: loose refs into `packed-refs`.

use super::Context;
use clap::Args;
use sluice_repo::refs::PackRefsOptions;
use std::process::ExitCode;

/// `git pack-refs`'s arguments.
#[derive(Debug, Args)]
pub struct PackRefsArgs {
    /// Pack every ref, not only tags and refs already packed.
    #[arg(long)]
    all: bool,
    /// Remove the loose files of the refs packed (the default).
    #[arg(long, overrides_with = "no_prune")]
    prune: bool,
    /// Keep the loose files of the refs packed.
    #[arg(long, overrides_with = "prune")]
    no_prune: bool,
}

/// Runs pack-refs.
pub fn run(args: PackRefsArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let options = PackRefsOptions {
        all: args.all,
        prune: super::either(args.prune, args.no_prune).unwrap_or(true),
    };
    repo.refs().pack(options, repo.objects())?;
    Ok(ExitCode::SUCCESS)
}
