//! `sluice reflog expire --all [--expire=<time>] [--expire-unreachable=<time>]`.

use super::Context;
use anyhow::bail;
use clap::{Args, Subcommand};
use sluice_maintain::{expire_all, BadAge, ExpireOptions};
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
        /// Every reflog (the only form this version takes).
        #[arg(long)]
        all: bool,
        /// Entries older than this go (default `gc.reflogExpire`, 90 days).
        #[arg(long, value_name = "time")]
        expire: Option<String>,
        /// Entries older than this go if the ref no longer reaches them (default
        /// `gc.reflogExpireUnreachable`, 30 days).
        #[arg(long, value_name = "time")]
        expire_unreachable: Option<String>,
    },
}

/// Runs reflog.
pub fn run(args: ReflogArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let Action::Expire {
        all,
        expire,
        expire_unreachable,
    } = args.action;
    if !all {
        bail!("reflog expire: only --all is supported");
    }
    let given = (expire.as_deref(), expire_unreachable.as_deref());
    let options = match ExpireOptions::from_config(repo.config(), given) {
        Ok(options) => options,
        // reflog expire words a bad setting as git's configuration does, gc its own way.
        Err(BadAge::Setting { refused, .. }) => return Err((*refused).into()),
        Err(e) => return Err(e.into()),
    };
    expire_all(&repo, &options)?;
    Ok(ExitCode::SUCCESS)
}
