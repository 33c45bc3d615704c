//! A push's report as git's transport words it: a line per ref (its flag, `old..new` or
//! `[new branch]`, `[rejected]` and why), up-to-date refs first, then those that moved, then
//! those refused; the width of the summary column; and the one hint that fits the refusals.
//! Where the server did something else instead of an update (a `proc-receive` hook's refs),
//! each of those is a line. The command chooses the lines it says and prints them.

use super::{PushedRef, RefStatus};
use sluice_object::ObjectId;
use sluice_repo::{RefTarget, Repository};

/// The report of a push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushReport {
    /// A line per ref, in git's order.
    pub lines: Vec<ReportLine>,
    /// The width of the summary column, as git sizes it from the ids it abbreviates.
    pub summary_width: usize,
    /// The hint git gives for the refusals, if any fits.
    pub hint: Option<Hint>,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportLine {
    /// What became of the ref.
    pub status: RefStatus,
    /// git's flag: ` `, `+`, `-`, `*`, `=` or `!`.
    pub flag: char,
    /// `old..new`, `old...new`, `[new branch]`, `[rejected]`, ….
    pub summary: String,
    /// `(forced update)`, `(non-fast-forward)`, … or empty.
    pub note: String,
    /// What was pushed, as named (`None`: a deletion).
    pub src: Option<String>,
    /// The remote ref's full name.
    pub dst: String,
}

impl PushReport {
    /// The report of `refs`, pushed from `repo` (whose `core.abbrev` and size decide how ids
    /// are abbreviated, and whose branch checked out chooses the hint).
    pub fn of(repo: &Repository, refs: &[PushedRef]) -> PushReport {
        let up_to_date = refs.iter().filter(|r| r.status == RefStatus::UpToDate);
        let moved = refs.iter().filter(|r| r.status == RefStatus::Ok);
        let refused = refs.iter().filter(|r| r.status.refused());
        let lines = (up_to_date.chain(moved).chain(refused))
            .flat_map(as_reported)
            .map(|r| line(repo, &r))
            .collect();
        let ids = refs.iter().flat_map(|r| [r.old, r.new]).flatten();
        PushReport {
            lines,
            summary_width: sluice_repo::abbrev::summary_width(repo, ids),
            hint: Hint::for_refusals(repo, refs),
        }
    }
}

/// The line of one ref.
fn line(repo: &Repository, r: &PushedRef) -> ReportLine {
    let short = |id: Option<ObjectId>| match id {
        Some(id) => sluice_repo::abbrev::abbreviate(repo, &id),
        None => String::new(),
    };
    let said = |flag: char, summary: &str, note: &str| (flag, summary.to_owned(), note.to_owned());
    let rejected = |why: &str| said('!', "[rejected]", &format!("({why})"));
    let (flag, summary, note) = match &r.status {
        RefStatus::UpToDate => said('=', "[up to date]", ""),
        RefStatus::Ok | RefStatus::Pending => match (r.old, r.new) {
            (_, None) => said('-', "[deleted]", ""),
            (None, Some(_)) => match r.dst.as_str() {
                d if d.starts_with("refs/tags/") => said('*', "[new tag]", ""),
                d if d.starts_with("refs/heads/") => said('*', "[new branch]", ""),
                _ => said('*', "[new reference]", ""),
            },
            (old, new) if r.forced => {
                let summary = format!("{}...{}", short(old), short(new));
                said('+', &summary, "(forced update)")
            }
            (old, new) => said(' ', &format!("{}..{}", short(old), short(new)), ""),
        },
        RefStatus::NonFastForward => rejected("non-fast-forward"),
        RefStatus::FetchFirst => rejected("fetch first"),
        RefStatus::AlreadyExists => rejected("already exists"),
        RefStatus::NeedsForce => rejected("needs force"),
        RefStatus::Stale => rejected("stale info"),
        RefStatus::RemoteUpdated => rejected("remote ref updated since checkout"),
        RefStatus::AtomicFailed => rejected("atomic push failed"),
        RefStatus::NoDelete => rejected("remote does not support deleting refs"),
        RefStatus::RemoteRejected(why) => said('!', "[remote rejected]", &format!("({why})")),
    };
    ReportLine {
        status: r.status.clone(),
        flag,
        summary,
        note,
        src: r.src.clone(),
        dst: r.dst.clone(),
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

/// The hint git gives after refusals: one, in git's order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// A non-fast-forward of the remote ref named as the branch checked out here.
    BehindCurrentBranch,
    /// A non-fast-forward of another.
    BehindPushedBranch,
    /// A tag the remote has already.
    TagExists,
    /// The remote has work this repository lacks.
    FetchFirst,
    /// An update from or to a non-commit without `--force`.
    NeedsForce,
    /// `--force-with-lease` found the remote ref moved since.
    RemoteUpdated,
}

impl Hint {
    /// The hint for the refusals among `refs`, if one fits.
    fn for_refusals(repo: &Repository, refs: &[PushedRef]) -> Option<Hint> {
        let has = |status: RefStatus| refs.iter().any(|r| r.status == status);
        let head = match repo.refs().read("HEAD") {
            Ok(Some(RefTarget::Symbolic(branch))) => Some(branch),
            _ => None,
        };
        // As git: the remote ref has the name of the branch checked out here.
        let behind_head = (refs.iter())
            .any(|r| r.status == RefStatus::NonFastForward && Some(&r.dst) == head.as_ref());
        Some(if behind_head {
            Hint::BehindCurrentBranch
        } else if has(RefStatus::NonFastForward) {
            Hint::BehindPushedBranch
        } else if has(RefStatus::AlreadyExists) {
            Hint::TagExists
        } else if has(RefStatus::FetchFirst) {
            Hint::FetchFirst
        } else if has(RefStatus::NeedsForce) {
            Hint::NeedsForce
        } else if has(RefStatus::RemoteUpdated) {
            Hint::RemoteUpdated
        } else {
            return None;
        })
    }

    /// git's words (2.47's), a line each.
    pub fn text(self) -> &'static str {
        match self {
            Hint::BehindCurrentBranch => "Updates were rejected because the tip of your current branch is behind\nits remote counterpart. If you want to integrate the remote changes,\nuse 'git pull' before pushing again.\nSee the 'Note about fast-forwards' in 'git push --help' for details.",
            Hint::BehindPushedBranch => "Updates were rejected because a pushed branch tip is behind its remote\ncounterpart. If you want to integrate the remote changes, use 'git pull'\nbefore pushing again.\nSee the 'Note about fast-forwards' in 'git push --help' for details.",
            Hint::TagExists => "Updates were rejected because the tag already exists in the remote.",
            Hint::FetchFirst => "Updates were rejected because the remote contains work that you do not\nhave locally. This is usually caused by another repository pushing to\nthe same ref. If you want to integrate the remote changes, use\n'git pull' before pushing again.\nSee the 'Note about fast-forwards' in 'git push --help' for details.",
            Hint::NeedsForce => "You cannot update a remote ref that points at a non-commit object,\nor update a remote ref to make it point at a non-commit object,\nwithout using the '--force' option.",
            Hint::RemoteUpdated => "Updates were rejected because the tip of the remote-tracking branch has\nbeen updated since the last checkout. If you want to integrate the\nremote changes, use 'git pull' before pushing again.\nSee the 'Note about fast-forwards' in 'git push --help' for details.",
        }
    }
}
