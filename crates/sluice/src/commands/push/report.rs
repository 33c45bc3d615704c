//! The report of a push, printed as git prints it: `To <url>`, a line per ref (up-to-date ones
//! under `-v`, then those that moved, then those refused), the error and the one hint that
//! fits, or `--porcelain`'s tab-separated lines and `Done`.

use sluice_client::fetch::short_name;
use sluice_push::{PushOutcome, RefStatus};
use std::io::Write;
use std::process::ExitCode;

/// How much the report says, and for which command.
pub(super) struct ReportStyle {
    pub(super) verbose: bool,
    pub(super) quiet: bool,
    pub(super) porcelain: bool,
    /// `send-pack`: refusals end it with 255 and no error line or hint.
    pub(super) send_pack: bool,
}

/// Prints the report and returns git's exit code for it.
pub(super) fn print(
    outcome: &PushOutcome,
    url: &str,
    args: &ReportStyle,
) -> anyhow::Result<ExitCode> {
    if outcome.sent_unsigned {
        eprintln!("warning: not sending a push certificate since the receiving end does not support --signed push");
    }
    if let Some(reason) = &outcome.unpack_error {
        eprintln!("error: remote unpack failed: {reason}");
    }
    let refs = &outcome.refs;
    // As git's push to a repository with no refs when nothing matched (`:` or a pattern):
    // its words, and a failure (git's receive-pack is left hanging up, which git says too;
    // send-pack dies of it).
    if refs.is_empty() && outcome.advertised.is_empty() {
        eprintln!("No refs in common and none specified; doing nothing.");
        eprintln!("Perhaps you should specify a branch.");
        eprintln!("fatal: the remote end hung up unexpectedly");
        if args.send_pack {
            return Ok(ExitCode::from(128));
        }
        eprintln!("error: failed to push some refs to '{url}'");
        return Ok(ExitCode::from(1));
    }
    let verbose = args.verbose || args.porcelain;
    let report = &outcome.report;
    let said = (report.lines.iter()).filter(|line| match &line.status {
        RefStatus::UpToDate => verbose && !args.quiet,
        status => !args.quiet || status.refused(),
    });
    let mut out: Box<dyn Write> = match args.porcelain {
        true => Box::new(std::io::stdout().lock()),
        false => Box::new(std::io::stderr().lock()),
    };
    let width = report.summary_width;
    let mut headed = false;
    for line in said {
        if !headed {
            writeln!(out, "To {url}")?;
            headed = true;
        }
        let (flag, summary, dst) = (line.flag, &line.summary, &line.dst);
        let src = line.src.as_deref();
        let note = match line.note.is_empty() {
            true => String::new(),
            false => format!(" {}", line.note),
        };
        if args.porcelain {
            writeln!(out, "{flag}\t{}:{dst}\t{summary}{note}", src.unwrap_or(""))?;
        } else {
            let names = match src {
                Some(src) => format!("{} -> {}", short_name(src), short_name(dst)),
                None => short_name(dst).to_owned(),
            };
            writeln!(out, " {flag} {summary:<width$} {names}{note}")?;
        }
    }
    if args.porcelain {
        // git's upstreams come before the end of the porcelain report.
        print_upstreams(outcome, args, &mut out)?;
        writeln!(out, "Done")?;
    }
    out.flush()?;
    drop(out);
    if args.verbose {
        for name in &outcome.tracking {
            eprintln!("updating local tracking ref '{name}'");
        }
    }
    let refused = refs.iter().any(|r| r.status.refused());
    if refused && args.send_pack {
        return Ok(ExitCode::from(255));
    }
    if refused {
        eprintln!("error: failed to push some refs to '{url}'");
        for line in report.hint.iter().flat_map(|hint| hint.text().lines()) {
            eprintln!("hint: {line}");
        }
        return Ok(ExitCode::from(1));
    }
    let pushed = refs.iter().any(|r| r.status == RefStatus::Ok);
    if !pushed && !args.quiet && !args.porcelain {
        eprintln!("Everything up-to-date");
    }
    if !args.porcelain {
        print_upstreams(outcome, args, &mut std::io::stdout().lock())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The upstreams `--set-upstream` recorded, in git's words (quiet, git says nothing of them).
fn print_upstreams(
    outcome: &PushOutcome,
    args: &ReportStyle,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for set in outcome.upstreams.iter().filter(|_| !args.quiet) {
        let rebasing = ["", " by rebasing"][usize::from(set.rebasing)];
        writeln!(
            out,
            "branch '{}' set up to track '{}/{}'{rebasing}.",
            set.branch,
            set.remote,
            short_name(&set.merge)
        )?;
    }
    Ok(())
}
