//! Naming objects as `git rev-parse` reads them, in one place for every command that takes a
//! revision (`gitrevisions`): a base, then any number of suffixes.
//!
//! Bases: a ref by git's rules for short names ([`crate::Refs::dwim`]), `@` for `HEAD`, a
//! full or unique abbreviated object id (at least 4 hex digits), and the `@{…}` forms:
//! `<ref>@{<n>}` (the n-th prior value in its reflog), `@{-<n>}` (the n-th branch or commit
//! checked out before this one), `<branch>@{upstream}` (`@{u}`) and `<branch>@{push}`.
//! Suffixes: `~<n>` (n first parents), `^<n>` (the n-th parent, `^0` the commit itself),
//! `^{}` (tags peeled), `^{commit}`, `^{tag}`, `^{tree}`, `^{blob}`, `^{object}`.

use crate::{upstream, RefTarget, Repository};
use sluice_object::{ObjectId, ObjectKind};

/// What an expression names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The object.
    pub id: ObjectId,
    /// The ref it names, when it names one as it stands (no suffix taken): for `@{-1}` the
    /// branch checked out before, for `main@{u}` the remote-tracking ref.
    pub ref_name: Option<String>,
}

/// Resolves `expression`; `None` when it names nothing here (a missing ref or object, an
/// ambiguous short id, a step past the first commit, a peel to a kind the object is not).
pub fn resolve(repo: &Repository, expression: &str) -> Option<Named> {
    let (base, suffixes) = split_base(expression);
    let mut named = resolve_base(repo, base)?;
    if !suffixes.is_empty() {
        named.id = apply_suffixes(repo, named.id, suffixes)?;
        named.ref_name = None;
    }
    Some(named)
}

/// The base and the suffixes of an expression: the base ends at the first `~` or `^` outside
/// an `@{…}`.
fn split_base(expression: &str) -> (&str, &str) {
    let bytes = expression.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"@{") {
            match expression[i..].find('}') {
                Some(end) => i += end + 1,
                None => return (expression, ""),
            }
            continue;
        }
        if matches!(bytes[i], b'~' | b'^') {
            break;
        }
        i += 1;
    }
    expression.split_at(i)
}

fn resolve_base(repo: &Repository, base: &str) -> Option<Named> {
    if let Some(open) = base.find("@{") {
        let spec = base[open + 2..].strip_suffix('}')?;
        return resolve_at(repo, &base[..open], spec);
    }
    let base = if base == "@" { "HEAD" } else { base };
    if let Some((name, id)) = repo.refs().dwim(base).ok()? {
        return Some(Named {
            id,
            ref_name: Some(name),
        });
    }
    let id = expand_id(repo, base)?;
    Some(Named { id, ref_name: None })
}

// The `@{…}` forms.
/// What `<name>@{<spec>}` names (`name` may be empty: the branch checked out): the value
/// a reflog records, or a branch's upstream or push destination as its configuration
/// (through [`crate::upstream`]) says.
fn resolve_at(repo: &Repository, name: &str, spec: &str) -> Option<Named> {
    if let Some(back) = spec.strip_prefix('-') {
        if !name.is_empty() {
            return None;
        }
        return previous_checkout(repo, back.parse().ok()?);
    }
    if let Ok(n) = spec.parse::<usize>() {
        return reflog_entry(repo, name, n);
    }
    let tracking = match spec.to_ascii_lowercase().as_str() {
        "u" | "upstream" => upstream::upstream_ref,
        "push" => upstream::push_ref,
        // Dates (`@{yesterday}`) are not read.
        _ => return None,
    };
    named_ref(repo, tracking(repo, &branch_of(repo, name)?)?)
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

/// A full object id that is here, or a unique abbreviation of one (4 hex digits or more).
fn expand_id(repo: &Repository, text: &str) -> Option<ObjectId> {
    let full = 2 * repo.hash().len_in_bytes();
    if text.len() < 4 || text.len() > full || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let text = text.to_ascii_lowercase();
    if text.len() == full {
        let id = ObjectId::from_hex(repo.hash(), text.as_bytes()).ok()?;
        return repo.objects().contains(&id).then_some(id);
    }
    crate::abbrev::expand(repo.objects(), &text)
}

/// Follows the suffixes from `id`.
fn apply_suffixes(repo: &Repository, mut id: ObjectId, mut rest: &str) -> Option<ObjectId> {
    let objects = repo.objects();
    while let Some(op) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("^{") {
            let end = after.find('}')?;
            id = peel(repo, id, &after[..end])?;
            rest = &after[end + 1..];
            continue;
        }
        let digits = rest[1..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(rest.len(), |end| end + 1);
        let count: usize = match &rest[1..digits] {
            "" => 1,
            n => n.parse().ok()?,
        };
        rest = &rest[digits..];
        id = objects.peel_to_commit(id)?;
        match op {
            '~' => {
                for _ in 0..count {
                    id = *objects.commit_parents(&id)?.first()?;
                }
            }
            _ if count == 0 => {}
            _ => id = *objects.commit_parents(&id)?.get(count - 1)?,
        }
    }
    Some(id)
}

/// `^{<kind>}`: tags followed until an object of that kind (a commit's tree for `tree`); `^{}`
/// follows every tag; `^{object}` only asks that the object exists.
fn peel(repo: &Repository, id: ObjectId, kind: &str) -> Option<ObjectId> {
    let wanted = match kind {
        "" => None,
        "object" => return repo.objects().contains(&id).then_some(id),
        "commit" => Some(ObjectKind::Commit),
        "tag" => Some(ObjectKind::Tag),
        "tree" => Some(ObjectKind::Tree),
        "blob" => Some(ObjectKind::Blob),
        _ => return None,
    };
    repo.objects().peel_to(id, wanted)
}

#[cfg(test)]
mod tests;
