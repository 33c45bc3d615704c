//! Pushes from shallow repositories. A shallow client names its cut first (`shallow <id>`
//! lines before the commands) and sends history only down to it. Where the server has the
//! parents of every cut commit the pushed history reaches (the usual case: a CI job's
//! `--depth 1` clone pushing back to the repository it came from), the push is complete
//! here and lands as any other. Where it does not, the ref would name a history with a hole:
//! as in git it is refused ("shallow update not allowed"), unless `receive.shallowUpdate`
//! lets the server take the cut into its own `shallow` file.

use super::Command;
use sluice_object::parse::parse_commit;
use sluice_object::{IdSet, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use sluice_repo::Repository;

/// The client's cut commits that `command`'s new history reaches and whose parents the
/// server lacks: what the ref would need of a `shallow` file. The walk covers the commits
/// the push brought (those in `incoming`, not yet in the repository) and stops at the
/// repository's own, whose history is whole.
pub(super) fn cuts_needed(
    repo: &Repository,
    incoming: &ObjectDb,
    command: &Command,
    cut: &IdSet,
) -> Vec<ObjectId> {
    if cut.is_empty() || command.new.is_null() {
        return Vec::new();
    }
    let mut needed = Vec::new();
    let mut seen = IdSet::default();
    let mut pending = vec![command.new];
    while let Some(id) = pending.pop() {
        if !seen.insert(id) || (repo.objects().contains(&id) && !cut.contains(&id)) {
            continue;
        }
        let Ok(Some((ObjectKind::Commit, data))) = incoming.read(&id) else {
            continue;
        };
        let Ok(commit) = parse_commit(repo.hash(), &data) else {
            continue;
        };
        if cut.contains(&id) {
            if commit.parents.iter().any(|p| !incoming.contains(p)) {
                needed.push(id);
            }
            continue;
        }
        pending.extend(commit.parents);
    }
    needed.sort_unstable();
    needed
}
