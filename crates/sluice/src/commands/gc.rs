//! `sluice gc [--auto] [--prune=<date>|--no-prune] [-q]`.

use super::Context;
use anyhow::anyhow;
use clap::Args;
use sluice_maintain::{gc, ExpireOptions, GcOptions};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `git gc`'s arguments.
#[derive(Debug, Args)]
pub struct GcArgs {
    /// Only when there are enough loose objects or packs (`gc.auto`, `gc.autoPackLimit`).
    #[arg(long)]
    auto: bool,
    /// Prune unreachable objects older than this (default `gc.pruneExpire`, 2 weeks).
    #[arg(long, value_name = "date", num_args = 0..=1, require_equals = true, default_missing_value = "now")]
    prune: Option<String>,
    /// Prune nothing.
    #[arg(long)]
    no_prune: bool,
    /// Say nothing.
    #[arg(short, long)]
    quiet: bool,
}

/// A date as seconds since the epoch (`never` is the beginning of time).
fn seconds(text: &str) -> anyhow::Result<i64> {
    match text {
        "never" | "false" => Ok(0),
        _ => Ok(sluice_fetch::date::parse_since(Some(text))?.unwrap_or(0)),
    }
}

/// Runs gc.
pub fn run(args: GcArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context
        .repository()?
        .ok_or_else(|| anyhow!("not a git repository (or any of the parent directories): .git"))?;
    let config = repo.config();
    let setting = |key: &str, default: &str| config.get(key).unwrap_or(default).to_owned();
    let prune = match (args.no_prune, args.prune) {
        (true, _) => "never".to_owned(),
        (false, Some(date)) => date,
        (false, None) => setting("gc.pruneexpire", "2.weeks.ago"),
    };
    let prune_expire = match prune.as_str() {
        "never" | "false" => None,
        "now" => Some(SystemTime::now()),
        date => Some(UNIX_EPOCH + Duration::from_secs(seconds(date)?.max(0) as u64)),
    };
    let options = GcOptions {
        auto: args.auto,
        prune_expire,
        reflog: ExpireOptions {
            expire: seconds(&setting("gc.reflogexpire", "90.days.ago"))?,
            expire_unreachable: seconds(&setting("gc.reflogexpireunreachable", "30.days.ago"))?,
        },
    };
    let _ = args.quiet;
    gc(&repo, &options)?;
    Ok(ExitCode::SUCCESS)
}
