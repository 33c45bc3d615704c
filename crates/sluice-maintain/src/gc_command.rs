//! `git gc` as the command runs it around the work of [`crate::gc()`]: `--auto`'s test and
//! git's words before the work, the run in the background (`--detach`, or `--auto` unless
//! `gc.autoDetach` is false) with its `gc.log`, another gc that holds `gc.pid`, and the
//! warnings said after.

use crate::gc::{gc, past_auto_limits, too_many_loose_objects, GcError, GcOptions, GcOutcome};
use crate::gc_lock::{clear_gc_log, gc_log, last_gc_error, lock_for_gc, start_gc_log, Running};
use crate::PastLimit;
use sluice_object::progress::Progress;
use sluice_repo::Repository;
use std::ffi::OsString;
use std::path::Path;
use std::time::SystemTime;

/// Why the command's gc stopped.
#[derive(Debug, thiserror::Error)]
pub enum GcCommandError {
    /// A setting, `--auto`'s test or the work before a detached gc failed.
    #[error(transparent)]
    Gc(#[from] GcError),
    /// The work failed: [`GcError::step`] names the step git would say failed ("failed to
    /// run repack").
    #[error(transparent)]
    Work(GcError),
    /// Another gc runs on the repository (without `--auto`, which then does nothing).
    #[error("gc is already running on machine '{}' pid {} (use --force if not)", .0.host, .0.pid)]
    AlreadyRunning(Running),
    /// `gc.log` or `gc.pid` could not be read or written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// `gc.pid` could not be written.
    #[error(transparent)]
    Lock(#[from] sluice_odb::lockfile::LockError),
}

/// Where this gc runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcPlace {
    /// As the command was started: it may detach.
    Here {
        /// `--detach` or `--no-detach` as given; `None` for neither.
        detach: Option<bool>,
    },
    /// As the background gc another one started, told which limit `--auto` found past.
    Detached(Option<PastLimit>),
}

/// What runs a gc in the background, and where its words go.
pub trait GcHost {
    /// A line for standard error (with its `warning: ` where it is one).
    fn say(&self, line: &str);

    /// Starts this command again in the background, its standard error into `log`, with
    /// `extra` arguments; false when it could not be started.
    fn detach(&self, log: std::fs::File, extra: &[OsString]) -> bool;
}

/// Runs gc as the command does; `options.auto` asks for `--auto`'s test first. `quiet`
/// (`-q`) leaves out git's words on the automatic packing; `cwd` is where paths are shown
/// from.
pub fn run_gc_command(
    repo: &Repository,
    mut options: GcOptions,
    (place, quiet, cwd): (GcPlace, bool, &Path),
    progress: &dyn Progress,
    host: &dyn GcHost,
) -> Result<(), GcCommandError> {
    let config = repo.config();
    let log_expiry = crate::gc::config_expiry(config, "gc.logexpiry").map_err(GcError::from)?;
    let log_expiry =
        crate::gc::time_of(log_expiry.unwrap_or("1.day.ago")).map_err(GcError::from)?;
    let auto = options.auto;
    // As git: in the background with `--auto` unless `gc.autoDetach` is false, and whenever
    // `--detach` is given.
    let detach = match place {
        GcPlace::Detached(_) => false,
        GcPlace::Here {
            detach: Some(given),
        } => given,
        GcPlace::Here { detach: None } => {
            auto && config
                .get_bool("gc.autodetach")
                .map_err(GcError::from)?
                .unwrap_or(true)
        }
    };
    let mut past = None;
    if auto {
        // Decided here, so that git's words come before the work, as git says them.
        past = match place {
            GcPlace::Detached(past) => past,
            GcPlace::Here { .. } => past_auto_limits(repo)?,
        };
        let Some(past) = past else {
            return Ok(());
        };
        if !quiet && matches!(place, GcPlace::Here { .. }) {
            host.say(match detach {
                true => "Auto packing the repository in background for optimum performance.",
                false => "Auto packing the repository for optimum performance.",
            });
            host.say("See \"git help gc\" for manual housekeeping.");
        }
        options.auto = false;
        options.past = Some(past);
    }
    if detach && detach_gc(repo, (&options, past), (log_expiry, cwd), host)? {
        return Ok(());
    }
    match gc(repo, &options, progress).map_err(GcCommandError::Work)? {
        // Quiet with `--auto`: the other gc does the work.
        GcOutcome::Running(_) if auto => return Ok(()),
        GcOutcome::Running(running) => return Err(GcCommandError::AlreadyRunning(running)),
        GcOutcome::Done { warnings } => {
            for warning in warnings {
                host.say(&format!("warning: {warning}"));
            }
        }
        GcOutcome::NothingToDo => {}
    }
    // Last, as git's gc says it, after what its repack said.
    if auto && too_many_loose_objects(repo)? {
        host.say(
            "warning: There are too many unreachable loose objects; run 'git prune' to remove them.",
        );
    }
    if matches!(place, GcPlace::Here { .. }) {
        clear_gc_log(repo.common_dir());
    }
    Ok(())
}

/// gc started in the background, as git's `--detach`: unless the last detached gc failed (its
/// `gc.log` younger than `log_expiry`, said as git says it) or another gc runs, the refs are
/// packed and the reflogs expired here, then the rest runs in another process with its
/// standard error in `gc.log.lock`. `true` when done here; `false` to go on in the foreground
/// (the other process could not be started).
fn detach_gc(
    repo: &Repository,
    (options, past): (&GcOptions, Option<PastLimit>),
    (log_expiry, cwd): (SystemTime, &Path),
    host: &dyn GcHost,
) -> Result<bool, GcCommandError> {
    let dir = repo.common_dir();
    if let Some(said) = last_gc_error(dir, log_expiry)? {
        let log = gc_log(dir);
        let shown = log.strip_prefix(cwd).unwrap_or(&log);
        host.say(&format!(
            "warning: The last gc run reported the following. Please correct the root cause\n\
             and remove {}\n\
             Automatic cleanup will not be performed until the file is removed.\n\n{said}",
            shown.display()
        ));
        return Ok(true);
    }
    match lock_for_gc(dir, options.force)? {
        Ok(lock) => drop(lock),
        Err(_) => return Ok(true),
    }
    crate::gc::before_repack(repo, options)?;
    let Some((log, file)) = start_gc_log(dir) else {
        return Ok(true);
    };
    let extra = [
        "--detached".into(),
        log.clone().into(),
        PastLimit::word(past).into(),
    ];
    if host.detach(file, &extra) {
        return Ok(true);
    }
    let _ = std::fs::remove_file(&log);
    Ok(false)
}
