//! `sluice gc [--auto] [--aggressive] [--prune=<date>|--no-prune] [-q]`.

use super::Context;
use anyhow::bail;
use clap::Args;
use sluice_maintain::gc_lock::{
    clear_gc_log, gc_log, keep_gc_log, last_gc_error, lock_for_gc, start_gc_log,
};
use sluice_maintain::{gc, past_auto_limits, GcError, GcOptions, GcOutcome, PastLimit};
use std::path::{Path, PathBuf};
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
        return run_here(args, None, context);
    };
    // No one waits for this process: what it says, a failure too, is for gc.log.
    let code = match run_here(args, Some(&detached.past), context) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("fatal: {}", crate::describe(&error));
            ExitCode::from(128)
        }
    };
    let _ = keep_gc_log(&detached.log);
    Ok(code)
}

/// gc, in this process (`detached`: as the background gc another started, with the limit
/// `--auto` found past) or, when it detaches, in another.
fn run_here(
    args: GcArgs,
    detached: Option<&Option<PastLimit>>,
    context: &Context,
) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let config = repo.config();
    let log_expiry = sluice_maintain::gc::config_expiry(config, "gc.logexpiry")?;
    let log_expiry = sluice_maintain::gc::time_of(log_expiry.unwrap_or("1.day.ago"))?;
    let prune = match args.no_prune {
        true => Some("never"),
        false => args.prune.as_deref(),
    };
    // As git's gc: its repack's and commit-graph's progress on a terminal, none with -q.
    let progress = args.foreground.progress();
    // A refused setting is said as the configuration's error (git's two lines).
    let mut options = match GcOptions::from_config(repo.config(), args.auto, prune) {
        Ok(options) => options,
        Err(GcError::Config(error)) => return Err(error.into()),
        Err(error) => return Err(error.into()),
    };
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
    // As git: in the background with `--auto` unless `gc.autoDetach` is false, and whenever
    // `--detach` is given.
    let detach = match (detached, args.foreground.detach()) {
        (Some(_), _) => false,
        (None, Some(given)) => given,
        (None, None) => args.auto && repo.config().get_bool("gc.autodetach")?.unwrap_or(true),
    };
    let mut past = None;
    if options.auto {
        // Decided here, so that git's words come before the work, as git says them.
        past = match detached {
            Some(past) => *past,
            None => past_auto_limits(&repo)?,
        };
        let Some(past) = past else {
            return Ok(ExitCode::SUCCESS);
        };
        if !args.foreground.is_quiet() && detached.is_none() {
            match detach {
                true => {
                    eprintln!("Auto packing the repository in background for optimum performance.")
                }
                false => eprintln!("Auto packing the repository for optimum performance."),
            }
            eprintln!("See \"git help gc\" for manual housekeeping.");
        }
        options.auto = false;
        options.past = Some(past);
    }
    if detach {
        if let Some(code) = detach_gc(&repo, (&options, past), log_expiry)? {
            return Ok(code);
        }
    }
    let done = match gc(&repo, &options, &progress) {
        Ok(done) => done,
        // As git's gc, whose steps are commands: the step's own error, then which failed.
        Err(error) => match error.step() {
            Some(step) => {
                eprintln!("fatal: {}", crate::describe(&error.into()));
                bail!("failed to run {step}");
            }
            None => return Err(error.into()),
        },
    };
    if let GcOutcome::Running(running) = &done {
        // Quiet with `--auto`: the other gc does the work.
        if args.auto {
            return Ok(ExitCode::SUCCESS);
        }
        bail!(
            "gc is already running on machine '{}' pid {} (use --force if not)",
            running.host,
            running.pid
        );
    }
    if let GcOutcome::Done { warnings } = done {
        for warning in warnings {
            eprintln!("warning: {warning}");
        }
    }
    // Last, as git's gc says it, after what its repack said.
    if args.auto && sluice_maintain::gc::too_many_loose_objects(&repo)? {
        eprintln!(
            "warning: There are too many unreachable loose objects; run 'git prune' to remove them."
        );
    }
    if detached.is_none() {
        clear_gc_log(repo.common_dir());
    }
    Ok(ExitCode::SUCCESS)
}

/// gc started in the background, as git's `--detach`: unless the last detached gc failed (its
/// `gc.log` younger than `log_expiry`, said as git says it) or another gc runs, the refs are
/// packed and the reflogs expired here, then the rest runs in another process with its
/// standard error in `gc.log.lock`. `Some(exit code)` when done here; `None` to go on in the
/// foreground (the other process could not be started).
fn detach_gc(
    repo: &sluice_repo::Repository,
    (options, past): (&GcOptions, Option<PastLimit>),
    log_expiry: std::time::SystemTime,
) -> anyhow::Result<Option<ExitCode>> {
    let dir = repo.common_dir();
    if let Some(said) = last_gc_error(dir, log_expiry)? {
        eprintln!(
            "warning: The last gc run reported the following. Please correct the root cause\n\
             and remove {}\n\
             Automatic cleanup will not be performed until the file is removed.\n\n{said}",
            shown_path(&gc_log(dir)).display()
        );
        return Ok(Some(ExitCode::SUCCESS));
    }
    match lock_for_gc(dir, options.force)? {
        Ok(lock) => drop(lock),
        Err(_) => return Ok(Some(ExitCode::SUCCESS)),
    }
    sluice_maintain::gc::before_repack(repo, options)?;
    let Some((log, file)) = start_gc_log(dir) else {
        return Ok(Some(ExitCode::SUCCESS));
    };
    let extra = [
        "--detached".into(),
        log.clone().into(),
        PastLimit::word(past).into(),
    ];
    if super::detach::run_detached(file.into(), &extra) {
        return Ok(Some(ExitCode::SUCCESS));
    }
    let _ = std::fs::remove_file(&log);
    Ok(None)
}

/// `path` as git names a file of the repository: relative to the working directory when
/// below it.
pub(super) fn shown_path(path: &Path) -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd)
        .map_or_else(|_| path.to_owned(), Path::to_owned)
}
