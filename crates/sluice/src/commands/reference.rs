//! Borrowing objects from other repositories on this machine. `clone --reference` names them
//! in the new repository's alternates, and every fetch offers what the refs of its alternates
//! reach as haves, as git does, so that the server sends only what none of them has.

use super::local_clone::add_alternate;
use anyhow::anyhow;
use sluice_object::ObjectId;
use sluice_odb::{ObjectDb, Refs, Repository};
use std::path::{Path, PathBuf};

/// What a reference that cannot be borrowed from does to the clone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// `--reference`: the clone fails.
    Required,
    /// `--reference-if-able`: it is reported and left out.
    IfAble,
}

/// A repository to borrow from, as given on the command line.
#[derive(Debug, Clone)]
pub struct Reference {
    pub given: String,
    pub need: Need,
}

/// The object directory of the reference repository `given`, made absolute and real, as git
/// records it. A shallow or grafted repository is refused: its history is not whole, and
/// objects it lacks would be taken as present.
fn objects_of(cwd: &Path, given: &str) -> anyhow::Result<PathBuf> {
    let not_local = || anyhow!("reference repository '{given}' is not a local repository.");
    let git_dir = Repository::find_served(&cwd.join(given), false).ok_or_else(not_local)?;
    let common_dir = Repository::common_dir_of(&git_dir);
    let objects = common_dir.join("objects");
    if !objects.is_dir() {
        return Err(not_local());
    }
    if common_dir.join("shallow").exists() {
        return Err(anyhow!("reference repository '{given}' is shallow"));
    }
    if common_dir.join("info").join("grafts").exists() {
        return Err(anyhow!("reference repository '{given}' is grafted"));
    }
    Ok(std::fs::canonicalize(&objects)?)
}

/// Names every reference, in order, in the alternates of the object directory `objects`.
pub fn add_references(cwd: &Path, objects: &Path, references: &[Reference]) -> anyhow::Result<()> {
    for reference in references {
        match objects_of(cwd, &reference.given) {
            Ok(dir) => add_alternate(objects, &dir.to_string_lossy())?,
            Err(why) if reference.need == Need::IfAble => {
                eprintln!(
                    "info: Could not add alternate for '{}': {why}",
                    reference.given
                )
            }
            Err(why) => return Err(why),
        }
    }
    Ok(())
}

/// The values of the refs of every repository whose object directory `odb` borrows from,
/// however deep, to offer as haves (git's default when `core.alternateRefsCommand` is unset).
/// An alternate that is not the `objects` of a repository has no refs to offer.
pub fn alternate_tips(odb: &ObjectDb) -> Vec<ObjectId> {
    let mut tips = Vec::new();
    let mut pending: Vec<&ObjectDb> = odb.alternates().iter().collect();
    while let Some(alternate) = pending.pop() {
        pending.extend(alternate.alternates());
        let dir = alternate.dir();
        let git_dir = dir
            .ends_with("objects")
            .then(|| dir.parent())
            .flatten()
            .and_then(|parent| Repository::find_served(parent, true));
        if let Some(git_dir) = git_dir {
            // Unreadable refs there offer nothing; they do not stop the fetch here.
            let refs = Refs::new(&git_dir, &git_dir, odb.hash());
            tips.extend(
                refs.list()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(_, id)| id),
            );
        }
    }
    tips
}
