//! What a fetch says of each ref, as data for the command line to print in git's format:
//! summary lines (or `--porcelain`'s fields), and warnings in their place.

use sluice_object::ObjectId;

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
    /// JobOutput after the names (`  (forced update)`).
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

/// What git calls a remote ref in the report and FETCH_HEAD, and its short name: a branch, a
/// tag or a remote-tracking branch; `None` for any other ref.
pub fn kind_of(name: &str) -> Option<(&'static str, &str)> {
    [
        ("refs/heads/", "branch"),
        ("refs/tags/", "tag"),
        ("refs/remotes/", "remote-tracking branch"),
    ]
    .into_iter()
    .find_map(|(prefix, kind)| Some((kind, name.strip_prefix(prefix)?)))
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
