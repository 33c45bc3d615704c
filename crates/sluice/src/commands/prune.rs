//! `sluice prune [-n] [-v] [--expire <time>] [<head>…]`: the loose objects nothing reaches (nor
//! the heads named), and stale temporary files, removed.

use super::Context;
use anyhow::bail;
use clap::Args;
use sluice_maintain::{prune, PruneOptions};
use std::process::ExitCode;

/// `git prune`'s arguments.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Say what would be removed; remove nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
    /// Name each object removed.
    #[arg(short, long)]
    verbose: bool,
    /// Only objects older than this (`2.weeks.ago`, `now`, a date).
    #[arg(long, value_name = "time")]
    expire: Option<String>,
    /// Taken as git's gc passes it; a prune shows no progress.
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    #[arg(long, hide = true, overrides_with = "progress")]
    no_progress: bool,
    /// Keep what these reach too.
    #[arg(value_name = "head")]
    heads: Vec<String>,
}

/// Runs prune.
pub fn run(args: PruneArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let expire = (args.expire.as_deref())
        .map(|text| {
            sluice_maintain::gc::time_of(text)
                .map_err(|_| anyhow::anyhow!("malformed expiration date '{text}'"))
        })
        .transpose()?;
    let mut keep = Vec::new();
    for head in &args.heads {
        match sluice_repo::revision::resolve(&repo, head) {
            Some(named) => keep.push(named.id),
            None => bail!("unrecognized argument: {head}"),
        }
    }
    let options = PruneOptions {
        expire,
        dry_run: args.dry_run,
        keep,
        cancel: context.cancel.clone(),
    };
    let pruned = prune(&repo, &options)?;
    if args.dry_run || args.verbose {
        for (id, kind) in &pruned.unreachable {
            println!("{id} {kind}");
        }
    }
    if args.dry_run {
        // As git's prune-packed says what it would remove: the object directory as git
        // names it (`./objects` in a bare repository, `.git/objects` in a work tree).
        let dir = match repo.work_tree() {
            Some(_) => super::shown_path(&repo, repo.objects().dir()).to_string(),
            None => format!("./{}", super::shown_path(&repo, repo.objects().dir())),
        };
        for path in &pruned.packed {
            let inside = path.strip_prefix(repo.objects().dir()).unwrap_or(path);
            println!("rm -f {dir}/{}", inside.display());
        }
    }
    if args.dry_run || args.verbose {
        for (path, dir) in &pruned.temporary {
            let what = if *dir { "directory" } else { "file" };
            println!(
                "Removing stale temporary {what} {}",
                super::shown_path(&repo, path)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
