//! The clone's refs and configuration once its objects are in (see
//! [`sluice_fetch::clone::write_refs`]), with the reflog entries a non-bare clone writes.

use super::setup::write_config;
use super::CloneArgs;
use sluice_fetch::clone::{self, ClonePlan, Origin, RefLog};
use sluice_fetch::Remote;
use sluice_fetch::{anonymized, RemoteRef};
use sluice_object::ObjectId;
use sluice_odb::refs::reflog_identity as identity;
use sluice_odb::Repository;

/// Writes the refs and the remote's configuration; returns the commit HEAD points at.
pub(super) fn write_refs(
    args: &CloneArgs,
    remote: &Remote,
    origin: &Origin,
    repo: &Repository,
    plan: &ClonePlan,
    advertised: &[RemoteRef],
) -> anyhow::Result<Option<ObjectId>> {
    // Tags that point into what arrived come along when only part of the remote was asked for.
    let followed = if args.single_branch() && !args.no_tags {
        plan.followed_tags(advertised, |id| repo.objects().contains(id))
    } else {
        Vec::new()
    };
    let reflog = (!args.bare()).then(|| RefLog {
        who: identity(repo.config()),
        message: format!("clone: from {}", anonymized(&remote.recorded)),
    });
    let head = clone::write_refs(repo, origin, plan, advertised, &followed, reflog.as_ref())?;
    write_config(args, remote, origin, repo, plan)?;
    Ok(head)
}
