//! The report of a fetch, printed: git's summary lines (or `--porcelain`'s), grouped under the
//! URL.

use sluice_client::fetch::{NamesFormat, Report, Summary};
use std::io::Write as _;

/// How the ref updates are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReportFormat {
    /// For people, on stderr: `From <url>`, then aligned columns, the names as `fetch.output`
    /// says.
    Human(NamesFormat),
    /// For scripts (`--porcelain`), on stdout: `<flag> <old id> <new id> <local ref>`.
    Porcelain,
}

/// The report: a line per ref in `format`, each after the error that ref's update met, if
/// any (when the first did, before `From`, as git prints them). For people, the remote names'
/// column fits the longest name of a ref stored here, as long as its line fits the terminal.
/// `quiet` keeps the errors alone.
pub(super) fn print_report(
    url: &str,
    lines: &[Report],
    quiet: bool,
    format: ReportFormat,
    summary_width: usize,
) -> std::io::Result<()> {
    let names = match format {
        ReportFormat::Human(names) => names,
        ReportFormat::Porcelain => NamesFormat::Full,
    };
    let width = names.names_width(lines, crate::terminal::columns());
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
            note,
            old,
            new,
            local,
            ..
        } = line;
        match format {
            ReportFormat::Porcelain => writeln!(stdout, "{code} {old} {new} {local}")?,
            ReportFormat::Human(names) => {
                if !headed {
                    eprintln!("From {url}");
                    headed = true;
                }
                let (from, to) = names.names(line);
                eprintln!(" {code} {summary:<summary_width$} {from:<width$} -> {to}{note}");
            }
        }
    }
    stdout.flush()?;
    Ok(())
}
