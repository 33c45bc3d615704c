//! `sluice reflog expire [--expire=<time>] [--expire-unreachable=<time>] [--rewrite]
//! [--updateref] [--dry-run | -n] [--verbose] [--all | <refs>…]`.

use super::Context;
use clap::{Args, Subcommand};
use sluice_maintain::{expire_all_with, expire_named, BadAge, ExpireFlags, ExpireOptions, Judged};
use std::process::ExitCode;

/// `git reflog`'s arguments (the `expire` form).
#[derive(Debug, Args)]
pub struct ReflogArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Drop old reflog entries.
    Expire {
        /// Every reflog, of every worktree.
        #[arg(long)]
        all: bool,
        /// Entries older than this go (default `gc.reflogExpire`, 90 days).
        #[arg(long, value_name = "time")]
        expire: Option<String>,
        /// Entries older than this go if the ref no longer reaches them (default
        /// `gc.reflogExpireUnreachable`, 30 days).
        #[arg(long, value_name = "time")]
        expire_unreachable: Option<String>,
        /// Judge every entry, remove none.
        #[arg(short = 'n', long)]
        dry_run: bool,
        /// Say of each entry whether it is kept or pruned.
        #[arg(long)]
        verbose: bool,
        /// Give each kept entry the new id of the entry kept before it as its old id.
        #[arg(long)]
        rewrite: bool,
        /// Set each ref to the new id of its last kept entry.
        #[arg(long)]
        updateref: bool,
        /// The refs whose reflogs are expired (without --all).
        #[arg(value_name = "refs")]
        refs: Vec<String>,
    },
}

/// Runs reflog.
pub fn run(args: ReflogArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let Action::Expire {
        all,
        expire,
        expire_unreachable,
        dry_run,
        verbose,
        rewrite,
        updateref,
        refs,
    } = args.action;
    let given = (expire.as_deref(), expire_unreachable.as_deref());
    let options = match ExpireOptions::from_config(repo.config(), given) {
        Ok(options) => options,
        // reflog expire words a bad setting as git's configuration does, gc its own way.
        Err(BadAge::Setting { refused, .. }) => return Err((*refused).into()),
        Err(e) => return Err(e.into()),
    };
    let flags = ExpireFlags {
        dry_run,
        rewrite,
        update_ref: updateref,
    };
    let (judged, nowhere) = match all {
        true => (expire_all_with(&repo, &options, flags)?, Vec::new()),
        false => {
            let expired = expire_named(&repo, &refs, &options, flags)?;
            (expired.judged, expired.nowhere)
        }
    };
    if verbose {
        // As git's: a dry run over --all says what it "would prune"; over named refs, "prune".
        let pruned = match dry_run && all {
            true => "would prune",
            false => "prune",
        };
        for Judged { kept, message } in judged {
            let verdict = if kept { "keep" } else { pruned };
            println!("{verdict} {message}");
        }
    }
    for name in &nowhere {
        eprintln!("error: {name} points nowhere!");
    }
    // git's status of a name that points nowhere: -1.
    Ok(ExitCode::from(if nowhere.is_empty() { 0 } else { 255 }))
}
