//! The clone's refs once its objects are in: `packed-refs` as the plan names them, the tags
//! that came along, HEAD, the remote's HEAD, and their reflogs, as git clone writes them.

use super::setup::write_config;
use super::CloneArgs;
use crate::commands::checkout::identity;
use crate::commands::remote::Remote;
use sluice_fetch::clone_plan::{ClonePlan, Origin};
use sluice_fetch::{anonymized, RemoteRef};
use sluice_object::ObjectId;
use sluice_odb::{Peeled, RefTarget, Repository};

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
    repo.refs().write_packed(
        plan.refs
            .iter()
            .map(|m| (m.local.clone(), m.remote.id, Peeled::Known(m.remote.peeled)))
            .collect(),
    )?;
    for tag in &followed {
        repo.refs().write(&tag.name, &RefTarget::Id(tag.id))?;
    }
    write_config(args, remote, origin, repo, plan)?;
    let bare = args.bare();
    let log = |name: &str, id: &ObjectId| {
        if !bare {
            let null = repo.hash().null_id();
            let who = identity(repo.config());
            let message = format!("clone: from {}", anonymized(&remote.recorded));
            let _ = repo.refs().append_log(name, &null, id, &who, &message);
        }
    };
    let head_id = match (&plan.head_branch, plan.detached) {
        (_, Some(id)) => {
            repo.refs().write("HEAD", &RefTarget::Id(id))?;
            log("HEAD", &id);
            Some(id)
        }
        (Some(branch), None) => {
            repo.refs()
                .write("HEAD", &RefTarget::Symbolic(branch.clone()))?;
            let id = advertised.iter().find(|r| &r.name == branch).map(|r| r.id);
            if let (Some(id), false) = (id, bare) {
                repo.refs().write(branch, &RefTarget::Id(id))?;
                log(branch, &id);
                log("HEAD", &id);
            }
            id
        }
        (None, None) => None,
    };
    // origin/HEAD follows the remote's HEAD when its branch was fetched.
    let remote_head = advertised
        .iter()
        .find(|r| r.name == "HEAD")
        .and_then(|h| h.symref_target.as_deref());
    if let (Some(remote_head), false) = (remote_head, bare) {
        let tracking = origin.tracking(remote_head);
        if let Some(fetched) = plan.refs.iter().find(|m| m.local == tracking) {
            let head = origin.tracking("HEAD");
            repo.refs()
                .write(&head, &RefTarget::Symbolic(tracking.clone()))?;
            log(&head, &fetched.remote.id);
        }
    }
    Ok(head_id)
}
