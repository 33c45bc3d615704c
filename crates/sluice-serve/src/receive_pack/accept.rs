//! What receive-pack does once a push's objects are in (in their quarantine): the hooks
//! around the ref updates, as git runs them. `pre-receive` may refuse everything; the
//! commands `receive.procReceiveRefs` names go to the `proc-receive` hook, which does what it
//! does instead (the objects move in first, so that the refs it makes can name them); the
//! others are judged and applied (`update`); `post-receive` and `post-update` hear what moved.

use super::certificate;
use super::hooks::Hooks;
use super::messenger::Messenger;
use super::proc_receive::{self, Outcome, ProcRefs};
use super::update::{self, Results};
use super::{Command, Pusher, ReceiveError, ReceivePackOptions, Request};
use sluice_odb::quarantine::Quarantine;
use sluice_repo::Repository;
use sluice_wire::report_status::Rewrite;

/// Per command: the proc-receive hook's reports of what it did instead (empty for the
/// others), which report-status-v2 and `post-receive` tell.
pub(super) type Reports = Vec<Vec<Rewrite>>;

/// The objects are in (in `quarantine`, if the push brought any): runs pre-receive, hands
/// the proc-receive hook its commands, then moves the objects in and the refs (`update`:
/// only if a ref is to move), then runs post-receive and post-update.
pub(super) fn accept(
    repo: &Repository,
    request: &Request,
    quarantine: Option<Quarantine>,
    session: &ReceivePackOptions,
    messenger: &Messenger<'_>,
    nonces: Option<(&certificate::Nonces, &str)>,
) -> Result<(Results, Reports), ReceiveError> {
    let count = request.commands.len();
    let pusher = session.pusher.as_ref();
    let hooks = Hooks::of(repo, pusher.map(Pusher::environment).unwrap_or_default());
    let all: Vec<&Command> = request.commands.iter().collect();
    let refuse_all = |why: &str| (vec![Some(why.to_owned()); count], vec![Vec::new(); count]);
    // A ref named twice cannot be judged once: the whole push is refused, before any hook.
    let mut names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    if let Some(twice) = names.windows(2).find(|pair| pair[0] == pair[1]) {
        messenger.say(format!(
            "error: multiple updates for ref '{}' not allowed",
            twice[0]
        ));
        return Ok(refuse_all("multiple updates for the same ref"));
    }
    let mut options = push_option_environment(request);
    // A certificate is stored (in the quarantine, if any: a refused push keeps nothing) and
    // judged once; pre-receive and post-receive both see the verdict, as in git.
    if let (Some(cert), Some((nonces, issued))) = (&request.certificate, nonces) {
        let objects = match &quarantine {
            Some(quarantine) => sluice_odb::LooseObjects::new(quarantine.dir(), repo.hash()),
            None => sluice_odb::LooseObjects::new(repo.objects().dir(), repo.hash()),
        };
        options.extend(cert.environment(&objects, nonces, issued, session.stateless_rpc));
    }
    let quarantined = (quarantine.as_ref())
        .map(Quarantine::hook_environment)
        .unwrap_or_default();
    let mut env = quarantined.clone();
    env.extend(options.iter().cloned());
    let ran = hooks.run_live(
        "pre-receive",
        &[],
        lines(&all).as_bytes(),
        &env,
        Some(messenger),
    );
    if ran.is_some_and(|ran| !ran.success) {
        return Ok(refuse_all("pre-receive hook declined"));
    }
    let mut incoming = update::Incoming {
        quarantine,
        env: quarantined,
    };
    // Deletions of refs that do not exist (and whose old value names no object): git warns,
    // and leaves them out of post-receive and post-update, which do not run for them alone.
    let did_not_exist: Vec<bool> = (request.commands.iter())
        .map(|c| {
            c.new.is_null()
                && !repo.objects().contains(&c.old)
                && repo.refs().read(&c.name).ok().flatten().is_none()
        })
        .collect();
    let decided = match proc_receive_step(repo, request, &hooks, &mut incoming, messenger) {
        Some(decided) => decided,
        None => return Ok(refuse_all("unable to migrate objects to permanent storage")),
    };
    let (results, reports) =
        update_the_rest(repo, request, &hooks, session, incoming, messenger, decided)?;
    let gone = (results.iter().zip(&did_not_exist)).filter(|(r, gone)| r.is_none() && **gone);
    for _ in gone {
        messenger.say("warning: deleting a non-existent ref".to_owned());
    }
    let applied: Vec<usize> = (0..count)
        .filter(|&i| results[i].is_none() && !did_not_exist[i])
        .collect();
    if !applied.is_empty() {
        let input: String = (applied.iter())
            .map(|&i| received_lines(&request.commands[i], &reports[i]))
            .collect();
        hooks.run_live(
            "post-receive",
            &[],
            input.as_bytes(),
            &options,
            Some(messenger),
        );
        let names: Vec<&str> = (applied.iter())
            .map(|&i| request.commands[i].name.as_str())
            .collect();
        hooks.run_live("post-update", &names, b"", &[], Some(messenger));
        // receive.updateServerInfo: the files dumb HTTP clients read, as git refreshes them.
        if repo.config().get_bool("receive.updateserverinfo")? == Some(true) {
            if let Err(e) = sluice_repo::server_info::update_server_info(repo) {
                messenger.say(format!("error: {e}"));
            }
        }
    }
    Ok((results, reports))
}

/// What the proc-receive hook decided, per command: `None` where receive-pack is to update
/// the ref itself.
type Decided = Vec<Option<Outcome>>;

/// Runs the proc-receive hook for the commands `receive.procReceiveRefs` names, if any; the
/// objects move in first, as git moves them before the hook runs. `None` if they could not.
fn proc_receive_step(
    repo: &Repository,
    request: &Request,
    hooks: &Hooks,
    incoming: &mut update::Incoming,
    messenger: &Messenger<'_>,
) -> Option<Decided> {
    let rules = ProcRefs::of(repo.config());
    let sent: Vec<bool> = request.commands.iter().map(|c| rules.matches(c)).collect();
    if !sent.contains(&true) {
        return Some(vec![None; sent.len()]);
    }
    if let Some(quarantine) = incoming.quarantine.take() {
        if let Err(e) = quarantine.migrate() {
            messenger.say(format!("error: {e}"));
            return None;
        }
    }
    incoming.env.clear();
    let push_options = (request.push_options_follow).then_some(request.push_options.as_slice());
    let run = proc_receive::run(
        hooks,
        &request.commands,
        &sent,
        push_options,
        request.atomic,
        repo.hash(),
    );
    messenger.relay(&run.said);
    if let Some(error) = run.error {
        messenger.say(format!("error: {error}"));
    }
    Some(
        (run.outcomes.into_iter())
            .map(|outcome| match outcome {
                Outcome::Ours => None,
                decided => Some(decided),
            })
            .collect(),
    )
}

/// Judges and applies the commands the proc-receive hook left to receive-pack, and puts
/// every command's result together.
fn update_the_rest(
    repo: &Repository,
    request: &Request,
    hooks: &Hooks,
    session: &ReceivePackOptions,
    incoming: update::Incoming,
    messenger: &Messenger<'_>,
    decided: Decided,
) -> Result<(Results, Reports), ReceiveError> {
    let ours: Vec<usize> = (0..decided.len())
        .filter(|&i| decided[i].is_none())
        .collect();
    let mut rest = request.clone();
    rest.commands = ours.iter().map(|&i| request.commands[i].clone()).collect();
    let pusher = session.pusher.as_ref();
    let gate = session.gate.as_deref();
    let updated = match rest.commands.is_empty() {
        true => Vec::new(),
        false => update::update_refs(repo, &rest, hooks, pusher, incoming, messenger, gate)?,
    };
    let mut results = vec![None; decided.len()];
    let mut reports = vec![Vec::new(); decided.len()];
    for (i, outcome) in decided.into_iter().enumerate() {
        match outcome {
            Some(Outcome::Done(done)) => reports[i] = done,
            Some(Outcome::Refused(why)) => results[i] = Some(why),
            Some(Outcome::Ours) | None => {}
        }
    }
    let atomic_failure = request.atomic && updated.iter().any(Option::is_some);
    for (&i, result) in ours.iter().zip(updated) {
        results[i] = result;
    }
    // As git: an atomic push whose own updates fail fails every command not refused already,
    // the hook's too.
    if atomic_failure {
        for result in &mut results {
            result.get_or_insert_with(|| "atomic transaction failed".to_owned());
        }
    }
    Ok((results, reports))
}

/// The hook input lines of commands: `<old> <new> <ref>`.
fn lines(commands: &[&Command]) -> String {
    (commands.iter())
        .map(|c| format!("{} {} {}\n", c.old, c.new, c.name))
        .collect()
}

/// A command's lines for `post-receive`: its own, or one per report of what the
/// proc-receive hook did instead (what a report leaves out is the command's).
fn received_lines(command: &Command, reports: &[Rewrite]) -> String {
    if reports.is_empty() {
        return lines(&[command]);
    }
    (reports.iter())
        .map(|report| {
            let old = report.old.unwrap_or(command.old);
            let new = report.new.unwrap_or(command.new);
            let name = report.name.as_deref().unwrap_or(&command.name);
            format!("{old} {new} {name}\n")
        })
        .collect()
}

/// What pre-receive and post-receive are told of push options, as git tells them:
/// `GIT_PUSH_OPTION_COUNT` (0 when there are none) and `GIT_PUSH_OPTION_<i>`.
fn push_option_environment(request: &Request) -> Vec<(String, std::ffi::OsString)> {
    let count = request.push_options.len().to_string();
    let mut env = vec![("GIT_PUSH_OPTION_COUNT".to_owned(), count.into())];
    for (i, option) in request.push_options.iter().enumerate() {
        env.push((format!("GIT_PUSH_OPTION_{i}"), option.into()));
    }
    env
}
