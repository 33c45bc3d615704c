//! `sluice multi-pack-index [--object-dir=<dir>] (write [--bitmap] [--preferred-pack=<pack>] |
//! verify)`: git's index of every pack in the object directory, written as git writes it
//! (with its bitmap when asked) and checked as git checks it.

use super::Context;
use anyhow::bail;
use clap::{Args, Subcommand};
use sluice_generate::{read_refs_snapshot, write_midx_bitmap_of, MidxBitmap};
use sluice_odb::midx::{verify_midx, write_midx_with, MidxError, MidxOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// `git multi-pack-index`'s arguments.
#[derive(Debug, Args)]
pub struct MultiPackIndexArgs {
    /// The object directory (default: the repository's).
    #[arg(long, value_name = "dir", global = true)]
    object_dir: Option<PathBuf>,
    #[command(subcommand)]
    action: Action,
}

/// `--[no-]progress`, which git takes after the subcommand only (git's maintenance passes
/// `write --no-progress`): progress on a terminal, or always with `--progress`.
#[derive(Debug, Args)]
struct ProgressArgs {
    /// Show progress even when standard error is no terminal.
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    #[arg(long, hide = true)]
    no_progress: bool,
}

impl ProgressArgs {
    fn progress(&self) -> crate::progress::TerminalProgress {
        let shown = crate::progress::enabled(!self.no_progress, self.progress);
        crate::progress::TerminalProgress::new(shown)
    }
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Write the multi-pack-index of every pack.
    Write(WriteArgs),
    /// Check the multi-pack-index against its packs.
    Verify(ProgressArgs),
    /// Delete the packs it finds no object in (but `.keep` ones), and write it again.
    Expire(ProgressArgs),
    /// Write the objects it finds in a batch of its smaller packs as one new pack.
    Repack {
        /// The batch's size in bytes (k, m, g); 0: every pack.
        #[arg(long, value_name = "size", default_value = "0")]
        batch_size: String,
        #[command(flatten)]
        progress: ProgressArgs,
    },
}

/// `multi-pack-index write`'s options.
#[derive(Debug, Args)]
struct WriteArgs {
    /// Also write a reachability bitmap of the multi-pack-index.
    #[arg(long, overrides_with = "no_bitmap")]
    bitmap: bool,
    #[arg(long, hide = true)]
    no_bitmap: bool,
    /// The pack whose copy of an object wins, first in the bitmap's order.
    #[arg(long, value_name = "pack")]
    preferred_pack: Option<String>,
    /// Only the packs named on stdin (`pack-<hash>.idx`), not every pack.
    #[arg(long)]
    stdin_packs: bool,
    /// With `--bitmap`, the tips in this file (an id a line, `+` before a preferred one), as a
    /// repack read them before writing its packs, not the refs as they are now.
    #[arg(long, value_name = "path")]
    refs_snapshot: Option<PathBuf>,
    #[command(flatten)]
    progress: ProgressArgs,
}

/// What a write says, in git's words and with its exit code: the preferred pack it did not
/// find, or why it wrote nothing.
fn said(
    repo: &sluice_repo::Repository,
    written: anyhow::Result<sluice_odb::midx::MidxSummary>,
) -> anyhow::Result<ExitCode> {
    let error = match written {
        Ok(summary) => {
            if let Some(name) = summary.unknown_preferred {
                eprintln!("warning: unknown preferred pack: '{name}'");
            }
            return Ok(ExitCode::SUCCESS);
        }
        Err(error) => error,
    };
    let midx_error = (error.chain()).find_map(|e| e.downcast_ref::<MidxError>());
    match midx_error {
        Some(MidxError::NoPacks) => eprintln!("error: {}", MidxError::NoPacks),
        Some(MidxError::EmptyPreferredPack(path)) => eprintln!(
            "error: cannot select preferred pack {} with no objects",
            super::shown_path(repo, path)
        ),
        _ => return Err(error),
    }
    Ok(ExitCode::from(1))
}

/// Runs multi-pack-index.
pub fn run(args: MultiPackIndexArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let objects = match &args.object_dir {
        Some(dir) => super::object_dir_db(&repo, &context.cwd, dir)?
            .dir()
            .to_owned(),
        None => repo.objects().dir().to_owned(),
    };
    let pack_dir = sluice_odb::pack_dir(&objects);
    match args.action {
        Action::Write(write) if write.bitmap => {
            if args.object_dir.is_some() {
                bail!("sluice multi-pack-index: --bitmap writes the repository's own object directory only");
            }
            let progress = write.progress.progress();
            let request = MidxBitmap {
                preferred_pack: write.preferred_pack,
                packs: write.stdin_packs.then(super::stdin_lines).transpose()?,
                refs_snapshot: (write.refs_snapshot.as_deref())
                    .map(|path| read_refs_snapshot(&context.cwd.join(path), repo.hash()))
                    .transpose()?,
            };
            let written = write_midx_bitmap_of(&repo, request, &progress, &context.cancel);
            return said(&repo, written.map_err(anyhow::Error::from));
        }
        Action::Write(write) => {
            let options = MidxOptions {
                preferred_pack: write.preferred_pack,
                packs: write.stdin_packs.then(super::stdin_lines).transpose()?,
                ..MidxOptions::default()
            };
            let written = write_midx_with(&pack_dir, repo.hash(), &options);
            let written = written.map(|(summary, _)| summary);
            return said(&repo, written.map_err(anyhow::Error::from));
        }
        Action::Expire(_) => {
            sluice_odb::midx_maintain::expire_midx(&pack_dir, repo.hash())?;
        }
        Action::Repack {
            batch_size,
            progress,
        } => {
            let size = sluice_odb::config::parse_int(&batch_size)
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| anyhow::anyhow!("invalid --batch-size '{batch_size}'"))?;
            let progress = progress.progress();
            sluice_generate::repack_midx(&repo, size, &progress, &context.cancel)?;
        }
        Action::Verify(progress) => {
            let progress = progress.progress();
            if let Err(e) = verify_midx(&pack_dir, repo.hash(), &progress) {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
