//! The refs a server shows: HEAD and everything under `refs/`, with annotated tags peeled, and
//! without the ones `uploadpack.hideRefs` / `transfer.hideRefs` hide.

use crate::ServeError;
use sluice_object::parse::parse_tag;
use sluice_object::{ObjectId, ObjectKind};
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

/// The refs to advertise.
pub(crate) fn list_refs(repo: &Repository) -> Result<RefList, ServeError> {
    let hide = hide_patterns(repo.config(), "uploadpack");
    let refs = repo.refs();
    let mut list = RefList::default();
    let (head_target, head_id) = refs.resolve("HEAD")?;
    match head_id {
        Some(id) => list.refs.push(Advertised {
            name: "HEAD".into(),
            id,
            peeled: peel(repo, &id)?,
            symref_target: (head_target != "HEAD").then_some(head_target),
        }),
        None => list.unborn_head = Some(head_target),
    }
    for (name, id, peeled) in refs.list_peeled()? {
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
