//! The `@{…}` forms of a revision: `<ref>@{<n>}`, `@{-<n>}`, `<branch>@{upstream}` (`@{u}`)
//! and `<branch>@{push}`, read from the reflogs and (through [`crate::upstream`]) the branch
//! configuration as git reads them.

use super::{expand_id, Named};
use crate::{upstream, RefTarget, Repository};

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
        "u" | "upstream" => named_ref(repo, upstream::upstream_ref(repo, &branch_of(repo, name)?)?),
        "push" => named_ref(repo, upstream::push_ref(repo, &branch_of(repo, name)?)?),
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

/// The branch `name` names (the current one when empty), as a short name.
fn branch_of(repo: &Repository, name: &str) -> Option<String> {
    let full = match name {
        "" | "HEAD" | "@" => current_branch(repo)?,
        _ => repo.refs().dwim(name).ok()??.0,
    };
    full.strip_prefix("refs/heads/").map(str::to_owned)
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

fn named_ref(repo: &Repository, name: String) -> Option<Named> {
    let (_, id) = repo.refs().resolve(&name).ok()?;
    Some(Named {
        id: id?,
        ref_name: Some(name),
    })
}
