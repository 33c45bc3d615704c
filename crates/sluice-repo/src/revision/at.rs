//! The `@{…}` forms of a revision: `<ref>@{<n>}`, `@{-<n>}`, `<branch>@{upstream}` (`@{u}`)
//! and `<branch>@{push}`, read from the reflogs and the branch configuration as git reads them.

use super::{expand_id, Named};
use crate::{RefTarget, Repository};

/// What `<name>@{<spec>}` names (`name` may be empty: the branch checked out).
pub(super) fn resolve(repo: &Repository, name: &str, spec: &str) -> Option<Named> {
    if let Some(back) = spec.strip_prefix('-') {
        if !name.is_empty() {
            return None;
        }
        return previous_checkout(repo, back.parse().ok()?);
    }
    if let Ok(n) = spec.parse::<usize>() {
        return reflog_entry(repo, name, n);
    }
    match spec.to_ascii_lowercase().as_str() {
        "u" | "upstream" => upstream(repo, &branch_of(repo, name)?),
        "push" => push_destination(repo, &branch_of(repo, name)?),
        // Dates (`@{yesterday}`) are not read.
        _ => None,
    }
}

/// The branch `HEAD` is on (`refs/heads/…`), if it is on one.
fn current_branch(repo: &Repository) -> Option<String> {
    match repo.refs().read("HEAD").ok()?? {
        RefTarget::Symbolic(target) if target.starts_with("refs/heads/") => Some(target),
        _ => None,
    }
}

/// The branch `name` names (the current one when empty), as a full ref name.
fn branch_of(repo: &Repository, name: &str) -> Option<String> {
    match name {
        "" | "HEAD" | "@" => current_branch(repo),
        _ => {
            let (full, _) = repo.refs().dwim(name).ok()??;
            full.starts_with("refs/heads/").then_some(full)
        }
    }
}

/// `<name>@{<n>}`: the value `name` had `n` changes ago, as its reflog records it (`@{<n>}`
/// alone: the current branch's, or `HEAD`'s when detached).
fn reflog_entry(repo: &Repository, name: &str, n: usize) -> Option<Named> {
    let full = match name {
        "" => current_branch(repo).unwrap_or_else(|| "HEAD".to_owned()),
        "@" => "HEAD".to_owned(),
        _ => repo.refs().dwim(name).ok()??.0,
    };
    let values = repo.refs().logged_values(&full);
    let id = *values.get(values.len().checked_sub(n + 1)?)?;
    Some(Named { id, ref_name: None })
}

/// `@{-<n>}`: the branch (or commit) `HEAD` was on before the n-th last checkout, as `HEAD`'s
/// reflog records it (`checkout: moving from <it> to …`).
fn previous_checkout(repo: &Repository, n: usize) -> Option<Named> {
    let messages = repo.refs().logged_messages("HEAD");
    let from = (messages.iter().rev())
        .filter_map(|message| {
            let moved = message.strip_prefix("checkout: moving from ")?;
            Some(moved.split_once(" to ")?.0.to_owned())
        })
        .nth(n.checked_sub(1)?)?;
    let branch = format!("refs/heads/{from}");
    if let Ok((_, Some(id))) = repo.refs().resolve(&branch) {
        return Some(Named {
            id,
            ref_name: Some(branch),
        });
    }
    let id = expand_id(repo, &from)?;
    Some(Named { id, ref_name: None })
}

/// `<branch>@{upstream}`: the ref `branch.<name>.merge` names, as fetched from
/// `branch.<name>.remote` (through that remote's fetch refspecs; the ref itself for `.`).
fn upstream(repo: &Repository, branch: &str) -> Option<Named> {
    let short = branch.strip_prefix("refs/heads/")?;
    let (remote, merge) = crate::upstream::of(repo.config(), short)?;
    named_ref(repo, crate::upstream::tracked_as(repo, remote, merge)?)
}

/// `<branch>@{push}`: where `git push` would send the branch, as its remote-tracking ref:
/// the upstream for `push.default=upstream` (and for `simple`, where it is the ref the branch
/// would be pushed to; none otherwise), else the same name on the push remote.
fn push_destination(repo: &Repository, branch: &str) -> Option<Named> {
    let short = branch.strip_prefix("refs/heads/")?;
    let config = repo.config();
    let remote = config.get(&format!("branch.{short}.remote"));
    let push_remote = (config.get(&format!("branch.{short}.pushremote")))
        .or_else(|| config.get("remote.pushdefault"))
        .or(remote)?;
    match config.get("push.default").unwrap_or("simple") {
        "nothing" => None,
        "upstream" | "tracking" => upstream(repo, branch),
        // As git's: simple resolves only where the upstream is where the branch would go.
        "simple" => {
            let up = upstream(repo, branch)?;
            let to = crate::upstream::tracked_as(repo, push_remote, branch)?;
            (up.ref_name.as_deref() == Some(to.as_str())).then_some(up)
        }
        _ => named_ref(
            repo,
            crate::upstream::tracked_as(repo, push_remote, branch)?,
        ),
    }
}

fn named_ref(repo: &Repository, name: String) -> Option<Named> {
    let (_, id) = repo.refs().resolve(&name).ok()?;
    Some(Named {
        id: id?,
        ref_name: Some(name),
    })
}
