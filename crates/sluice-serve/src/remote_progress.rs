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

/// Keeps the line that ends each phase whose title starts with one of `titles`, for the
/// client later: receive-pack relays index-pack's "Resolving deltas" (git runs it with
/// `--show-resolving-progress`) with its other messages once the pack is in, the updates in
/// between left out.
#[derive(Clone)]
pub(crate) struct FinishedLines {
    titles: &'static [&'static str],
    lines: Arc<std::sync::Mutex<Vec<String>>>,
}

impl FinishedLines {
    pub(crate) fn new(titles: &'static [&'static str]) -> Self {
        FinishedLines {
            titles,
            lines: Arc::default(),
        }
    }

    /// The lines kept so far.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl ProgressSink for FinishedLines {
    fn show(&self, line: &str, done: bool) {
        if done && self.titles.iter().any(|t| line.starts_with(t)) {
            if let Ok(mut lines) = self.lines.lock() {
                lines.push(line.to_owned());
            }
        }
    }
}
