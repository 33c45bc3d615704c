//! The submodule part of a fetch, after the superproject's refs moved: git's
//! `--recurse-submodules[=yes|on-demand|no]` (else `fetch.recurseSubmodules`, else
//! `submodule.recurse`, else on demand). On demand, a checked-out submodule is fetched when a
//! commit the fetch brought records a commit of it that its repository lacks; with `yes`, every
//! checked-out submodule is. Each is fetched by Sluice run inside it, which goes on into its own.

use crate::commits::{new_commits, recorded_at};
use crate::jobs::{self, JobOutput};
use crate::recursion::Mode;
use crate::registry::{checked_out_submodules, default_remote, fetch_recursion, Placed};
use crate::{Host, Recursion, SubmoduleError};
use sluice_client::fetch::Report;
use sluice_object::ObjectId;
use sluice_repo::Repository;

/// What the fetches of the superproject brought, from their reports: the new values of the
/// refs they moved (or, under `--dry-run`, would have moved) and the old ones.
#[derive(Default)]
pub struct Brought {
    tips: Vec<ObjectId>,
    olds: Vec<ObjectId>,
}

impl Brought {
    /// Takes in one remote's report.
    pub fn note(&mut self, lines: &[Report]) {
        for report in lines {
            let Report::Line(line) = report else {
                continue;
            };
            if line.code == '!' || line.new == line.old || line.new.is_null() {
                continue;
            }
            self.tips.push(line.new);
            if !line.old.is_null() {
                self.olds.push(line.old);
            }
        }
    }
}

/// Fetches the submodules of `repo` that `mode` asks for, given what the fetch `brought`, each
/// with the options `passed` on (git's: `--dry-run`, `--prune`, `-q`, …), `jobs` at a time;
/// `prefix` puts the paths shown under the top superproject's. Returns the names of those whose
/// fetch failed.
pub fn fetch_submodules(
    host: &dyn Host,
    repo: &Repository,
    (modes, jobs): (Mode, usize),
    brought: &Brought,
    passed: &[&str],
    (quiet, prefix): (bool, &str),
) -> Result<Vec<String>, SubmoduleError> {
    if repo.work_tree().is_none() || modes == Mode::Given(Recursion::Off) {
        return Ok(Vec::new());
    }
    let brought = match brought.tips.is_empty() {
        true => Vec::new(),
        false => new_commits(repo, &brought.tips, &brought.olds),
    };
    let mut wanted = Vec::new();
    for submodule in checked_out_submodules(repo)? {
        let Some(placed) = Placed::of(repo, submodule).filter(Placed::is_populated) else {
            continue;
        };
        let mode = modes.for_submodule(fetch_recursion(repo, &placed.submodule))?;
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
    jobs::for_each(host, &wanted, jobs, fetch, |_, mut paths| {
        failed.append(&mut paths);
        Ok(true)
    })?;
    Ok(failed)
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
