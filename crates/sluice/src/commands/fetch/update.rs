//! Moving the refs once the objects are in: fast-forward checks, forced updates, pruning,
//! `--atomic`, reflogs, refs cut off by a shallow remote, and `FETCH_HEAD`.

use super::plan::{Listed, Plan, Update};
use super::receive::Cut;
use super::report::{print_report, Report, ReportFormat, Summary};
use super::{display_url, short, writes_fetch_head, FetchArgs, One};
use crate::commands::checkout::identity;
use crate::commands::upstream::set_upstream;
use sluice_fetch::refspec::Refspec;
use sluice_fetch::remote_shallow;
use sluice_fetch::RemoteRef;
use sluice_object::parse::parse_commit;
use sluice_object::{IdSet, ObjectId, ObjectKind};
use sluice_odb::{ObjectDb, RefTarget, Repository};
use std::collections::VecDeque;
use std::process::ExitCode;

/// How an update ended, for the summary line and the exit code.
pub(super) enum Outcome {
    UpToDate,
    New(New),
    FastForward(ObjectId),
    Forced(ObjectId),
    /// A tag moved by a forced refspec or `--force`.
    TagUpdate,
    Rejected(&'static str),
}

/// What a ref new here is, by the remote's name for it, as git tells them apart in the summary
/// and the reflog.
#[derive(Debug, Clone, Copy)]
pub(super) enum New {
    Tag,
    Branch,
    /// Any other ref, or an object fetched by its id.
    Ref,
}

impl New {
    pub(super) fn of(remote_name: &str) -> New {
        if remote_name.starts_with("refs/tags/") {
            New::Tag
        } else if remote_name.starts_with("refs/heads/") {
            New::Branch
        } else {
            New::Ref
        }
    }

    pub(super) fn summary(self) -> &'static str {
        match self {
            New::Tag => "[new tag]",
            New::Branch => "[new branch]",
            New::Ref => "[new ref]",
        }
    }

    pub(super) fn reason(self) -> &'static str {
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
pub(super) struct RemoteCut<'a> {
    /// This repository's shallow commits.
    pub(super) ours: &'a [ObjectId],
    /// The remote's.
    pub(super) remote: &'a [ObjectId],
    pub(super) update_shallow: bool,
}

impl RemoteCut<'_> {
    /// Decides for `updates`, given the ref values the repository has (`known`).
    pub(super) fn apply(
        &self,
        repo: &Repository,
        odb: &ObjectDb,
        known: &[ObjectId],
        updates: &mut [Update],
    ) -> anyhow::Result<()> {
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

/// Whether `old` is `new` or one of its ancestors (missing objects end the walk: a shallow
/// boundary).
pub(super) fn is_ancestor(odb: &ObjectDb, old: &ObjectId, new: &ObjectId) -> bool {
    let mut seen = IdSet::default();
    let mut queue = VecDeque::from([*new]);
    while let Some(id) = queue.pop_front() {
        if id == *old {
            return true;
        }
        if !seen.insert(id) {
            continue;
        }
        if let Ok(Some((ObjectKind::Commit, data))) = odb.read(&id) {
            if let Ok(commit) = parse_commit(id.kind(), &data) {
                queue.extend(commit.parents);
            }
        }
    }
    false
}

/// The updates of a fetch whose objects are in, with the tags to follow once they are.
pub(super) struct Moved {
    pub(super) updates: Vec<Update>,
    pub(super) backfill: Vec<RemoteRef>,
    pub(super) cut: Cut,
}

/// Moves the refs (now that the objects are in), prunes, writes FETCH_HEAD and reports, as
/// git does.
pub(super) fn update_and_report(
    plan: &Plan,
    args: &FetchArgs,
    one: &One,
    repo: &Repository,
    moved: Moved,
    advertised: &[RemoteRef],
) -> anyhow::Result<ExitCode> {
    let Moved {
        mut updates,
        backfill,
        cut,
    } = moved;
    let odb = ObjectDb::open(repo.objects().dir(), repo.hash())?;
    // Tags followed once their objects are in are taken and reported after the rest, as git
    // takes them in a second fetch.
    let mut later: Vec<Update> = backfill
        .into_iter()
        .filter(|tag| odb.contains(&tag.id))
        .map(|tag| Update {
            local: Some(tag.name.clone()),
            remote: tag,
            force: false,
            listed: Listed::NotForMerge,
        })
        .collect();
    if !cut.remote.is_empty() {
        let remote_cut = RemoteCut {
            ours: &cut.ours,
            remote: &cut.remote,
            update_shallow: args.update_shallow,
        };
        let mut known: Vec<ObjectId> = repo.refs().list()?.into_iter().map(|(_, id)| id).collect();
        known.extend(repo.refs().resolve("HEAD").ok().and_then(|(_, id)| id));
        remote_cut.apply(repo, &odb, &known, &mut updates)?;
        // The second fetch comes after the first moved its refs.
        known.extend(
            updates
                .iter()
                .filter(|u| u.local.is_some() && u.listed != Listed::CutOff)
                .map(|u| u.remote.id),
        );
        remote_cut.apply(repo, &odb, &known, &mut later)?;
    }
    updates.sort_by_key(|u| u.listed.pass());
    later.sort_by_key(|u| u.listed.pass());
    updates.append(&mut later);
    // With --atomic, one refused update keeps every ref (pruned ones included) and FETCH_HEAD
    // as they were; the report still says what each would have been, as git's does.
    let stale = match plan.prune {
        true => stale_refs(repo, &plan.pruned_by, advertised)?,
        false => Vec::new(),
    };
    let in_the_way = match args.atomic && !args.dry_run {
        true => conflicts(repo, &odb, &updates, &stale)?,
        false => Vec::new(),
    };
    let held_back = args.atomic && (!in_the_way.is_empty() || any_rejected(repo, &odb, &updates));
    let dry_run = args.dry_run || held_back;
    // git prunes before it updates (a branch `a` pruned makes room for a new `a/b`), and says
    // so first.
    let mut lines = prune_stale(repo, &stale, dry_run)?;
    let changes = Changes {
        dry_run,
        verbose: args.verbose > 0,
        action: &one.action,
    };
    let refused = update_refs(repo, &odb, &updates, &changes, &mut lines)?;
    let shown = display_url(&plan.remote.shown);
    if writes_fetch_head(args) {
        let recorded: &[Update] = if held_back { &[] } else { &updates };
        write_fetch_head(repo, recorded, shown, one.append)?;
    }
    let format = match args.porcelain {
        true => ReportFormat::Porcelain,
        false => ReportFormat::Full,
    };
    print_report(shown, &lines, args.quiet, format)?;
    for error in &in_the_way {
        eprintln!("error: {error}");
    }
    if args.set_upstream {
        let fetched: Vec<&RemoteRef> = updates
            .iter()
            .filter(|u| u.local.is_none() && u.listed != Listed::CutOff)
            .map(|u| &u.remote)
            .collect();
        set_upstream(
            repo,
            plan.current_branch.as_deref(),
            &plan.remote_name,
            &fetched,
        )?;
    }
    if refused == Refused::InTheWay {
        // As git 2.47 advises; 2.39 gives the advice only when the ref in the way is loose.
        eprintln!("error: some local refs could not be updated; try running\n 'git remote prune {}' to remove any old, conflicting branches", plan.remote_name);
    }
    Ok(match refused == Refused::None && in_the_way.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}

/// The refs `specs` map remote refs to that the remote no longer advertises: what `--prune`
/// deletes.
pub(super) fn stale_refs(
    repo: &Repository,
    specs: &[Refspec],
    advertised: &[RemoteRef],
) -> anyhow::Result<Vec<String>> {
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
pub(super) fn conflicts(
    repo: &Repository,
    odb: &ObjectDb,
    updates: &[Update],
    stale: &[String],
) -> anyhow::Result<Vec<sluice_odb::RefError>> {
    let mut found = Vec::new();
    for update in updates.iter().filter(|u| u.listed != Listed::CutOff) {
        let Some(local) = &update.local else {
            continue;
        };
        if !matches!(decide(repo, odb, update, local).1, Outcome::New(_)) {
            continue;
        }
        if let Some(existing) = repo.refs().conflict(local)? {
            if !stale.contains(&existing) {
                found.push(sluice_odb::RefError::NameConflict {
                    name: local.clone(),
                    existing,
                });
            }
        }
    }
    Ok(found)
}

/// Deletes the `stale` refs (none under `dry_run`), and returns their report lines.
pub(super) fn prune_stale(
    repo: &Repository,
    stale: &[String],
    dry_run: bool,
) -> anyhow::Result<Vec<Report>> {
    let mut lines = Vec::new();
    let null = repo.hash().null_id();
    for local in stale {
        let old = repo.refs().resolve(local).ok().and_then(|(_, id)| id);
        if !dry_run {
            repo.refs().delete(local)?;
        }
        lines.push(Report::Line(Summary {
            code: '-',
            summary: "[deleted]".to_owned(),
            from: "(none)".to_owned(),
            to: short(local).to_owned(),
            note: String::new(),
            widens: false,
            error: None,
            old: old.unwrap_or(null),
            new: null,
            local: local.clone(),
        }));
    }
    Ok(lines)
}

/// How ref updates are carried out and told.
pub(super) struct Changes<'a> {
    /// Decide and report, but move nothing.
    pub(super) dry_run: bool,
    /// Report refs that are up to date too.
    pub(super) verbose: bool,
    /// The reflog's action.
    pub(super) action: &'a str,
}

/// What updating `local` to the remote ref's value would be: its old value and the outcome.
pub(super) fn decide(
    repo: &Repository,
    odb: &ObjectDb,
    update: &Update,
    local: &str,
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
        Some(old) if is_ancestor(odb, &old, &new) => Outcome::FastForward(old),
        Some(old) if update.force => Outcome::Forced(old),
        Some(_) => Outcome::Rejected("non-fast-forward"),
    };
    (old, outcome)
}

/// Whether any ref update would be refused: under `--atomic` nothing then moves.
pub(super) fn any_rejected(repo: &Repository, odb: &ObjectDb, updates: &[Update]) -> bool {
    updates.iter().any(|update| {
        update.listed != Listed::CutOff
            && update.local.as_deref().is_some_and(|local| {
                matches!(decide(repo, odb, update, local).1, Outcome::Rejected(_))
            })
    })
}

/// Whether some ref update did not happen, and the worst reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Refused {
    None,
    /// Refused: not a fast-forward, or a tag that would be clobbered.
    Rejected,
    /// Another ref's name stood in the way, which pruning may clear (git then says so).
    InTheWay,
}

/// Moves the local refs of `updates` that may move (fast-forwards, forced updates, new refs),
/// logging them as git does, and adds a report line for each to `lines`. A ref that cannot be
/// written is reported and the others still move, as in git.
pub(super) fn update_refs(
    repo: &Repository,
    odb: &ObjectDb,
    updates: &[Update],
    changes: &Changes,
    lines: &mut Vec<Report>,
) -> anyhow::Result<Refused> {
    let config = repo.config();
    let bare = repo.work_tree().is_none();
    let log_updates = config.get_bool("core.logAllRefUpdates")?.unwrap_or(!bare);
    let who = identity(config);
    let mut refused = Refused::None;
    for update in updates {
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
        let (old, outcome) = decide(repo, odb, update, local);
        let new = update.remote.id;
        let (mut code, summary, mut note, reason) = match &outcome {
            Outcome::UpToDate if !changes.verbose => continue,
            Outcome::UpToDate => ('=', "[up to date]".to_owned(), String::new(), ""),
            Outcome::New(new) => ('*', new.summary().to_owned(), String::new(), new.reason()),
            Outcome::FastForward(old) => (
                ' ',
                format!("{}..{}", &old.to_string()[..7], &new.to_string()[..7]),
                String::new(),
                "fast-forward",
            ),
            Outcome::Forced(old) => (
                '+',
                format!("{}...{}", &old.to_string()[..7], &new.to_string()[..7]),
                "  (forced update)".to_owned(),
                "forced-update",
            ),
            Outcome::TagUpdate => (
                't',
                "[tag update]".to_owned(),
                String::new(),
                "updating tag",
            ),
            Outcome::Rejected(why) => {
                refused = refused.max(Refused::Rejected);
                ('!', "[rejected]".to_owned(), format!("  ({why})"), "")
            }
        };
        let moves = !matches!(outcome, Outcome::Rejected(_) | Outcome::UpToDate);
        let mut error = None;
        let written = moves
            && !changes.dry_run
            && match repo.refs().write(local, &RefTarget::Id(new)) {
                Ok(()) => true,
                Err(failed) => {
                    refused = refused.max(match failed {
                        sluice_odb::RefError::NameConflict { .. } => Refused::InTheWay,
                        _ => Refused::Rejected,
                    });
                    code = '!';
                    note = "  (unable to update local ref)".to_owned();
                    error = Some(failed.to_string());
                    false
                }
            };
        if written {
            let logged = local.starts_with("refs/heads/")
                || local.starts_with("refs/remotes/")
                || local.starts_with("refs/notes/");
            if log_updates && logged {
                let null = repo.hash().null_id();
                let _ = repo.refs().append_log(
                    local,
                    &old.unwrap_or(null),
                    &new,
                    &who,
                    &format!("{}: {reason}", changes.action),
                );
            }
        }
        lines.push(Report::Line(Summary {
            code,
            summary,
            from: short(&update.remote.name).to_owned(),
            to: short(local).to_owned(),
            note,
            widens: true,
            error,
            old: old.unwrap_or(repo.hash().null_id()),
            new,
            local: local.clone(),
        }));
    }
    Ok(refused)
}

/// What git calls a remote ref in the report and FETCH_HEAD, and its short name: a branch, a
/// tag or a remote-tracking branch; `None` for any other ref.
pub(super) fn kind_of(name: &str) -> Option<(&'static str, &str)> {
    [
        ("refs/heads/", "branch"),
        ("refs/tags/", "tag"),
        ("refs/remotes/", "remote-tracking branch"),
    ]
    .into_iter()
    .find_map(|(prefix, kind)| Some((kind, name.strip_prefix(prefix)?)))
}

/// `FETCH_HEAD` (or, with `append`, what it gets added): the refs fetched, merge candidates first, each as `<id>\t[not-for-merge]\t
/// <kind> '<name>' of <url>`.
pub(super) fn write_fetch_head(
    repo: &Repository,
    updates: &[Update],
    url: &str,
    append: bool,
) -> anyhow::Result<()> {
    let path = repo.git_dir().join("FETCH_HEAD");
    let mut text = match append {
        true => std::fs::read_to_string(&path).unwrap_or_default(),
        false => String::new(),
    };
    for listed in [Listed::ForMerge, Listed::NotForMerge] {
        for update in updates.iter().filter(|u| u.listed == listed) {
            let name = &update.remote.name;
            let what = match kind_of(name) {
                Some((kind, short)) => format!("{kind} '{short}' of "),
                None if name == "HEAD" => String::new(),
                None => format!("'{name}' of "),
            };
            let flag = match listed {
                Listed::ForMerge => "",
                _ => "not-for-merge",
            };
            text.push_str(&format!("{}\t{flag}\t{what}{url}\n", update.remote.id));
        }
    }
    sluice_odb::write_locked(&path, text.as_bytes(), false)?;
    Ok(())
}
