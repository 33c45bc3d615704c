//! What clone, fetch and fetch-pack share on the command line: the redirect warning, and the
//! server's progress shown after `remote: `.

use sluice_odb::config::color;
use sluice_odb::Config;
use sluice_remote::{ConnectOptions, Connection, Remote};
use sluice_wire::remote_text::{Highlight, RemoteText};
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
    pub(crate) fn new(config: &Config) -> anyhow::Result<RemoteLines> {
        let dumb = std::env::var("TERM").map_or(true, |term| term == "dumb");
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr()) && !dumb;
        let text = RemoteText::new(terminal);
        let text = match colours_wanted(config, terminal)? {
            true => text.highlighted(highlight(config)?),
            false => text,
        };
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

/// Whether `color.remote` (else `color.ui`) asks for colours: `always`, or `auto` (and any true
/// value, and nothing set) on a terminal.
fn colours_wanted(config: &Config, terminal: bool) -> anyhow::Result<bool> {
    let key = ["color.remote", "color.ui"]
        .into_iter()
        .find(|key| config.get(key).is_some());
    let Some(key) = key else {
        return Ok(terminal);
    };
    let value = config.get(key).unwrap_or_default();
    Ok(match value.to_ascii_lowercase().as_str() {
        "never" => false,
        "always" => true,
        "auto" => terminal,
        _ => config.get_bool(key)?.unwrap_or(true) && terminal,
    })
}

/// The keywords' colours: `color.remote.<keyword>`, else git's own.
fn highlight(config: &Config) -> anyhow::Result<Highlight> {
    let slot = |keyword: &str, default: &str| -> anyhow::Result<String> {
        let value = config.get(&format!("color.remote.{keyword}"));
        Ok(color::parse(value.unwrap_or(default))?)
    };
    Ok(Highlight {
        hint: slot("hint", "yellow")?,
        warning: slot("warning", "bold yellow")?,
        success: slot("success", "bold green")?,
        error: slot("error", "bold red")?,
        reset: color::RESET.to_owned(),
    })
}

impl Drop for RemoteLines {
    fn drop(&mut self) {
        let out = self.0.get_mut().unwrap_or_else(|e| e.into_inner()).finish();
        let _ = std::io::stderr().lock().write_all(&out);
    }
}
