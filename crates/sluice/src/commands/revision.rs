//! Naming commits as git does for the commands Sluice has: a branch, a tag, a remote-tracking
//! branch, a full ref name, `HEAD`, or a full object id.

use anyhow::bail;
use sluice_object::ObjectId;
use sluice_odb::Repository;

/// What a name resolved to.
pub struct Resolved {
    /// The object.
    pub id: ObjectId,
    /// The local branch it names (`refs/heads/…`), if it names one.
    pub branch: Option<String>,
}

/// Resolves `name` in the order of git's `rev-parse` rules for the forms supported.
pub fn resolve(repo: &Repository, name: &str) -> anyhow::Result<Resolved> {
    let refs = repo.refs();
    let candidates = [
        name.to_owned(),
        format!("refs/{name}"),
        format!("refs/tags/{name}"),
        format!("refs/heads/{name}"),
        format!("refs/remotes/{name}"),
        format!("refs/remotes/{name}/HEAD"),
    ];
    for candidate in &candidates {
        if !sluice_odb::refs::is_valid_ref_name(candidate)
            || (candidate == name && !name.starts_with("refs/") && name != "HEAD")
        {
            continue;
        }
        if let Ok((_, Some(id))) = refs.resolve(candidate) {
            let branch = candidate
                .strip_prefix("refs/heads/")
                .map(|_| candidate.clone());
            // A branch given by its short name is checked out as that branch.
            return Ok(Resolved { id, branch });
        }
    }
    if let Ok(id) = ObjectId::from_hex(repo.hash(), name.as_bytes()) {
        if repo.objects().contains(&id) {
            return Ok(Resolved { id, branch: None });
        }
    }
    bail!("invalid reference: {name}")
}
