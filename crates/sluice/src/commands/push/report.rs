//! The report of a push, printed as git prints it: `To <url>`, a line per ref (up-to-date ones
//! under `-v`, then those that moved, then those refused), the error and the one hint that
//! fits, or `--porcelain`'s tab-separated lines and `Done`.

use sluice_client::fetch::short_name;
use sluice_client::push::{PushOutcome, PushedRef, RefStatus};
use sluice_repo::{RefTarget, Repository};
use std::io::Write;
use std::process::ExitCode;

/// The flag, summary and note of one line.
fn describe(repo: &Repository, r: &PushedRef) -> (char, String, String) {
    let short = |id: Option<sluice_object::ObjectId>| {
        id.map(|id| sluice_repo::abbrev::abbreviate(repo, &id))
    };
    let rejected = |why: &str| ('!', "[rejected]".to_owned(), format!("({why})"));
    match &r.status {
        RefStatus::UpToDate => ('=', "[up to date]".to_owned(), String::new()),
        RefStatus::Ok | RefStatus::Pending => match (r.old, r.new) {
            (_, None) => ('-', "[deleted]".to_owned(), String::new()),
            (None, Some(_)) => {
                let kind = match r.dst.as_str() {
                    d if d.starts_with("refs/tags/") => "[new tag]",
                    d if d.starts_with("refs/heads/") => "[new branch]",
                    _ => "[new reference]",
                };
                ('*', kind.to_owned(), String::new())
            }
            (old, new) if r.forced => {
                let summary = format!("{}...{}", short(old).unwrap(), short(new).unwrap());
                ('+', summary, "(forced update)".to_owned())
            }
            (old, new) => {
                let summary = format!("{}..{}", short(old).unwrap(), short(new).unwrap());
                (' ', summary, String::new())
            }
        },
        RefStatus::NonFastForward => rejected("non-fast-forward"),
        RefStatus::FetchFirst => rejected("fetch first"),
        RefStatus::AlreadyExists => rejected("already exists"),
        RefStatus::NeedsForce => rejected("needs force"),
        RefStatus::Stale => rejected("stale info"),
        RefStatus::RemoteUpdated => rejected("remote ref updated since checkout"),
        RefStatus::AtomicFailed => rejected("atomic push failed"),
        RefStatus::NoDelete => rejected("remote does not support deleting refs"),
        RefStatus::RemoteRejected(why) => ('!', "[remote rejected]".to_owned(), format!("({why})")),
    }
}

/// The lines of a ref: itself, or, where the server did something else instead (a
/// `proc-receive` hook's refs), each of those, what it leaves out taken from the ref.
fn as_reported(r: &PushedRef) -> Vec<PushedRef> {
    if r.rewrites.is_empty() || r.status != RefStatus::Ok {
        return vec![r.clone()];
    }
    (r.rewrites.iter())
        .map(|rewrite| PushedRef {
            dst: rewrite.name.clone().unwrap_or_else(|| r.dst.clone()),
            old: rewrite.old.or(r.old),
            new: rewrite.new.or(r.new),
            forced: rewrite.forced,
            rewrites: Vec::new(),
            ..r.clone()
        })
        .collect()
}

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
    repo: &Repository,
    url: &str,
    args: &ReportStyle,
) -> anyhow::Result<ExitCode> {
    if outcome.sent_unsigned {
        eprintln!("warning: not sending a push certificate since the receiving end does not support --signed push");
    }
    if let Some((name, status)) = &outcome.atomic_failure {
        eprintln!(
            "error: atomic push failed for ref {name}. status: {}",
            status.git_code()
        );
    }
    if let Some(reason) = &outcome.unpack_error {
        eprintln!("error: remote unpack failed: {reason}");
    }
    let refs = &outcome.refs;
    // As git's push to a repository with no refs when nothing matched (`:` or a pattern):
    // its words, and a failure (git's receive-pack is left hanging up).
    if refs.is_empty() && outcome.advertised.is_empty() && !args.send_pack {
        eprintln!("No refs in common and none specified; doing nothing.");
        eprintln!("Perhaps you should specify a branch.");
        eprintln!("error: failed to push some refs to '{url}'");
        return Ok(ExitCode::from(1));
    }
    let verbose = args.verbose || args.porcelain;
    let order = (refs
        .iter()
        .filter(|r| verbose && r.status == RefStatus::UpToDate))
    .chain(refs.iter().filter(|r| r.status == RefStatus::Ok))
    .chain(refs.iter().filter(|r| r.status.refused()));
    let mut out: Box<dyn Write> = match args.porcelain {
        true => Box::new(std::io::stdout().lock()),
        false => Box::new(std::io::stderr().lock()),
    };
    let ids = refs.iter().flat_map(|r| [r.old, r.new]).flatten();
    let width = sluice_repo::abbrev::summary_width(repo, ids);
    let mut headed = false;
    for r in order.flat_map(as_reported) {
        let r = &r;
        if args.quiet && !r.status.refused() {
            continue;
        }
        if !headed {
            writeln!(out, "To {url}")?;
            headed = true;
        }
        let (flag, summary, note) = describe(repo, r);
        let src = r.src.as_deref();
        if args.porcelain {
            let note = match note.is_empty() {
                true => String::new(),
                false => format!(" {note}"),
            };
            writeln!(
                out,
                "{flag}\t{}:{}\t{summary}{note}",
                src.unwrap_or(""),
                r.dst
            )?;
        } else {
            let names = match src {
                Some(src) => format!("{} -> {}", short_name(src), short_name(&r.dst)),
                None => short_name(&r.dst).to_owned(),
            };
            let note = match note.is_empty() {
                true => String::new(),
                false => format!(" {note}"),
            };
            writeln!(out, " {flag} {summary:<width$} {names}{note}")?;
        }
    }
    if args.porcelain {
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
        hint(repo, refs);
        return Ok(ExitCode::from(1));
    }
    let pushed = refs.iter().any(|r| r.status == RefStatus::Ok);
    if !pushed && !args.quiet && !args.porcelain {
        eprintln!("Everything up-to-date");
    }
    // Quiet, git says nothing of them.
    for set in outcome.upstreams.iter().filter(|_| !args.quiet) {
        let rebasing = ["", " by rebasing"][usize::from(set.rebasing)];
        println!(
            "branch '{}' set up to track '{}/{}'{rebasing}.",
            set.branch,
            set.remote,
            short_name(&set.merge)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The one hint git gives for the refusals, in its order of precedence (git 2.47's words).
fn hint(repo: &Repository, refs: &[PushedRef]) {
    let head = match repo.refs().read("HEAD") {
        Ok(Some(RefTarget::Symbolic(branch))) => Some(branch),
        _ => None,
    };
    let has = |status: RefStatus| refs.iter().any(|r| r.status == status);
    // As git: the remote ref has the name of the branch checked out here.
    let non_ff_head = (refs.iter())
        .any(|r| r.status == RefStatus::NonFastForward && Some(&r.dst) == head.as_ref());
    let text = if non_ff_head {
        "Updates were rejected because the tip of your current branch is behind\nits remote counterpart. If you want to integrate the remote changes,\nuse 'git pull' before pushing again.\nSee the 'Note about fast-forwards' in 'git push --help' for details."
    } else if has(RefStatus::NonFastForward) {
        "Updates were rejected because a pushed branch tip is behind its remote\ncounterpart. If you want to integrate the remote changes, use 'git pull'\nbefore pushing again.\nSee the 'Note about fast-forwards' in 'git push --help' for details."
    } else if has(RefStatus::AlreadyExists) {
        "Updates were rejected because the tag already exists in the remote."
    } else if has(RefStatus::FetchFirst) {
        "Updates were rejected because the remote contains work that you do not\nhave locally. This is usually caused by another repository pushing to\nthe same ref. If you want to integrate the remote changes, use\n'git pull' before pushing again.\nSee the 'Note about fast-forwards' in 'git push --help' for details."
    } else if has(RefStatus::NeedsForce) {
        "You cannot update a remote ref that points at a non-commit object,\nor update a remote ref to make it point at a non-commit object,\nwithout using the '--force' option."
    } else if has(RefStatus::RemoteUpdated) {
        "Updates were rejected because the tip of the remote-tracking branch has\nbeen updated since the last checkout. If you want to integrate the\nremote changes, use 'git pull' before pushing again.\nSee the 'Note about fast-forwards' in 'git push --help' for details."
    } else {
        return;
    };
    for line in text.lines() {
        eprintln!("hint: {line}");
    }
}
