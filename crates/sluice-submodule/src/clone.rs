//! `clone --recurse-submodules`: after the checkout, what git's clone runs as `submodule update
//! --init --recursive`: each submodule of the index registered in the configuration, cloned
//! (by Sluice, as a transport the repository rather than the user chose:
//! `GIT_PROTOCOL_FROM_USER=0`) into `modules/<name>` of the superproject's repository without a
//! checkout, its commit checked out detached, and the same again inside it.

use crate::jobs;
use crate::registry::{
    checked_out_submodules, connect, default_remote, is_active, pass_on_alternates, register,
    superproject_alternates, ModuleAlternate, Placed, Submodule,
};
use crate::{Host, SubmoduleError};
use sluice_repo::Repository;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the clones of submodules are given, from the superproject's clone.
pub struct Options {
    /// `-q`: the clones and checkouts say nothing.
    pub quiet: bool,
    /// `--progress`: the clones show progress even off a terminal.
    pub progress: bool,
    /// `--shallow-submodules`: one commit each.
    pub shallow: bool,
    /// `--also-filter-submodules`: the superproject's `--filter`.
    pub filter: Option<String>,
    /// `--single-branch` given to the superproject's clone: the submodules' take one branch
    /// too; otherwise every branch, even shallow, as git clones them.
    pub single_branch: bool,
    /// `--remote-submodules`: each submodule checked out at its remote's branch
    /// (`submodule.<name>.branch`, else the remote's HEAD), not at the recorded commit.
    pub remote: bool,
    /// `--jobs`: how many clones at once, else `submodule.fetchJobs`, else one.
    pub jobs: Option<u32>,
}

/// The settings `--recurse-submodules=<pathspec>…` writes after `-c`'s: each pathspec once,
/// sorted, as git writes them; with `submodule.stickyRecursiveClone` in the user's `config`,
/// `submodule.recurse` so that later commands recurse; and where references are given
/// (`--reference`, `--reference-if-able`: `references`), that the submodules borrow from the
/// references' own submodules (`modules/<name>`). None without a pathspec.
pub fn settings(
    pathspecs: &[String],
    references: (bool, bool),
    config: &sluice_odb::Config,
) -> Result<Vec<String>, SubmoduleError> {
    let mut active: Vec<String> = (pathspecs.iter())
        .map(|pathspec| format!("submodule.active={pathspec}"))
        .collect();
    active.sort();
    active.dedup();
    if active.is_empty() {
        return Ok(active);
    }
    if config.get_bool("submodule.stickyrecursiveclone")? == Some(true) {
        active.push("submodule.recurse=true".to_owned());
    }
    let strategy = match references {
        (true, true) | (false, false) => None,
        (true, false) => Some("die"),
        (false, true) => Some("info"),
    };
    if let Some(strategy) = strategy {
        active.push("submodule.alternateLocation=superproject".to_owned());
        active.push(format!("submodule.alternateErrorStrategy={strategy}"));
    }
    Ok(active)
}

/// A submodule with where it goes, its URL and its path as the messages show it.
struct Registered {
    placed: Placed,
    url: String,
    shown: String,
}

/// Registers, clones and checks out every submodule of `repo`, then theirs; `prefix` puts the
/// paths shown under the top superproject's. `Ok(false)` once a clone failed twice (git's
/// words said; the rest is left as it is, as git leaves it).
pub fn update(
    host: &dyn Host,
    repo: &Repository,
    recursion: &Options,
    prefix: &str,
) -> Result<bool, SubmoduleError> {
    let submodules = checked_out_submodules(repo)?;
    for warning in submodules.iter().filter_map(Submodule::warning) {
        host.err_line(&format!("warning: {warning}"));
    }
    let mut placed = Vec::new();
    for submodule in submodules {
        // As `submodule update --init`: only those `submodule.active` and the rest say.
        if !is_active(repo, &submodule)? {
            continue;
        }
        let url = register(repo, &submodule)?;
        let shown = format!("{prefix}{}", submodule.path);
        if !recursion.quiet {
            host.err_line(&format!(
                "Submodule '{}' ({url}) registered for path '{shown}'",
                submodule.name
            ));
        }
        if let Some(at) = Placed::of(repo, submodule) {
            placed.push(Registered {
                placed: at,
                url,
                shown,
            });
        }
    }
    // As git: every clone once, then those that failed once more; a second failure ends it.
    let first: Vec<&Registered> = (placed.iter())
        .filter(|sub| !sub.placed.git_dir.exists())
        .collect();
    let mut failed = Vec::new();
    for_each_clone(host, repo, &first, recursion, |sub, done| {
        match done {
            true => cloned(repo, sub)?,
            false => {
                host.err_line(&format!("Failed to clone '{}'. Retry scheduled", sub.shown));
                failed.push(sub);
            }
        }
        Ok(true)
    })?;
    let mut aborted = false;
    for_each_clone(host, repo, &failed, recursion, |sub, done| {
        match done {
            true => cloned(repo, sub)?,
            false => {
                let line = format!("Failed to clone '{}' a second time, aborting", sub.shown);
                host.err_line(&line);
                aborted = true;
            }
        }
        Ok(!aborted)
    })?;
    if aborted {
        return Ok(false);
    }
    for sub in &placed {
        let commit = match recursion.remote {
            true => remote_tip(repo, sub)?.to_string(),
            false => {
                fetch_if_lacking(host, sub, recursion)?;
                sub.placed.submodule.commit.to_string()
            }
        };
        let mut checkout = own_command(host, &sub.placed.work_tree)?;
        checkout.args(["checkout", "-q", &commit]);
        if !status(&mut checkout, &sub.placed.work_tree)?.success() {
            let path = sub.shown.clone();
            return Err(SubmoduleError::Checkout { commit, path });
        }
        if !recursion.quiet {
            let line = format!("Submodule path '{}': checked out '{commit}'\n", sub.shown);
            host.out(line.as_bytes());
        }
        let inner = Repository::open_git_dir(
            sub.placed.git_dir.clone(),
            Some(sub.placed.work_tree.clone()),
        )?;
        if !update(host, &inner, recursion, &format!("{}/", sub.shown))? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Ties the clone of `sub` to its work tree, and gives it the superproject's alternate
/// settings.
fn cloned(repo: &Repository, sub: &Registered) -> Result<(), SubmoduleError> {
    connect(&sub.placed.git_dir, &sub.placed.work_tree)?;
    pass_on_alternates(repo, &sub.placed.git_dir)
}

/// Fetches the recorded commit of `sub` by id when no branch of its remote held it, as git
/// does; fails in git's words when the remote lacks it.
fn fetch_if_lacking(
    host: &dyn Host,
    sub: &Registered,
    recursion: &Options,
) -> Result<(), SubmoduleError> {
    let wanted = [sub.placed.submodule.commit];
    if sub.placed.lacking(&wanted)?.is_empty() {
        return Ok(());
    }
    let commit = wanted[0];
    let inner = Repository::open_git_dir(sub.placed.git_dir.clone(), None)?;
    let mut fetch = own_command(host, &sub.placed.work_tree)?;
    fetch.arg("fetch");
    if recursion.quiet {
        fetch.arg("-q");
    }
    fetch.args([default_remote(&inner), commit.to_string()]);
    let fetched = status(&mut fetch, &sub.placed.work_tree)?.success();
    if !fetched || !sub.placed.lacking(&wanted)?.is_empty() {
        let path = sub.shown.clone();
        return Err(SubmoduleError::NotFetched { path, commit });
    }
    Ok(())
}

/// Where `--remote-submodules` checks `sub` out: its remote's `submodule.<name>.branch` (the
/// superproject's configuration, else `.gitmodules`; `.` for the superproject's own branch),
/// else the remote's HEAD.
fn remote_tip(
    repo: &Repository,
    sub: &Registered,
) -> Result<sluice_object::ObjectId, SubmoduleError> {
    let submodule = &sub.placed.submodule;
    let key = format!("submodule.{}.branch", submodule.name);
    let branch = (repo.config().get(&key)).or(submodule.branch.as_deref());
    let branch = match branch {
        Some(".") => (repo.refs().resolve("HEAD").ok())
            .and_then(|(target, _)| target.strip_prefix("refs/heads/").map(str::to_owned))
            .unwrap_or_else(|| "HEAD".to_owned()),
        Some(branch) => branch.to_owned(),
        None => "HEAD".to_owned(),
    };
    let inner = Repository::open_git_dir(sub.placed.git_dir.clone(), None)?;
    let remote = default_remote(&inner);
    let name = format!("refs/remotes/{remote}/{branch}");
    match inner.refs().resolve(&name).ok().and_then(|(_, id)| id) {
        Some(id) => Ok(id),
        None => Err(SubmoduleError::NoRemoteTip {
            remote,
            branch,
            path: sub.shown.clone(),
        }),
    }
}

/// Clones each of `subs`, as many at once as `--jobs` or `submodule.fetchJobs` say, and calls
/// `then` with each and whether its clone succeeded, in the order they end, until it says to
/// stop (`false`: no clone starts after).
fn for_each_clone<'a>(
    host: &dyn Host,
    repo: &Repository,
    subs: &[&'a Registered],
    recursion: &Options,
    mut then: impl FnMut(&'a Registered, bool) -> Result<bool, SubmoduleError>,
) -> Result<(), SubmoduleError> {
    let jobs = jobs::job_count(recursion.jobs, repo.config(), &["submodule.fetchjobs"])?;
    let clone = |sub: &Registered, output: &mut jobs::JobOutput| -> Result<_, SubmoduleError> {
        let Some(mut command) = clone_command(host, repo, sub, recursion)? else {
            return Ok(None);
        };
        let ran = output
            .run(&mut command)
            .map_err(|source| SubmoduleError::Run {
                cwd: PathBuf::from("."),
                source,
            })?;
        Ok(Some(ran.success()))
    };
    jobs::for_each(host, subs, jobs, clone, |sub, done| {
        then(sub, cloned_or_cleaned(host, sub, done))
    })
}

/// After the clone of `sub` (`None`: it could not start, as said): when it failed, git's
/// words, and what it left removed, so that it is not taken for a repository the second time.
fn cloned_or_cleaned(host: &dyn Host, sub: &Registered, done: Option<bool>) -> bool {
    if done == Some(false) {
        host.err_line(&format!(
            "fatal: clone of '{}' into submodule path '{}' failed",
            sub.url,
            sub.placed.work_tree.display()
        ));
        let _ = std::fs::remove_dir_all(&sub.placed.git_dir);
    }
    done == Some(true)
}

/// The clone of `sub` without a checkout; `None` when the clone cannot start (git's words
/// said).
fn clone_command(
    host: &dyn Host,
    repo: &Repository,
    sub: &Registered,
    recursion: &Options,
) -> Result<Option<Command>, SubmoduleError> {
    let Some(references) = references(host, repo, &sub.placed.submodule.name)? else {
        return Ok(None);
    };
    let mut command = own_command(host, Path::new("."))?;
    command.args(["clone", "--no-checkout", "--separate-git-dir"]);
    command.arg(&sub.placed.git_dir);
    for reference in references {
        command.arg("--reference").arg(reference);
    }
    if recursion.quiet {
        command.arg("-q");
    }
    if recursion.progress {
        command.arg("--progress");
    }
    if recursion.shallow {
        command.arg("--depth=1");
    }
    if let Some(filter) = &recursion.filter {
        command.arg(format!("--filter={filter}"));
    }
    command.arg(match recursion.single_branch {
        true => "--single-branch",
        false => "--no-single-branch",
    });
    // After `--`: a URL a repository chose must not be taken for an option.
    command.arg("--").arg(&sub.url).arg(&sub.placed.work_tree);
    Ok(Some(command))
}

/// git's hint when an alternate a submodule must borrow from is none.
const DIE_ADVICE: &str = "\
hint: An alternate computed from a superproject's alternate is invalid.
hint: To allow Git to clone without an alternate in such a case, set
hint: submodule.alternateErrorStrategy to 'info' or, equivalently, clone with
hint: '--reference-if-able' instead of '--reference'.
";

/// The repositories the clone of the submodule `name` borrows from: with
/// `submodule.alternateLocation=superproject`, the superproject's alternates' own
/// `modules/<name>/`. One that is none is said and skipped (`alternateErrorStrategy=info`),
/// passed over (`ignore`), or, by default (`die`), fails the clone: `None`.
fn references(
    host: &dyn Host,
    repo: &Repository,
    name: &str,
) -> Result<Option<Vec<PathBuf>>, SubmoduleError> {
    let config = repo.config();
    match config.get("submodule.alternatelocation") {
        None | Some("no") => return Ok(Some(Vec::new())),
        Some("superproject") => {}
        Some(other) => return Err(SubmoduleError::AlternateLocation(other.to_owned())),
    }
    let strategy = config
        .get("submodule.alternateerrorstrategy")
        .unwrap_or("die");
    if !matches!(strategy, "die" | "info" | "ignore") {
        let strategy = strategy.to_owned();
        return Err(SubmoduleError::AlternateErrorStrategy(strategy));
    }
    let mut found = Vec::new();
    for alternate in superproject_alternates(repo, name) {
        let problem = match alternate {
            ModuleAlternate::Found(path) => {
                found.push(path);
                continue;
            }
            other => other.problem().unwrap_or_default(),
        };
        match strategy {
            "die" => {
                let advice = config.get_bool("advice.submodulealternateerrorstrategydie")?;
                if advice != Some(false) {
                    host.err(DIE_ADVICE.as_bytes());
                }
                host.err_line(&format!(
                    "fatal: submodule '{name}' cannot add alternate: {problem}"
                ));
                return Ok(None);
            }
            "info" => host.err_line(&format!(
                "submodule '{name}' cannot add alternate: {problem}"
            )),
            _ => {}
        }
    }
    Ok(Some(found))
}

/// Sluice itself, run in `cwd` for a submodule's clone or checkout, the transport being the
/// repository's choice, not the user's.
fn own_command(host: &dyn Host, cwd: &Path) -> Result<Command, SubmoduleError> {
    let mut command = host.sluice_in(cwd).map_err(|source| SubmoduleError::Run {
        cwd: cwd.to_owned(),
        source,
    })?;
    command.env("GIT_PROTOCOL_FROM_USER", "0");
    Ok(command)
}

/// Runs `command` (Sluice in `cwd`) to its end; how it ended.
fn status(command: &mut Command, cwd: &Path) -> Result<std::process::ExitStatus, SubmoduleError> {
    command.status().map_err(|source| SubmoduleError::Run {
        cwd: cwd.to_owned(),
        source,
    })
}
