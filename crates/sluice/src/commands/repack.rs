//! `sluice repack -a -d [-b]`: everything the refs reach in one new pack, the old packs and
//! loose copies removed once it is in place, and its reachability bitmap.

use super::Context;
use anyhow::{anyhow, bail};
use clap::Args;
use sluice_generate::{repack_all_with, RepackOptions};
use std::process::ExitCode;

/// `git repack`'s arguments (the `-a -d` form).
#[derive(Debug, Args)]
pub struct RepackArgs {
    /// Pack everything reachable into one pack.
    #[arg(short = 'a')]
    all: bool,
    /// Then remove the packs and loose objects it replaces.
    #[arg(short = 'd')]
    delete: bool,
    /// Write a reachability bitmap (by default in bare repositories, `repack.writeBitmaps`).
    #[arg(short = 'b', long = "write-bitmap-index", overrides_with = "no_bitmap")]
    bitmap: bool,
    #[arg(long = "no-write-bitmap-index", hide = true)]
    no_bitmap: bool,
    /// Say nothing.
    #[arg(short, long)]
    quiet: bool,
}

/// Runs repack.
pub fn run(args: RepackArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context
        .repository()?
        .ok_or_else(|| anyhow!("not a git repository (or any of the parent directories): .git"))?;
    if !(args.all && args.delete) {
        bail!("sluice repack: only -a -d is supported");
    }
    let bare = repo.work_tree().is_none();
    let configured = repo.config().get_bool("repack.writebitmaps")?;
    let write_bitmap = match (args.bitmap, args.no_bitmap) {
        (true, _) => true,
        (_, true) => false,
        _ => configured.unwrap_or(bare),
    };
    let options = RepackOptions {
        write_bitmap,
        unpack_unreachable: None,
    };
    repack_all_with(&repo, &options)?;
    Ok(ExitCode::SUCCESS)
}
