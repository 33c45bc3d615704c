//! What clone, fetch and fetch-pack share on the command line: the redirect warning, and the
//! server's progress shown after `remote: `.

use sluice_odb::Config;
use sluice_remote::remote_colors::RemoteColorError;
use sluice_remote::{ConnectOptions, Connection, Remote};
use sluice_wire::remote_text::RemoteText;
use std::io::Write;
use std::sync::Mutex;

/// Connects to `remote` (see [`Remote::connect`]), and says where a redirect went.
pub(crate) fn connect(remote: &Remote, options: &ConnectOptions) -> anyhow::Result<Connection> {
    let connection = remote.connect(options)?;
    if let Some(url) = connection.redirected_to() {
        eprintln!("warning: redirecting to {url}");
    }
    Ok(connection)
}

/// Prints band 2 as git shows it (see [`RemoteText`]); from any thread.
#[derive(Debug)]
pub(crate) struct RemoteLines(Mutex<RemoteText>);

impl RemoteLines {
    /// Band 2 on stderr, its keywords coloured as `config` says (`color.remote`).
    pub(crate) fn new(config: &Config) -> Result<RemoteLines, RemoteColorError> {
        let dumb = std::env::var("TERM").map_or(true, |term| term == "dumb");
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr()) && !dumb;
        let text = sluice_remote::remote_colors::remote_text(config, terminal)?;
        Ok(RemoteLines(Mutex::new(text)))
    }

    /// Prints the lines `text`, the next packet of band 2, completes; nothing (the band's end)
    /// ends a line the server left open.
    pub(crate) fn show(&self, text: &[u8]) {
        let mut remote = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let out = match text.is_empty() {
            true => remote.finish(),
            false => remote.lines(text),
        };
        let _ = std::io::stderr().lock().write_all(&out);
    }
}

impl Drop for RemoteLines {
    fn drop(&mut self) {
        let out = self.0.get_mut().unwrap_or_else(|e| e.into_inner()).finish();
        let _ = std::io::stderr().lock().write_all(&out);
    }
}
