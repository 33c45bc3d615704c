//! What clone, fetch and fetch-pack share on the command line: naming a remote as git records
//! and shows it, git's messages for a remote that cannot be reached, and the server's progress
//! shown after `remote: `.

use super::Context;
use sluice_fetch::{ConnectOptions, Connection, Remote};
use std::io::Write;
use std::sync::Mutex;

/// Parses `text` as git does, a local path made absolute from the working directory.
pub(crate) fn resolve(context: &Context, text: &str) -> anyhow::Result<Remote> {
    Ok(Remote::resolve(&context.cwd, text)?)
}

/// Connects to `remote` (see [`Remote::connect`]), and says where a redirect went.
pub(crate) fn connect(remote: &Remote, options: &ConnectOptions) -> anyhow::Result<Connection> {
    let connection = remote.connect(options)?;
    if let Some(url) = connection.redirected_to() {
        eprintln!("warning: redirecting to {url}");
    }
    Ok(connection)
}

/// Prints band 2 as git does: each line of the server's progress after `remote: `; from any
/// thread.
#[derive(Debug)]
pub(crate) struct RemoteLines {
    at_line_start: Mutex<bool>,
}

impl RemoteLines {
    pub(crate) fn new() -> RemoteLines {
        RemoteLines {
            at_line_start: Mutex::new(true),
        }
    }

    /// Prints `text`, the next bytes of band 2.
    pub(crate) fn show(&self, text: &[u8]) {
        let mut at_line_start = self.at_line_start.lock().unwrap_or_else(|e| e.into_inner());
        let mut err = std::io::stderr().lock();
        for piece in text.split_inclusive(|&b| b == b'\n' || b == b'\r') {
            if *at_line_start {
                let _ = err.write_all(b"remote: ");
            }
            let _ = err.write_all(piece);
            *at_line_start = piece.ends_with(b"\n") || piece.ends_with(b"\r");
        }
    }
}
