//! The server's messages (band 2, shown after `remote: `) as git colours their keywords:
//! `color.remote` (else `color.ui`) says whether, `color.remote.<hint|warning|success|error>`
//! which colour, git's own where unset.

use sluice_odb::config::color::{self, BadColor};
use sluice_odb::{Config, ConfigError};
use sluice_wire::remote_text::{Highlight, RemoteText};

/// A colour setting that is none.
#[derive(Debug, thiserror::Error)]
pub enum RemoteColorError {
    /// `color.remote` or `color.ui` is no boolean, `always`, `never` or `auto`.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `color.remote.<slot>` names no colour.
    #[error(transparent)]
    Color(#[from] BadColor),
}

/// How band 2 is shown: on a `terminal` (stderr, not `TERM=dumb`) its lines are cleared to
/// the end, and its keywords coloured as `config` says.
pub fn remote_text(config: &Config, terminal: bool) -> Result<RemoteText, RemoteColorError> {
    let text = RemoteText::new(terminal);
    Ok(match colours_wanted(config, terminal)? {
        true => text.highlighted(highlight(config)?),
        false => text,
    })
}

/// Whether `color.remote` (else `color.ui`) asks for colours: `always`, or `auto` (and any true
/// value, and nothing set) on a terminal.
fn colours_wanted(config: &Config, terminal: bool) -> Result<bool, ConfigError> {
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
fn highlight(config: &Config) -> Result<Highlight, BadColor> {
    let slot = |keyword: &str, default: &str| {
        let value = config.get(&format!("color.remote.{keyword}"));
        color::parse(value.unwrap_or(default))
    };
    Ok(Highlight {
        hint: slot("hint", "yellow")?,
        warning: slot("warning", "bold yellow")?,
        success: slot("success", "bold green")?,
        error: slot("error", "bold red")?,
        reset: color::RESET.to_owned(),
    })
}
