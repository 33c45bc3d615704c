//! Moving the refs once the objects are in, as git fetch moves them: fast-forward checks,
//! forced updates, tags that are not clobbered, pruning, the conflicts `--atomic` refuses,
//! reflogs, and refs cut off by a shallow remote; each update's line of the report as data.

use super::mapping::{Listed, Update};
use super::report::{short_name, Report, Summary};
use crate::refspec::Refspec;
use crate::remote_shallow;
use sluice_graph::ancestry::is_ancestor_within;
use sluice_object::{IdSet, ObjectId};
use sluice_odb::{ConfigError, ObjectDb};
use sluice_remote::RemoteRef;
use sluice_repo::abbrev::abbreviate;
use sluice_repo::{RefError, RefTarget, RepoError, Repository};

/// Why the refs could not be moved.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    /// Reading or deleting a ref failed.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// The shallow file could not be updated.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// A setting has a value of the wrong type.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// How an update ended, for the summary line and the exit code.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The ref has the value already.
    UpToDate,
    /// The ref is new here.
    New(New),
    /// The ref moves forward from this value.
    FastForward(ObjectId),
    /// The ref moves from this value, which the new one does not contain.
    Forced(ObjectId),
    /// A tag moved by a forced refspec or `--force`.
    TagUpdate,
    /// The update is refused, for the reason given in git's words.
    Rejected(&'static str),
}

/// What a ref new here is, by the remote's name for it, as git tells them apart in the summary
/// and the reflog.
#[derive(Debug, Clone, Copy)]
pub enum New {
    /// A tag.
    Tag,
    /// A branch.
    Branch,
    /// Any other ref, or an object fetched by its id.
    Ref,
}

impl New {
    /// What the remote's ref `remote_name` is.
    pub fn of(remote_name: &str) -> New {
        if remote_name.starts_with("refs/tags/") {
            New::Tag
        } else if remote_name.starts_with("refs/heads/") {
            New::Branch
        } else {
            New::Ref
        }
    }

    /// The summary line's words for it.
    pub fn summary(self) -> &'static str {
        match self {
            New::Tag => "[new tag]",
            New::Branch => "[new branch]",
            New::Ref => "[new ref]",
        }
    }

    /// The reflog's words for it.
    pub fn reason(self) -> &'static str {
        match self {
            New::Tag => "storing tag",
            New::Branch => "storing head",
            New::Ref => "storing ref",
        }
    }
}

/// A shallow remote's cut, and what a fetch does about refs whose history reaches it: with
/// `--update-shallow` those commits join `.git/shallow`; without, the refs are cut off
/// ([`Listed::CutOff`]), as git refuses them.
pub struct RemoteCut<'a> {
    /// This repository's shallow commits.
    pub ours: &'a [ObjectId],
    /// The remote's.
    pub remote: &'a [ObjectId],
    /// `--update-shallow`: take the remote's cut rather than refuse the refs.
    pub update_shallow: bool,
}

impl RemoteCut<'_> {
    /// Decides for `updates`, given the ref values the repository has (`known`).
    pub fn apply(
        &self,
        repo: &Repository,
        odb: &ObjectDb,
        known: &[ObjectId],
        updates: &mut [Update],
    ) -> Result<(), UpdateError> {
        let tips: Vec<ObjectId> = updates.iter().map(|u| u.remote.id).collect();
        let known = known.iter().copied();
        let reach = remote_shallow::reach(odb, self.ours, self.remote, known, &tips);
        if self.update_shallow {
            return Ok(repo.update_shallow(&reach.cut, &[])?);
        }
        for (update, needs_cut) in updates.iter_mut().zip(reach.needs_cut) {
            if needs_cut {
                update.listed = Listed::CutOff;
            }
        }
        Ok(())
    }
}

/// The refs `specs` map remote refs to that the remote no longer advertises: what `--prune`
/// deletes.
pub fn stale_refs(
    repo: &Repository,
    specs: &[Refspec],
    advertised: &[RemoteRef],
) -> Result<Vec<String>, UpdateError> {
    let local_refs = repo.refs().list()?;
    let mut stale = Vec::new();
    for spec in specs.iter().filter(|s| !s.is_exact() && !s.negative) {
        for (local, _) in &local_refs {
            let Some(source) = spec.source_for(local) else {
                continue;
            };
            if !advertised.iter().any(|r| r.name == source) {
                stale.push(local.clone());
            }
        }
    }
    Ok(stale)
}

/// The refs in the way of the updates that would move (`refs/x` for a new `refs/x/y`, or the
/// reverse), but for those about to be pruned: under `--atomic` any of them keeps every ref
/// where it was.
pub fn conflicts(
    repo: &Repository,
    odb: &ObjectDb,
    updates: &[Update],
    stale: &[String],
) -> Result<Vec<RefError>, UpdateError> {
    let mut found = Vec::new();
    for update in updates.iter().filter(|u| u.listed != Listed::CutOff) {
        let Some(local) = &update.local else {
            continue;
        };
        // Only whether the ref is new counts here: no ancestry is walked.
        if !matches!(decide(repo, odb, update, local, None).1, Outcome::New(_)) {
            continue;
        }
        if let Some(existing) = repo.refs().conflict(local)? {
            if !stale.contains(&existing) {
                found.push(RefError::NameConflict {
                    name: local.clone(),
                    existing,
                });
            }
        }
    }
    Ok(found)
}

/// Deletes the `stale` refs (none under `dry_run`), and returns their report lines; `None`
/// when the `reference-transaction` hook refused the deletion (nothing deleted).
///
/// The hook hears the deletion as git 2.47 tells it: one transaction of every stale ref (old
/// and new values null), inside which git's files backend opens one on `packed-refs` — run
/// through (`prepared` twice, then `committed` twice) when a stale ref is packed, else
/// dropped first (`aborted`, then `prepared`, `committed`). git 2.39 nests them otherwise.
pub fn prune_stale(
    repo: &Repository,
    stale: &[String],
    dry_run: bool,
) -> Result<Option<Vec<Report>>, UpdateError> {
    let mut lines = Vec::new();
    let null = repo.hash().null_id();
    let watched = sluice_repo::hooks::find(repo, "reference-transaction").is_some();
    let hook_lines = match watched && !dry_run && !stale.is_empty() {
        true => {
            let mut sorted: Vec<&str> = stale.iter().map(String::as_str).collect();
            sorted.sort_unstable();
            sluice_repo::hooks::transaction_lines(sorted.into_iter().map(|name| (null, null, name)))
        }
        false => String::new(),
    };
    let hook = |state: &str| sluice_repo::hooks::reference_transaction(repo, state, &hook_lines);
    let packed = !hook_lines.is_empty() && {
        let packed = repo.refs().packed()?;
        stale
            .iter()
            .any(|name| packed.iter().any(|(p, _, _)| p == name))
    };
    if !hook_lines.is_empty() {
        // The packed-refs transaction, then the loose one.
        let phases: &[&str] = match packed {
            true => &["prepared", "prepared"],
            false => &["aborted", "prepared"],
        };
        for state in phases {
            if !hook(state) {
                hook("aborted");
                return Ok(None);
            }
        }
    }
    for local in stale {
        let old = repo.refs().resolve(local).ok().and_then(|(_, id)| id);
        // A ref that cannot be deleted is said and the fetch goes on, as git's does (its
        // line still reads as deleted, and the exit code stays 0).
        let error = match dry_run {
            true => None,
            false => (repo.refs().delete(local).err())
                .map(|e| format!("could not delete reference {local}: {e}")),
        };
        lines.push(Report::Line(Summary {
            code: '-',
            summary: "[deleted]".to_owned(),
            from: "(none)".to_owned(),
            to: short_name(local).to_owned(),
            note: String::new(),
            widens: false,
            error,
            old: old.unwrap_or(null),
            new: null,
            local: local.clone(),
        }));
    }
    if !hook_lines.is_empty() {
        for _ in 0..1 + usize::from(packed) {
            hook("committed");
        }
    }
    Ok(Some(lines))
}

/// How ref updates are carried out and told.
pub struct Changes<'a> {
    /// Decide and report, but move nothing.
    pub dry_run: bool,
    /// Report refs that are up to date too.
    pub verbose: bool,
    /// The reflog's action.
    pub action: &'a str,
    /// Who the reflog entries name (see `sluice_repo::refs::reflog_identity`).
    pub who: &'a str,
    /// `--atomic`: the refs move as one transaction (the `reference-transaction` hook sees
    /// them together), else each as its own.
    pub atomic: bool,
    /// Whether a move is checked to be a fast-forward (`fetch.showForcedUpdates`,
    /// `--[no-]show-forced-updates`); unchecked, as in git, every move is taken as one.
    pub checked: bool,
}

/// What updating `local` to the remote ref's value would be: its old value and the outcome.
/// A move is checked to be a fast-forward within `cut` (the repository's shallow commits, as
/// the fetch left them: git's history ends there) when one is given; else every move is taken
/// as one.
pub fn decide(
    repo: &Repository,
    odb: &ObjectDb,
    update: &Update,
    local: &str,
    cut: Option<&IdSet>,
) -> (Option<ObjectId>, Outcome) {
    let old = repo.refs().resolve(local).ok().and_then(|(_, id)| id);
    let new = update.remote.id;
    let outcome = match old {
        Some(old) if old == new => Outcome::UpToDate,
        None => Outcome::New(New::of(&update.remote.name)),
        Some(_) if local.starts_with("refs/tags/") => {
            if update.force {
                Outcome::TagUpdate
            } else {
                Outcome::Rejected("would clobber existing tag")
            }
        }
        Some(old) if cut.is_none_or(|cut| is_ancestor_within(odb, &old, &new, cut)) => {
            Outcome::FastForward(old)
        }
        Some(old) if update.force => Outcome::Forced(old),
        Some(_) => Outcome::Rejected("non-fast-forward"),
    };
    (old, outcome)
}

/// The cut a checked move is judged within: the repository's shallow commits as they are now
/// (the fetch's cut written), read once for all the refs; `None` unchecked.
fn cut_of(repo: &Repository, checked: bool) -> Option<IdSet> {
    checked.then(|| repo.shallow_set().unwrap_or_default())
}

/// Whether any ref update would be refused: under `--atomic` nothing then moves.
pub fn any_rejected(repo: &Repository, odb: &ObjectDb, updates: &[Update], checked: bool) -> bool {
    let cut = cut_of(repo, checked);
    updates.iter().any(|update| {
        update.listed != Listed::CutOff
            && update.local.as_deref().is_some_and(|local| {
                matches!(
                    decide(repo, odb, update, local, cut.as_ref()).1,
                    Outcome::Rejected(_)
                )
            })
    })
}

/// Whether some ref update did not happen, and the worst reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refused {
    /// Every update happened.
    None,
    /// Refused: not a fast-forward, or a tag that would be clobbered.
    Rejected,
    /// Another ref's name stood in the way, which pruning may clear (git then says so).
    InTheWay,
}

/// How the updates ended: whether some did not happen, and whether the
/// `reference-transaction` hook refused one (the update it refused, the first under
/// `--atomic`, where nothing then moved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Updated {
    /// Whether some update did not happen, and the worst reason.
    pub refused: Refused,
    /// The update whose transaction the hook refused.
    pub aborted_at: Option<usize>,
}

/// The hook's lines for the updates that move.
fn moving_lines<'a>(
    repo: &Repository,
    updates: impl Iterator<Item = (&'a Update, Option<ObjectId>, &'a Outcome)>,
) -> String {
    let null = repo.hash().null_id();
    let moving = updates.filter(|(_, _, o)| !matches!(o, Outcome::Rejected(_) | Outcome::UpToDate));
    sluice_repo::hooks::transaction_lines(moving.map(|(update, old, _)| {
        let local = update.local.as_deref().unwrap_or_default();
        (old.unwrap_or(null), update.remote.id, local)
    }))
}

/// How a ref's update is reported (flag, summary, note) and logged (the reflog's reason), as
/// git words each outcome.
fn summary_of(
    repo: &Repository,
    outcome: &Outcome,
    new: &ObjectId,
) -> (char, String, String, &'static str) {
    match outcome {
        Outcome::UpToDate => ('=', "[up to date]".to_owned(), String::new(), ""),
        Outcome::New(kind) => ('*', kind.summary().to_owned(), String::new(), kind.reason()),
        Outcome::FastForward(old) => (
            ' ',
            format!("{}..{}", abbreviate(repo, old), abbreviate(repo, new)),
            String::new(),
            "fast-forward",
        ),
        Outcome::Forced(old) => (
            '+',
            format!("{}...{}", abbreviate(repo, old), abbreviate(repo, new)),
            "  (forced update)".to_owned(),
            "forced-update",
        ),
        Outcome::TagUpdate => (
            't',
            "[tag update]".to_owned(),
            String::new(),
            "updating tag",
        ),
        Outcome::Rejected(why) => ('!', "[rejected]".to_owned(), format!("  ({why})"), ""),
    }
}

/// Moves the local refs of `updates` that may move (fast-forwards, forced updates, new refs),
/// logging them as git does, and adds a report line for each to `lines`. A ref that cannot be
/// written is reported and the others still move, as in git. Each ref's transaction (all of
/// them, under `--atomic`) goes by the `reference-transaction` hook; one it refuses stops
/// the updates there (under `--atomic`, none moves).
pub fn update_refs(
    repo: &Repository,
    odb: &ObjectDb,
    updates: &[Update],
    changes: &Changes,
    lines: &mut Vec<Report>,
) -> Result<Updated, UpdateError> {
    let config = repo.config();
    let bare = repo.work_tree().is_none();
    let log_refs = sluice_repo::refs::reflog::LogRefs::from_config(config, bare)?;
    let mut refused = Refused::None;
    let cut = cut_of(repo, changes.checked);
    let decisions: Vec<Option<(Option<ObjectId>, Outcome)>> = (updates.iter())
        .map(|update| match &update.local {
            Some(local) if update.listed != Listed::CutOff => {
                Some(decide(repo, odb, update, local, cut.as_ref()))
            }
            _ => None,
        })
        .collect();
    let decided = || {
        (updates.iter().zip(&decisions))
            .filter_map(|(update, decision)| decision.as_ref().map(|(old, o)| (update, *old, o)))
    };
    // Looked for once: without the hook (the usual case) no line is made for it.
    let watched = sluice_repo::hooks::find(repo, "reference-transaction").is_some();
    let all_lines = match watched {
        true => moving_lines(repo, decided()),
        false => String::new(),
    };
    let hook = |state: &str, lines: &str| {
        !watched || sluice_repo::hooks::reference_transaction(repo, state, lines)
    };
    let mut dry_run = changes.dry_run;
    let mut aborted_at = None;
    let atomic_hook = watched && changes.atomic && !all_lines.is_empty();
    if atomic_hook && !dry_run && !hook("prepared", &all_lines) {
        hook("aborted", &all_lines);
        (dry_run, aborted_at) = (true, Some(0));
    }
    for (at, update) in updates.iter().enumerate() {
        if update.listed == Listed::CutOff {
            let name = update.local.as_deref().unwrap_or(&update.remote.name);
            lines.push(Report::Warning(format!(
                "rejected {name} because shallow roots are not allowed to be updated"
            )));
            continue;
        }
        let Some(local) = &update.local else {
            // Fetched for FETCH_HEAD alone.
            if update.listed != Listed::No {
                lines.push(Report::Line(Summary::fetch_head(
                    &update.remote.name,
                    update.remote.id,
                )));
            }
            continue;
        };
        let (old, outcome) = decisions[at].clone().expect("decided above");
        let new = update.remote.id;
        if matches!(outcome, Outcome::UpToDate) && !changes.verbose {
            continue;
        }
        if matches!(outcome, Outcome::Rejected(_)) {
            refused = refused.max(Refused::Rejected);
        }
        let (mut code, summary, mut note, reason) = summary_of(repo, &outcome, &new);
        let moves = !matches!(outcome, Outcome::Rejected(_) | Outcome::UpToDate);
        // Each ref its own transaction, which the hook may refuse: the fetch stops there.
        let one = match watched {
            true => moving_lines(repo, std::iter::once((update, old, &outcome))),
            false => String::new(),
        };
        if watched && moves && !dry_run && !changes.atomic && !hook("prepared", &one) {
            hook("aborted", &one);
            aborted_at = Some(at);
            break;
        }
        let mut error = None;
        let written = moves
            && !dry_run
            && match repo.refs().write_checked(local, &RefTarget::Id(new), odb) {
                Ok(()) => true,
                Err(failed) => {
                    refused = refused.max(match failed {
                        // git's ref transaction fails in quarantine with the code of a name
                        // conflict, so its fetch gives the same advice: so does this one.
                        RefError::NameConflict { .. } | RefError::Quarantined => Refused::InTheWay,
                        _ => Refused::Rejected,
                    });
                    code = '!';
                    note = "  (unable to update local ref)".to_owned();
                    error = Some(failed.to_string());
                    false
                }
            };
        if written {
            if repo.refs().logs(log_refs, local) {
                let null = repo.hash().null_id();
                let _ = repo.refs().append_log(
                    local,
                    &old.unwrap_or(null),
                    &new,
                    changes.who,
                    &format!("{}: {reason}", changes.action),
                );
            }
            if watched && !changes.atomic {
                hook("committed", &one);
            }
        }
        lines.push(Report::Line(Summary {
            code,
            summary,
            from: short_name(&update.remote.name).to_owned(),
            to: short_name(local).to_owned(),
            note,
            widens: true,
            error,
            old: old.unwrap_or(repo.hash().null_id()),
            new,
            local: local.clone(),
        }));
    }
    if atomic_hook && !dry_run {
        hook("committed", &all_lines);
    }
    Ok(Updated {
        refused,
        aborted_at,
    })
}
