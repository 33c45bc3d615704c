//! `git maintenance run`'s tasks, as git runs them: `prefetch` (each remote's refs fetched
//! into `refs/prefetch/`), `loose-objects` (loose copies of packed objects removed, the rest
//! packed), `incremental-repack` (the multi-pack-index written, its emptied packs expired, a
//! batch of its small packs repacked), `gc`, `commit-graph` (a new layer of a split graph),
//! `pack-refs`. With no task named, those `maintenance.<task>.enabled` turns on (`gc` is, unless
//! turned off); with `--auto`, each only past its threshold; with `--schedule`, each whose
//! `maintenance.<task>.schedule` (or `maintenance.strategy`'s) is at least that often.

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
    /// Each remote fetched into `refs/prefetch/`, by the caller's [`Prefetch`].
    Prefetch,
    /// The multi-pack-index written, its emptied packs expired, a batch of small packs repacked.
    IncrementalRepack,
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
    pub const ALL: [(Task, &'static str); 6] = [
        (Task::Prefetch, "prefetch"),
        (Task::LooseObjects, "loose-objects"),
        (Task::IncrementalRepack, "incremental-repack"),
        (Task::Gc, "gc"),
        (Task::CommitGraph, "commit-graph"),
        (Task::PackRefs, "pack-refs"),
    ];

    /// The task named `name`, if Sluice has it.
    pub fn named(name: &str) -> Option<Task> {
        Task::ALL.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
    }

    /// The tasks `--task` names, in order: a name git does not know, or a task named twice,
    /// refused in git's words (a usage error to git's option parser).
    pub fn named_list(names: &[String]) -> Result<Vec<Task>, TaskRefused> {
        let mut tasks = Vec::new();
        for name in names {
            match Task::named(name) {
                None => return Err(TaskRefused::Unknown(name.clone())),
                Some(task) if tasks.contains(&task) => {
                    return Err(TaskRefused::Twice(name.clone()))
                }
                Some(task) => tasks.push(task),
            }
        }
        Ok(tasks)
    }

    /// The task's name, as git spells it.
    pub fn name(self) -> &'static str {
        Task::ALL
            .iter()
            .find(|(t, _)| *t == self)
            .map_or("", |(_, n)| n)
    }
}

/// `--task` given a name git refuses.
#[derive(Debug, thiserror::Error)]
pub enum TaskRefused {
    /// No task has that name.
    #[error("'{0}' is not a valid task")]
    Unknown(String),
    /// The task was named already.
    #[error("task '{0}' cannot be selected multiple times")]
    Twice(String),
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
    /// A remote could not be fetched (git's words).
    #[error("failed to prefetch remotes")]
    Prefetch,
    /// The multi-pack-index could not be read.
    #[error(transparent)]
    Midx(#[from] sluice_odb::midx::MidxError),
    /// A step of the incremental-repack task failed: the step's own error, then git's words
    /// for the step.
    #[error("{step}")]
    RepackStep {
        /// git's words for the step that failed.
        step: &'static str,
        /// Why it failed.
        #[source]
        source: Box<MaintenanceError>,
    },
}

impl MaintenanceError {
    /// What git says of this failure, a line each, in its order (a step's own error first).
    pub fn lines(&self) -> Vec<String> {
        match self {
            MaintenanceError::RepackStep { step, source } => {
                let mut lines = source.lines();
                lines.push((*step).to_owned());
                lines
            }
            other => vec![other.to_string()],
        }
    }
}

/// How often a scheduled run comes (`--schedule`, `maintenance.<task>.schedule`); a task
/// scheduled more often runs in the less frequent runs too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Schedule {
    /// Once a week.
    Weekly,
    /// Once a day.
    Daily,
    /// Once an hour.
    Hourly,
}

impl Schedule {
    /// The schedule named `name` (any case), as git reads it.
    pub fn named(name: &str) -> Option<Schedule> {
        match name.to_ascii_lowercase().as_str() {
            "hourly" => Some(Schedule::Hourly),
            "daily" => Some(Schedule::Daily),
            "weekly" => Some(Schedule::Weekly),
            _ => None,
        }
    }
}

/// What fetches for the prefetch task: the client's fetch, which lives above this crate.
pub trait Prefetch {
    /// Fetches `remote` as `git fetch <remote> --prefetch --prune --no-tags
    /// --no-write-fetch-head --recurse-submodules=no` does; whether it succeeded.
    fn prefetch(&self, remote: &str) -> bool;
}

/// A task that failed, and why; the other tasks still ran, as in git.
#[derive(Debug)]
pub struct TaskFailure {
    /// The task.
    pub task: Task,
    /// Why.
    pub error: MaintenanceError,
}

/// What `run_tasks` has to say: tasks that failed, and warnings.
#[derive(Debug, Default)]
pub struct TasksRun {
    /// The tasks that failed, in order.
    pub failed: Vec<TaskFailure>,
    /// Warnings, in git's words.
    pub warnings: Vec<String>,
}

/// The tasks `maintenance run` runs: those `named` (the last named first, as git runs them),
/// else those enabled
/// (`maintenance.<task>.enabled`; `gc` unless turned off) in git's order; under `schedule`,
/// only those scheduled at least that often (`maintenance.<task>.schedule`, with
/// `maintenance.strategy=incremental`'s schedules as defaults).
pub fn select_tasks(
    repo: &Repository,
    named: &[Task],
    schedule: Option<Schedule>,
) -> Result<Vec<Task>, ConfigError> {
    let config = repo.config();
    let strategy = match schedule {
        Some(_) => config.get("maintenance.strategy"),
        None => None,
    };
    let incremental = strategy.is_some_and(|s| s.eq_ignore_ascii_case("incremental"));
    let mut selected = Vec::new();
    for (task, name) in Task::ALL {
        // git's defaults: gc alone, unscheduled; the incremental strategy's otherwise.
        let (mut enabled, mut when) = match (incremental, task) {
            (false, Task::Gc) => (true, None),
            (false, _) | (true, Task::Gc) => (false, None),
            (true, Task::Prefetch | Task::CommitGraph) => (true, Some(Schedule::Hourly)),
            (true, Task::IncrementalRepack | Task::LooseObjects) => (true, Some(Schedule::Daily)),
            (true, Task::PackRefs) => (true, Some(Schedule::Weekly)),
        };
        if let Some(on) = config.get_bool(&format!("maintenance.{name}.enabled"))? {
            enabled = on;
        }
        if let Some(value) = config.get(&format!("maintenance.{name}.schedule")) {
            when = Schedule::named(value);
        }
        let chosen = match named.is_empty() {
            true => enabled,
            false => named.contains(&task),
        };
        let due = schedule.is_none_or(|wanted| when.is_some_and(|w| w >= wanted));
        if chosen && due {
            selected.push(task);
        }
    }
    // git sorts the named tasks by the order given, descending: the last named runs first.
    if !named.is_empty() {
        selected.sort_by_key(|task| std::cmp::Reverse(named.iter().position(|n| n == task)));
    }
    Ok(selected)
}

/// Runs `tasks` in order; with `auto`, each only past its threshold
/// (`maintenance.<task>.auto`, git's defaults). A task that fails is reported and the next
/// one still runs, as in git.
pub fn run_tasks(
    repo: &Repository,
    tasks: &[Task],
    auto: bool,
    prefetch: &dyn Prefetch,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<TasksRun, MaintenanceError> {
    let mut run = TasksRun::default();
    for &task in tasks {
        if auto && !needed(repo, task)? {
            continue;
        }
        if let Err(error) = run_task(repo, task, auto, prefetch, progress, cancel, &mut run) {
            run.failed.push(TaskFailure { task, error });
        }
    }
    Ok(run)
}

fn run_task(
    repo: &Repository,
    task: Task,
    auto: bool,
    prefetch: &dyn Prefetch,
    progress: &dyn Progress,
    cancel: &Cancel,
    run: &mut TasksRun,
) -> Result<(), MaintenanceError> {
    match task {
        Task::Prefetch => {
            let config = repo.config();
            let mut failed = false;
            for name in config.subsection_names("remote") {
                // git's skip_default_update: either name of the setting.
                let skip = ["skipDefaultUpdate", "skipFetchAll"]
                    .iter()
                    .map(|key| config.get_bool(&format!("remote.{name}.{key}")))
                    .collect::<Result<Vec<_>, _>>()?;
                if !skip.contains(&Some(true)) && !prefetch.prefetch(&name) {
                    failed = true;
                }
            }
            if failed {
                return Err(MaintenanceError::Prefetch);
            }
        }
        Task::IncrementalRepack => incremental_repack(repo, progress, cancel, run)?,
        Task::Gc => {
            let options = GcOptions {
                cancel: cancel.clone(),
                ..GcOptions::from_config(repo.config(), auto, None)?
            };
            gc(repo, &options, progress)?;
        }
        Task::CommitGraph => {
            let commits = GraphCommits::Reachable;
            write_split(repo, &commits, &SplitOptions::default(), progress)?;
        }
        Task::LooseObjects => {
            pack_loose_objects(repo, LOOSE_BATCH, progress, cancel)?;
        }
        Task::PackRefs => {
            repo.refs()
                .pack(&PackRefsOptions::every_ref(), repo.objects())?;
        }
    }
    Ok(())
}

/// The incremental-repack task: the multi-pack-index of every pack written, the packs it no
/// longer finds objects in deleted, then a batch of its packs repacked whose size is one byte
/// more than the second largest pack (at most 2 GiB, as git's), so that a large pack from a
/// clone stays and the small ones around it are gathered.
fn incremental_repack(
    repo: &Repository,
    progress: &dyn Progress,
    cancel: &Cancel,
    run: &mut TasksRun,
) -> Result<(), MaintenanceError> {
    if !multi_pack_index_enabled(repo)? {
        let why = "skipping incremental-repack task because core.multiPackIndex is disabled";
        run.warnings.push(why.to_owned());
        return Ok(());
    }
    let pack_dir = repo.objects().pack_dir();
    let step = |step: &'static str| {
        move |error: MaintenanceError| MaintenanceError::RepackStep {
            step,
            source: Box::new(error),
        }
    };
    (sluice_odb::midx::write_midx(&pack_dir, repo.hash()).map_err(MaintenanceError::from))
        .map_err(step("failed to write multi-pack-index"))?;
    (sluice_odb::midx_maintain::expire_midx(&pack_dir, repo.hash())
        .map_err(MaintenanceError::from))
    .map_err(step("'git multi-pack-index expire' failed"))?;
    let mut sizes: Vec<u64> = (sluice_generate::pack_files(&pack_dir).into_iter().flatten())
        .filter_map(|pack| std::fs::metadata(pack).ok().map(|m| m.len()))
        .collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let batch = (sizes.get(1).copied().unwrap_or(0) + 1).min(i32::MAX as u64);
    (sluice_generate::repack_midx(repo, batch, progress, cancel).map_err(MaintenanceError::from))
        .map_err(step("'git multi-pack-index repack' failed"))?;
    Ok(())
}

/// `core.multiPackIndex` (on unless turned off).
fn multi_pack_index_enabled(repo: &Repository) -> Result<bool, ConfigError> {
    Ok((repo.config().get_bool("core.multiPackIndex")?).unwrap_or(true))
}

/// Whether `task` has enough to do for `--auto`: gc decides for itself; loose objects at
/// `maintenance.loose-objects.auto` (100) of them, new commits at
/// `maintenance.commit-graph.auto` (100) the graph lacks, packs outside the multi-pack-index at
/// `maintenance.incremental-repack.auto` (10); pack-refs always; prefetch never.
fn needed(repo: &Repository, task: Task) -> Result<bool, MaintenanceError> {
    let limit = |default: i64| -> Result<usize, ConfigError> {
        let key = format!("maintenance.{}.auto", task.name());
        Ok(repo.config().get_int(&key)?.unwrap_or(default).max(0) as usize)
    };
    Ok(match task {
        Task::Gc | Task::PackRefs => true,
        // git gives prefetch no condition, so `--auto` never runs it.
        Task::Prefetch => false,
        Task::LooseObjects => {
            let limit = limit(100)?;
            let loose = repo.objects().loose().list().map_or(0, |l| l.len());
            limit > 0 && loose >= limit
        }
        Task::CommitGraph => {
            let limit = limit(100)?;
            limit > 0 && commits_outside_graph(repo, limit)? >= limit
        }
        Task::IncrementalRepack => {
            let key = "maintenance.incremental-repack.auto";
            let limit = repo.config().get_int(key)?.unwrap_or(10);
            multi_pack_index_enabled(repo)?
                && (limit < 0 || (limit > 0 && packs_outside_midx(repo)? >= limit as usize))
        }
    })
}

/// How many of the repository's packs the multi-pack-index does not name.
fn packs_outside_midx(repo: &Repository) -> Result<usize, MaintenanceError> {
    let pack_dir = repo.objects().pack_dir();
    let named = sluice_odb::midx_maintain::attribution(&pack_dir, repo.hash())?
        .map(|a| a.packs)
        .unwrap_or_default();
    Ok((repo.objects().packs().iter())
        .filter(|pack| {
            let idx = pack.path().with_extension("idx");
            let name = idx.file_name().map(|n| n.to_string_lossy().into_owned());
            !name.is_some_and(|n| named.contains(&n))
        })
        .count())
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
