//! Which commits a commit-graph is written for, as `git commit-graph write` chooses them:
//! the refs' (`--reachable`), the commits named (`--stdin-commits`, tags peeled, other objects
//! passed over), those stored in some packs (`--stdin-packs`) or in every pack (the default);
//! with `--append`, those of the graph already there too. The graph holds them and every
//! commit they reach.

use super::write::{commit_tips, peel_to_commit, CommitGraphError, Peeled};
use sluice_object::{HashKind, ObjectId, ObjectKind};
use sluice_odb::OdbError;
use sluice_repo::Repository;
use std::path::{Path, PathBuf};

/// Where the commits of a graph come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphCommits {
    /// Every commit the refs reach.
    Reachable,
    /// These objects, tags peeled; objects that are no commits count for nothing.
    Commits(Vec<ObjectId>),
    /// Every commit stored in these packs (their index files).
    Packs(Vec<PathBuf>),
    /// Every commit stored in any pack of the repository.
    AllPacks,
}

/// Why a source named something that is not there.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// An object `--stdin-commits` named is not in the repository (git's words).
    #[error("invalid object: {0}")]
    NoObject(ObjectId),
    /// A pack `--stdin-packs` named cannot be opened (git's words).
    #[error("error adding pack {}", .0.display())]
    NoPack(PathBuf),
    /// A line `--stdin-commits` read is no object id (git's words).
    #[error("unexpected non-hex object ID: {0}")]
    NotHex(String),
}

impl GraphCommits {
    /// `--stdin-commits`: the object ids of `lines`, one a line; a line that is none refused.
    pub fn named(hash: HashKind, lines: &[String]) -> Result<GraphCommits, SourceError> {
        let id = |line: &String| {
            ObjectId::from_hex(hash, line.trim().as_bytes())
                .map_err(|_| SourceError::NotHex(line.clone()))
        };
        Ok(GraphCommits::Commits(
            lines.iter().map(id).collect::<Result<_, _>>()?,
        ))
    }

    /// `--stdin-packs`: the pack indexes `names` names, in the pack directory `pack_dir`.
    pub fn packs_named(pack_dir: &Path, names: &[String]) -> GraphCommits {
        GraphCommits::Packs(names.iter().map(|name| pack_dir.join(name)).collect())
    }
}

/// The commits a graph starts from: `commits`' and, with `append`, the present graph's; none
/// in a shallow repository.
pub(super) fn starting_commits(
    repo: &Repository,
    commits: &GraphCommits,
    append: bool,
) -> Result<Vec<ObjectId>, CommitGraphError> {
    // As git: a shallow repository gets no graph (the parents of its cut commits are missing,
    // and a graph records parents), so nothing is written, and that is no error. A shallow
    // file that cannot be read counts as one: a graph only ever saves time.
    if !repo.shallow_commits().is_ok_and(|cut| cut.is_empty()) {
        return Ok(Vec::new());
    }
    let mut tips = match commits {
        GraphCommits::Reachable => commit_tips(repo)?,
        GraphCommits::Commits(named) => peeled_commits(repo, named)?,
        GraphCommits::Packs(indexes) => {
            let mut found = Vec::new();
            for index in indexes {
                let pack = sluice_odb::Pack::open(index, repo.hash())
                    .map_err(|_| SourceError::NoPack(index.clone()))?;
                found.extend(commits_in(&pack)?);
            }
            found
        }
        GraphCommits::AllPacks => {
            let mut found = Vec::new();
            for pack in repo.objects().packs() {
                found.extend(commits_in(pack)?);
            }
            found
        }
    };
    if append {
        let objects = repo.objects().dir();
        if let Some(graph) = super::GraphReader::open(objects, repo.hash()) {
            tips.extend((0..graph.len() as u32).filter_map(|at| graph.id(at)));
        }
    }
    Ok(tips)
}

/// The commits among `named`, tags peeled to what they tag.
fn peeled_commits(
    repo: &Repository,
    named: &[ObjectId],
) -> Result<Vec<ObjectId>, CommitGraphError> {
    let mut commits = Vec::new();
    for &named in named {
        match peel_to_commit(repo, named)? {
            Peeled::Commit(commit) => commits.push(commit),
            Peeled::Other => {}
            Peeled::Missing => return Err(SourceError::NoObject(named).into()),
        }
    }
    Ok(commits)
}

/// The commits stored in `pack`.
fn commits_in(pack: &sluice_odb::Pack) -> Result<Vec<ObjectId>, OdbError> {
    let mut found = Vec::new();
    for position in 0..pack.index().len() {
        if pack.kind_at(position)? == Some(ObjectKind::Commit) {
            found.push(pack.index().id(position));
        }
    }
    Ok(found)
}
