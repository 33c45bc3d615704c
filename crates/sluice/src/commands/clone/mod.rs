//! `sluice clone`: a new repository from another, as `git clone` makes it: the pack with its
//! indexes, the remote's branches as `refs/remotes/origin/*` (or as they are, bare or mirror)
//! and its tags in `packed-refs`, `origin`'s configuration, reflogs, the shallow file or the
//! promisor settings of a partial clone, and the default branch checked out. Any URL git takes;
//! from a plain path, as git does, the source's object files are linked instead of fetched
//! (see `local_clone`). A failure (or a signal) removes what the clone created.

mod partial;
mod receive;
mod refs;
mod setup;

use super::remote::{connect, resolve};
use super::repack::repack_all;
use super::Context;
use crate::progress::{Deferred, TerminalProgress};
use anyhow::{bail, Context as _};
use clap::Args;
use partial::{fetch_missing_blobs, write_promisor};
use receive::early_checkout;
use refs::write_refs;
use setup::{init, initial_branch, local_source, origin, write_settings, LocalSource};
use sluice_checkout::{checkout_fresh, commit_tree, CheckoutOptions};
use sluice_fetch::clone::{ClonePlan, CloneShape, EarlyCheckout, Origin};
use sluice_fetch::partial::filter_spec;
use sluice_fetch::reference::{add_references, Need, Reference};
use sluice_fetch::ConnectOptions;
use sluice_fetch::Remote;
use sluice_fetch::{RemoteRef, RemoteUrl};
use sluice_object::ObjectId;
use sluice_odb::Repository;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `git clone`'s arguments (those this version supports).
#[derive(Debug, Args)]
pub struct CloneArgs {
    /// Make a bare repository.
    #[arg(long)]
    bare: bool,
    /// Make a bare mirror: every ref of the remote, as it is named there.
    #[arg(long)]
    mirror: bool,
    /// Do not check out HEAD.
    #[arg(short = 'n', long)]
    no_checkout: bool,
    /// Check out this branch (or tag) instead of the remote's HEAD.
    #[arg(short = 'b', long, value_name = "name")]
    branch: Option<String>,
    /// Clone only one branch: HEAD's or `--branch`'s.
    #[arg(long, overrides_with = "no_single_branch")]
    single_branch: bool,
    /// Clone every branch, even with `--depth`.
    #[arg(long, overrides_with = "single_branch")]
    no_single_branch: bool,
    /// Do not clone tags, and do not follow them in later fetches.
    #[arg(long)]
    no_tags: bool,
    /// A shallow clone of this many commits.
    #[arg(long, value_name = "depth")]
    depth: Option<u32>,
    /// A shallow clone of the commits after this date.
    #[arg(long, value_name = "time")]
    shallow_since: Option<String>,
    /// A shallow clone that excludes what this remote ref reaches.
    #[arg(long, value_name = "revision")]
    shallow_exclude: Vec<String>,
    /// Fail if the source repository is shallow (by default `clone.rejectShallow`).
    #[arg(long, overrides_with = "no_reject_shallow")]
    reject_shallow: bool,
    /// Clone a shallow source repository too, whatever `clone.rejectShallow` says.
    #[arg(long, overrides_with = "reject_shallow")]
    no_reject_shallow: bool,
    /// A partial clone: leave out what the filter excludes (`blob:none`, `blob:limit=<n>`).
    #[arg(long, value_name = "filter-spec")]
    filter: Option<String>,
    /// No messages, no progress.
    #[arg(short, long)]
    quiet: bool,
    /// Progress even when stderr is not a terminal.
    #[arg(long)]
    progress: bool,
    /// The command that runs upload-pack on the other side.
    #[arg(short = 'u', long, value_name = "command")]
    upload_pack: Option<String>,
    /// From a path, link the source's object files instead of fetching (the default for
    /// paths); a link that fails is an error rather than a copy.
    #[arg(short = 'l', long, overrides_with = "no_local")]
    local: bool,
    /// From a path, fetch through upload-pack as from a URL.
    #[arg(long, overrides_with = "local")]
    no_local: bool,
    /// From a path, copy the source's object files instead of linking them.
    #[arg(long)]
    no_hardlinks: bool,
    /// From a path, borrow the source's objects through an alternate instead of copying them.
    #[arg(short = 's', long)]
    shared: bool,
    /// Borrow objects from this local repository (through `objects/info/alternates`): what
    /// it has is not fetched. Repeatable.
    #[arg(long, value_name = "repository")]
    reference: Vec<String>,
    /// As `--reference`, but a repository that cannot be borrowed from is only reported.
    #[arg(long, value_name = "repository")]
    reference_if_able: Vec<String>,
    /// Stop borrowing once the clone is made: copy into a pack of its own every object it
    /// takes from its alternates.
    #[arg(long)]
    dissociate: bool,
    /// Set a configuration value in the new repository, before the fetch and the checkout
    /// (`<key>=<value>`; a key alone is true). Repeatable.
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    config: Vec<String>,
    /// Name the remote <name> instead of `origin` (or `clone.defaultRemoteName`).
    #[arg(short = 'o', long, value_name = "name")]
    origin: Option<String>,
    /// The repository to clone: a path or any URL git takes.
    #[arg(value_name = "repository")]
    repository: String,
    /// The new directory (by default named after the repository). Not named `directory`:
    /// that is the global `-C`.
    #[arg(value_name = "directory")]
    into: Option<PathBuf>,
}

impl CloneArgs {
    fn bare(&self) -> bool {
        self.bare || self.mirror
    }

    /// `--reference` repositories, then `--reference-if-able` ones.
    fn references(&self) -> Vec<Reference> {
        let required = self.reference.iter().map(|given| Reference {
            given: given.clone(),
            need: Need::Required,
        });
        let optional = self.reference_if_able.iter().map(|given| Reference {
            given: given.clone(),
            need: Need::IfAble,
        });
        required.chain(optional).collect()
    }

    /// `--depth` and the other shallow options imply `--single-branch` unless told otherwise.
    fn single_branch(&self) -> bool {
        let shallow = self.depth.is_some()
            || self.shallow_since.is_some()
            || !self.shallow_exclude.is_empty();
        !self.mirror && (self.single_branch || (shallow && !self.no_single_branch))
    }

    /// The choices that decide which refs the clone takes.
    fn shape(&self) -> CloneShape {
        CloneShape {
            branch: self.branch.clone(),
            bare: self.bare(),
            mirror: self.mirror,
            single_branch: self.single_branch(),
            no_tags: self.no_tags,
        }
    }
}

/// The directory git would name after `repository`: its last component without `.git`.
fn humanish(repository: &str, bare: bool) -> String {
    let trimmed = repository.trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/.git").unwrap_or(trimmed);
    let last = trimmed.rsplit(['/', ':']).next().unwrap_or(trimmed);
    let name = last.strip_suffix(".git").unwrap_or(last);
    if bare {
        format!("{name}.git")
    } else {
        name.to_owned()
    }
}

/// Removes what a failed clone created, unless it succeeded; also on a signal.
struct Cleanup {
    path: PathBuf,
    /// The directory existed (empty) before: empty it rather than remove it.
    existed: bool,
    armed: bool,
}

impl Cleanup {
    fn new(path: PathBuf, existed: bool) -> Cleanup {
        if !existed {
            sluice_odb::tempfiles::register_dir(&path);
        }
        Cleanup {
            path,
            existed,
            armed: true,
        }
    }

    fn disarm(&mut self) {
        self.armed = false;
        sluice_odb::tempfiles::forget_dir(&self.path);
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        sluice_odb::tempfiles::forget_dir(&self.path);
        if self.existed {
            if let Ok(entries) = std::fs::read_dir(&self.path) {
                for entry in entries.flatten() {
                    let path = entry.path();
                    let _ = if path.is_dir() {
                        std::fs::remove_dir_all(&path)
                    } else {
                        std::fs::remove_file(&path)
                    };
                }
            }
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Runs clone.
pub fn run(mut args: CloneArgs, context: &Context) -> anyhow::Result<ExitCode> {
    if let Some(spec) = &args.filter {
        args.filter = Some(filter_spec(spec)?);
    }
    let remote = resolve(context, &args.repository)?;
    // Before "Cloning into", and in clone's words (fetch says it another way), as git does.
    if let RemoteUrl::Local(path) = &remote.url {
        if !path.exists() {
            bail!("repository '{}' does not exist", remote.shown);
        }
    }
    let initial = initial_branch(context)?;
    let bare = args.bare();
    let directory = args
        .into
        .clone()
        .unwrap_or_else(|| PathBuf::from(humanish(&args.repository, bare)));
    let target = context.cwd.join(&directory);
    let existed = target.exists();
    if existed && std::fs::read_dir(&target).map_or(true, |mut d| d.next().is_some()) {
        bail!(
            "destination path '{}' already exists and is not an empty directory.",
            directory.display()
        );
    }
    if !args.quiet {
        let into = if bare { "bare repository " } else { "" };
        eprintln!("Cloning into {into}'{}'...", directory.display());
    }
    let local = local_source(&args, &remote);
    let mut cleanup = Cleanup::new(target.clone(), existed);
    let git_dir = if bare {
        target.clone()
    } else {
        target.join(".git")
    };
    init(&git_dir, &initial, bare, args.filter.is_some())?;
    write_settings(&git_dir, &args.config)?;
    let objects = git_dir.join("objects");
    for (given, why) in add_references(&context.cwd, &objects, &args.references())? {
        eprintln!("info: Could not add alternate for '{given}': {why}");
    }
    let work_tree = (!bare).then(|| target.clone());
    let repo = Repository::open_git_dir(git_dir.clone(), work_tree)?;
    let origin = origin(&args, repo.config())?;
    clone_into(&args, &remote, &origin, local.as_ref(), &repo, &initial)?;
    cleanup.disarm();
    Ok(ExitCode::SUCCESS)
}

/// Everything after the empty repository exists, in its steps: the plan from the remote's refs,
/// the objects (checked out as they arrive where that can be), the refs and configuration, and
/// the checkout that was not done on the way.
fn clone_into(
    args: &CloneArgs,
    remote: &Remote,
    origin: &Origin,
    local: Option<&LocalSource>,
    repo: &Repository,
    initial: &str,
) -> anyhow::Result<()> {
    let options = ConnectOptions::from_config(repo.config(), args.upload_pack.as_deref())?;
    let mut connection = connect(remote, &options)?;
    let shape = args.shape();
    let prefixes = origin.ref_prefixes(&shape);
    let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
    let advertised = connection.ls_refs(&prefixes)?;
    let mut plan = ClonePlan::new(&shape, origin, &advertised)?;
    if advertised.is_empty() {
        // An empty remote: HEAD names the branch its HEAD will make when protocol v2 says
        // ("unborn"), else the one this repository was made on; either way it is the branch
        // whose upstream is configured, as git does.
        let unborn = connection.unborn_head();
        let branch = unborn.filter(|name| name.starts_with("refs/heads/"));
        plan.head_branch = Some(branch.unwrap_or(initial).to_owned());
    }
    let show_progress = crate::progress::enabled(!args.quiet, args.progress);
    let wants = plan.wants();
    let request = receive::request(args, repo, &wants, show_progress)?;
    if wants.is_empty() && !args.quiet {
        eprintln!("warning: You appear to have cloned an empty repository.");
    }
    let checkout_progress = Deferred::default();
    let early = early_checkout(
        args,
        repo,
        plan.checkout_id(&advertised),
        &checkout_progress,
    )?;
    let received = receive::receive(args, local, &mut connection, repo, &request, early.as_ref())?;
    connection.finish()?;
    if let (Some(received), Some(_)) = (&received, &args.filter) {
        write_promisor(&received.pack, &advertised)?;
    }
    // The new pack is there now: open again to see it.
    let repo = reopen(repo)?;
    let head_id = write_refs(args, remote, origin, &repo, &plan, &advertised)?;
    let repo = dissociate(args, repo)?;
    if let Some(outcome) = early.and_then(EarlyCheckout::finish) {
        for warning in outcome? {
            eprintln!("warning: {warning}");
        }
        checkout_progress.replay(&TerminalProgress::new(show_progress));
        return Ok(());
    }
    match head_id {
        Some(id) if !args.bare() && !args.no_checkout => {
            check_out(args, remote, &repo, &id, &advertised, show_progress)
        }
        _ => Ok(()),
    }
}

/// The repository opened again, to see the objects that arrived since it was opened.
fn reopen(repo: &Repository) -> anyhow::Result<Repository> {
    let work_tree = repo.work_tree().map(Path::to_owned);
    Ok(Repository::open_git_dir(
        repo.git_dir().to_owned(),
        work_tree,
    )?)
}

/// `--dissociate`: the objects borrowed from reference repositories are copied in by a repack,
/// and the alternates file goes.
fn dissociate(args: &CloneArgs, repo: Repository) -> anyhow::Result<Repository> {
    let alternates = repo.git_dir().join("objects/info/alternates");
    if !args.dissociate || !alternates.exists() {
        return Ok(repo);
    }
    repack_all(&repo).context("cannot repack to clean up")?;
    std::fs::remove_file(&alternates).context("cannot unlink temporary alternates file")?;
    reopen(&repo)
}

/// The checkout after the clone, where none ran while the pack arrived; a partial clone
/// first fetches the blobs it lacks.
fn check_out(
    args: &CloneArgs,
    remote: &Remote,
    repo: &Repository,
    commit: &ObjectId,
    advertised: &[RemoteRef],
    show_progress: bool,
) -> anyhow::Result<()> {
    let tree = commit_tree(repo.objects(), commit)?;
    if args.filter.is_some() {
        fetch_missing_blobs(args, remote, repo, &tree, advertised)?;
    }
    // Open again: a partial clone has a second pack now.
    let repo = reopen(repo)?;
    let options = CheckoutOptions::from_config(repo.config())?;
    let progress = TerminalProgress::new(show_progress);
    for warning in checkout_fresh(&repo, &tree, &options, &progress)? {
        eprintln!("warning: {warning}");
    }
    Ok(())
}
