//! The report of a fetch: git's summary lines (or `--porcelain`'s), grouped under the URL.

use super::update::kind_of;
use sluice_object::ObjectId;
use std::io::Write as _;

/// How the ref updates are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReportFormat {
    /// For people, on stderr: `From <url>`, then aligned columns.
    Full,
    /// For scripts (`--porcelain`), on stdout: `<flag> <old id> <new id> <local ref>`.
    Porcelain,
}

/// The report: a line per ref in `format`, each after the error that ref's update met, if
/// any (when the first did, before `From`, as git prints them). In the full format, the remote
/// names' column fits the longest name of a ref stored here, as long as its line fits 80
/// columns. `quiet` keeps the errors alone.
pub(super) fn print_report(
    url: &str,
    lines: &[Report],
    quiet: bool,
    format: ReportFormat,
) -> anyhow::Result<()> {
    let width = lines
        .iter()
        .filter_map(|report| match report {
            Report::Line(line) => Some(line),
            Report::Warning(_) => None,
        })
        .filter(|l| l.widens && 21 + l.from.len() + l.to.len() <= 80)
        .map(|l| l.from.len())
        .fold(10, usize::max);
    let mut headed = false;
    let mut stdout = std::io::stdout().lock();
    for report in lines {
        let line = match report {
            Report::Line(line) => line,
            Report::Warning(warning) => {
                eprintln!("warning: {warning}");
                continue;
            }
        };
        if let Some(error) = &line.error {
            eprintln!("error: {error}");
        }
        if quiet {
            continue;
        }
        let Summary {
            code,
            summary,
            from,
            to,
            note,
            old,
            new,
            local,
            ..
        } = line;
        match format {
            ReportFormat::Porcelain => writeln!(stdout, "{code} {old} {new} {local}")?,
            ReportFormat::Full => {
                if !headed {
                    eprintln!("From {url}");
                    headed = true;
                }
                eprintln!(" {code} {summary:<17} {from:<width$} -> {to}{note}");
            }
        }
    }
    stdout.flush()?;
    Ok(())
}

/// What fetch says of one ref, in order.
pub(super) enum Report {
    /// Its summary line.
    Line(Summary),
    /// A warning in place of a line, said even under `--quiet`.
    Warning(String),
}

/// One line of the summary fetch prints.
pub(super) struct Summary {
    /// `*` new, ` ` fast-forward, `+` forced, `!` rejected, `-` deleted.
    pub(super) code: char,
    pub(super) summary: String,
    pub(super) from: String,
    pub(super) to: String,
    pub(super) note: String,
    /// Whether its remote name may widen the names' column (a ref stored here).
    pub(super) widens: bool,
    /// Why the update failed, said before the line.
    pub(super) error: Option<String>,
    /// The local ref's value before (the null id for a new one).
    pub(super) old: ObjectId,
    /// Its value after (the null id for a pruned one).
    pub(super) new: ObjectId,
    /// The local ref's full name, or `FETCH_HEAD` for a ref fetched for that alone.
    pub(super) local: String,
}

impl Summary {
    /// The line of a ref fetched for FETCH_HEAD alone, named as git names it: a branch, tag or
    /// remote-tracking branch by its short name, anything else (an object id too) as a branch
    /// by its full name.
    pub(super) fn fetch_head(remote_name: &str, new: ObjectId) -> Summary {
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
