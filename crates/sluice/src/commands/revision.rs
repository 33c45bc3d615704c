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
    /// The branch was just created from a remote-tracking branch.
    pub created: bool,
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
            return Ok(Resolved {
                id,
                branch,
                created: false,
            });
        }
    }
    if let Some(resolved) = guess_remote_branch(repo, name)? {
        return Ok(resolved);
    }
    if let Ok(id) = ObjectId::from_hex(repo.hash(), name.as_bytes()) {
        if repo.objects().contains(&id) {
            return Ok(Resolved {
                id,
                branch: None,
                created: false,
            });
        }
    }
    bail!("invalid reference: {name}")
}

/// git's checkout guess: `<name>` that is no ref but exactly one remote's `<remote>/<name>`
/// becomes a new local branch there, tracking it.
fn guess_remote_branch(repo: &Repository, name: &str) -> anyhow::Result<Option<Resolved>> {
    if name.starts_with("refs/")
        || !sluice_odb::refs::is_valid_ref_name(&format!("refs/heads/{name}"))
    {
        return Ok(None);
    }
    let matches: Vec<(String, ObjectId)> = repo
        .refs()
        .list()?
        .into_iter()
        .filter(|(r, _)| {
            r.strip_prefix("refs/remotes/")
                .and_then(|rest| rest.split_once('/'))
                .is_some_and(|(_, branch)| branch == name)
        })
        .collect();
    let [(remote_ref, id)] = matches.as_slice() else {
        return Ok(None);
    };
    let remote = remote_ref["refs/remotes/".len()..]
        .split_once('/')
        .map_or("", |(r, _)| r)
        .to_owned();
    let branch = format!("refs/heads/{name}");
    repo.refs()
        .write(&branch, &sluice_odb::RefTarget::Id(*id))?;
    let mut config = sluice_odb::ConfigFile::open(&repo.common_dir().join("config"))?;
    let key = |variable| sluice_odb::ConfigKey::new("branch", Some(name), variable);
    config.set(&key("remote"), &remote)?;
    config.set(&key("merge"), &branch)?;
    config.write()?;
    // git prints this line on standard output.
    println!("branch '{name}' set up to track '{remote}/{name}'.");
    Ok(Some(Resolved {
        id: *id,
        branch: Some(branch),
        created: true,
    }))
}
