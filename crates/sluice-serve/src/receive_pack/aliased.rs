//! Pushes into symbolic refs, as git's receive-pack takes them (`check_aliased_updates`): a
//! command naming a symbolic ref moves the ref it points to; beside a command for that ref
//! itself, the two must agree (then the symbolic one is done with it), else both are refused.

use super::messenger::Messenger;
use super::update::Results;
use super::Request;
use sluice_repo::{RefTarget, Repository};

/// What a command's update moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    /// The ref it names.
    Own,
    /// The ref the symbolic ref it names points to.
    Through(String),
    /// Nothing of its own: the push moves its symbolic ref's target the same way.
    Alongside,
}

/// The target of each command; inconsistent pairs are refused in `results`, in git's words.
pub(super) fn targets(
    repo: &Repository,
    request: &Request,
    results: &mut Results,
    messenger: &Messenger<'_>,
) -> Vec<Target> {
    let mut targets: Vec<Target> = (request.commands.iter())
        .map(|c| match repo.refs().read(&c.name) {
            Ok(Some(RefTarget::Symbolic(to))) if to.starts_with("refs/") => Target::Through(to),
            _ => Target::Own,
        })
        .collect();
    // Each symbolic ref named beside its target: (its command, the target's).
    let pairs: Vec<(usize, usize)> = (targets.iter().enumerate())
        .filter_map(|(i, target)| match target {
            Target::Through(to) => (request.commands.iter())
                .position(|c| &c.name == to)
                .map(|j| (i, j)),
            _ => None,
        })
        .collect();
    for (i, j) in pairs {
        let (alias, target) = (&request.commands[i], &request.commands[j]);
        if alias.old == target.old && alias.new == target.new {
            targets[i] = Target::Alongside;
            continue;
        }
        let short = |id| sluice_repo::abbrev::abbreviate(repo, id);
        messenger.say(format!(
            "error: refusing inconsistent update between symref '{}' ({}..{}) and its target '{}' ({}..{})",
            alias.name,
            short(&alias.old),
            short(&alias.new),
            target.name,
            short(&target.old),
            short(&target.new),
        ));
        for k in [i, j] {
            results[k].get_or_insert_with(|| "inconsistent aliased update".to_owned());
        }
    }
    targets
}
