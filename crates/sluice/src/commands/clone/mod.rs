//! `sluice clone`: a new repository from another, as `git clone` makes it: the pack with its
//! indexes, the remote's branches as `refs/remotes/origin/*` (or as they are, bare or mirror)
//! and its tags in `packed-refs`, `origin`'s configuration, reflogs, the shallow file or the
//! promisor settings of a partial clone, and the default branch checked out. Any URL git takes;
//! from a plain path, as git does, the source's object files are linked instead of fetched
//! (see `local_clone`). A failure (or a signal) removes what the clone created.

use super::checkout::identity;
use super::local_clone::{transfer_objects, ObjectTransfer};
use super::reference::{add_references, alternate_tips, Need, Reference};
use super::remote::{connect, connect_options, fetch_into, resolve, Receiving, Remote};
use super::repack::repack_all;
use super::Context;
use crate::progress::{Deferred, TerminalProgress};
use anyhow::{bail, Context as _};
use clap::Args;
use sluice_checkout::tree::flatten;
use sluice_checkout::{checkout_fresh, checkout_fresh_from, commit_tree, CheckoutOptions};
use sluice_fetch::date::parse_since;
use sluice_fetch::partial::filter_spec;
use sluice_fetch::refspec::Refspec;
use sluice_fetch::remote_shallow;
use sluice_fetch::{
    anonymized, Deepen, FetchRequest, HistoryNegotiator, Negotiator, NoHaves, RemoteRef, RemoteUrl,
};
use sluice_object::ObjectId;
use sluice_odb::pack_store::Alongside;
use sluice_odb::{Config, ConfigFile, ConfigKey, ObjectDb, Peeled, RefTarget, Repository};
use sluice_pack::ArrivingPack;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

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

/// A ref of the remote and the name it gets here.
struct Mapped<'a> {
    local: String,
    remote: &'a RemoteRef,
}

/// What the clone fetches, and under which names, from the remote's refs.
struct Plan<'a> {
    /// Refs written to `packed-refs`.
    refs: Vec<Mapped<'a>>,
    /// The branch HEAD will point to (`refs/heads/…`), if any.
    head_branch: Option<String>,
    /// A tag to check out detached (`-b <tag>`).
    detached: Option<ObjectId>,
    /// The fetch refspec recorded in the configuration (none for a plain bare clone).
    refspec: Option<String>,
}

/// The remote's name and the fetch refspecs `--config` gave it, which the clone follows
/// besides its own.
struct Origin {
    name: String,
    extra: Vec<Refspec>,
}

impl Origin {
    /// Where a branch of the remote is kept: `refs/remotes/<name>/<branch>`.
    fn tracking(&self, branch: &str) -> String {
        format!(
            "refs/remotes/{}/{}",
            self.name,
            branch.trim_start_matches("refs/heads/")
        )
    }

    /// The refspec that keeps every branch of the remote under its name.
    fn default_refspec(&self) -> String {
        format!("+refs/heads/*:{}", self.tracking("*"))
    }

    /// Where the extra refspecs put `remote`, in their order.
    fn extra_names(&self, remote: &str) -> Vec<String> {
        self.extra
            .iter()
            .filter(|spec| !spec.negative)
            .filter_map(|spec| spec.destination(&spec.matches(remote)?))
            .collect()
    }

    /// The ref prefixes to ask the remote for, for the extra refspecs.
    fn extra_prefixes(&self) -> Vec<String> {
        self.extra
            .iter()
            .filter(|spec| !spec.negative)
            .flat_map(Refspec::ref_prefixes)
            .collect()
    }
}

/// Two refspecs that give the same local name (the same ref twice, or two refs) are an error,
/// as one ref transaction cannot update a ref twice.
fn refuse_twice_mapped(refs: &[Mapped]) -> anyhow::Result<()> {
    let mut seen = std::collections::HashSet::new();
    match refs.iter().find(|mapped| !seen.insert(&mapped.local)) {
        Some(twice) => bail!("multiple updates for ref '{}' not allowed", twice.local),
        None => Ok(()),
    }
}

fn plan<'a>(
    args: &CloneArgs,
    origin: &Origin,
    advertised: &'a [RemoteRef],
) -> anyhow::Result<Plan<'a>> {
    let head = advertised.iter().find(|r| r.name == "HEAD");
    let remote_head = head.and_then(|h| h.symref_target.clone());
    let has = |name: &str| advertised.iter().any(|r| r.name == name);
    let (mut head_branch, mut detached) = (remote_head.clone(), None);
    if let Some(name) = &args.branch {
        let branch = format!("refs/heads/{name}");
        let tag = format!("refs/tags/{name}");
        if has(&branch) {
            head_branch = Some(branch);
        } else if let Some(tag) = advertised.iter().find(|r| r.name == tag) {
            head_branch = None;
            detached = Some(tag.peeled.unwrap_or(tag.id));
        } else {
            bail!("Remote branch {name} not found in upstream {}", origin.name);
        }
    }
    if args.mirror {
        let mut refs = Vec::new();
        for remote in advertised {
            for local in origin.extra_names(&remote.name) {
                refs.push(Mapped { local, remote });
            }
            if remote.name.starts_with("refs/") {
                let local = remote.name.clone();
                refs.push(Mapped { local, remote });
            }
        }
        refuse_twice_mapped(&refs)?;
        return Ok(Plan {
            refs,
            head_branch,
            detached,
            refspec: Some("+refs/*:refs/*".into()),
        });
    }
    let local_branch = |name: &str| {
        if args.bare() {
            name.to_owned()
        } else {
            origin.tracking(name)
        }
    };
    let single = args.single_branch();
    let mut refs: Vec<Mapped> = Vec::new();
    let branch_refspec = if single {
        // One branch: HEAD's (or --branch's); a tag given to -b fetches the tag alone.
        let chosen = match (&args.branch, &head_branch) {
            (Some(name), None) => Some(format!("refs/tags/{name}")),
            (_, Some(branch)) => Some(branch.clone()),
            (None, None) => None,
        };
        if let Some(remote) = chosen
            .as_ref()
            .and_then(|c| advertised.iter().find(|r| &r.name == c))
        {
            let local = if remote.name.starts_with("refs/heads/") {
                local_branch(&remote.name)
            } else {
                remote.name.clone()
            };
            refs.push(Mapped { local, remote });
            for local in origin.extra_names(&remote.name) {
                refs.push(Mapped { local, remote });
            }
        }
        match chosen.as_deref() {
            Some(branch) if branch.starts_with("refs/heads/") => {
                let short = branch.trim_start_matches("refs/heads/");
                let target = if args.bare() {
                    branch.to_owned()
                } else {
                    origin.tracking(short)
                };
                format!("+{branch}:{target}")
            }
            Some(tag) => format!("+{tag}:{tag}"),
            None => origin.default_refspec(),
        }
    } else {
        for remote in advertised {
            for local in origin.extra_names(&remote.name) {
                refs.push(Mapped { local, remote });
            }
            if remote.name.starts_with("refs/heads/") {
                refs.push(Mapped {
                    local: local_branch(&remote.name),
                    remote,
                });
            }
        }
        if !args.no_tags {
            for remote in advertised
                .iter()
                .filter(|r| r.name.starts_with("refs/tags/"))
            {
                refs.push(Mapped {
                    local: remote.name.clone(),
                    remote,
                });
            }
        }
        origin.default_refspec()
    };
    refuse_twice_mapped(&refs)?;
    Ok(Plan {
        refs,
        head_branch,
        detached,
        refspec: (!args.bare()).then_some(branch_refspec),
    })
}

/// The object directory a clone from a path takes its objects from, and how.
struct LocalSource {
    objects: PathBuf,
    transfer: ObjectTransfer,
}

/// Whether the clone copies the source's objects itself, as git does for a path (not a
/// `file://` URL) to a repository that is not shallow, unless `--no-local`. Says, as git
/// does, which options that leaves without effect.
fn local_source(args: &CloneArgs, remote: &Remote) -> Option<LocalSource> {
    // Only where the repository is: its objects are copied as files, never read.
    let source = match &remote.url {
        RemoteUrl::Local(path) if !args.no_local && !args.repository.starts_with("file://") => {
            Repository::find_served(path, false).map(|git_dir| Repository::common_dir_of(&git_dir))
        }
        _ => None,
    };
    let source = source.filter(|common_dir| {
        let shallow = common_dir.join("shallow").exists();
        if shallow && args.local {
            eprintln!("warning: source repository is shallow, ignoring --local");
        }
        !shallow
    });
    let Some(source) = source else {
        if args.local {
            eprintln!("warning: --local is ignored");
        }
        return None;
    };
    for (given, option) in [
        (args.depth.is_some(), "--depth"),
        (args.shallow_since.is_some(), "--shallow-since"),
        (!args.shallow_exclude.is_empty(), "--shallow-exclude"),
        (args.filter.is_some(), "--filter"),
    ] {
        if given {
            eprintln!("warning: {option} is ignored in local clones; use file:// instead.");
        }
    }
    let transfer = if args.shared {
        ObjectTransfer::Shared
    } else if args.no_hardlinks {
        ObjectTransfer::Copy
    } else if args.local {
        ObjectTransfer::LinkOnly
    } else {
        ObjectTransfer::LinkOrCopy
    };
    let objects = std::path::absolute(source.join("objects")).ok()?;
    Some(LocalSource { objects, transfer })
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
    add_references(&context.cwd, &git_dir.join("objects"), &args.references())?;
    let work_tree = (!bare).then(|| target.clone());
    let repo = Repository::open_git_dir(git_dir.clone(), work_tree)?;
    let origin = origin(&args, repo.config())?;
    clone_into(&args, &remote, &origin, local.as_ref(), &repo, &initial)?;
    cleanup.disarm();
    Ok(ExitCode::SUCCESS)
}

/// Everything after the empty repository exists.
fn clone_into(
    args: &CloneArgs,
    remote: &Remote,
    origin: &Origin,
    local: Option<&LocalSource>,
    repo: &Repository,
    initial: &str,
) -> anyhow::Result<()> {
    let (git_dir, work_tree) = (repo.git_dir(), repo.work_tree().map(Path::to_owned));
    let bare = args.bare();
    let options = connect_options(repo.config(), args.upload_pack.as_deref())?;
    let mut connection = connect(remote, &options)?;
    let prefixes: Vec<String> = if args.mirror {
        Vec::new()
    } else {
        ["HEAD", "refs/heads/", "refs/tags/"]
            .map(str::to_owned)
            .into_iter()
            .chain(origin.extra_prefixes())
            .collect()
    };
    let prefixes: Vec<&str> = prefixes.iter().map(String::as_str).collect();
    let advertised = connection.ls_refs(&prefixes)?;
    let mut plan = plan(args, origin, &advertised)?;
    if advertised.is_empty() {
        if let Some(name) = &args.branch {
            bail!("Remote branch {name} not found in upstream {}", origin.name);
        }
        // An empty remote: HEAD names the branch its HEAD will make when protocol v2 says
        // ("unborn"), else the one this repository was made on; either way it is the branch
        // whose upstream is configured, as git does.
        plan.head_branch = Some(
            connection
                .unborn_head()
                .filter(|name| name.starts_with("refs/heads/"))
                .unwrap_or(initial)
                .to_owned(),
        );
    }
    let show_progress = crate::progress::enabled(!args.quiet, args.progress);
    let mut wants: Vec<ObjectId> = plan.refs.iter().map(|m| m.remote.id).collect();
    wants.extend(plan.detached);
    wants.sort_unstable();
    wants.dedup();
    let deepen = Deepen {
        depth: args.depth,
        since: parse_since(args.shallow_since.as_deref())?,
        not: args.shallow_exclude.clone(),
        relative: false,
    };
    if args.depth == Some(0) {
        bail!("depth 0 is not a positive number");
    }
    // What a reference has already is not asked for (unless the history is cut, where the
    // server decides what "have" means), as git does not ask for what it has.
    let missing: Vec<ObjectId> = wants
        .iter()
        .filter(|id| deepen.is_set() || !repo.objects().contains(id))
        .copied()
        .collect();
    let request = FetchRequest {
        wants: missing,
        shallow: Vec::new(),
        deepen,
        filter: args.filter.clone(),
        include_tag: !args.no_tags,
        progress: show_progress,
        reject_shallow_remote: reject_shallow(args, repo.config())?,
    };
    // The commit to check out is known before the pack arrives: its files are written while
    // the pack's deltas are resolved, each as soon as its blob is in (a partial clone lacks
    // blobs, so it checks out afterwards).
    let checkout_id = match (&plan.head_branch, plan.detached) {
        (_, Some(id)) => Some(id),
        (Some(branch), None) => advertised.iter().find(|r| &r.name == branch).map(|r| r.id),
        (None, None) => None,
    };
    let checkout_progress = Deferred::default();
    let early: Mutex<Option<anyhow::Result<Vec<String>>>> = Mutex::new(None);
    let alongside = |pack: &ArrivingPack<'_>| {
        let result = (|| {
            let tree = commit_tree(pack, &checkout_id.expect("checked"))?;
            let options = CheckoutOptions::from_config(repo.config())?;
            Ok(checkout_fresh_from(
                repo,
                pack,
                &tree,
                &options,
                &checkout_progress,
            )?)
        })();
        *early.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
    };
    // Files are written from the arriving pack only when it holds all of them.
    let overlap = !bare
        && !args.no_checkout
        && args.filter.is_none()
        && checkout_id.is_some()
        && repo.objects().alternates().is_empty();
    let mut received = None;
    if wants.is_empty() && !args.quiet {
        eprintln!("warning: You appear to have cloned an empty repository.");
    }
    if let Some(local) = local {
        transfer_objects(&local.objects, &git_dir.join("objects"), local.transfer)?;
        if !args.quiet {
            eprintln!("done.");
        }
    } else if !request.wants.is_empty() {
        let receiving = Receiving {
            show_progress,
            alongside: overlap.then_some(&alongside as &Alongside),
            ..Receiving::default()
        };
        // What the references' refs reach is offered as haves.
        let borrowed = alternate_tips(repo.objects());
        let mut history;
        let negotiator: &mut dyn Negotiator = if borrowed.is_empty() {
            &mut NoHaves
        } else {
            history = HistoryNegotiator::new(repo.objects(), borrowed);
            &mut history
        };
        let got = fetch_into(&mut connection, repo, &request, negotiator, receiving)?;
        // A shallow server's cut is this clone's too, where the pack reached it.
        let mut shallow = got.shallow.clone();
        if !got.remote_shallow.is_empty() {
            let odb = ObjectDb::open(repo.objects().dir(), repo.hash())?;
            shallow.extend(remote_shallow::arrived(&odb, &got.remote_shallow));
        }
        repo.update_shallow(&shallow, &got.unshallow)?;
        received = Some(got);
    }
    connection.finish()?;
    if let (Some(received), Some(_)) = (&received, &args.filter) {
        write_promisor(&received.pack, &advertised)?;
    }
    // The new pack is there now: open again to see it.
    let repo = Repository::open_git_dir(git_dir.to_owned(), work_tree)?;
    let odb = repo.objects();

    // Tags that point into what arrived come along when only part of the remote was asked for.
    let mut followed = Vec::new();
    if args.single_branch() && !args.no_tags {
        for tag in advertised
            .iter()
            .filter(|r| r.name.starts_with("refs/tags/"))
        {
            let already = plan.refs.iter().any(|m| m.remote.name == tag.name);
            if !already && odb.contains(&tag.id) && odb.contains(&tag.peeled.unwrap_or(tag.id)) {
                followed.push(tag);
            }
        }
    }
    repo.refs().write_packed(
        plan.refs
            .iter()
            .map(|m| (m.local.clone(), m.remote.id, Peeled::Known(m.remote.peeled)))
            .collect(),
    )?;
    for tag in &followed {
        repo.refs().write(&tag.name, &RefTarget::Id(tag.id))?;
    }
    write_config(args, remote, origin, &repo, &plan)?;
    let log = |name: &str, id: &ObjectId| {
        if !bare {
            let null = repo.hash().null_id();
            let who = identity(repo.config());
            let message = format!("clone: from {}", anonymized(&remote.recorded));
            let _ = repo.refs().append_log(name, &null, id, &who, &message);
        }
    };
    let head_id = match (&plan.head_branch, plan.detached) {
        (_, Some(id)) => {
            repo.refs().write("HEAD", &RefTarget::Id(id))?;
            log("HEAD", &id);
            Some(id)
        }
        (Some(branch), None) => {
            repo.refs()
                .write("HEAD", &RefTarget::Symbolic(branch.clone()))?;
            let id = advertised.iter().find(|r| &r.name == branch).map(|r| r.id);
            if let (Some(id), false) = (id, bare) {
                repo.refs().write(branch, &RefTarget::Id(id))?;
                log(branch, &id);
                log("HEAD", &id);
            }
            id
        }
        (None, None) => None,
    };
    // origin/HEAD follows the remote's HEAD when its branch was fetched.
    if !bare {
        let remote_head = advertised
            .iter()
            .find(|r| r.name == "HEAD")
            .and_then(|h| h.symref_target.as_deref());
        if let Some(remote_head) = remote_head {
            let tracking = origin.tracking(remote_head);
            if let Some(fetched) = plan.refs.iter().find(|m| m.local == tracking) {
                let head = origin.tracking("HEAD");
                repo.refs()
                    .write(&head, &RefTarget::Symbolic(tracking.clone()))?;
                log(&head, &fetched.remote.id);
            }
        }
    }
    let alternates = git_dir.join("objects").join("info").join("alternates");
    let repo = if args.dissociate && alternates.exists() {
        repack_all(&repo).context("cannot repack to clean up")?;
        std::fs::remove_file(&alternates).context("cannot unlink temporary alternates file")?;
        Repository::open_git_dir(git_dir.to_owned(), repo.work_tree().map(Path::to_owned))?
    } else {
        repo
    };
    let early = early.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(result) = early {
        for warning in result? {
            eprintln!("warning: {warning}");
        }
        checkout_progress.replay(&TerminalProgress::new(show_progress));
    } else if let (Some(id), false, false) = (head_id, bare, args.no_checkout) {
        let tree = commit_tree(repo.objects(), &id)?;
        if args.filter.is_some() {
            fetch_missing_blobs(args, remote, &repo, &tree, &advertised)?;
        }
        // Open again: a partial clone has a second pack now.
        let work_tree = repo.work_tree().map(Path::to_owned);
        let repo = Repository::open_git_dir(git_dir.to_owned(), work_tree)?;
        let options = CheckoutOptions::from_config(repo.config())?;
        let progress = TerminalProgress::new(show_progress);
        for warning in checkout_fresh(&repo, &tree, &options, &progress)? {
            eprintln!("warning: {warning}");
        }
    }
    Ok(())
}

/// A partial clone cannot check out blobs it lacks: one more fetch asks for exactly those of
/// the tree being checked out, as git's lazy fetch does, into a second promisor pack.
fn fetch_missing_blobs(
    args: &CloneArgs,
    remote: &Remote,
    repo: &Repository,
    tree: &ObjectId,
    advertised: &[RemoteRef],
) -> anyhow::Result<()> {
    let odb = ObjectDb::open(repo.objects().dir(), repo.hash())?;
    let flat = flatten(&odb, tree)?;
    let mut missing: Vec<ObjectId> = flat
        .files
        .iter()
        .filter(|f| f.mode != 0o160000 && !odb.contains(&f.id))
        .map(|f| f.id)
        .collect();
    missing.sort_unstable();
    missing.dedup();
    if missing.is_empty() {
        return Ok(());
    }
    let options = connect_options(repo.config(), args.upload_pack.as_deref())?;
    let mut connection = connect(remote, &options)?;
    let show_progress = crate::progress::enabled(!args.quiet, args.progress);
    let request = FetchRequest {
        wants: missing,
        progress: show_progress,
        ..FetchRequest::default()
    };
    let receiving = Receiving {
        show_progress,
        ..Receiving::default()
    };
    let got = fetch_into(&mut connection, repo, &request, &mut NoHaves, receiving)?;
    connection.finish()?;
    write_promisor(&got.pack, advertised)
}

/// The `.promisor` file of a partial clone's pack: the refs it was fetched for, as git lists
/// them.
fn write_promisor(pack: &Path, advertised: &[RemoteRef]) -> anyhow::Result<()> {
    let text: String = advertised
        .iter()
        .map(|r| format!("{} {}\n", r.id, r.name))
        .collect();
    let path = pack.with_extension("promisor");
    std::fs::write(&path, text).with_context(|| format!("cannot write '{}'", path.display()))
}

/// The branch `git init` starts on: `init.defaultBranch`, or `master`.
fn initial_branch(context: &Context) -> anyhow::Result<String> {
    let config = context.config(None)?;
    let name = config.get("init.defaultBranch").unwrap_or("master");
    let full = format!("refs/heads/{name}");
    if !sluice_odb::refs::is_valid_ref_name(&full) {
        bail!("invalid initial branch name: '{name}'");
    }
    Ok(full)
}

/// An empty repository: the directories, `HEAD` (on `initial`, unborn) and `core` settings
/// `git init` writes (format version 1 for a partial clone, whose promisor remote is an
/// extension).
fn init(git_dir: &Path, initial: &str, bare: bool, partial: bool) -> anyhow::Result<()> {
    for dir in ["objects/pack", "objects/info", "refs/heads", "refs/tags"] {
        std::fs::create_dir_all(git_dir.join(dir))
            .with_context(|| format!("cannot create '{}'", git_dir.join(dir).display()))?;
    }
    std::fs::write(git_dir.join("HEAD"), format!("ref: {initial}\n"))?;
    let bare_value = if bare { "true" } else { "false" };
    let version = if partial { "1" } else { "0" };
    let mut core = vec![
        ("repositoryformatversion", version),
        ("filemode", "true"),
        ("bare", bare_value),
    ];
    if !bare {
        core.push(("logallrefupdates", "true"));
    }
    let mut config = ConfigFile::open(&git_dir.join("config"))?;
    for (name, value) in core {
        config.add(&ConfigKey::new("core", None, name), value);
    }
    config.write()?;
    Ok(())
}

/// The `--config` settings, written as git writes them, each added to what is there; before
/// anything is fetched, so that they apply to the clone itself.
fn write_settings(git_dir: &Path, settings: &[String]) -> anyhow::Result<()> {
    if settings.is_empty() {
        return Ok(());
    }
    let mut config = ConfigFile::open(&git_dir.join("config"))?;
    for setting in settings {
        let (key, value) = setting.split_once('=').unwrap_or((setting, "true"));
        match ConfigKey::parse(key) {
            // As git reads `-c`: section and variable names in lowercase.
            Ok(key) => config.add(&key.lowercased(), value),
            Err(e) => {
                eprintln!("error: {e}");
                bail!("unable to write parameters to config file");
            }
        }
    }
    config.write()?;
    Ok(())
}

/// `--reject-shallow`, or else `clone.rejectShallow`.
fn reject_shallow(args: &CloneArgs, config: &Config) -> anyhow::Result<bool> {
    if args.reject_shallow || args.no_reject_shallow {
        return Ok(args.reject_shallow);
    }
    Ok(config.get_bool("clone.rejectShallow")?.unwrap_or(false))
}

/// The remote's name (`--origin`, else `clone.defaultRemoteName`, else `origin`) and the fetch
/// refspecs `--config` gave it.
fn origin(args: &CloneArgs, config: &Config) -> anyhow::Result<Origin> {
    let name = match &args.origin {
        Some(name) => name.clone(),
        None => config
            .get("clone.defaultRemoteName")
            .unwrap_or("origin")
            .to_owned(),
    };
    if !sluice_odb::refs::is_valid_ref_name(&format!("refs/remotes/{name}/test")) {
        bail!("'{name}' is not a valid remote name");
    }
    let extra = config
        .get_all(&format!("remote.{name}.fetch"))
        .into_iter()
        .map(Refspec::parse)
        .collect::<Result<_, _>>()?;
    Ok(Origin { name, extra })
}

/// The remote's settings and the checked-out branch's upstream, as git clone writes them: into
/// the sections `--config` may have started, a setting replacing what it gave.
fn write_config(
    args: &CloneArgs,
    remote: &Remote,
    origin: &Origin,
    repo: &Repository,
    plan: &Plan,
) -> anyhow::Result<()> {
    let mut config = ConfigFile::open(&repo.git_dir().join("config"))?;
    let key = |name| ConfigKey::new("remote", Some(&origin.name), name);
    config.set(&key("url"), &remote.recorded)?;
    if args.no_tags {
        config.set(&key("tagOpt"), "--no-tags")?;
    }
    if let Some(refspec) = &plan.refspec {
        config.add(&key("fetch"), refspec);
    }
    if args.mirror {
        config.set(&key("mirror"), "true")?;
    }
    if let Some(filter) = &args.filter {
        config.set(&key("promisor"), "true")?;
        config.set(&key("partialclonefilter"), filter)?;
    }
    if let (Some(branch), false) = (&plan.head_branch, args.bare()) {
        let short = branch.trim_start_matches("refs/heads/");
        let key = |name| ConfigKey::new("branch", Some(short), name);
        config.set(&key("remote"), &origin.name)?;
        config.set(&key("merge"), branch)?;
    }
    config.write()?;
    Ok(())
}
