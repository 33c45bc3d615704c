//! `git prune`: the loose objects nothing reaches are removed. Reachable means from the roots
//! (`reachable::roots`), and, with a grace period (`--expire`), also from any loose object
//! younger than it: a push or a commit being written is never cut off from what it needs.
//! Loose objects a pack holds too go as well (`prune-packed`), and so do the fan-out
//! directories left empty, and the stale temporary files (`tmp_*`) of the object and pack
//! directories older than the grace period. A root or object that cannot be read stops the
//! prune before anything is removed.

use sluice_graph::{promised, walk_objects, Missing, WalkError, WalkRequest};
use sluice_object::cancel::Cancel;
use sluice_object::progress::Discard;
use sluice_object::{IdSet, ObjectId, ObjectKind};
use sluice_odb::{ObjectDb, OdbError};
use sluice_repo::Repository;
use sluice_repo::{Roots, RootsError};
use std::path::PathBuf;
use std::time::SystemTime;

/// Why nothing was pruned (or the prune stopped: what was removed before is listed nowhere).
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    /// The roots could not be listed.
    #[error(transparent)]
    Roots(#[from] RootsError),
    /// The repository's shallow file could not be read.
    #[error(transparent)]
    Repo(#[from] sluice_repo::RepoError),
    /// The object database could not be opened.
    #[error(transparent)]
    Odb(#[from] OdbError),
    /// What the roots reach could not be walked (a missing or corrupt object).
    #[error(transparent)]
    Walk(#[from] WalkError),
    /// A loose object could not be listed or removed.
    #[error("cannot {action} '{}'", path.display())]
    File {
        /// What was done.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// How the prune runs.
#[derive(Debug, Clone, Default)]
pub struct PruneOptions {
    /// Only objects last written before this go (`--expire`); `None`: any unreachable one.
    pub expire: Option<SystemTime>,
    /// List, remove nothing (`-n`).
    pub dry_run: bool,
    /// What these reach is kept too (`git prune <head>…`).
    pub keep: Vec<ObjectId>,
    /// Stops the walk of what is reachable; nothing is removed then.
    pub cancel: Cancel,
}

/// What the prune removed (or would have).
#[derive(Debug, Default)]
pub struct Pruned {
    /// Unreachable loose objects, with their kind (`unknown` if unreadable), as git's `-v` names
    /// them.
    pub unreachable: Vec<(ObjectId, &'static str)>,
    /// The files of the loose objects a pack holds too, in the order they were found (git's
    /// `prune -n` lists them as `rm -f <file>`, as its prune-packed would run).
    pub packed: Vec<PathBuf>,
    /// Stale temporary files and directories (`tmp_*`), in the order the directories list
    /// them (as git reports them), each with whether it is a directory.
    pub temporary: Vec<(PathBuf, bool)>,
}

/// Whole seconds since the epoch, as git compares a file's date with a grace period.
fn seconds(t: SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Prunes `repo`'s loose objects as `options` say.
pub fn prune(repo: &Repository, options: &PruneOptions) -> Result<Pruned, PruneError> {
    let dir = repo.objects().dir().to_owned();
    let odb = repo.objects();
    let loose = (odb.loose().list()).map_err(|source| PruneError::File {
        action: "list",
        path: dir.clone(),
        source,
    })?;
    let mut tips = Roots::read(repo)?.all();
    tips.extend(&options.keep);
    let shallow = repo.shallow_set()?;
    let mut kept = reach(odb, (&tips, &shallow), &options.cancel)?;
    // Younger than the grace period: kept, with everything they reach (one written in the
    // second `--expire=now` names goes).
    let recent: Vec<ObjectId> = (loose.iter())
        .filter(|l| !kept.contains(&l.id))
        .filter(|l| {
            options
                .expire
                .is_some_and(|expire| seconds(l.modified) > seconds(expire))
        })
        .map(|l| l.id)
        .collect();
    if !recent.is_empty() {
        kept.extend(reach(odb, (&recent, &shallow), &options.cancel)?);
    }
    let in_pack = |id: &ObjectId| odb.packs().iter().any(|p| p.contains(id));
    let mut pruned = Pruned::default();
    for object in &loose {
        let unreachable = !kept.contains(&object.id);
        let packed = !unreachable && in_pack(&object.id);
        if !unreachable && !packed {
            continue;
        }
        let kind = match unreachable {
            true => match odb.read(&object.id) {
                Ok(Some((ObjectKind::Commit, _))) => "commit",
                Ok(Some((ObjectKind::Tree, _))) => "tree",
                Ok(Some((ObjectKind::Blob, _))) => "blob",
                Ok(Some((ObjectKind::Tag, _))) => "tag",
                _ => "unknown",
            },
            false => "",
        };
        if !options.dry_run {
            std::fs::remove_file(&object.path).map_err(|source| PruneError::File {
                action: "remove",
                path: object.path.clone(),
                source,
            })?;
        }
        match unreachable {
            true => pruned.unreachable.push((object.id, kind)),
            false => pruned.packed.push(object.path.clone()),
        }
    }
    if !options.dry_run {
        for fanout in 0..=255u8 {
            // Only an empty one goes.
            let _ = std::fs::remove_dir(dir.join(format!("{fanout:02x}")));
        }
    }
    pruned.unreachable.sort_unstable();
    pruned.temporary = stale_temporary_files(&dir, options)?;
    Ok(pruned)
}

/// The `tmp_*` files and directories of the object directory and its `pack/` older than the
/// grace period (all of them without one), removed unless this is a dry run. What a write
/// that died left behind; one still being written is younger.
fn stale_temporary_files(
    objects: &std::path::Path,
    options: &PruneOptions,
) -> Result<Vec<(PathBuf, bool)>, PruneError> {
    let mut stale = Vec::new();
    for dir in [objects.to_owned(), sluice_odb::pack_dir(objects)] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let found: Vec<PathBuf> = (entries.flatten())
            .filter(|e| e.file_name().to_string_lossy().starts_with("tmp_"))
            .map(|e| e.path())
            .collect();
        for path in found {
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
            if options
                .expire
                .is_some_and(|e| seconds(modified) > seconds(e))
            {
                continue;
            }
            if !options.dry_run {
                let removed = match meta.is_dir() {
                    true => std::fs::remove_dir_all(&path),
                    false => std::fs::remove_file(&path),
                };
                removed.map_err(|source| PruneError::File {
                    action: "remove",
                    path: path.clone(),
                    source,
                })?;
            }
            stale.push((path, meta.is_dir()));
        }
    }
    Ok(stale)
}

/// Every object `tips` reach, down to a shallow repository's cut (`shallow`), that the
/// repository has (a partial clone lacks what its promisor remote has, and nothing else).
fn reach(
    odb: &ObjectDb,
    (tips, shallow): (&[ObjectId], &IdSet),
    cancel: &Cancel,
) -> Result<IdSet, PruneError> {
    let partial = !promised::promisor_packs(odb).is_empty();
    let request = WalkRequest {
        missing: match partial {
            true => Missing::SetAside,
            false => Missing::Fail,
        },
        shallow,
        ..WalkRequest::reachable(tips, &[], cancel.clone())
    };
    let walked = walk_objects(odb, &request, &Discard)?;
    promised::only_promised_missing(odb, &walked.missing, cancel)?;
    Ok(walked.objects.iter().map(|o| o.id).collect())
}
