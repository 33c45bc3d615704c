//! Moving the refs of a push, so that a push of which no ref lands leaves nothing behind.
//!
//! git moves the quarantine in before it judges the refs, so a refused push keeps its
//! objects. Here every command is judged first (hidden refs, `receive.*`, the `update` hook,
//! which sees the pushed objects through the quarantine's environment); then, in git's order
//! (each ref prepared and committed before the next, or all at once when atomic), each
//! transaction is prepared (its refs locked and found at the values the client saw), and the
//! objects move in when the first one is prepared, before its refs move: a ref never names
//! an object the repository lacks, and a push with no ref to move drops its quarantine whole.
//! `updateInstead` moves the work tree after the objects are in, before the branch moves.

use super::aliased::Target;
use super::hooks::{Hooks, TransactionHook};
use super::messenger::Messenger;
use super::policy::Policy;
use super::{deploy, Command, Pusher, ReceiveError, Request};
use sluice_odb::quarantine::Quarantine;
use sluice_odb::ObjectDb;
use sluice_repo::refs::namespace::Namespace;
use sluice_repo::storage::{RefChange, RefGate};
use sluice_repo::{Expected, RefUpdate, Repository, Transaction, TransactionError};
use std::ffi::OsString;

/// Per command: `None` when it was applied, else git's word for why not.
pub(super) type Results = Vec<Option<String>>;

/// The objects of a push, while they wait in their quarantine.
pub(super) struct Incoming {
    /// The quarantine, if the push brought objects.
    pub(super) quarantine: Option<Quarantine>,
    /// What hooks are given to see the quarantined objects.
    pub(super) env: Vec<(String, OsString)>,
}

/// Judges each command, then moves the refs of those that pass, moving the objects in when
/// the first transaction is prepared. What the client is told (`error: ...`,
/// `warning: ...`, the hooks' output) goes through `messenger`.
pub(super) fn update_refs(
    repo: &Repository,
    request: &Request,
    hooks: &Hooks,
    pusher: Option<&Pusher>,
    incoming: Incoming,
    messenger: &Messenger<'_>,
    gate: Option<&dyn RefGate>,
) -> Result<Results, ReceiveError> {
    let policy = Policy::of(repo)?;
    let objects = match &incoming.quarantine {
        // The quarantine, with the repository's objects as its alternate.
        Some(quarantine) => {
            let main = [repo.objects().dir().to_owned()];
            &repo.objects().open_beside(quarantine.dir(), &main)?
        }
        None => repo.objects(),
    };
    let (mut results, deploys, cuts) = judge(
        repo,
        request,
        &policy,
        objects,
        hooks,
        &incoming.env,
        messenger,
    );
    let observer = TransactionHook {
        hooks,
        hash: repo.hash(),
        said: Default::default(),
        env: std::sync::Mutex::new(incoming.env.clone()),
    };
    let targets = super::aliased::targets(repo, request, &mut results, messenger);
    let update = updater(repo, &policy, pusher);
    let push = Push {
        repo,
        request,
        hooks,
        messenger,
        gate,
    };
    let mut waiting = Waiting {
        quarantine: incoming.quarantine,
        observer: &observer,
        moved_in: false,
    };
    let groups: Vec<Vec<usize>> = match request.atomic {
        // One refusal fails the whole push, the others saying so.
        true if results.iter().any(Option::is_some) => {
            fail_atomic(&mut results);
            Vec::new()
        }
        true => vec![(0..request.commands.len())
            .filter(|&i| targets[i] != Target::Alongside)
            .collect()],
        false => (0..request.commands.len())
            .filter(|&i| results[i].is_none() && targets[i] != Target::Alongside)
            .map(|i| vec![i])
            .collect(),
    };
    for group in groups {
        let mut transaction = Transaction::new();
        for &i in &group {
            let mut change = update(&request.commands[i]);
            if let Target::Through(to) = &targets[i] {
                change.name.clone_from(to);
            }
            transaction.update(change);
        }
        if let Err(Stop) = apply(
            &push,
            transaction,
            &group,
            &deploys,
            &mut waiting,
            &mut results,
        ) {
            break;
        }
    }
    drop(waiting);
    messenger.relay(&observer.said.into_inner().unwrap_or_default());
    // `receive.shallowUpdate`: the cuts the refs that moved now need join the repository's.
    let mut new_cuts: Vec<_> = (results.iter().zip(&cuts))
        .filter(|(result, _)| result.is_none())
        .flat_map(|(_, cuts)| cuts.iter().copied())
        .collect();
    new_cuts.sort_unstable();
    new_cuts.dedup();
    if let Err(e) = repo.update_shallow(&new_cuts, &[]) {
        messenger.say(format!("error: {e}"));
    }
    Ok(results)
}

/// What the steps after the verdicts share.
struct Push<'a, 'm> {
    repo: &'a Repository,
    request: &'a Request,
    hooks: &'a Hooks,
    messenger: &'a Messenger<'m>,
    gate: Option<&'a dyn RefGate>,
}

/// The pushed objects until the first transaction is prepared; dropped unmoved if none is.
struct Waiting<'a, 'h> {
    quarantine: Option<Quarantine>,
    observer: &'a TransactionHook<'h>,
    moved_in: bool,
}

/// Nothing more can move (the objects could not be moved in).
struct Stop;

/// Prepares `transaction` (the commands `group` of the request), moves the objects in if they
/// are still waiting, moves the work tree where `updateInstead` asks, then commits. Each
/// refusal is written into `results`.
fn apply(
    push: &Push<'_, '_>,
    transaction: Transaction,
    group: &[usize],
    deploys: &[bool],
    waiting: &mut Waiting<'_, '_>,
    results: &mut Results,
) -> Result<(), Stop> {
    let refs = push.repo.refs();
    let atomic = push.request.atomic;
    let refuse = |why: &str, results: &mut Results| match atomic {
        true => fail_atomic(results),
        false => group
            .iter()
            .for_each(|&i| results[i] = Some(why.to_owned())),
    };
    let ready = match transaction.prepare(&refs, waiting.observer) {
        Ok(ready) => ready,
        Err(e) => {
            push.messenger.say(format!("error: {e}"));
            refuse(refusal(&e), results);
            return Ok(());
        }
    };
    if !waiting.moved_in {
        if let Some(quarantine) = waiting.quarantine.take() {
            if let Err(e) = quarantine.migrate() {
                push.messenger.say(format!("error: {e}"));
                let why = "unable to migrate objects to permanent storage";
                results.iter_mut().for_each(|r| *r = Some(why.to_owned()));
                return Err(Stop);
            }
        }
        waiting.moved_in = true;
        // The quarantine is gone: hooks from here on see the repository itself.
        *waiting
            .observer
            .env
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Vec::new();
    }
    for &i in group.iter().filter(|&&i| deploys[i]) {
        let new = &push.request.commands[i].new;
        if let Err(why) = deploy::update_instead(push.repo, push.hooks, new) {
            // Its own reason, which an atomic push's others do not overwrite.
            results[i] = Some(why.to_owned());
            refuse(why, results);
            return Ok(());
        }
    }
    if let Some(gate) = push.gate {
        let changes: Vec<RefChange> = (group.iter())
            .map(|&i| &push.request.commands[i])
            .map(|c| RefChange {
                name: c.name.clone(),
                old: (!c.old.is_null()).then_some(c.old),
                new: (!c.new.is_null()).then_some(c.new),
            })
            .collect();
        // Refused there, nothing moves here: the locks go with `ready`.
        if let Err(why) = gate.commit(&changes) {
            push.messenger.say(format!("error: {why}"));
            refuse("failed to update ref", results);
            return Ok(());
        }
    }
    if let Err(e) = ready.commit() {
        push.messenger.say(format!("error: {e}"));
        refuse("failed to update ref", results);
    }
    Ok(())
}

/// git's word for a transaction that could not be prepared.
fn refusal(e: &TransactionError) -> &'static str {
    match e {
        TransactionError::Ref(sluice_repo::RefError::BadName(_)) => "funny refname",
        _ => "failed to update ref",
    }
}

/// The verdict on each command before any ref moves: a shallow client's history with a hole
/// here, hidden refs, `receive.*`, the `update` hook. Returns the refusals and, per command,
/// whether it moves the work tree and the cut it adds (`receive.shallowUpdate`).
fn judge(
    repo: &Repository,
    request: &Request,
    policy: &Policy,
    objects: &ObjectDb,
    hooks: &Hooks,
    env: &[(String, OsString)],
    messenger: &Messenger<'_>,
) -> (Results, Vec<bool>, Vec<Vec<sluice_object::ObjectId>>) {
    let hide = crate::advertise::hide_patterns(repo.config(), "receive");
    let mut results = Vec::with_capacity(request.commands.len());
    let mut deploys = Vec::with_capacity(request.commands.len());
    let cut: sluice_object::IdSet = request.shallow.iter().copied().collect();
    let mut added = Vec::with_capacity(request.commands.len());
    for command in &request.commands {
        let cuts = super::shallow::cuts_needed(repo, objects, command, &cut);
        if !cuts.is_empty() && !policy.shallow_update {
            results.push(Some("shallow update not allowed".to_owned()));
            deploys.push(false);
            added.push(Vec::new());
            continue;
        }
        added.push(cuts);
        if crate::advertise::hidden_by(&hide, &command.name) {
            results.push(Some(match command.new.is_null() {
                true => "deny deleting a hidden ref".to_owned(),
                false => "deny updating a hidden ref".to_owned(),
            }));
            deploys.push(false);
            continue;
        }
        let verdict = policy.judge(objects, command);
        (verdict.warnings.iter()).for_each(|w| messenger.say(format!("warning: {w}")));
        let mut refused = verdict.refused.map(|(reason, message)| {
            messenger.say(format!("error: {message}"));
            reason.to_owned()
        });
        if refused.is_none() {
            let (old, new) = (command.old.to_string(), command.new.to_string());
            let args = [command.name.as_str(), &old, &new];
            let ran = hooks.run_live("update", &args, b"", env, Some(messenger));
            if ran.is_some_and(|ran| !ran.success) {
                messenger.say(format!("error: hook declined to update {}", command.name));
                refused = Some("hook declined".to_owned());
            }
        }
        if refused.is_none() && !command.new.is_null() {
            let branch =
                sluice_repo::refs::check_branch_target(&command.name, &command.new, objects);
            if let Err(e) = branch {
                messenger.say(format!("error: {e}"));
                refused = Some("failed to update ref".to_owned());
            }
        }
        results.push(refused);
        deploys.push(verdict.deploy);
    }
    (results, deploys, added)
}

/// The ref update a command asks for, logged as `receive.*` and the pusher say.
fn updater<'a>(
    repo: &'a Repository,
    policy: &'a Policy,
    pusher: Option<&Pusher>,
) -> impl Fn(&Command) -> RefUpdate + 'a {
    let pushed = pusher.map(Pusher::identity);
    let pushed = (pushed.as_ref()).map(|(name, email)| (name.as_str(), email.as_str()));
    let who = sluice_repo::refs::reflog_identity_for(repo.config(), pushed);
    // In a namespace (`GIT_NAMESPACE`) the refs moved are under it; hooks and the report keep
    // the names the client gave.
    let namespace = Namespace::from_env();
    move |c: &Command| {
        let name = (namespace.as_ref()).map_or(c.name.clone(), |n| n.full(&c.name));
        // Whether it is logged goes by the ref's own name, the namespace's prefix included, as
        // in git (a namespaced branch is no branch that gets a reflog by default).
        let log = (policy.logs(repo, &name)).then(|| (who.clone(), "push".to_owned()));
        RefUpdate {
            name,
            expected: match c.old.is_null() {
                true => Expected::Absent,
                false => Expected::Id(c.old),
            },
            new: (!c.new.is_null()).then_some(c.new),
            log,
        }
    }
}

/// Every command of an atomic push not refused for a reason of its own is refused with it.
fn fail_atomic(results: &mut Results) {
    for result in results {
        result.get_or_insert_with(|| "atomic transaction failed".to_owned());
    }
}
