//! Progress for the client, on side band 2, in the shape git's client prints as "remote: …".

use sluice_object::progress::ProgressSink;
use sluice_wire::sideband::{Band, Sideband};
use std::io::Write;
use std::sync::Arc;

/// Sends progress lines on band 2; a client that went away is noticed by the pack writer.
pub(crate) struct BandSink<W: Write>(pub Arc<Sideband<W>>);

impl<W: Write + Send + 'static> ProgressSink for BandSink<W> {
    fn show(&self, line: &str, done: bool) {
        let text = if done {
            format!("{line}\n")
        } else {
            format!("{line}\r")
        };
        let _ = self.0.send(Band::Progress, text.as_bytes());
    }
}

/// Passes on, as they come, the lines of each phase whose title starts with one of `titles`
/// (updates ending in `\r`, the last in `\n`), unless `silenced` is set by then: receive-pack
/// relays index-pack's "Resolving deltas" to the client while it runs, as git's copies
/// index-pack's standard error to the side band. The lines go through a channel to whoever
/// writes the side band, which the sink (held by a progress shared between threads) cannot
/// borrow.
pub(crate) struct LiveLines {
    titles: &'static [&'static str],
    lines: std::sync::Mutex<std::sync::mpsc::Sender<Vec<u8>>>,
    silenced: Arc<std::sync::atomic::AtomicBool>,
}

impl LiveLines {
    pub(crate) fn new(
        titles: &'static [&'static str],
        lines: std::sync::mpsc::Sender<Vec<u8>>,
        silenced: Arc<std::sync::atomic::AtomicBool>,
    ) -> Self {
        LiveLines {
            titles,
            lines: std::sync::Mutex::new(lines),
            silenced,
        }
    }
}

impl ProgressSink for LiveLines {
    fn show(&self, line: &str, done: bool) {
        let silenced = self.silenced.load(std::sync::atomic::Ordering::Relaxed);
        if silenced || !self.titles.iter().any(|t| line.starts_with(t)) {
            return;
        }
        let end = if done { '\n' } else { '\r' };
        if let Ok(lines) = self.lines.lock() {
            let _ = lines.send(format!("{line}{end}").into_bytes());
        }
    }
}
