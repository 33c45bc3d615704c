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
            format!("{line}, done.\n")
        } else {
            format!("{line}\r")
        };
        let _ = self.0.send(Band::Progress, text.as_bytes());
    }
}
