//! Temporary files that must not outlive an interrupted command. Each is registered while it
//! exists; a signal thread removes every registered file before the process exits, so Ctrl-C
//! in the middle of receiving a pack leaves nothing behind (git leaves `tmp_pack_*`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Directories a command created and removes whole if it is interrupted (a clone's).
static PENDING_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// What a long-running command (the server) does on the first signal instead of exiting.
type Graceful = Box<dyn Fn() + Send>;
static GRACEFUL: Mutex<Option<Graceful>> = Mutex::new(None);

/// On the first SIGINT or SIGTERM, run `stop` instead of exiting; a second signal exits.
pub fn on_signal_stop(stop: impl Fn() + Send + 'static) {
    *GRACEFUL.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(stop));
}

/// Removes `path` if the process is killed by a signal before [`forget`] is called.
pub fn register(path: &Path) {
    PENDING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(path.to_owned());
}

/// `path` was renamed into place or removed: it no longer needs cleaning up.
pub fn forget(path: &Path) {
    PENDING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|p| p != path);
}

/// Removes the directory `path` with everything in it if the process is killed by a signal
/// before [`forget_dir`] is called.
pub fn register_dir(path: &Path) {
    PENDING_DIRS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(path.to_owned());
}

/// The directory is finished (or already removed): leave it on a signal.
pub fn forget_dir(path: &Path) {
    PENDING_DIRS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|p| p != path);
}

/// Starts the thread that cleans up on SIGINT, SIGTERM, SIGHUP and SIGQUIT.
pub fn install_signal_handlers() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT])
    else {
        return;
    };
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if let Some(stop) = GRACEFUL.lock().unwrap_or_else(|e| e.into_inner()).take() {
                stop();
                continue;
            }
            // The servers first, so that nothing more arrives while files are removed.
            sluice_fetch::stop_servers();
            let pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
            for path in pending.iter() {
                let _ = std::fs::remove_file(path);
            }
            for dir in PENDING_DIRS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
            {
                let _ = std::fs::remove_dir_all(dir);
            }
            std::process::exit(128 + signal);
        }
    });
}
