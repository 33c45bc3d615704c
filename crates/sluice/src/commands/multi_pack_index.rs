//! `sluice multi-pack-index [--object-dir=<dir>] (write | verify)`: git's index of every pack
//! in the object directory, written as git writes it and checked as git checks it.

use super::Context;
use anyhow::anyhow;
use clap::{Args, Subcommand};
use sluice_odb::midx::{verify_midx, write_midx};
use std::path::PathBuf;
use std::process::ExitCode;

/// `git multi-pack-index`'s arguments.
#[derive(Debug, Args)]
pub struct MultiPackIndexArgs {
    /// The object directory (default: the repository's).
    #[arg(long, value_name = "dir")]
    object_dir: Option<PathBuf>,
    /// Accepted as git takes them; the file is written in well under a second.
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    #[arg(long, hide = true)]
    no_progress: bool,
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Write the multi-pack-index of every pack.
    Write,
    /// Check the multi-pack-index against its packs.
    Verify,
}

/// Runs multi-pack-index.
pub fn run(args: MultiPackIndexArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context
        .repository()?
        .ok_or_else(|| anyhow!("not a git repository (or any of the parent directories): .git"))?;
    let objects = match &args.object_dir {
        Some(dir) => context.cwd.join(dir),
        None => repo.objects().dir().to_owned(),
    };
    let pack_dir = objects.join("pack");
    match args.action {
        Action::Write => {
            write_midx(&pack_dir, repo.hash())?;
        }
        Action::Verify => {
            if let Err(e) = verify_midx(&pack_dir, repo.hash()) {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
