//! What a push changes here, and the refs it adds on its own: the remote-tracking refs of a
//! named remote follow what the server took (`update by push`), `--set-upstream` records
//! upstreams, `--prune`/`--mirror` delete what the remote has and this side does not, and
//! `--follow-tags` adds the annotated tags of the history pushed.

use super::spec::Source;
use super::spec::{Paired, PushRefspec};
use super::{PushError, PushedRef, RefStatus, UpstreamSet};
use sluice_object::ObjectKind;
use sluice_remote::RemoteRef;
use sluice_repo::upstream::{fetch_specs, tracking_ref};
use sluice_repo::{RefTarget, Repository};

/// The value of the remote-tracking ref of the remote's `name`: what `--force-with-lease`
/// expects the remote to have.
pub(crate) fn tracking_value(
    repo: &Repository,
    remote: &str,
    name: &str,
) -> Option<sluice_object::ObjectId> {
    let tracking = tracking_ref(&fetch_specs(repo, remote), name)?;
    repo.refs().resolve(&tracking).ok()?.1
}

/// Whether `seen` (a remote-tracking ref's value) is in the history of the local ref `local`:
/// reachable from its value now or from any value its reflog records (`--force-if-includes`:
/// the remote's work was integrated here at some point, even if rewritten since).
pub(crate) fn in_history_of(
    repo: &Repository,
    local: &str,
    seen: &sluice_object::ObjectId,
) -> bool {
    let objects = repo.objects();
    let now = repo.refs().resolve(local).ok().and_then(|(_, id)| id);
    let mut values = repo.refs().logged_values(local);
    values.extend(now);
    values.dedup();
    // Newest first: a rebase onto the remote's tip is usually the latest entry.
    (values.iter().rev())
        .any(|v| v == seen || sluice_graph::ancestry::is_ancestor(objects, seen, v))
}

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

/// `--prune`: the remote refs a pattern's destination covers with no local ref behind them.
pub(crate) fn pruned(
    specs: &[PushRefspec],
    paired: &[Paired],
    advertised: &[RemoteRef],
) -> Vec<Paired> {
    let mut deleted = Vec::new();
    let patterns = (specs.iter()).filter(|s| !s.negative);
    for spec in patterns.filter(|s| s.src.as_deref().is_some_and(|s| s.contains('*'))) {
        let src = spec.src.as_deref().unwrap_or_default();
        let dst = spec.dst.as_deref().unwrap_or(src);
        let Some((before, after)) = dst.split_once('*') else {
            continue;
        };
        for remote in advertised {
            let covered = remote
                .name
                .strip_prefix(before)
                .and_then(|rest| rest.strip_suffix(after))
                .is_some();
            let kept = paired.iter().any(|p| p.dst == remote.name);
            if covered && !kept && !deleted.iter().any(|d: &Paired| d.dst == remote.name) {
                deleted.push(Paired {
                    src: None,
                    dst: remote.name.clone(),
                    force: spec.force,
                });
            }
        }
    }
    deleted
}

/// `--follow-tags`: annotated tags here, missing on the remote, whose commits the push sends
/// or the remote has.
pub(crate) fn followed_tags(
    repo: &Repository,
    paired: &[Paired],
    advertised: &[RemoteRef],
) -> Result<Vec<Paired>, PushError> {
    let pushed: Vec<_> = (paired.iter())
        .filter_map(|p| p.src.as_ref().map(|s| s.id))
        .filter_map(|id| repo.objects().peel_to_commit(id))
        .collect();
    let mut tags = Vec::new();
    for (name, id) in repo.refs().list()? {
        let taken = paired.iter().any(|p| p.dst == name);
        if !name.starts_with("refs/tags/") || taken || advertised.iter().any(|r| r.name == name) {
            continue;
        }
        let annotated = matches!(repo.objects().read(&id), Ok(Some((ObjectKind::Tag, _))));
        let Some(commit) = annotated
            .then(|| repo.objects().peel_to_commit(id))
            .flatten()
        else {
            continue;
        };
        let odb = repo.objects();
        if pushed
            .iter()
            .any(|tip| sluice_graph::ancestry::is_ancestor(odb, &commit, tip))
        {
            tags.push(Paired {
                src: Some(Source {
                    shown: name.clone(),
                    ref_name: Some(name.clone()),
                    id,
                }),
                dst: name,
                force: false,
            });
        }
    }
    Ok(tags)
}
