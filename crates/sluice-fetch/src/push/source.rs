//! What the source side of a push refspec names: a local ref found by git's rules for short
//! names (`main`, `v1`, `refs/heads/main`, `HEAD`), or an object named by a full id, each
//! optionally followed by `~<n>` and `^<n>` steps through first and n-th parents.

use sluice_object::parse::parse_commit;
use sluice_object::ObjectId;
use sluice_odb::{RefTarget, Repository};

/// A resolved source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Source {
    /// How the report names it: the ref's full name, or the expression as given.
    pub(crate) shown: String,
    /// The ref it names, if it names one: a branch for `HEAD` on one.
    pub(crate) ref_name: Option<String>,
    /// The object pushed.
    pub(crate) id: ObjectId,
}

/// The places a short name is looked for, in git's order (`git rev-parse`).
const PLACES: [&str; 4] = ["refs/", "refs/tags/", "refs/heads/", "refs/remotes/"];

/// Resolves `expression`; `None` when it names nothing here.
pub(crate) fn resolve(repo: &Repository, expression: &str) -> Option<Source> {
    let split = expression.find(['~', '^']).unwrap_or(expression.len());
    let (base, steps) = expression.split_at(split);
    let mut source = resolve_base(repo, base)?;
    if !steps.is_empty() {
        source.id = walk_steps(repo, source.id, steps)?;
        source.ref_name = None;
        source.shown = expression.to_owned();
    }
    Some(source)
}

fn resolve_base(repo: &Repository, name: &str) -> Option<Source> {
    let refs = repo.refs();
    if name == "HEAD" || name == "@" {
        let branch = match refs.read("HEAD").ok()? {
            Some(RefTarget::Symbolic(branch)) => Some(branch),
            _ => None,
        };
        let (_, id) = refs.resolve("HEAD").ok()?;
        return Some(Source {
            shown: "HEAD".to_owned(),
            ref_name: branch,
            id: id?,
        });
    }
    let candidates = std::iter::once(name.to_owned())
        .filter(|n| n.starts_with("refs/"))
        .chain(PLACES.iter().map(|place| format!("{place}{name}")));
    for candidate in candidates {
        if !sluice_odb::refs::is_valid_ref_name(&candidate) {
            continue;
        }
        if let Ok((_, Some(id))) = refs.resolve(&candidate) {
            return Some(Source {
                shown: candidate.clone(),
                ref_name: Some(candidate),
                id,
            });
        }
    }
    let id = ObjectId::from_hex(repo.hash(), name.as_bytes()).ok()?;
    repo.objects().contains(&id).then(|| Source {
        shown: name.to_owned(),
        ref_name: None,
        id,
    })
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
