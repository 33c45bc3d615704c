//! `sluice gc [--auto] [--aggressive] [--prune=<date>|--no-prune] [-q]`.

use super::Context;
use anyhow::bail;
use clap::Args;
use sluice_maintain::gc_lock::keep_gc_log;
use sluice_maintain::{
    run_gc_command, GcCommandError, GcError, GcHost, GcOptions, GcPlace, PastLimit,
};
use std::path::PathBuf;
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
    /// Run even when `gc.pid` says another gc is running.
    #[arg(long)]
    force: bool,
    /// Set by a gc for the gc it detaches: its standard error, kept as `gc.log` when it says
    /// anything, and which limit `--auto` found past (so that neither the test nor the
    /// `pre-auto-gc` hook runs twice).
    #[arg(long, hide = true, num_args = 2, value_names = ["log", "past"])]
    detached: Vec<String>,
}

/// What a gc detached by another was told: where its standard error goes, and which limit
/// `--auto` found past.
struct Detached {
    log: PathBuf,
    past: Option<PastLimit>,
}

impl Detached {
    fn of(args: &GcArgs) -> Option<Detached> {
        let [log, past] = &args.detached[..] else {
            return None;
        };
        Some(Detached {
            log: PathBuf::from(log),
            past: PastLimit::from_word(past),
        })
    }
}

/// Runs gc.
pub fn run(args: GcArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let Some(detached) = Detached::of(&args) else {
        return run_here(args, GcPlace::Here { detach: None }, context);
    };
    // No one waits for this process: what it says, a failure too, is for gc.log.
    let code = match run_here(args, GcPlace::Detached(detached.past), context) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("fatal: {}", crate::describe(error.as_ref()));
            ExitCode::from(128)
        }
    };
    let _ = keep_gc_log(&detached.log);
    Ok(code)
}

/// gc, in this process (`place`: as started, or as the background gc another started) or,
/// when it detaches, in another.
fn run_here(args: GcArgs, mut place: GcPlace, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let prune = match args.no_prune {
        true => Some("never"),
        false => args.prune.as_deref(),
    };
    // As git's gc: its repack's and commit-graph's progress on a terminal, none with -q.
    let progress = args.foreground.progress();
    let mut options = GcOptions::from_config(repo.config(), args.auto, prune).map_err(said)?;
    options.cancel = context.cancel.clone();
    options.force = args.force;
    options.no_prune = args.no_prune;
    options.keep_largest_pack = args.keep_largest_pack;
    options.cruft = super::either(args.cruft, args.no_cruft).unwrap_or(options.cruft);
    match super::size_option("max-cruft-size", args.max_cruft_size.as_deref()) {
        Ok(given) => options.max_cruft_size = given.or(options.max_cruft_size),
        Err(code) => return Ok(code),
    }
    if args.aggressive {
        options.window_search = Some(sluice_maintain::gc::aggressive_search(repo.config())?);
    }
    if let GcPlace::Here { detach } = &mut place {
        *detach = args.foreground.detach();
    }
    let how = (place, args.foreground.is_quiet(), context.cwd.as_path());
    match run_gc_command(&repo, options, how, &progress, &GcStderr) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // As git's gc, whose steps are commands: the step's own error, then which failed.
        Err(GcCommandError::Work(error)) => match error.step() {
            Some(step) => {
                eprintln!("fatal: {}", crate::describe(&error));
                bail!("failed to run {step}");
            }
            None => Err(error.into()),
        },
        Err(GcCommandError::Gc(error)) => Err(said(error)),
        Err(error) => Err(error.into()),
    }
}

/// A refused setting is said as the configuration's error (git's two lines): its own error,
/// not one that only wraps it, where the command's error report looks for it.
fn said(error: GcError) -> anyhow::Error {
    match error {
        GcError::Config(error) => error.into(),
        error => error.into(),
    }
}

/// gc's words on standard error, and its run in the background.
struct GcStderr;

impl GcHost for GcStderr {
    fn say(&self, line: &str) {
        eprintln!("{line}");
    }

    fn detach(&self, log: std::fs::File, extra: &[std::ffi::OsString]) -> bool {
        super::detach::run_detached(log.into(), extra)
    }
}
