//! `git maintenance run`'s tasks, as git runs them: `gc`, `commit-graph` (a new layer of a
//! split graph), `loose-objects` (loose copies of packed objects removed, the rest packed),
//! `pack-refs`. With no task named, those `maintenance.<task>.enabled` turns on, else `gc`
//! alone; with `--auto`, each only past its threshold.

use crate::gc::{gc, GcError, GcOptions};
use sluice_generate::{pack_loose_objects, RepackError, LOOSE_BATCH};
use sluice_graph::commit_graph::{
    write_split, CommitGraphError, GraphCommits, GraphReader, SplitOptions,
};
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_object::ObjectId;
use sluice_odb::ConfigError;
use sluice_repo::refs::PackRefsOptions;
use sluice_repo::{RefError, Repository};

/// A maintenance task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// `gc` (`--auto` passed on).
    Gc,
    /// A commit-graph layer for the commits the graph lacks.
    CommitGraph,
    /// Loose objects: copies of packed ones removed, the others packed.
    LooseObjects,
    /// Refs packed into `packed-refs`.
    PackRefs,
}

impl Task {
    /// The tasks in git's order, by their names.
    pub const ALL: [(Task, &'static str); 4] = [
        (Task::LooseObjects, "loose-objects"),
        (Task::Gc, "gc"),
        (Task::CommitGraph, "commit-graph"),
        (Task::PackRefs, "pack-refs"),
    ];

    /// The task named `name`, if Sluice has it.
    pub fn named(name: &str) -> Option<Task> {
        Task::ALL.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
    }

    fn name(self) -> &'static str {
        Task::ALL
            .iter()
            .find(|(t, _)| *t == self)
            .map_or("", |(_, n)| n)
    }
}

/// Why a task failed.
#[derive(Debug, thiserror::Error)]
pub enum MaintenanceError {
    /// gc failed.
    #[error(transparent)]
    Gc(#[from] GcError),
    /// Packing loose objects failed.
    #[error(transparent)]
    Repack(#[from] RepackError),
    /// The commit-graph could not be written.
    #[error(transparent)]
    CommitGraph(#[from] CommitGraphError),
    /// The refs could not be packed.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// The configuration could not be read.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// The tasks `maintenance run` runs without `--task`: those enabled in the configuration, in
/// git's order, else `gc`.
pub fn configured_tasks(repo: &Repository) -> Result<Vec<Task>, ConfigError> {
    let mut tasks = Vec::new();
    for (task, name) in Task::ALL {
        if repo
            .config()
            .get_bool(&format!("maintenance.{name}.enabled"))?
            == Some(true)
        {
            tasks.push(task);
        }
    }
    if tasks.is_empty() {
        tasks.push(Task::Gc);
    }
    Ok(tasks)
}

/// Runs `tasks` in order; with `auto`, each only past its threshold
/// (`maintenance.<task>.auto`, git's defaults).
pub fn run_tasks(
    repo: &Repository,
    tasks: &[Task],
    auto: bool,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<(), MaintenanceError> {
    for &task in tasks {
        if auto && !needed(repo, task)? {
            continue;
        }
        match task {
            Task::Gc => {
                let options = GcOptions {
                    cancel: cancel.clone(),
                    ..GcOptions::from_config(repo.config(), auto, None)?
                };
                gc(repo, &options, progress)?;
            }
            Task::CommitGraph => {
                write_split(
                    repo,
                    &GraphCommits::Reachable,
                    &SplitOptions::default(),
                    progress,
                )?;
            }
            Task::LooseObjects => {
                pack_loose_objects(repo, LOOSE_BATCH, progress, cancel)?;
            }
            Task::PackRefs => {
                let options = PackRefsOptions {
                    all: true,
                    prune: true,
                };
                repo.refs().pack(options, repo.objects())?;
            }
        }
    }
    Ok(())
}

/// Whether `task` has enough to do for `--auto`: gc decides for itself; loose objects at
/// `maintenance.loose-objects.auto` (100) of them, new commits at
/// `maintenance.commit-graph.auto` (100) the graph lacks; pack-refs always.
fn needed(repo: &Repository, task: Task) -> Result<bool, MaintenanceError> {
    let limit = |default: i64| -> Result<usize, ConfigError> {
        let key = format!("maintenance.{}.auto", task.name());
        Ok(repo.config().get_int(&key)?.unwrap_or(default).max(0) as usize)
    };
    Ok(match task {
        Task::Gc | Task::PackRefs => true,
        Task::LooseObjects => {
            let limit = limit(100)?;
            let loose = repo.objects().loose().list().map_or(0, |l| l.len());
            limit > 0 && loose >= limit
        }
        Task::CommitGraph => {
            let limit = limit(100)?;
            limit > 0 && commits_outside_graph(repo, limit)? >= limit
        }
    })
}

/// How many commits the refs reach that the commit-graph lacks, counted up to `limit`.
fn commits_outside_graph(repo: &Repository, limit: usize) -> Result<usize, MaintenanceError> {
    let graph = GraphReader::open(repo.objects().dir(), repo.hash());
    let in_graph = |id: &ObjectId| graph.as_ref().is_some_and(|g| g.position(id).is_some());
    let mut pending: Vec<_> = (repo.refs().list()?.into_iter())
        .filter_map(|(_, id)| repo.objects().peel_to_commit(id))
        .collect();
    let mut seen = sluice_object::IdSet::default();
    while let Some(id) = pending.pop() {
        if seen.len() >= limit || in_graph(&id) || !seen.insert(id) {
            continue;
        }
        if let Ok(Some((_, data))) = repo.objects().read(&id) {
            if let Ok(commit) = sluice_object::parse::parse_commit(repo.hash(), &data) {
                pending.extend(commit.parents);
            }
        }
    }
    Ok(seen.len())
}
