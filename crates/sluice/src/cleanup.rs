//! What a signal does: the temporary files and directories the libraries registered
//! (`sluice_odb::tempfiles`) are removed and the servers Sluice started are stopped before the
//! process exits, so Ctrl-C in the middle of receiving a pack leaves nothing behind (git
//! leaves `tmp_pack_*`). A long-running command (the server) can ask to stop gracefully instead.

use std::sync::Mutex;

/// What a long-running command (the server) does on the first signal instead of exiting.
type Graceful = Box<dyn Fn() + Send>;
static GRACEFUL: Mutex<Option<Graceful>> = Mutex::new(None);

/// On the first SIGINT or SIGTERM, run `stop` instead of exiting; a second signal exits.
pub fn on_signal_stop(stop: impl Fn() + Send + 'static) {
    *GRACEFUL.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(stop));
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
            sluice_remote::stop_servers();
            sluice_odb::tempfiles::remove_all();
            std::process::exit(128 + signal);
        }
    });
}
