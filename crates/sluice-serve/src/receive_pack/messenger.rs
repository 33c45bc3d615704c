//! What receive-pack tells the client while it works: its own `error:` and `warning:` lines
//! and its hooks' output, sent on side band 2 as they come (the client prints them as
//! `remote:` lines while the hook still runs), and `receive.keepAlive` packets when a hook
//! is silent for that long, so that no network between drops a connection that is only
//! waiting. Without a side band the lines are kept for receive-pack's own standard error.

use sluice_wire::sideband::{Band, Sideband};
use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

/// git's `receive.keepAlive` default.
const KEEPALIVE: Duration = Duration::from_secs(5);

/// Where messages go during a push.
pub(super) struct Messenger<'a> {
    band: Option<Mutex<&'a mut dyn Write>>,
    kept: Mutex<Vec<String>>,
    keepalive: Option<Duration>,
}

impl<'a> Messenger<'a> {
    /// Messages for `band` when the client took a side band, else kept; keepalives every
    /// `keepalive_seconds` of silence (`receive.keepAlive`; 0: none).
    pub(super) fn new(band: Option<&'a mut dyn Write>, keepalive_seconds: Option<i64>) -> Self {
        let keepalive = match keepalive_seconds {
            None => Some(KEEPALIVE),
            Some(seconds) if seconds <= 0 => None,
            Some(seconds) => Some(Duration::from_secs(seconds as u64)),
        };
        Messenger {
            band: band.map(Mutex::new),
            kept: Mutex::new(Vec::new()),
            keepalive,
        }
    }

    /// One line of receive-pack's own.
    pub(super) fn say(&self, line: String) {
        match &self.band {
            Some(_) => self.send(Band::Progress, format!("{line}\n").as_bytes()),
            None => self.kept().push(line),
        }
    }

    /// A hook's output as it came (partial lines included: the client completes them).
    pub(super) fn relay(&self, bytes: &[u8]) {
        match &self.band {
            Some(_) => self.send(Band::Progress, bytes),
            None => {
                let text = String::from_utf8_lossy(bytes);
                self.kept().extend(text.lines().map(str::to_owned));
            }
        }
    }

    /// How long a hook may be silent before a keepalive goes out.
    pub(super) fn keepalive_after(&self) -> Option<Duration> {
        self.band.as_ref().and(self.keepalive)
    }

    /// An empty packet on the data band, which clients read and drop.
    pub(super) fn keepalive(&self) {
        self.with_band(|sideband| sideband.keepalive());
    }

    /// The lines kept for standard error (none when they went on the side band).
    pub(super) fn into_lines(self) -> Vec<String> {
        self.kept.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn send(&self, band: Band, bytes: &[u8]) {
        self.with_band(|sideband| sideband.send(band, bytes));
    }

    /// Writes on the side band; a client gone is found when the report is written.
    fn with_band(&self, write: impl FnOnce(&Sideband<&mut dyn Write>) -> std::io::Result<()>) {
        if let Some(out) = &self.band {
            let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
            let _ = write(&Sideband::new(&mut **out, 65515));
        }
    }
}
