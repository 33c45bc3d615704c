//! `--negotiation-tip=<commit|glob>`: the only history a fetch offers the server as what it
//! has, instead of every ref's (a repository with many unrelated refs offers less and
//! negotiates faster; git's docs). A glob names refs (under `refs/` unless it starts there),
//! anything else a ref or an object id.

use sluice_index::wildmatch::wildmatch;
use sluice_object::ObjectId;
use sluice_repo::{RefError, Repository};

/// Why a tip names nothing.
#[derive(Debug, thiserror::Error)]
pub enum TipError {
    /// Neither a ref nor an object id.
    #[error("failed to resolve '{0}' as a valid revision.")]
    Unresolved(String),
    /// The refs could not be read.
    #[error(transparent)]
    Refs(#[from] RefError),
}

/// The objects the tips name (`HEAD` and other symbolic refs through what they name).
pub fn negotiation_tips(repo: &Repository, tips: &[String]) -> Result<Vec<ObjectId>, TipError> {
    let refs = repo.refs().list()?;
    let mut ids = Vec::new();
    for tip in tips {
        if tip.contains(['*', '?', '[']) {
            let pattern = match tip.starts_with("refs/") {
                true => tip.clone(),
                false => format!("refs/{tip}"),
            };
            let matching = refs
                .iter()
                .filter(|(name, _)| wildmatch(pattern.as_bytes(), name.as_bytes()));
            ids.extend(matching.map(|(_, id)| *id));
            continue;
        }
        let candidates = [
            tip.clone(),
            format!("refs/{tip}"),
            format!("refs/tags/{tip}"),
            format!("refs/heads/{tip}"),
            format!("refs/remotes/{tip}"),
            format!("refs/remotes/{tip}/HEAD"),
        ];
        // Symbolic refs (HEAD, a remote's HEAD) resolve to what they name.
        let by_name = candidates
            .iter()
            .find_map(|name| repo.refs().resolve(name).ok().and_then(|(_, id)| id));
        let by_id = || {
            ObjectId::from_hex(repo.hash(), tip.as_bytes())
                .ok()
                .filter(|id| repo.objects().contains(id))
        };
        ids.push(
            by_name
                .or_else(by_id)
                .ok_or_else(|| TipError::Unresolved(tip.clone()))?,
        );
    }
    Ok(ids)
}
