//! The submodule part of a fetch, after the superproject's refs moved: git's
//! `--recurse-submodules[=yes|on-demand|no]` (else `fetch.recurseSubmodules`, else
//! `submodule.recurse`, else on demand). On demand, a checked-out submodule is fetched when a
//! commit the fetch brought records a commit of it that its repository lacks; with `yes`, every
//! checked-out submodule is. Each is fetched by Sluice run inside it, which goes on into its own.
//! The commits a fetch brought, and the submodule commits they record, are found here too: they
//! change with what "on demand" means.

use crate::jobs::{self, job_count, JobOutput};
use crate::recursion::{mode_of, Mode};
use crate::registry::{checked_out_submodules, default_remote, Placed};
use crate::{Host, Recursion, SubmoduleError};
use sluice_client::fetch::Report;
use sluice_object::cancel::{Cancel, Cancelled};
use sluice_object::{IdMap, ObjectId};
use sluice_repo::Repository;

/// The submodule part of a superproject's fetch: the recursion and the number of jobs, read
/// from the command line and the configuration before anything is fetched (a bad setting stops
/// the fetch before it starts, as in git), and what the superproject's fetches brought.
pub struct SubmoduleFetch {
    mode: Mode,
    jobs: usize,
    brought: Brought,
    /// Stops the walk through what the fetches brought.
    cancel: Cancel,
}

/// The new values of the refs the superproject's fetches moved (or, under `--dry-run`, would
/// have moved) and the old ones.
#[derive(Default)]
struct Brought {
    tips: Vec<ObjectId>,
    olds: Vec<ObjectId>,
}

impl SubmoduleFetch {
    /// The recursion `given` on the command line (else `fetch.recurseSubmodules`, else
    /// `submodule.recurse`, else on demand), `jobs` at a time (`-j`, else
    /// `submodule.fetchJobs`, else `fetch.parallel`).
    pub fn from_config(
        repo: &Repository,
        given: Option<Recursion>,
        jobs: Option<u32>,
        cancel: Cancel,
    ) -> Result<Self, SubmoduleError> {
        let keys = ["submodule.fetchjobs", "fetch.parallel"];
        Ok(SubmoduleFetch {
            mode: mode_of(given, repo)?,
            jobs: job_count(jobs, repo.config(), &keys)?,
            brought: Brought::default(),
            cancel,
        })
    }

    /// Takes in one remote's report.
    pub fn note(&mut self, lines: &[Report]) {
        for report in lines {
            let Report::Line(line) = report else {
                continue;
            };
            if line.code == '!' || line.new == line.old || line.new.is_null() {
                continue;
            }
            self.brought.tips.push(line.new);
            if !line.old.is_null() {
                self.brought.olds.push(line.old);
            }
        }
    }

    /// Fetches the submodules of `repo` the recursion asks for, given what the fetches
    /// brought, each with the options `passed` on (git's: `--dry-run`, `--prune`, `-q`, …);
    /// `prefix` puts the paths shown under the top superproject's. Returns the names of those
    /// whose fetch failed.
    pub fn run(
        &self,
        host: &dyn Host,
        repo: &Repository,
        passed: &[&str],
        (quiet, prefix): (bool, &str),
    ) -> Result<Vec<String>, SubmoduleError> {
        if repo.work_tree().is_none() || self.mode == Mode::Given(Recursion::Off) {
            return Ok(Vec::new());
        }
        let brought = match self.brought.tips.is_empty() {
            true => Vec::new(),
            false => new_commits(repo, &self.brought, &self.cancel)?,
        };
        let mut wanted = Vec::new();
        for submodule in checked_out_submodules(repo)? {
            let Some(placed) = Placed::of(repo, submodule).filter(Placed::is_populated) else {
                continue;
            };
            let mode = self.mode.for_submodule(repo, &placed.submodule)?;
            if mode == Recursion::Off {
                continue;
            }
            let needed = recorded_at(repo, &brought, &placed.submodule.path);
            if mode == Recursion::OnDemand && placed.lacking(&needed)?.is_empty() {
                continue;
            }
            let shown = format!("{prefix}{}", placed.submodule.path);
            wanted.push(Wanted {
                placed,
                mode,
                needed,
                shown,
            });
        }
        let mut failed = Vec::new();
        let wanted: Vec<&Wanted> = wanted.iter().collect();
        let fetch = |one: &Wanted, output: &mut JobOutput| one.fetch(host, passed, quiet, output);
        jobs::for_each(host, &wanted, self.jobs, fetch, |_, mut paths| {
            failed.append(&mut paths);
            Ok(true)
        })?;
        Ok(failed)
    }
}

/// A submodule to fetch.
struct Wanted {
    placed: Placed,
    mode: Recursion,
    /// The commits of it that the superproject's fetch brought.
    needed: Vec<ObjectId>,
    /// Its path as said, under the top superproject's.
    shown: String,
}

impl Wanted {
    /// Fetches it, then the commits still missing by id; returns its name (as git lists it,
    /// not its path) once for each fetch that failed.
    fn fetch(
        &self,
        host: &dyn Host,
        passed: &[&str],
        quiet: bool,
        output: &mut JobOutput,
    ) -> Result<Vec<String>, SubmoduleError> {
        if !quiet {
            output.line(&format!("Fetching submodule {}", self.shown));
        }
        let placed = &self.placed;
        let cwd = &placed.work_tree;
        let failed_to_run = |source| SubmoduleError::Run {
            cwd: cwd.clone(),
            source,
        };
        let mut run = |extra: &[String]| -> Result<bool, SubmoduleError> {
            let mut command = host.sluice_in(cwd).map_err(failed_to_run)?;
            command.arg("fetch").args(passed).arg(self.mode.option());
            command.arg(format!("--submodule-prefix={}/", self.shown));
            command.args(extra);
            Ok(output.run(&mut command).map_err(failed_to_run)?.success())
        };
        let mut failed = Vec::new();
        let name = &placed.submodule.name;
        if !run(&[])? {
            failed.push(name.clone());
        }
        // As git: commits still missing are asked for by id, from the default remote.
        let still = placed.lacking(&self.needed)?;
        if !still.is_empty() {
            let inner = Repository::open_git_dir(placed.git_dir.clone(), None)?;
            let mut by_id = vec![default_remote(&inner)];
            by_id.extend(still.iter().map(ObjectId::to_string));
            if !run(&by_id)? {
                failed.push(name.clone());
            }
        }
        Ok(failed)
    }
}

/// The commits a fetch brought: those its new tips reach and the old ones do not, as a fetch
/// "on demand" looks through them (the tips alone when the walk cannot be made); a signal
/// stops the walk, and the run with it.
fn new_commits(
    repo: &Repository,
    brought: &Brought,
    cancel: &Cancel,
) -> Result<Vec<ObjectId>, Cancelled> {
    let request = sluice_graph::WalkRequest {
        filter: sluice_graph::ObjectFilter::TreeDepth(0),
        ..sluice_graph::WalkRequest::reachable(&brought.tips, &brought.olds, cancel.clone())
    };
    let discard = sluice_object::progress::Discard;
    match sluice_graph::walk_objects(repo.objects(), &request, &discard) {
        Ok(walked) => Ok((walked.objects.iter())
            .filter(|o| o.kind == sluice_object::ObjectKind::Commit)
            .map(|o| o.id)
            .collect()),
        Err(sluice_graph::WalkError::Cancelled(cancelled)) => Err(cancelled),
        Err(_) => Ok(brought.tips.clone()),
    }
}

/// The commits `commits` record for the submodule at `path` (the gitlink there in each
/// commit's tree), each once: what a fetch "on demand" needs the submodule to have. A commit
/// that cannot be read, or has no gitlink there, records none.
fn recorded_at(repo: &Repository, commits: &[ObjectId], path: &str) -> Vec<ObjectId> {
    let odb = repo.objects();
    let parts: Vec<&str> = path.split('/').collect();
    // What each tree met at each depth holds there: commits share most of their subtrees.
    let mut seen: Vec<IdMap<Option<ObjectId>>> = vec![IdMap::default(); parts.len()];
    let mut found = Vec::new();
    for commit in commits {
        let Ok(tree) = sluice_checkout::commit_tree(odb, commit) else {
            continue;
        };
        if let Some(id) = gitlink_at(repo, tree, &parts, &mut seen) {
            if !found.contains(&id) {
                found.push(id);
            }
        }
    }
    found
}

/// The gitlink at the path `parts` under `tree`, if there is one; `seen` remembers, for each
/// depth, what a tree there led to.
fn gitlink_at(
    repo: &Repository,
    mut tree: ObjectId,
    parts: &[&str],
    seen: &mut [IdMap<Option<ObjectId>>],
) -> Option<ObjectId> {
    let mut walked = Vec::new();
    let mut found = None;
    for (depth, part) in parts.iter().enumerate() {
        if let Some(known) = seen[depth].get(&tree) {
            found = *known;
            break;
        }
        walked.push((depth, tree));
        let Some((_, data)) = repo.objects().read(&tree).ok().flatten() else {
            break;
        };
        let entries = sluice_object::parse::tree_entries(repo.hash(), &data);
        let Some(entry) = entries.flatten().find(|e| e.name == part.as_bytes()) else {
            break;
        };
        match depth + 1 == parts.len() {
            true => {
                found = entry.is_gitlink().then_some(entry.id);
                break;
            }
            false if entry.is_tree() => tree = entry.id,
            false => break,
        }
    }
    for (depth, tree) in walked {
        seen[depth].insert(tree, found);
    }
    found
}
