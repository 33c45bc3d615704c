//! report-status and report-status-v2 (`gitprotocol-pack`): what receive-pack tells the client
//! of a push once it is done. `unpack ok` (or why the pack was refused), then per command
//! `ok <ref>` or `ng <ref> <why>`, up to a flush. Under v2, an `ok` may be followed by
//! `option` lines telling what a `proc-receive` hook did instead of the update asked for (the
//! ref it moved: `refname`, `old-oid`, `new-oid`, `forced-update`); another `ok` for the same
//! ref starts another such report. This module is the format's one home: the server writes
//! it here and the client reads it here.

use crate::pktline::write_packet;
use sluice_object::{HashKind, ObjectId};

/// What was done for a command instead of the update asked for; what it leaves out is the
/// command's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rewrite {
    /// The ref moved instead.
    pub name: Option<String>,
    /// Its value before.
    pub old: Option<ObjectId>,
    /// Its value after.
    pub new: Option<ObjectId>,
    /// The update lost history.
    pub forced: bool,
}

/// Writes one command's lines (see [`ref_status_lines`]), each a packet.
pub fn write_ref_status(
    out: &mut Vec<u8>,
    name: &str,
    refused: Option<&str>,
    rewrites: &[Rewrite],
) -> std::io::Result<()> {
    for line in ref_status_lines(name, refused, rewrites) {
        write_packet(out, line.as_bytes())?;
    }
    Ok(())
}

/// One command's lines, each ending in a newline: `ok <ref>` or `ng <ref> <why>`; with
/// `rewrites` (v2 only), each as its `option` lines, a rewrite after the first behind an `ok` of
/// its own. git's send-pack gives a remote helper the same lines for a ref taken
/// (`--helper-status`).
pub fn ref_status_lines(name: &str, refused: Option<&str>, rewrites: &[Rewrite]) -> Vec<String> {
    if let Some(why) = refused {
        return vec![format!("ng {name} {why}\n")];
    }
    let mut lines = vec![format!("ok {name}\n")];
    for (k, rewrite) in rewrites.iter().enumerate() {
        if k > 0 {
            lines.push(format!("ok {name}\n"));
        }
        let options = [
            rewrite.name.as_ref().map(|name| format!("refname {name}")),
            rewrite.old.map(|id| format!("old-oid {id}")),
            rewrite.new.map(|id| format!("new-oid {id}")),
            rewrite.forced.then(|| "forced-update".to_owned()),
        ];
        lines.extend((options.into_iter().flatten()).map(|option| format!("option {option}\n")));
    }
    lines
}

/// One command's status, as the report gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefStatus {
    /// The ref the command named.
    pub name: String,
    /// `ng`'s reason (`failed` when it gives none); `None` for `ok`.
    pub refused: Option<String>,
    /// Under v2, what was done instead.
    pub rewrites: Vec<Rewrite>,
}

/// A whole report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Why the pack was refused (`unpack <reason>`); `None` for `unpack ok`.
    pub unpack_error: Option<String>,
    /// The commands' statuses, in the order given (a ref named twice: its last status).
    pub refs: Vec<RefStatus>,
    /// What did not fit, in git's words (the client warns of it and goes on).
    pub complaints: Vec<String>,
}

/// Why a report cannot be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    /// It does not start with `unpack`.
    #[error("remote side did not report unpack status")]
    NoUnpack,
    /// A line is neither `ok`, `ng` nor `option` (git's words).
    #[error("invalid ref status from remote: {0}")]
    BadStatus(String),
}

/// Reads the lines of a report (its packets up to the flush, newlines taken off).
pub fn parse(lines: &[String], hash: HashKind) -> Result<Report, ReportError> {
    let mut lines = lines.iter();
    let unpack_error = match lines.next().and_then(|l| l.strip_prefix("unpack ")) {
        Some("ok") => None,
        Some(reason) => Some(reason.to_owned()),
        None => return Err(ReportError::NoUnpack),
    };
    let mut report = Report {
        unpack_error,
        refs: Vec::new(),
        complaints: Vec::new(),
    };
    // The status the last `ok` named, and whether its next `option` starts a rewrite.
    let mut current: Option<(usize, bool)> = None;
    for line in lines {
        if let Some(option) = line.strip_prefix("option ") {
            match current.as_mut() {
                Some((at, fresh)) => {
                    let rewrites = &mut report.refs[*at].rewrites;
                    if std::mem::take(fresh) {
                        rewrites.push(Rewrite::default());
                    }
                    let rewrite = rewrites.last_mut().expect("a rewrite was just started");
                    apply_option(rewrite, option, hash);
                }
                None => {
                    let complaint = "'option' without a matching 'ok/ng' directive".to_owned();
                    if !report.complaints.contains(&complaint) {
                        report.complaints.push(complaint);
                    }
                }
            }
            continue;
        }
        current = None;
        let (ok, rest) = match (line.strip_prefix("ok "), line.strip_prefix("ng ")) {
            (Some(rest), _) => (true, rest),
            (_, Some(rest)) => (false, rest),
            _ => {
                let head = line.split(' ').next().unwrap_or_default();
                return Err(ReportError::BadStatus(head.to_owned()));
            }
        };
        let (name, why) = match rest.split_once(' ') {
            Some((name, why)) => (name, Some(why)),
            None => (rest, None),
        };
        let at = match report.refs.iter().position(|r| r.name == name) {
            Some(at) => at,
            None => {
                report.refs.push(RefStatus {
                    name: name.to_owned(),
                    refused: None,
                    rewrites: Vec::new(),
                });
                report.refs.len() - 1
            }
        };
        let status = &mut report.refs[at];
        match ok {
            true => {
                status.refused = None;
                current = Some((at, true));
            }
            false => status.refused = Some(why.unwrap_or("failed").to_owned()),
        }
    }
    Ok(report)
}

/// One `option <key> [<value>]`: a value that does not parse leaves the rewrite as it was.
fn apply_option(rewrite: &mut Rewrite, option: &str, hash: HashKind) {
    let (key, value) = match option.split_once(' ') {
        Some((key, value)) => (key, Some(value)),
        None => (option, None),
    };
    let id = |value: Option<&str>| value.and_then(|v| ObjectId::from_hex(hash, v.as_bytes()).ok());
    match key {
        "refname" => rewrite.name = value.map(str::to_owned),
        "old-oid" => rewrite.old = id(value).or(rewrite.old),
        "new-oid" => rewrite.new = id(value).or(rewrite.new),
        "forced-update" => rewrite.forced = true,
        _ => {}
    }
}

#[cfg(test)]
#[path = "report_status_tests.rs"]
mod tests;
