//! What a fetch says of each ref, as data for the command line to print in git's format:
//! summary lines (or `--porcelain`'s fields), and warnings in their place.

use sluice_object::ObjectId;
use sluice_odb::{Config, ConfigError};
use sluice_repo::refs::kind_of;

/// What fetch says of one ref, in order.
#[derive(Debug)]
pub enum Report {
    /// Its summary line.
    Line(Summary),
    /// A warning in place of a line, said even under `--quiet`.
    Warning(String),
}

/// One line of the summary fetch prints.
#[derive(Debug)]
pub struct Summary {
    /// `*` new, ` ` fast-forward, `+` forced, `!` rejected, `-` deleted.
    pub code: char,
    /// What happened (`[new branch]`, `1234567..89abcde`, `[rejected]`).
    pub summary: String,
    /// The remote's name for the ref, shortened.
    pub from: String,
    /// The local name, shortened.
    pub to: String,
    /// What follows the names (`  (forced update)`).
    pub note: String,
    /// Whether its remote name may widen the names' column (a ref stored here).
    pub widens: bool,
    /// Why the update failed, said before the line.
    pub error: Option<String>,
    /// The local ref's value before (the null id for a new one).
    pub old: ObjectId,
    /// Its value after (the null id for a pruned one).
    pub new: ObjectId,
    /// The local ref's full name, or `FETCH_HEAD` for a ref fetched for that alone.
    pub local: String,
}

impl Summary {
    /// The line of a ref fetched for FETCH_HEAD alone, named as git names it: a branch, tag or
    /// remote-tracking branch by its short name, anything else (an object id too) as a branch
    /// by its full name.
    pub fn fetch_head(remote_name: &str, new: ObjectId) -> Summary {
        let (summary, from) = kind_of(remote_name).unwrap_or(("branch", remote_name));
        Summary {
            code: '*',
            summary: summary.to_owned(),
            from: from.to_owned(),
            to: "FETCH_HEAD".to_owned(),
            note: String::new(),
            widens: false,
            error: None,
            old: new.kind().null_id(),
            new,
            local: "FETCH_HEAD".to_owned(),
        }
    }
}

/// A ref's name in the report: without `refs/heads/`, `refs/tags/` or `refs/remotes/`.
pub fn short_name(name: &str) -> &str {
    for prefix in ["refs/heads/", "refs/tags/", "refs/remotes/"] {
        if let Some(rest) = name.strip_prefix(prefix) {
            return rest;
        }
    }
    name
}

/// How the report shows each ref's two names (`fetch.output`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamesFormat {
    /// `main -> origin/main`.
    Full,
    /// `main -> origin/*`: the part of one name the other holds is a `*`.
    Compact,
}

impl NamesFormat {
    /// `fetch.output`: `full` (the default) or `compact`; anything else refused with git's words.
    pub fn from_config(config: &Config) -> Result<NamesFormat, ConfigError> {
        match config.get("fetch.output") {
            None => Ok(NamesFormat::Full),
            Some(value) if value.eq_ignore_ascii_case("full") => Ok(NamesFormat::Full),
            Some(value) if value.eq_ignore_ascii_case("compact") => Ok(NamesFormat::Compact),
            Some(value) => Err(ConfigError::Invalid {
                key: "fetch.output".to_owned(),
                value: value.to_owned(),
            }),
        }
    }

    /// The remote's and the local name of `line`, as shown.
    pub fn names(self, line: &Summary) -> (String, String) {
        let (from, to) = (line.from.as_str(), line.to.as_str());
        if self == NamesFormat::Full {
            return (from.to_owned(), to.to_owned());
        }
        if from == to {
            return (from.to_owned(), "*".to_owned());
        }
        // The remote's name within the local one, else the local name within the remote's.
        match starred(to, from) {
            Some(to) => (from.to_owned(), to),
            None => (
                starred(from, to).unwrap_or_else(|| from.to_owned()),
                to.to_owned(),
            ),
        }
    }

    /// The width of the remote names' column for `lines` on a terminal `columns` wide: the
    /// longest remote name of a ref stored here, at least 10, leaving out the lines too long
    /// to line up (their local name counts too in the full format; in the compact one the
    /// line must fit two thirds of the width).
    pub fn names_width(self, lines: &[Report], columns: usize) -> usize {
        let (room, counts_local) = match self {
            NamesFormat::Full => (columns, true),
            NamesFormat::Compact => (columns * 2 / 3, false),
        };
        // The flag and summary take 21 columns, the arrow 4.
        let fits = |line: &Summary| {
            let local = if counts_local { width(&line.to) } else { 0 };
            21 + width(&line.from) + 4 + local < room
        };
        (lines.iter())
            .filter_map(|report| match report {
                Report::Line(line) if line.widens && fits(line) => Some(width(&line.from)),
                _ => None,
            })
            .fold(10, usize::max)
    }
}

/// The columns `name` takes.
fn width(name: &str) -> usize {
    name.chars().count()
}

/// `name` with `part` in it starred: where `name` ends with it, else where it first appears,
/// as long as it stands between slashes (or an end); `None` where it does not.
fn starred(name: &str, part: &str) -> Option<String> {
    let at = match name.ends_with(part) {
        true => name.len() - part.len(),
        false => name.find(part)?,
    };
    let after = &name[at + part.len()..];
    let whole =
        (at == 0 || name[..at].ends_with('/')) && (after.is_empty() || after.starts_with('/'));
    whole.then(|| format!("{}*{after}", &name[..at]))
}
