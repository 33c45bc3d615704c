//! A clone's refs once its objects are in, as git clone writes them: `packed-refs` as the plan
//! names them, the tags that came along, HEAD (on a branch or detached), the remote's HEAD
//! (`refs/remotes/<name>/HEAD`), and the reflog entries of each.

use super::plan::{ClonePlan, Origin};
use sluice_object::ObjectId;
use sluice_remote::RemoteRef;
use sluice_repo::{Peeled, RefError, RefTarget, Repository};

/// Who made the clone and what its reflog entries say (`clone: from <url>`); a bare clone
/// writes no reflog.
#[derive(Debug, Clone)]
pub struct RefLog {
    /// The committer identity and time, as the reflog records them.
    pub who: String,
    /// The message.
    pub message: String,
}

/// Writes the refs of `plan` into `repo`, and `followed` (tags outside the plan that came with
/// the pack); returns the commit HEAD points at, if any.
pub fn write_refs(
    repo: &Repository,
    origin: &Origin,
    plan: &ClonePlan,
    advertised: &[RemoteRef],
    followed: &[&RemoteRef],
    reflog: Option<&RefLog>,
) -> Result<Option<ObjectId>, RefError> {
    let refs = repo.refs();
    refs.write_packed(
        plan.refs
            .iter()
            .map(|m| (m.local.clone(), m.remote.id, Peeled::Known(m.remote.peeled)))
            .collect(),
    )?;
    for tag in followed {
        refs.write(&tag.name, &RefTarget::Id(tag.id))?;
    }
    let log = |name: &str, id: &ObjectId| {
        if let Some(reflog) = reflog {
            let null = repo.hash().null_id();
            // As git: a reflog that cannot be written does not fail the clone.
            let _ = refs.append_log(name, &null, id, &reflog.who, &reflog.message);
        }
    };
    let head_id = match (&plan.head_branch, plan.detached) {
        (_, Some(id)) => {
            refs.write("HEAD", &RefTarget::Id(id))?;
            log("HEAD", &id);
            Some(id)
        }
        (Some(branch), None) => {
            refs.write("HEAD", &RefTarget::Symbolic(branch.clone()))?;
            let id = advertised.iter().find(|r| &r.name == branch).map(|r| r.id);
            if let (Some(id), false) = (id, plan.bare) {
                refs.write(branch, &RefTarget::Id(id))?;
                log(branch, &id);
                log("HEAD", &id);
            }
            id
        }
        (None, None) => None,
    };
    if !plan.bare {
        write_remote_head(repo, origin, plan, advertised, &log)?;
    }
    Ok(head_id)
}

/// `refs/remotes/<name>/HEAD` follows the remote's HEAD when its branch was fetched.
fn write_remote_head(
    repo: &Repository,
    origin: &Origin,
    plan: &ClonePlan,
    advertised: &[RemoteRef],
    log: &dyn Fn(&str, &ObjectId),
) -> Result<(), RefError> {
    let remote_head = advertised
        .iter()
        .find(|r| r.name == "HEAD")
        .and_then(|h| h.symref_target.as_deref());
    let Some(remote_head) = remote_head else {
        return Ok(());
    };
    let tracking = origin.tracking(remote_head);
    if let Some(fetched) = plan.refs.iter().find(|m| m.local == tracking) {
        let head = origin.tracking("HEAD");
        repo.refs()
            .write(&head, &RefTarget::Symbolic(tracking.clone()))?;
        log(&head, &fetched.remote.id);
    }
    Ok(())
}
