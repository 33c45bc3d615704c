//! Moving the refs once the objects are in, through the library ([`sluice_fetch::fetch`]):
//! the tags followed after the pack, a shallow remote's cut, pruning, `--atomic`, FETCH_HEAD;
//! then the report and the exit code, as git gives them.

use super::plan::Plan;
use super::receive::Cut;
use super::report::{print_report, ReportFormat};
use super::{display_url, writes_fetch_head, FetchArgs, One};
use sluice_fetch::fetch::{
    any_rejected, conflicts, prune_stale, set_upstream, stale_refs, update_refs, write_fetch_head,
    Changes, Listed, Refused, RemoteCut, Update,
};
use sluice_fetch::RemoteRef;
use sluice_object::ObjectId;
use sluice_odb::refs::reflog_identity;
use sluice_odb::{ObjectDb, Repository};
use std::process::ExitCode;

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
    let who = reflog_identity(repo.config());
    let changes = Changes {
        dry_run,
        verbose: args.verbose > 0,
        action: &one.action,
        who: &who,
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
        let current = plan.refs.current_branch.as_deref();
        if let Some(warning) = set_upstream(repo, current, &plan.refs.remote_name, &fetched)? {
            eprintln!("warning: {warning}");
        }
    }
    if refused == Refused::InTheWay {
        // As git 2.47 advises; 2.39 gives the advice only when the ref in the way is loose.
        eprintln!("error: some local refs could not be updated; try running\n 'git remote prune {}' to remove any old, conflicting branches", plan.refs.remote_name);
    }
    Ok(match refused == Refused::None && in_the_way.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}
