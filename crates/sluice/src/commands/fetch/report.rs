//! The report of a fetch, printed: git's summary lines (or `--porcelain`'s), grouped under the
//! URL.

use sluice_client::fetch::{Report, Summary};
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
    summary_width: usize,
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
                eprintln!(" {code} {summary:<summary_width$} {from:<width$} -> {to}{note}");
            }
        }
    }
    stdout.flush()?;
    Ok(())
}
