//! Naming objects as git's rev-parse does, for the forms Sluice's commands take: a ref by git's
//! rules for short names ([`crate::Refs::dwim`]) or a full object id, followed by any of `~<n>`
//! (the n-th first-parent ancestor) and `^<n>` (the n-th parent; `^0` the commit itself).

use crate::Repository;
use sluice_object::parse::parse_commit;
use sluice_object::ObjectId;

/// What an expression names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The object.
    pub id: ObjectId,
    /// The ref it names, when it names one as it stands (no steps taken).
    pub ref_name: Option<String>,
}

/// Resolves `expression`; `None` when it names nothing here (or a step finds no parent).
pub fn resolve(repo: &Repository, expression: &str) -> Option<Named> {
    let split = expression.find(['~', '^']).unwrap_or(expression.len());
    let (base, steps) = expression.split_at(split);
    let mut named = match repo.refs().dwim(base).ok()? {
        Some((name, id)) => Named {
            id,
            ref_name: Some(name),
        },
        None => {
            let id = ObjectId::from_hex(repo.hash(), base.as_bytes()).ok()?;
            repo.objects()
                .contains(&id)
                .then_some(Named { id, ref_name: None })?
        }
    };
    if !steps.is_empty() {
        named.id = walk_steps(repo, named.id, steps)?;
        named.ref_name = None;
    }
    Some(named)
}

/// Follows `~<n>` (n first parents) and `^<n>` (the n-th parent, `^0` the commit itself).
fn walk_steps(repo: &Repository, mut id: ObjectId, mut steps: &str) -> Option<ObjectId> {
    while let Some(op) = steps.chars().next() {
        let digits = steps[1..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(steps.len(), |end| end + 1);
        let count: usize = match &steps[1..digits] {
            "" => 1,
            n => n.parse().ok()?,
        };
        steps = &steps[digits..];
        id = repo.objects().peel_to_commit(id)?;
        match op {
            '~' => {
                for _ in 0..count {
                    id = *parents(repo, id)?.first()?;
                }
            }
            _ if count == 0 => {}
            _ => id = *parents(repo, id)?.get(count - 1)?,
        }
    }
    Some(id)
}

fn parents(repo: &Repository, id: ObjectId) -> Option<Vec<ObjectId>> {
    let (_, data) = repo.objects().read(&id).ok()??;
    Some(parse_commit(repo.hash(), &data).ok()?.parents)
}
