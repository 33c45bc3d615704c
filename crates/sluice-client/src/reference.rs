//! Borrowing objects from other repositories on this machine. `clone --reference` names them
//! in the new repository's alternates, and every fetch offers what the refs of its alternates
//! reach as haves, as git does, so that the server sends only what none of them has.

use sluice_object::ObjectId;
use sluice_odb::alternates::{self, AlternatesError};
use sluice_odb::ObjectDb;
use sluice_repo::{Refs, Repository};
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
    /// The path given.
    pub given: String,
    /// Whether the clone needs it.
    pub need: Need,
}

/// Why a reference repository cannot be borrowed from.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// The path is no repository of this machine.
    #[error("reference repository '{given}' is not a local repository.")]
    NotLocal {
        /// The path given.
        given: String,
    },
    /// The repository's history is cut.
    #[error("reference repository '{given}' is shallow")]
    Shallow {
        /// The path given.
        given: String,
    },
    /// The repository's history is rewritten by grafts.
    #[error("reference repository '{given}' is grafted")]
    Grafted {
        /// The path given.
        given: String,
    },
    /// Its object directory's real path could not be found.
    #[error("reference repository '{given}'")]
    Canonicalize {
        /// The path given.
        given: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The alternates file could not be written.
    #[error(transparent)]
    Alternates(#[from] AlternatesError),
    /// `--dissociate` could not copy the borrowed objects in.
    #[error("cannot repack to clean up")]
    Repack(#[from] sluice_generate::RepackError),
    /// `--dissociate` could not remove the alternates file.
    #[error("cannot unlink temporary alternates file")]
    Unlink(#[source] std::io::Error),
}

/// `clone --dissociate`: the objects borrowed from reference repositories are copied in by a
/// repack, and the alternates file goes.
pub fn dissociate(repo: &Repository) -> Result<(), ReferenceError> {
    let listed = alternates::path(repo.objects().dir());
    if !listed.exists() {
        return Ok(());
    }
    sluice_generate::repack_all(repo)?;
    std::fs::remove_file(&listed).map_err(ReferenceError::Unlink)?;
    sluice_odb::written::note_written();
    Ok(())
}

/// The object directory of the reference repository `given`, made absolute and real, as git
/// records it. A shallow or grafted repository is refused: its history is not whole, and
/// objects it lacks would be taken as present.
fn objects_of(cwd: &Path, given: &str) -> Result<PathBuf, ReferenceError> {
    let given_owned = || given.to_owned();
    let not_local = || ReferenceError::NotLocal {
        given: given_owned(),
    };
    let git_dir = Repository::find_served(&cwd.join(given), false).ok_or_else(not_local)?;
    let common_dir = Repository::common_dir_of(&git_dir);
    let objects = common_dir.join("objects");
    if !objects.is_dir() {
        return Err(not_local());
    }
    if sluice_repo::shallow::is_shallow(&common_dir) {
        return Err(ReferenceError::Shallow {
            given: given_owned(),
        });
    }
    if common_dir.join("info").join("grafts").exists() {
        return Err(ReferenceError::Grafted {
            given: given_owned(),
        });
    }
    std::fs::canonicalize(&objects).map_err(|source| ReferenceError::Canonicalize {
        given: given_owned(),
        source,
    })
}

/// Names every reference, in order, in the alternates of the object directory `objects`;
/// returns, for each `--reference-if-able` left out, why (git says it as "info").
pub fn add_references(
    cwd: &Path,
    objects: &Path,
    references: &[Reference],
) -> Result<Vec<(String, ReferenceError)>, ReferenceError> {
    let mut left_out = Vec::new();
    for reference in references {
        match objects_of(cwd, &reference.given) {
            Ok(dir) => alternates::add(objects, &dir.to_string_lossy())?,
            Err(why) if reference.need == Need::IfAble => {
                left_out.push((reference.given.clone(), why));
            }
            Err(why) => return Err(why),
        }
    }
    Ok(left_out)
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
