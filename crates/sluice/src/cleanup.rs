//! What a signal does. The command's long work is asked to stop (the `Cancel` every library
//! takes) and unwinds, removing what it wrote; the servers Sluice started are stopped first, so
//! that a read waiting on one ends. Work that does not stop within a moment (a read from a
//! server that is not ours, say) is cut short: the temporary files and directories the
//! libraries registered (`sluice_odb::tempfiles`) are removed and the process exits, so Ctrl-C
//! in the middle of receiving a pack leaves nothing behind (git leaves `tmp_pack_*`). A
//! long-running command (the server) can ask to stop gracefully instead.

use sluice_object::cancel::Cancel;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// What a long-running command (the server) does on the first signal instead of exiting.
type Graceful = Box<dyn Fn() + Send>;
static GRACEFUL: Mutex<Option<Graceful>> = Mutex::new(None);

/// The signal that asked the command to stop; 0 for none yet.
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// How long stopped work has to unwind by itself before the process exits anyway.
const UNWIND_GRACE: Duration = Duration::from_secs(2);

/// On the first SIGINT or SIGTERM, run `stop` instead of exiting; a second signal exits.
pub fn on_signal_stop(stop: impl Fn() + Send + 'static) {
    *GRACEFUL.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(stop));
}

/// The signal the command was stopped by, if any.
pub fn signalled() -> Option<i32> {
    Some(SIGNALLED.load(Ordering::SeqCst)).filter(|&signal| signal != 0)
}

/// The end of a command stopped by a signal: whatever is still registered is removed, and the
/// exit code is the shell's for that signal.
pub fn after_signal() -> ExitCode {
    sluice_odb::tempfiles::remove_all();
    ExitCode::from(128 + signalled().unwrap_or(0) as u8)
}

/// Starts the thread that handles SIGINT, SIGTERM, SIGHUP and SIGQUIT by setting `cancel`.
pub fn install_signal_handlers(cancel: Cancel) {
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
            SIGNALLED.store(signal, Ordering::SeqCst);
            // The servers first, so that nothing more arrives and a read from one ends.
            sluice_remote::stop_servers();
            cancel.cancel();
            std::thread::sleep(UNWIND_GRACE);
            sluice_odb::tempfiles::remove_all();
            std::process::exit(128 + signal);
        }
    });
}
