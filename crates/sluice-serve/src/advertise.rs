//! The refs a server shows: HEAD and everything under `refs/`, with annotated tags peeled, and
//! without the ones `uploadpack.hideRefs` / `transfer.hideRefs` hide.

use crate::ServeError;
use sluice_object::parse::parse_tag;
use sluice_object::{ObjectId, ObjectKind};
use sluice_repo::refs::namespace::Namespace;
use sluice_repo::{Peeled, Repository};

/// One advertised ref.
#[derive(Debug, Clone)]
pub(crate) struct Advertised {
    pub name: String,
    pub id: ObjectId,
    /// What an annotated tag finally points at.
    pub peeled: Option<ObjectId>,
    /// For HEAD: the branch it names.
    pub symref_target: Option<String>,
}

/// HEAD first (when it resolves), then the refs in name order.
#[derive(Debug, Clone, Default)]
pub(crate) struct RefList {
    pub refs: Vec<Advertised>,
    /// HEAD's branch when that branch does not exist yet (an empty repository).
    pub unborn_head: Option<String>,
}

impl RefList {
    pub fn head(&self) -> Option<&Advertised> {
        self.refs.first().filter(|r| r.name == "HEAD")
    }
}

/// The `hideRefs` patterns of `transfer.hideRefs` then `<service>.hideRefs` (`uploadpack`,
/// `receive`).
pub(crate) fn hide_patterns(config: &sluice_odb::Config, service: &str) -> Vec<String> {
    let key = format!("{service}.hiderefs");
    (config.get_all("transfer.hiderefs").into_iter())
        .chain(config.get_all(&key))
        .map(str::to_owned)
        .collect()
}

/// `hideRefs` prefixes, git's simple form: a ref is hidden when its name is the prefix or lies
/// below it; a leading `!` un-hides.
pub(crate) fn hidden_by(patterns: &[String], name: &str) -> bool {
    let mut hidden = false;
    for pattern in patterns {
        let (negate, prefix) = match pattern.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, pattern.as_str()),
        };
        let prefix = prefix.trim_end_matches('/');
        let matches = name == prefix
            || (name.starts_with(prefix) && name.as_bytes().get(prefix.len()) == Some(&b'/'));
        if matches {
            hidden = !negate;
        }
    }
    hidden
}

/// The refs to advertise: in a namespace (`GIT_NAMESPACE`), only those under it, named as
/// its clients name them, and its own `HEAD`.
pub(crate) fn list_refs(repo: &Repository) -> Result<RefList, ServeError> {
    let hide = hide_patterns(repo.config(), "uploadpack");
    let namespace = Namespace::from_env();
    let shown = |full: &str| -> Option<String> {
        match &namespace {
            Some(namespace) => namespace.strip(full).map(str::to_owned),
            None => Some(full.to_owned()),
        }
    };
    let refs = repo.refs();
    let mut list = RefList::default();
    let head = namespace
        .as_ref()
        .map_or("HEAD".to_owned(), |n| n.full("HEAD"));
    let (head_target, head_id) = match refs.resolve(&head) {
        // A namespace without a HEAD of its own shows none.
        Err(_) if namespace.is_some() => (head.clone(), None),
        resolved => resolved?,
    };
    let head_target = (head_target != head).then(|| shown(&head_target)).flatten();
    match (head_id, head_target) {
        (Some(id), target) => list.refs.push(Advertised {
            name: "HEAD".into(),
            id,
            peeled: peel(repo, &id)?,
            symref_target: target,
        }),
        (None, target) => list.unborn_head = target,
    }
    // A namespace's own `HEAD` is a file among its refs: git lists it again with them, first
    // (its protocol v2 ls-refs shows it twice; v0 sends it once).
    if let (Some(_), Some(head)) = (&namespace, list.head().cloned()) {
        list.refs.push(head);
    }
    for (full, id, peeled) in refs.list_peeled()? {
        let Some(name) = shown(&full) else {
            continue;
        };
        if name == "HEAD" {
            continue;
        }
        if hidden_by(&hide, &name) {
            continue;
        }
        list.refs.push(Advertised {
            peeled: match peeled {
                Peeled::Known(peeled) => peeled,
                Peeled::Unknown => peel(repo, &id)?,
            },
            name,
            id,
            symref_target: None,
        });
    }
    Ok(list)
}

/// The object an annotated tag (or a chain of them) points at; `None` for anything else.
pub(crate) fn peel(repo: &Repository, id: &ObjectId) -> Result<Option<ObjectId>, ServeError> {
    let mut current = *id;
    let mut peeled = None;
    for _ in 0..64 {
        match repo.objects().read(&current)? {
            Some((ObjectKind::Tag, data)) => {
                let tag = parse_tag(repo.hash(), &data).map_err(|e| ServeError::BadTag {
                    id: current,
                    source: e,
                })?;
                current = tag.object;
                peeled = Some(current);
            }
            _ => return Ok(peeled),
        }
    }
    Err(ServeError::TagChain { id: *id })
}

#[cfg(test)]
mod tests {
    use super::hidden_by;

    #[test]
    fn hide_refs_prefixes() {
        let patterns = vec!["refs/pull".to_owned(), "!refs/pull/keep".to_owned()];
        assert!(hidden_by(&patterns, "refs/pull/1/head"));
        assert!(!hidden_by(&patterns, "refs/pull/keep"));
        assert!(!hidden_by(&patterns, "refs/pullx"));
    }
}
