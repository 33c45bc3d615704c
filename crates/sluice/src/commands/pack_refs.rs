//! `sluice pack-refs [--all] [--[no-]prune] [--include <pattern>] [--exclude <pattern>]`:
//! loose refs into `packed-refs`.

use super::Context;
use clap::Args;
use sluice_repo::refs::PackRefsOptions;
use std::process::ExitCode;

/// `git pack-refs`'s arguments.
#[derive(Debug, Args)]
pub struct PackRefsArgs {
    /// Pack every ref, not only tags.
    #[arg(long)]
    all: bool,
    /// Remove the loose files of the refs packed (the default).
    #[arg(long, overrides_with = "no_prune")]
    prune: bool,
    /// Keep the loose files of the refs packed.
    #[arg(long, overrides_with = "prune")]
    no_prune: bool,
    /// Pack the refs matching this glob (not the tags then, unless it names them). Repeatable.
    #[arg(long, value_name = "pattern")]
    include: Vec<String>,
    /// Leave the refs matching this glob loose, whatever else says. Repeatable.
    #[arg(long, value_name = "pattern")]
    exclude: Vec<String>,
}

/// Runs pack-refs.
pub fn run(args: PackRefsArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    // As git's: `--all` adds `*` to the patterns.
    let mut includes = args.include;
    if args.all {
        includes.push("*".to_owned());
    }
    let options = PackRefsOptions {
        includes,
        excludes: args.exclude,
        prune: super::either(args.prune, args.no_prune).unwrap_or(true),
    };
    repo.refs().pack(&options, repo.objects())?;
    Ok(ExitCode::SUCCESS)
}
