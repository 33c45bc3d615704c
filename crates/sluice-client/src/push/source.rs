//! What the source side of a push refspec names: a local ref found by git's rules for short
//! names (`main`, `v1`, `refs/heads/main`, `HEAD`), or an object named by a full id, each
//! optionally followed by `~<n>` and `^<n>` steps ([`sluice_repo::revision`]).

use sluice_object::ObjectId;
use sluice_repo::{RefTarget, Repository};

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

/// Resolves `expression`; `None` when it names nothing here. `HEAD` on a branch names that
/// branch's ref, as git's push reports it.
pub(crate) fn resolve(repo: &Repository, expression: &str) -> Option<Source> {
    let split = expression.find(['~', '^']).unwrap_or(expression.len());
    let base = &expression[..split];
    if (base == "HEAD" || base == "@") && split == expression.len() {
        let branch = match repo.refs().read("HEAD").ok()? {
            Some(RefTarget::Symbolic(branch)) => Some(branch),
            _ => None,
        };
        let (_, id) = repo.refs().resolve("HEAD").ok()?;
        return Some(Source {
            shown: "HEAD".to_owned(),
            ref_name: branch,
            id: id?,
        });
    }
    let expression = match base {
        "@" => format!("HEAD{}", &expression[split..]),
        _ => expression.to_owned(),
    };
    let named = sluice_repo::revision::resolve(repo, &expression)?;
    Some(Source {
        shown: named.ref_name.clone().unwrap_or(expression),
        ref_name: named.ref_name,
        id: named.id,
    })
}
