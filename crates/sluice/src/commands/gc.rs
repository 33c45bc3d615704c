//! `sluice gc [--auto] [--aggressive] [--prune=<date>|--no-prune] [-q]`.

use super::Context;
use clap::Args;
use sluice_generate::{GivenLimits, PackSizeLimit, Reuse, SearchLimits};
use sluice_maintain::{gc, past_auto_limits, GcOptions, GcOutcome, PastLimit};
use std::process::ExitCode;

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
    /// Search every delta anew with a wide window (`gc.aggressiveWindow`, 250, and
    /// `gc.aggressiveDepth`, 50): slow, for a smaller pack.
    #[arg(long)]
    aggressive: bool,
    #[command(flatten)]
    foreground: super::Foreground,
    /// Repack everything but the largest pack, which stays as it is.
    #[arg(long)]
    keep_largest_pack: bool,
    /// Unreachable objects go into a cruft pack (`gc.cruftPacks`).
    #[arg(long, overrides_with = "no_cruft")]
    cruft: bool,
    /// Unreachable objects stay loose until pruned.
    #[arg(long, overrides_with = "cruft")]
    no_cruft: bool,
    /// The largest new cruft pack, with k, m or g (`gc.maxCruftSize`).
    #[arg(long, value_name = "n")]
    max_cruft_size: Option<String>,
    /// Taken as git takes it: Sluice's gc takes no lock another gc would hold.
    #[arg(long)]
    force: bool,
}

/// Runs gc.
pub fn run(args: GcArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let prune = match args.no_prune {
        true => Some("never"),
        false => args.prune.as_deref(),
    };
    // As git's gc: its repack's and commit-graph's progress on a terminal, none with -q.
    let progress = args.foreground.progress();
    let mut options = GcOptions::from_config(repo.config(), args.auto, prune)?;
    options.cancel = context.cancel.clone();
    options.no_prune = args.no_prune;
    options.keep_largest_pack = args.keep_largest_pack;
    options.cruft = super::either(args.cruft, args.no_cruft).unwrap_or(options.cruft);
    match super::size_option("max-cruft-size", args.max_cruft_size.as_deref()) {
        Ok(given) => options.max_cruft_size = given.or(options.max_cruft_size),
        Err(code) => return Ok(code),
    }
    if args.aggressive {
        let config = repo.config();
        let int = |key: &str, default: i64| -> anyhow::Result<i64> {
            Ok(config.get_int(key)?.unwrap_or(default).max(0))
        };
        let given = GivenLimits {
            window: Some(int("gc.aggressivewindow", 250)? as usize),
            depth: Some(int("gc.aggressivedepth", 50)? as u32),
            ..GivenLimits::default()
        };
        options.window_search = Some(SearchLimits::from_config(config, &given, Reuse::Objects)?);
    }
    if options.auto {
        // Decided here, so that git's words come before the work, as git says them.
        let Some(past) = past_auto_limits(&repo)? else {
            return Ok(ExitCode::SUCCESS);
        };
        if !args.foreground.is_quiet() {
            eprintln!("Auto packing the repository for optimum performance.");
            eprintln!("See \"git help gc\" for manual housekeeping.");
        }
        options.auto = false;
        options.incremental = past == PastLimit::LooseObjects;
    }
    let done = gc(&repo, &options, &progress)?;
    if let GcOutcome::Done {
        bitmap_dropped,
        cruft,
    } = done
    {
        if bitmap_dropped {
            eprintln!("warning: disabling bitmap writing, as some objects are not being packed");
        }
        // What git's pack-objects says, run for the new pack and (git 2.47) the cruft pack,
        // whose limit is the cruft size when there is one.
        let limit = PackSizeLimit::resolve(None, repo.config())?;
        let cruft_limit = PackSizeLimit::resolve(options.max_cruft_size, repo.config())?;
        let raised = [limit, cruft_limit.filter(|_| cruft)];
        for _ in raised.iter().flatten().filter(|limit| limit.raised) {
            eprintln!("warning: minimum pack size limit is 1 MiB");
        }
    }
    Ok(ExitCode::SUCCESS)
}
