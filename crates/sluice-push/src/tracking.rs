//! What a push changes here: the remote-tracking refs of a named remote follow what the server
//! took (`update by push`), and `--set-upstream` records upstreams.

use super::{PushError, PushedRef, RefStatus, UpstreamSet};
use sluice_repo::upstream::{fetch_specs, tracking_ref};
use sluice_repo::{RefTarget, Repository};

/// Moves the remote-tracking ref of each ref the server took or has already, as
/// `remote.<name>.fetch` maps it, logging `update by push` where git logs; returns their names.
pub(crate) fn update(
    repo: &Repository,
    remote: &str,
    refs: &[PushedRef],
) -> Result<Vec<String>, PushError> {
    let config = repo.config();
    let specs = fetch_specs(repo, remote);
    let bare = repo.work_tree().is_none();
    let log_refs = sluice_repo::refs::reflog::LogRefs::from_config(config, bare)?;
    let who = sluice_repo::refs::reflog_identity(config);
    let null = repo.hash().null_id();
    let mut updated = Vec::new();
    for r in (refs.iter()).filter(|r| matches!(r.status, RefStatus::Ok | RefStatus::UpToDate)) {
        let Some(tracking) = tracking_ref(&specs, &r.dst) else {
            continue;
        };
        let refs_here = repo.refs();
        let old = refs_here.resolve(&tracking).ok().and_then(|(_, id)| id);
        updated.push(tracking.clone());
        match r.new {
            // Unchanged: nothing written, nothing logged.
            Some(new) if old == Some(new) => {}
            Some(new) => {
                refs_here.write(&tracking, &RefTarget::Id(new))?;
                if refs_here.logs(log_refs, &tracking) {
                    let old = old.unwrap_or(null);
                    refs_here.append_log(&tracking, &old, &new, &who, "update by push")?;
                }
            }
            None if old.is_some() => refs_here.delete(&tracking)?,
            None => {}
        }
    }
    Ok(updated)
}

/// `--set-upstream`: each local branch pushed to a branch gets it as its upstream; returns
/// what was recorded, for the message git prints.
pub(crate) fn set_upstreams(
    repo: &Repository,
    remote: &str,
    refs: &[PushedRef],
) -> Result<Vec<UpstreamSet>, PushError> {
    let mut set = Vec::new();
    let mut file = repo.config_file()?;
    for r in refs
        .iter()
        .filter(|r| matches!(r.status, RefStatus::Ok | RefStatus::UpToDate))
    {
        let Some(src) = &r.src else { continue };
        let branch = match src.as_str() {
            "HEAD" => match repo.refs().read("HEAD")? {
                Some(RefTarget::Symbolic(branch)) => branch,
                _ => continue,
            },
            other => other.to_owned(),
        };
        let (Some(branch), true) = (
            branch.strip_prefix("refs/heads/"),
            r.dst.starts_with("refs/heads/"),
        ) else {
            continue;
        };
        let config = repo.config();
        let rebasing = sluice_repo::upstream::record(&mut file, config, branch, remote, &r.dst)?;
        set.push(UpstreamSet {
            branch: branch.to_owned(),
            remote: remote.to_owned(),
            merge: r.dst.clone(),
            rebasing,
        });
    }
    if !set.is_empty() {
        file.write()?;
    }
    Ok(set)
}
