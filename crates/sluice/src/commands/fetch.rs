//! `sluice fetch [<remote>] [<refspec>…]`: git fetch. Negotiates with every local ref, receives
//! the pack (or, under `transfer.unpackLimit` objects, loose objects), then updates refs as git
//! does: fast-forwards, `+` or `--force` for the rest, tags never moved unless forced, followed
//! tags, `FETCH_HEAD`, `--prune`, reflogs and git's summary lines. Objects are stored before any
//! ref moves, so an interrupted fetch leaves every ref as it was. `--filter` makes the remote a
//! promisor remote; in a partial clone, delta bases the repository lacks are fetched from it.

use super::checkout::identity;
use super::promised::Promised;
use super::reference::alternate_tips;
use super::remote::{connect, connect_options, fetch_into, resolve, unpack_if_small, Receiving};
use super::upstream::set_upstream;
use super::Context;
use anyhow::{anyhow, bail};
use clap::Args;
use sluice_fetch::date::parse_since;
use sluice_fetch::partial::{self, filter_spec, is_promisor};
use sluice_fetch::refspec::Refspec;
use sluice_fetch::remote_shallow;
use sluice_fetch::{Deepen, FetchRequest, HistoryNegotiator, RemoteRef};
use sluice_object::parse::parse_commit;
use sluice_object::{IdSet, ObjectId, ObjectKind};
use sluice_odb::pack_store::StoreError;
use sluice_odb::{Config, ObjectDb, RefTarget, Repository};
use sluice_pack::ObjectLookup;
use std::collections::{HashMap, VecDeque};
use std::io::Write as _;
use std::process::ExitCode;

/// `git fetch`'s arguments (those this version supports).
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// Fetch every configured remote (but those with `remote.<name>.skipFetchAll`).
    #[arg(long)]
    all: bool,
    /// Every argument names a remote or a group of remotes (`remotes.<group>`) to fetch.
    #[arg(long)]
    multiple: bool,
    /// Add to FETCH_HEAD instead of replacing it.
    #[arg(short, long)]
    append: bool,
    /// Update the refs all together or not at all: one refused update leaves every ref as
    /// it was.
    #[arg(long)]
    atomic: bool,
    /// Say what would change, and change no ref (objects are still fetched, as in git).
    #[arg(long)]
    dry_run: bool,
    /// Remove remote-tracking refs whose branch is gone from the remote (default:
    /// `remote.<name>.prune`, then `fetch.prune`).
    #[arg(short, long, overrides_with = "no_prune")]
    prune: bool,
    /// Do not prune, whatever the configuration says.
    #[arg(long, overrides_with = "prune")]
    no_prune: bool,
    /// With pruning, also remove local tags the remote no longer has (default:
    /// `remote.<name>.pruneTags`, then `fetch.pruneTags`).
    #[arg(short = 'P', long, overrides_with = "no_prune_tags")]
    prune_tags: bool,
    /// Do not prune tags, whatever the configuration says.
    #[arg(long, overrides_with = "prune_tags")]
    no_prune_tags: bool,
    /// Allow updating the branch checked out.
    #[arg(short, long)]
    update_head_ok: bool,
    /// Update refs even when the update is not a fast-forward.
    #[arg(short, long)]
    force: bool,
    /// Read more refspecs from stdin, one per line, after those of the command line.
    #[arg(long)]
    stdin: bool,
    /// Fetch every object the refs reach, as a new clone would, rather than only what this
    /// repository lacks (to apply a changed `--filter`, or mend a damaged repository).
    #[arg(long)]
    refetch: bool,
    /// From a shallow remote, take refs whose history reaches where the remote's history is
    /// cut too, adding those commits to `.git/shallow` (by default such refs are refused).
    #[arg(long)]
    update_shallow: bool,
    /// Make the one branch fetched for merging the upstream of the branch checked out
    /// (`branch.<name>.remote` and `.merge`), as `git pull` will then use.
    #[arg(long)]
    set_upstream: bool,
    /// Fetch every tag too (`refs/tags/*:refs/tags/*`).
    #[arg(short, long, overrides_with = "no_tags")]
    tags: bool,
    /// Do not follow tags.
    #[arg(short = 'n', long, overrides_with = "tags")]
    no_tags: bool,
    /// Limit history to this many commits from each tip.
    #[arg(long, value_name = "depth")]
    depth: Option<u32>,
    /// Deepen a shallow history by this many commits.
    #[arg(long, value_name = "depth")]
    deepen: Option<u32>,
    /// Make a shallow repository whole.
    #[arg(long)]
    unshallow: bool,
    /// Deepen to commits after this date.
    #[arg(long, value_name = "date")]
    shallow_since: Option<String>,
    /// Deepen, excluding what this remote ref reaches.
    #[arg(long, value_name = "revision")]
    shallow_exclude: Vec<String>,
    /// A partial fetch: leave out what the filter excludes (`blob:none`, `blob:limit=<n>`),
    /// and make the remote a promisor remote with this filter as its default, as git does.
    #[arg(long, value_name = "filter-spec", overrides_with = "no_filter")]
    filter: Option<String>,
    /// Fetch every object, whatever filter the remote's settings name.
    #[arg(long, overrides_with = "filter")]
    no_filter: bool,
    /// Do not write FETCH_HEAD.
    #[arg(long, overrides_with = "write_fetch_head")]
    no_write_fetch_head: bool,
    /// Write FETCH_HEAD (the default; undoes an earlier `--no-write-fetch-head`).
    #[arg(long, overrides_with = "no_write_fetch_head")]
    write_fetch_head: bool,
    /// No messages, no progress.
    #[arg(short, long)]
    quiet: bool,
    /// Also list the refs that are up to date.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Report ref updates for scripts, on stdout: `<flag> <old id> <new id> <local ref>`.
    #[arg(long, overrides_with = "no_porcelain")]
    porcelain: bool,
    /// Report ref updates for people (the default; undoes an earlier `--porcelain`).
    #[arg(long, overrides_with = "porcelain")]
    no_porcelain: bool,
    /// How many remotes to fetch at once. Accepted for git's command lines; Sluice fetches
    /// them one after another.
    #[arg(short, long, value_name = "n")]
    jobs: Option<u32>,
    /// Accepted for git's command lines: Sluice runs no maintenance after a fetch.
    #[arg(long)]
    no_auto_gc: bool,
    /// Accepted for git's command lines: Sluice runs no maintenance after a fetch.
    #[arg(long)]
    no_auto_maintenance: bool,
    /// Accepted for git's command lines: Sluice writes no commit-graph.
    #[arg(long)]
    no_write_commit_graph: bool,
    /// Progress even when stderr is not a terminal.
    #[arg(long)]
    progress: bool,
    /// The command that runs upload-pack on the other side.
    #[arg(long, value_name = "command")]
    upload_pack: Option<String>,
    /// Fetch submodules too: `yes`, `on-demand` (git's default) or `no`. Sluice fetches no
    /// submodule, so anything but `no` is refused where submodules are checked out.
    #[arg(long, value_name = "mode", num_args = 0..=1, default_missing_value = "yes",
          overrides_with = "no_recurse_submodules")]
    recurse_submodules: Option<String>,
    /// Do not fetch submodules.
    #[arg(long, overrides_with = "recurse_submodules")]
    no_recurse_submodules: bool,
    /// A configured remote's name, or a URL.
    #[arg(value_name = "repository")]
    repository: Option<String>,
    /// What to fetch and where to store it.
    #[arg(value_name = "refspec")]
    refspecs: Vec<String>,
}

/// The refspec of every tag (`--tags`, `--prune-tags`).
const TAG_REFSPEC: &str = "refs/tags/*:refs/tags/*";

/// git's depth for "everything" (`--unshallow`).
const INFINITE_DEPTH: u32 = 0x7fff_ffff;

/// One ref update this fetch will make.
#[derive(Debug)]
struct Update {
    remote: RemoteRef,
    local: Option<String>,
    force: bool,
    listed: Listed,
}

/// How an update appears in `FETCH_HEAD`, in the order git takes them: it lists, updates and
/// reports merge candidates first, then the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Listed {
    /// A candidate for `git pull` to merge.
    ForMerge,
    /// Listed `not-for-merge`.
    NotForMerge,
    /// Not listed: a remote-tracking ref updated in passing (see [`track_in_passing`]).
    No,
    /// Neither listed nor updated: from a shallow remote, its history reaches where the
    /// remote's is cut (see [`RemoteCut`]).
    CutOff,
}

impl Listed {
    /// Where the update is made and reported: git goes through the refs once for merge
    /// candidates, where it also warns of refs cut off, once for the rest listed, and once for
    /// those not listed.
    fn pass(self) -> u8 {
        match self {
            Listed::ForMerge | Listed::CutOff => 0,
            Listed::NotForMerge => 1,
            Listed::No => 2,
        }
    }
}

/// How an update ended, for the summary line and the exit code.
enum Outcome {
    UpToDate,
    New(New),
    FastForward(ObjectId),
    Forced(ObjectId),
    /// A tag moved by a forced refspec or `--force`.
    TagUpdate,
    Rejected(&'static str),
}

/// What a ref new here is, by the remote's name for it, as git tells them apart in the summary
/// and the reflog.
#[derive(Debug, Clone, Copy)]
enum New {
    Tag,
    Branch,
    /// Any other ref, or an object fetched by its id.
    Ref,
}

impl New {
    fn of(remote_name: &str) -> New {
        if remote_name.starts_with("refs/tags/") {
            New::Tag
        } else if remote_name.starts_with("refs/heads/") {
            New::Branch
        } else {
            New::Ref
        }
    }

    fn summary(self) -> &'static str {
        match self {
            New::Tag => "[new tag]",
            New::Branch => "[new branch]",
            New::Ref => "[new ref]",
        }
    }

    fn reason(self) -> &'static str {
        match self {
            New::Tag => "storing tag",
            New::Branch => "storing head",
            New::Ref => "storing ref",
        }
    }
}

/// The reflog's action, as git writes it: `fetch` and the command's arguments as given, options
/// included (but not the options before the command's name).
fn reflog_action() -> String {
    std::iter::once("fetch".to_owned())
        .chain(crate::cli::command_arguments())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A shallow remote's cut, and what a fetch does about refs whose history reaches it: with
/// `--update-shallow` those commits join `.git/shallow`; without, the refs are cut off
/// ([`Listed::CutOff`]), as git refuses them.
struct RemoteCut<'a> {
    /// This repository's shallow commits.
    ours: &'a [ObjectId],
    /// The remote's.
    remote: &'a [ObjectId],
    update_shallow: bool,
}

impl RemoteCut<'_> {
    /// Decides for `updates`, given the ref values the repository has (`known`).
    fn apply(
        &self,
        repo: &Repository,
        odb: &ObjectDb,
        known: &[ObjectId],
        updates: &mut [Update],
    ) -> anyhow::Result<()> {
        let tips: Vec<ObjectId> = updates.iter().map(|u| u.remote.id).collect();
        let known = known.iter().copied();
        let reach = remote_shallow::reach(odb, self.ours, self.remote, known, &tips);
        if self.update_shallow {
            return Ok(repo.update_shallow(&reach.cut, &[])?);
        }
        for (update, needs_cut) in updates.iter_mut().zip(reach.needs_cut) {
            if needs_cut {
                update.listed = Listed::CutOff;
            }
        }
        Ok(())
    }
}

/// Whether `old` is `new` or one of its ancestors (missing objects end the walk: a shallow
/// boundary).
fn is_ancestor(odb: &ObjectDb, old: &ObjectId, new: &ObjectId) -> bool {
    let mut seen = IdSet::default();
    let mut queue = VecDeque::from([*new]);
    while let Some(id) = queue.pop_front() {
        if id == *old {
            return true;
        }
        if !seen.insert(id) {
            continue;
        }
        if let Ok(Some((ObjectKind::Commit, data))) = odb.read(&id) {
            if let Ok(commit) = parse_commit(id.kind(), &data) {
                queue.extend(commit.parents);
            }
        }
    }
    false
}

fn short(name: &str) -> &str {
    for prefix in ["refs/heads/", "refs/tags/", "refs/remotes/"] {
        if let Some(rest) = name.strip_prefix(prefix) {
            return rest;
        }
    }
    name
}

/// The URL as FETCH_HEAD and the summary name it: without a trailing `/` or `.git`.
fn display_url(url: &str) -> &str {
    let url = url.trim_end_matches('/');
    url.strip_suffix(".git").unwrap_or(url)
}

/// Runs fetch: of one remote, or of several one after another as git's `--all` does.
pub fn run(mut args: FetchArgs, context: &Context) -> anyhow::Result<ExitCode> {
    if let Some(spec) = &args.filter {
        args.filter = Some(filter_spec(spec)?);
    }
    let repo = context
        .repository()?
        .ok_or_else(|| anyhow!("not a git repository (or any of the parent directories): .git"))?;
    let recursion = Recursion::of(&args)?;
    refuse_submodule_recursion(&args, recursion, &repo)?;
    if args.porcelain && recursion != Some(Recursion::Off) {
        bail!("options '--porcelain' and '--recurse-submodules' cannot be used together");
    }
    let one = |repository: Option<&str>, refspecs: Vec<Refspec>| One {
        repository: repository.map(str::to_owned),
        refspecs,
        append: args.append,
        action: reflog_action(),
    };
    match remotes_to_fetch(&args, repo.config())? {
        None => {
            let mut refspecs = command_line_refspecs(&args.refspecs)?;
            if args.stdin {
                refspecs.extend(stdin_refspecs()?);
            }
            let one = one(args.repository.as_deref(), refspecs);
            fetch_one(&args, context, &repo, &one)
        }
        Some(names) if names.len() == 1 => {
            fetch_one(&args, context, &repo, &one(Some(&names[0]), Vec::new()))
        }
        Some(_) if args.filter.is_some() => {
            bail!("--filter can only be used with the remote configured in extensions.partialclone")
        }
        Some(names) => fetch_each(&args, context, &repo, &names),
    }
}

/// The filter this fetch sends: `--filter`'s (which first makes the remote a promisor remote
/// with it as its default, as git does, even for a URL), else a promisor remote's default;
/// none with `--no-filter`.
fn fetch_filter(
    args: &FetchArgs,
    repo: &Repository,
    remote: &str,
) -> anyhow::Result<Option<String>> {
    let config = repo.config();
    if args.no_filter {
        return Ok(None);
    }
    if let Some(spec) = &args.filter {
        partial::register(repo.git_dir(), config, remote, spec)?;
        return Ok(Some(spec.clone()));
    }
    Ok(match is_promisor(config, remote)? {
        true => config
            .get(&format!("remote.{remote}.partialclonefilter"))
            .map(str::to_owned),
        false => None,
    })
}

/// One remote's fetch, and what it writes to FETCH_HEAD and the reflogs.
struct One {
    /// A remote's name or a URL (the default remote when `None`).
    repository: Option<String>,
    /// The refspecs of the command line (and `--stdin`).
    refspecs: Vec<Refspec>,
    /// Whether FETCH_HEAD is added to rather than replaced.
    append: bool,
    /// The reflog's action (`fetch` and the arguments).
    action: String,
}

/// The remotes `--all`, `--multiple` or a group name (`remotes.<group>`) stand for, in order;
/// `None` for the usual fetch of one remote or URL.
fn remotes_to_fetch(args: &FetchArgs, config: &Config) -> anyhow::Result<Option<Vec<String>>> {
    let group = |name: &str| -> Vec<String> {
        match config.get(&format!("remotes.{name}")) {
            Some(members) => members.split_whitespace().map(str::to_owned).collect(),
            None => Vec::new(),
        }
    };
    let configured = config.subsection_names("remote");
    if args.all {
        if args.repository.is_some() {
            bail!("fetch --all does not take a repository argument");
        }
        let mut names = Vec::new();
        for name in configured {
            let key = format!("remote.{name}.skipFetchAll");
            if !config.get_bool(&key)?.unwrap_or(false) {
                names.push(name);
            }
        }
        return Ok(Some(names));
    }
    if args.multiple {
        let mut names: Vec<String> = Vec::new();
        for word in args.repository.iter().chain(&args.refspecs) {
            let mut members = group(word);
            if members.is_empty() && configured.contains(word) {
                members.push(word.clone());
            }
            if members.is_empty() {
                bail!("no such remote or remote group: {word}");
            }
            for member in members {
                if !names.contains(&member) {
                    names.push(member);
                }
            }
        }
        return Ok(Some(names));
    }
    let members = args.repository.as_deref().map(group).unwrap_or_default();
    if members.len() < 2 {
        return Ok(None);
    }
    if !args.refspecs.is_empty() {
        bail!("fetching a group and specifying refspecs does not make sense");
    }
    Ok(Some(members))
}

/// Fetches each of `names` in turn, as git's `--all` runs one `fetch --append` per remote: a
/// remote that fails is reported and the others are still fetched.
fn fetch_each(
    args: &FetchArgs,
    context: &Context,
    repo: &Repository,
    names: &[String],
) -> anyhow::Result<ExitCode> {
    if writes_fetch_head(args) && !args.append {
        sluice_odb::write_locked(&repo.git_dir().join("FETCH_HEAD"), b"", false)?;
    }
    let mut failed = false;
    for name in names {
        if !args.quiet && !args.porcelain {
            println!("Fetching {name}");
            std::io::stdout().flush()?;
        }
        let one = One {
            repository: Some(name.clone()),
            refspecs: Vec::new(),
            append: true,
            action: each_action(args, name),
        };
        // Opened afresh, so that what the last remote brought counts as here.
        let repo =
            Repository::open_git_dir(repo.git_dir().to_owned(), repo.work_tree().map(Into::into))?;
        let fetched = match fetch_one(args, context, &repo, &one) {
            Ok(code) => code == ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("fatal: {}", crate::describe(&error));
                false
            }
        };
        if !fetched {
            eprintln!("error: could not fetch {name}");
            failed = true;
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The reflog action of one remote's fetch under `--all`: the command line git gives the
/// `fetch` it runs for that remote, the options passed on in git's order.
fn each_action(args: &FetchArgs, name: &str) -> String {
    let mut words = vec![
        "fetch",
        "--append",
        "--no-auto-gc",
        "--no-write-commit-graph",
    ];
    // A bad value was refused in `run`.
    let recurse = Recursion::of(args).ok().flatten().map(Recursion::option);
    let flags = [
        (args.dry_run, "--dry-run"),
        (args.prune, "--prune"),
        (args.no_prune, "--no-prune"),
        (args.prune_tags, "--prune-tags"),
        (args.no_prune_tags, "--no-prune-tags"),
        (args.update_head_ok, "--update-head-ok"),
        (args.force, "--force"),
        (recurse.is_some(), recurse.unwrap_or_default()),
        (args.tags, "--tags"),
        (args.no_tags, "--no-tags"),
        (args.verbose >= 2, "-v"),
        (args.verbose >= 1, "-v"),
        (args.verbose == 0 && args.quiet, "-q"),
        (!writes_fetch_head(args), "--no-write-fetch-head"),
        (args.porcelain, "--porcelain"),
    ];
    words.extend(flags.iter().filter(|(on, _)| *on).map(|(_, flag)| *flag));
    words.push(name);
    words.join(" ")
}

/// The submodule recursion the command line asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recursion {
    Off,
    On,
    OnDemand,
}

impl Recursion {
    /// From `--[no-]recurse-submodules[=<mode>]`, `None` when neither is given; `--porcelain`
    /// alone means off, since its output has no room for submodules.
    fn of(args: &FetchArgs) -> anyhow::Result<Option<Recursion>> {
        Ok(
            match (
                args.no_recurse_submodules,
                args.recurse_submodules.as_deref(),
            ) {
                (true, _) => Some(Recursion::Off),
                (false, Some(mode)) => match mode.to_ascii_lowercase().as_str() {
                    "no" | "false" | "off" => Some(Recursion::Off),
                    "yes" | "true" | "on" => Some(Recursion::On),
                    "on-demand" => Some(Recursion::OnDemand),
                    _ => bail!("bad recurse-submodules argument: {mode}"),
                },
                (false, None) if args.porcelain => Some(Recursion::Off),
                (false, None) => None,
            },
        )
    }

    /// The option git passes on for it.
    fn option(self) -> &'static str {
        match self {
            Recursion::Off => "--no-recurse-submodules",
            Recursion::On => "--recurse-submodules",
            Recursion::OnDemand => "--recurse-submodules=on-demand",
        }
    }
}

/// Whether FETCH_HEAD is written: never under `--dry-run`, else unless the command line says
/// not to (git has no setting for it).
fn writes_fetch_head(args: &FetchArgs) -> bool {
    !args.dry_run && !args.no_write_fetch_head
}

/// Fetches one remote or URL.
fn fetch_one(
    args: &FetchArgs,
    context: &Context,
    repo: &Repository,
    one: &One,
) -> anyhow::Result<ExitCode> {
    let config = repo.config();
    let current_branch = match repo.refs().read("HEAD")? {
        Some(RefTarget::Symbolic(branch)) => Some(branch),
        _ => None,
    };
    let remote_name = match &one.repository {
        Some(name) => name.clone(),
        None => current_branch
            .as_deref()
            .and_then(|b| config.get(&format!("branch.{}.remote", short(b))))
            .unwrap_or("origin")
            .to_owned(),
    };
    let configured_url = config.get(&format!("remote.{remote_name}.url"));
    let (url_text, named) = match configured_url {
        Some(url) => (url.to_owned(), true),
        None if one.repository.is_some() => (remote_name.clone(), false),
        None => bail!("'{remote_name}' does not appear to be a git repository"),
    };
    let remote = resolve(context, &url_text)?;
    let filter = fetch_filter(args, repo, &remote_name)?;
    let mut configured: Vec<Refspec> = if named {
        config
            .get_all(&format!("remote.{remote_name}.fetch"))
            .into_iter()
            .map(Refspec::parse)
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    let mut command_line = one.refspecs.clone();
    // The command line first, then the remote's setting, then `fetch.*`.
    let setting = |key: &str, on: bool, off: bool| -> anyhow::Result<bool> {
        if on || off {
            return Ok(on);
        }
        let of_remote = match named {
            true => config.get_bool(&format!("remote.{remote_name}.{key}"))?,
            false => None,
        };
        Ok(of_remote
            .or(config.get_bool(&format!("fetch.{key}"))?)
            .unwrap_or(false))
    };
    let prune = setting("prune", args.prune, args.no_prune)?;
    let prune_tags = prune && setting("pruneTags", args.prune_tags, args.no_prune_tags)?;
    // Pruning tags is fetching `refs/tags/*:refs/tags/*` with `--prune`, when no refspec is
    // given: added to a remote's own refspecs, or the one refspec of a URL, as in git.
    if prune_tags && one.refspecs.is_empty() {
        let tags = Refspec::parse(TAG_REFSPEC)?;
        match named {
            true => configured.push(tags),
            false => command_line.push(tags),
        }
    }
    let explicit = !command_line.is_empty();
    let mut specs: Vec<Refspec> = if explicit {
        command_line
    } else {
        configured.clone()
    };
    // `--prune` removes what these map to. Tags fetched only because of `--tags` (or
    // followed) are not pruned, as in git; tags a refspec names (a mirror's) are.
    let pruned_by: Vec<Refspec> = specs.clone();
    let tagopt = named
        .then(|| config.get(&format!("remote.{remote_name}.tagopt")))
        .flatten();
    let all_tags = args.tags || (!args.no_tags && tagopt == Some("--tags"));
    let no_tags = args.no_tags || (!args.tags && tagopt == Some("--no-tags"));
    if all_tags {
        specs.push(Refspec::parse(TAG_REFSPEC)?);
    }
    // As git: tags are followed only when some refspec stores what it fetches.
    let stores = specs.iter().any(|s| !s.negative && s.dst.is_some());
    let follow_tags = stores && !no_tags && !all_tags;
    let records_fetch_head = writes_fetch_head(args);

    let mut options = connect_options(config, args.upload_pack.as_deref())?;
    if let (None, Some(upload_pack)) = (
        &args.upload_pack,
        config.get(&format!("remote.{remote_name}.uploadpack")),
    ) {
        options.upload_pack = upload_pack.to_owned();
    }
    let mut connection = connect(&remote, &options)?;
    let mut prefixes: Vec<String> = Vec::new();
    for spec in specs.iter().filter(|s| !s.negative) {
        prefixes.extend(spec.ref_prefixes());
    }
    if specs.is_empty() {
        prefixes.push("HEAD".into());
    }
    if follow_tags {
        prefixes.push("refs/tags/".into());
    }
    let prefix_refs: Vec<&str> = prefixes.iter().map(String::as_str).collect();
    let advertised = connection.ls_refs(&prefix_refs)?;

    // Which remote refs go where.
    let merge_branch = current_branch.as_deref().and_then(|b| {
        let remote_of = config.get(&format!("branch.{}.remote", short(b)))?;
        (remote_of == remote_name)
            .then(|| config.get(&format!("branch.{}.merge", short(b))))
            .flatten()
    });
    let mut updates: Vec<Update> = Vec::new();
    if specs.is_empty() {
        if let Some(head) = advertised.iter().find(|r| r.name == "HEAD") {
            updates.push(Update {
                remote: head.clone(),
                local: None,
                force: false,
                listed: Listed::ForMerge,
            });
        }
    }
    // In the order of the refspecs, as git lists them (and within a pattern, the remote's).
    let excluded = |name: &str| {
        specs
            .iter()
            .any(|s| s.negative && s.matches(name).is_some())
    };
    for spec in specs.iter().filter(|s| !s.negative) {
        let candidates = advertised.iter().filter(|r| !excluded(&r.name));
        // A plain name fetches the one ref it names best, as git resolves a short name.
        let matched: Vec<&RemoteRef> = match spec.is_exact() {
            true => spec
                .best_match(candidates, |r| &r.name)
                .into_iter()
                .collect(),
            false => candidates.collect(),
        };
        for remote_ref in matched {
            let Some(star) = spec.matches(&remote_ref.name) else {
                continue;
            };
            let for_merge = explicit || merge_branch == Some(remote_ref.name.as_str());
            updates.push(Update {
                remote: remote_ref.clone(),
                local: spec.destination(&star),
                force: spec.force || args.force,
                listed: if for_merge {
                    Listed::ForMerge
                } else {
                    Listed::NotForMerge
                },
            });
        }
        if !spec.is_exact() || advertised.iter().any(|r| spec.matches(&r.name).is_some()) {
            continue;
        }
        // A full object id names that object, whether or not a ref points at it: the server
        // decides whether it gives it (protocol v2 and `uploadpack.allow*SHA1InWant` do).
        let Ok(id) = ObjectId::from_hex(repo.hash(), spec.src.as_bytes()) else {
            bail!("couldn't find remote ref {}", spec.src);
        };
        if !connection.takes_want(&id) {
            // git's words and exit code; nothing was fetched or changed.
            eprintln!("error: Server does not allow request for unadvertised object {id}");
            connection.finish()?;
            return Ok(ExitCode::from(1));
        }
        updates.push(Update {
            remote: RemoteRef {
                name: spec.src.clone(),
                id,
                symref_target: None,
                peeled: None,
            },
            local: spec.destination(""),
            force: spec.force || args.force,
            listed: Listed::ForMerge,
        });
    }
    let backfill = if follow_tags {
        follow_known_tags(repo, &advertised, &mut updates)?
    } else {
        Vec::new()
    };
    if explicit {
        track_in_passing(&mut updates, &configured, args.force);
    }
    let mut updates = drop_duplicates(updates)?;
    // Checked before anything is fetched or moved, as git checks.
    for local in updates.iter().filter_map(|u| u.local.as_deref()) {
        if !sluice_odb::refs::is_valid_ref_name(local) {
            bail!("refusing to create funny ref '{local}' locally");
        }
        if let (Some(work_tree), false) = (repo.work_tree(), args.update_head_ok) {
            if current_branch.as_deref() == Some(local) {
                bail!(
                    "refusing to fetch into branch '{local}' checked out at '{}'",
                    work_tree.display()
                );
            }
        }
    }

    // Fetch what is missing.
    let deepen = Deepen {
        depth: if args.unshallow {
            Some(INFINITE_DEPTH)
        } else {
            args.depth.or(args.deepen)
        },
        since: parse_since(args.shallow_since.as_deref())?,
        not: args.shallow_exclude.clone(),
        relative: args.deepen.is_some(),
    };
    let shallow = repo.shallow_commits()?;
    if args.unshallow && shallow.is_empty() {
        bail!("--unshallow on a complete repository does not make sense");
    }
    let mut wants: Vec<ObjectId> = updates
        .iter()
        .map(|u| u.remote.id)
        .filter(|id| deepen.is_set() || args.refetch || !repo.objects().contains(id))
        .collect();
    wants.sort_unstable();
    wants.dedup();
    // A filtered fetch's pack is a promisor pack, kept whatever its size, as in git.
    let promisor = filter.is_some();
    let show_progress = crate::progress::enabled(!args.quiet, args.progress);
    let mut remote_shallow = Vec::new();
    if !wants.is_empty() {
        // `--refetch` offers nothing, so that the server sends all the wants reach.
        let mut tips: Vec<ObjectId> = Vec::new();
        if !args.refetch {
            tips.extend(repo.refs().list()?.into_iter().map(|(_, id)| id));
            tips.extend(alternate_tips(repo.objects()));
        }
        let mut negotiator = HistoryNegotiator::new(repo.objects(), tips);
        let request = FetchRequest {
            wants,
            shallow: shallow.clone(),
            deepen,
            filter,
            include_tag: follow_tags,
            progress: show_progress,
            reject_shallow_remote: false,
        };
        // The configuration read at the start does not show a promisor remote `--filter` has
        // just made.
        let promised = match promisor {
            true => Some(Promised::from(context, repo, &remote_name)),
            false => Promised::of(context, repo, &remote_name)?,
        };
        let objects: &dyn ObjectLookup = match &promised {
            Some(promised) => promised,
            None => repo.objects(),
        };
        let receiving = Receiving {
            show_progress,
            objects: Some(objects),
            ..Receiving::default()
        };
        let received = match fetch_into(&mut connection, repo, &request, &mut negotiator, receiving)
        {
            Ok(received) => received,
            Err(error) => match error.downcast_ref::<StoreError>() {
                // git's words and exit code; nothing was stored and no ref moves.
                Some(StoreError::NotConnected { missing }) => {
                    eprintln!("error: missing object {missing}");
                    eprintln!(
                        "error: {} did not send all necessary objects",
                        display_url(&remote.shown)
                    );
                    return Ok(ExitCode::from(1));
                }
                _ => return Err(error),
            },
        };
        repo.update_shallow(&received.shallow, &received.unshallow)?;
        remote_shallow = received.remote_shallow.clone();
        if promisor {
            std::fs::write(received.pack.with_extension("promisor"), "")?;
        } else {
            unpack_if_small(&received, repo, objects)?;
        }
    }
    connection.finish()?;

    // Refs move only now that the objects are in.
    let odb = ObjectDb::open(repo.objects().dir(), repo.hash())?;
    // Tags followed once their objects are in are taken and reported after the rest, as git
    // takes them in a second fetch.
    let mut later: Vec<Update> = backfill
        .into_iter()
        .filter(|tag| odb.contains(&tag.id))
        .map(|tag| Update {
            local: Some(tag.name.clone()),
            remote: tag,
            force: false,
            listed: Listed::NotForMerge,
        })
        .collect();
    if !remote_shallow.is_empty() {
        let cut = RemoteCut {
            ours: &shallow,
            remote: &remote_shallow,
            update_shallow: args.update_shallow,
        };
        let mut known: Vec<ObjectId> = repo.refs().list()?.into_iter().map(|(_, id)| id).collect();
        known.extend(repo.refs().resolve("HEAD").ok().and_then(|(_, id)| id));
        cut.apply(repo, &odb, &known, &mut updates)?;
        // The second fetch comes after the first moved its refs.
        known.extend(
            updates
                .iter()
                .filter(|u| u.local.is_some() && u.listed != Listed::CutOff)
                .map(|u| u.remote.id),
        );
        cut.apply(repo, &odb, &known, &mut later)?;
    }
    updates.sort_by_key(|u| u.listed.pass());
    later.sort_by_key(|u| u.listed.pass());
    updates.append(&mut later);
    // With --atomic, one refused update keeps every ref (pruned ones included) and FETCH_HEAD
    // as they were; the report still says what each would have been, as git's does.
    let stale = match prune {
        true => stale_refs(repo, &pruned_by, &advertised)?,
        false => Vec::new(),
    };
    let in_the_way = match args.atomic && !args.dry_run {
        true => conflicts(repo, &odb, &updates, &stale)?,
        false => Vec::new(),
    };
    let held_back = args.atomic && (!in_the_way.is_empty() || any_rejected(repo, &odb, &updates));
    let dry_run = args.dry_run || held_back;
    // git prunes before it updates (a branch `a` pruned makes room for a new `a/b`), and says
    // so first.
    let mut lines = prune_stale(repo, &stale, dry_run)?;
    let changes = Changes {
        dry_run,
        verbose: args.verbose > 0,
        action: &one.action,
    };
    let refused = update_refs(repo, &odb, &updates, &changes, &mut lines)?;
    if records_fetch_head {
        let recorded: &[Update] = if held_back { &[] } else { &updates };
        write_fetch_head(repo, recorded, display_url(&remote.shown), one.append)?;
    }
    let format = match args.porcelain {
        true => ReportFormat::Porcelain,
        false => ReportFormat::Full,
    };
    print_report(display_url(&remote.shown), &lines, args.quiet, format)?;
    for error in &in_the_way {
        eprintln!("error: {error}");
    }
    if args.set_upstream {
        let fetched: Vec<&RemoteRef> = updates
            .iter()
            .filter(|u| u.local.is_none() && u.listed != Listed::CutOff)
            .map(|u| &u.remote)
            .collect();
        set_upstream(repo, current_branch.as_deref(), &remote_name, &fetched)?;
    }
    if refused == Refused::InTheWay {
        // As git 2.47 advises; 2.39 gives the advice only when the ref in the way is loose.
        eprintln!("error: some local refs could not be updated; try running\n 'git remote prune {remote_name}' to remove any old, conflicting branches");
    }
    Ok(match refused == Refused::None && in_the_way.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}

/// The refs `specs` map remote refs to that the remote no longer advertises: what `--prune`
/// deletes.
fn stale_refs(
    repo: &Repository,
    specs: &[Refspec],
    advertised: &[RemoteRef],
) -> anyhow::Result<Vec<String>> {
    let local_refs = repo.refs().list()?;
    let mut stale = Vec::new();
    for spec in specs.iter().filter(|s| !s.is_exact() && !s.negative) {
        for (local, _) in &local_refs {
            let Some(source) = spec.source_for(local) else {
                continue;
            };
            if !advertised.iter().any(|r| r.name == source) {
                stale.push(local.clone());
            }
        }
    }
    Ok(stale)
}

/// The refs in the way of the updates that would move (`refs/x` for a new `refs/x/y`, or the
/// reverse), but for those about to be pruned: under `--atomic` any of them keeps every ref
/// where it was.
fn conflicts(
    repo: &Repository,
    odb: &ObjectDb,
    updates: &[Update],
    stale: &[String],
) -> anyhow::Result<Vec<sluice_odb::RefError>> {
    let mut found = Vec::new();
    for update in updates.iter().filter(|u| u.listed != Listed::CutOff) {
        let Some(local) = &update.local else {
            continue;
        };
        if !matches!(decide(repo, odb, update, local).1, Outcome::New(_)) {
            continue;
        }
        if let Some(existing) = repo.refs().conflict(local)? {
            if !stale.contains(&existing) {
                found.push(sluice_odb::RefError::NameConflict {
                    name: local.clone(),
                    existing,
                });
            }
        }
    }
    Ok(found)
}

/// Deletes the `stale` refs (none under `dry_run`), and returns their report lines.
fn prune_stale(repo: &Repository, stale: &[String], dry_run: bool) -> anyhow::Result<Vec<Report>> {
    let mut lines = Vec::new();
    let null = repo.hash().null_id();
    for local in stale {
        let old = repo.refs().resolve(local).ok().and_then(|(_, id)| id);
        if !dry_run {
            repo.refs().delete(local)?;
        }
        lines.push(Report::Line(Summary {
            code: '-',
            summary: "[deleted]".to_owned(),
            from: "(none)".to_owned(),
            to: short(local).to_owned(),
            note: String::new(),
            widens: false,
            error: None,
            old: old.unwrap_or(null),
            new: null,
            local: local.clone(),
        }));
    }
    Ok(lines)
}

/// How ref updates are carried out and told.
struct Changes<'a> {
    /// Decide and report, but move nothing.
    dry_run: bool,
    /// Report refs that are up to date too.
    verbose: bool,
    /// The reflog's action.
    action: &'a str,
}

/// What updating `local` to the remote ref's value would be: its old value and the outcome.
fn decide(
    repo: &Repository,
    odb: &ObjectDb,
    update: &Update,
    local: &str,
) -> (Option<ObjectId>, Outcome) {
    let old = repo.refs().resolve(local).ok().and_then(|(_, id)| id);
    let new = update.remote.id;
    let outcome = match old {
        Some(old) if old == new => Outcome::UpToDate,
        None => Outcome::New(New::of(&update.remote.name)),
        Some(_) if local.starts_with("refs/tags/") => {
            if update.force {
                Outcome::TagUpdate
            } else {
                Outcome::Rejected("would clobber existing tag")
            }
        }
        Some(old) if is_ancestor(odb, &old, &new) => Outcome::FastForward(old),
        Some(old) if update.force => Outcome::Forced(old),
        Some(_) => Outcome::Rejected("non-fast-forward"),
    };
    (old, outcome)
}

/// Whether any ref update would be refused: under `--atomic` nothing then moves.
fn any_rejected(repo: &Repository, odb: &ObjectDb, updates: &[Update]) -> bool {
    updates.iter().any(|update| {
        update.listed != Listed::CutOff
            && update.local.as_deref().is_some_and(|local| {
                matches!(decide(repo, odb, update, local).1, Outcome::Rejected(_))
            })
    })
}

/// Whether some ref update did not happen, and the worst reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Refused {
    None,
    /// Refused: not a fast-forward, or a tag that would be clobbered.
    Rejected,
    /// Another ref's name stood in the way, which pruning may clear (git then says so).
    InTheWay,
}

/// Moves the local refs of `updates` that may move (fast-forwards, forced updates, new refs),
/// logging them as git does, and adds a report line for each to `lines`. A ref that cannot be
/// written is reported and the others still move, as in git.
fn update_refs(
    repo: &Repository,
    odb: &ObjectDb,
    updates: &[Update],
    changes: &Changes,
    lines: &mut Vec<Report>,
) -> anyhow::Result<Refused> {
    let config = repo.config();
    let bare = repo.work_tree().is_none();
    let log_updates = config.get_bool("core.logAllRefUpdates")?.unwrap_or(!bare);
    let who = identity(config);
    let mut refused = Refused::None;
    for update in updates {
        if update.listed == Listed::CutOff {
            let name = update.local.as_deref().unwrap_or(&update.remote.name);
            lines.push(Report::Warning(format!(
                "rejected {name} because shallow roots are not allowed to be updated"
            )));
            continue;
        }
        let Some(local) = &update.local else {
            // Fetched for FETCH_HEAD alone.
            if update.listed != Listed::No {
                lines.push(Report::Line(Summary::fetch_head(
                    &update.remote.name,
                    update.remote.id,
                )));
            }
            continue;
        };
        let (old, outcome) = decide(repo, odb, update, local);
        let new = update.remote.id;
        let (mut code, summary, mut note, reason) = match &outcome {
            Outcome::UpToDate if !changes.verbose => continue,
            Outcome::UpToDate => ('=', "[up to date]".to_owned(), String::new(), ""),
            Outcome::New(new) => ('*', new.summary().to_owned(), String::new(), new.reason()),
            Outcome::FastForward(old) => (
                ' ',
                format!("{}..{}", &old.to_string()[..7], &new.to_string()[..7]),
                String::new(),
                "fast-forward",
            ),
            Outcome::Forced(old) => (
                '+',
                format!("{}...{}", &old.to_string()[..7], &new.to_string()[..7]),
                "  (forced update)".to_owned(),
                "forced-update",
            ),
            Outcome::TagUpdate => (
                't',
                "[tag update]".to_owned(),
                String::new(),
                "updating tag",
            ),
            Outcome::Rejected(why) => {
                refused = refused.max(Refused::Rejected);
                ('!', "[rejected]".to_owned(), format!("  ({why})"), "")
            }
        };
        let moves = !matches!(outcome, Outcome::Rejected(_) | Outcome::UpToDate);
        let mut error = None;
        let written = moves
            && !changes.dry_run
            && match repo.refs().write(local, &RefTarget::Id(new)) {
                Ok(()) => true,
                Err(failed) => {
                    refused = refused.max(match failed {
                        sluice_odb::RefError::NameConflict { .. } => Refused::InTheWay,
                        _ => Refused::Rejected,
                    });
                    code = '!';
                    note = "  (unable to update local ref)".to_owned();
                    error = Some(failed.to_string());
                    false
                }
            };
        if written {
            let logged = local.starts_with("refs/heads/")
                || local.starts_with("refs/remotes/")
                || local.starts_with("refs/notes/");
            if log_updates && logged {
                let null = repo.hash().null_id();
                let _ = repo.refs().append_log(
                    local,
                    &old.unwrap_or(null),
                    &new,
                    &who,
                    &format!("{}: {reason}", changes.action),
                );
            }
        }
        lines.push(Report::Line(Summary {
            code,
            summary,
            from: short(&update.remote.name).to_owned(),
            to: short(local).to_owned(),
            note,
            widens: true,
            error,
            old: old.unwrap_or(repo.hash().null_id()),
            new,
            local: local.clone(),
        }));
    }
    Ok(refused)
}

/// How the ref updates are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReportFormat {
    /// For people, on stderr: `From <url>`, then aligned columns.
    Full,
    /// For scripts (`--porcelain`), on stdout: `<flag> <old id> <new id> <local ref>`.
    Porcelain,
}

/// The report: a line per ref in `format`, each after the error that ref's update met, if
/// any (when the first did, before `From`, as git prints them). In the full format, the remote
/// names' column fits the longest name of a ref stored here, as long as its line fits 80
/// columns. `quiet` keeps the errors alone.
fn print_report(
    url: &str,
    lines: &[Report],
    quiet: bool,
    format: ReportFormat,
) -> anyhow::Result<()> {
    let width = lines
        .iter()
        .filter_map(|report| match report {
            Report::Line(line) => Some(line),
            Report::Warning(_) => None,
        })
        .filter(|l| l.widens && 21 + l.from.len() + l.to.len() <= 80)
        .map(|l| l.from.len())
        .fold(10, usize::max);
    let mut headed = false;
    let mut stdout = std::io::stdout().lock();
    for report in lines {
        let line = match report {
            Report::Line(line) => line,
            Report::Warning(warning) => {
                eprintln!("warning: {warning}");
                continue;
            }
        };
        if let Some(error) = &line.error {
            eprintln!("error: {error}");
        }
        if quiet {
            continue;
        }
        let Summary {
            code,
            summary,
            from,
            to,
            note,
            old,
            new,
            local,
            ..
        } = line;
        match format {
            ReportFormat::Porcelain => writeln!(stdout, "{code} {old} {new} {local}")?,
            ReportFormat::Full => {
                if !headed {
                    eprintln!("From {url}");
                    headed = true;
                }
                eprintln!(" {code} {summary:<17} {from:<width$} -> {to}{note}");
            }
        }
    }
    stdout.flush()?;
    Ok(())
}

/// `--recurse-submodules`: only `no` is in Sluice's reach, and anything else is the same
/// where no submodule is checked out (their repositories live under `.git/modules`).
fn refuse_submodule_recursion(
    args: &FetchArgs,
    recursion: Option<Recursion>,
    repo: &Repository,
) -> anyhow::Result<()> {
    let (Some(Recursion::On | Recursion::OnDemand), Some(mode)) =
        (recursion, &args.recurse_submodules)
    else {
        return Ok(());
    };
    if repo.common_dir().join("modules").is_dir() {
        bail!("sluice fetch cannot fetch submodules (--recurse-submodules={mode}); use --no-recurse-submodules");
    }
    Ok(())
}

/// What fetch says of one ref, in order.
enum Report {
    /// Its summary line.
    Line(Summary),
    /// A warning in place of a line, said even under `--quiet`.
    Warning(String),
}

/// One line of the summary fetch prints.
struct Summary {
    /// `*` new, ` ` fast-forward, `+` forced, `!` rejected, `-` deleted.
    code: char,
    summary: String,
    from: String,
    to: String,
    note: String,
    /// Whether its remote name may widen the names' column (a ref stored here).
    widens: bool,
    /// Why the update failed, said before the line.
    error: Option<String>,
    /// The local ref's value before (the null id for a new one).
    old: ObjectId,
    /// Its value after (the null id for a pruned one).
    new: ObjectId,
    /// The local ref's full name, or `FETCH_HEAD` for a ref fetched for that alone.
    local: String,
}

impl Summary {
    /// The line of a ref fetched for FETCH_HEAD alone, named as git names it: a branch, tag or
    /// remote-tracking branch by its short name, anything else (an object id too) as a branch
    /// by its full name.
    fn fetch_head(remote_name: &str, new: ObjectId) -> Summary {
        let (summary, from) = kind_of(remote_name).unwrap_or(("branch", remote_name));
        Summary {
            code: '*',
            summary: summary.to_owned(),
            from: from.to_owned(),
            to: "FETCH_HEAD".to_owned(),
            note: String::new(),
            widens: false,
            error: None,
            old: new.kind().null_id(),
            new,
            local: "FETCH_HEAD".to_owned(),
        }
    }
}

/// Tags to follow, as git follows them: a tag not here yet whose object (or what it peels to)
/// is here or among the tips fetched comes along with them, listed right after them; the
/// others are returned, to be taken after the fetch if it brought what they point to.
fn follow_known_tags(
    repo: &Repository,
    advertised: &[RemoteRef],
    updates: &mut Vec<Update>,
) -> anyhow::Result<Vec<RemoteRef>> {
    let tips: IdSet = updates.iter().map(|u| u.remote.id).collect();
    let mut later = Vec::new();
    for tag in advertised
        .iter()
        .filter(|r| r.name.starts_with("refs/tags/"))
    {
        let fetched = updates.iter().any(|u| u.local.as_ref() == Some(&tag.name));
        if fetched || repo.refs().read(&tag.name)?.is_some() {
            continue;
        }
        let target = tag.peeled.unwrap_or(tag.id);
        if tips.contains(&target) || repo.objects().contains(&target) {
            updates.push(Update {
                remote: tag.clone(),
                local: Some(tag.name.clone()),
                force: false,
                listed: Listed::NotForMerge,
            });
        } else {
            later.push(tag.clone());
        }
    }
    Ok(later)
}

/// The refspecs of the command line, where `tag <name>` stands for
/// `refs/tags/<name>:refs/tags/<name>`, as in git.
fn command_line_refspecs(args: &[String]) -> anyhow::Result<Vec<Refspec>> {
    let mut specs = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "tag" {
            let Some(name) = words.next() else {
                bail!("You need to specify a tag name.");
            };
            specs.push(Refspec::parse(&format!(
                "refs/tags/{name}:refs/tags/{name}"
            ))?);
        } else {
            specs.push(Refspec::parse(word)?);
        }
    }
    Ok(specs)
}

/// The refspecs of `--stdin`, a line each; `tag <name>` is not taken there, as in git.
fn stdin_refspecs() -> anyhow::Result<Vec<Refspec>> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
    if text.is_empty() {
        return Ok(Vec::new());
    }
    // Split at newlines alone: a carriage return stays part of its refspec, as in git.
    let body = text.strip_suffix('\n').unwrap_or(&text);
    Ok(body
        .split('\n')
        .map(Refspec::parse)
        .collect::<Result<_, _>>()?)
}

/// Refs fetched by refspecs of the command line also update the remote-tracking refs the
/// remote's configured refspecs map them to, as git has done since 1.8.4, so that
/// `fetch origin main` moves `origin/main` too. These updates are not listed in FETCH_HEAD.
fn track_in_passing(updates: &mut Vec<Update>, configured: &[Refspec], force: bool) {
    let fetched: Vec<RemoteRef> = updates.iter().map(|u| u.remote.clone()).collect();
    let excluded = |name: &str| {
        configured
            .iter()
            .any(|s| s.negative && s.matches(name).is_some())
    };
    for spec in configured.iter().filter(|s| !s.negative) {
        for remote_ref in fetched.iter().filter(|r| !excluded(&r.name)) {
            let Some(local) = spec
                .matches(&remote_ref.name)
                .and_then(|star| spec.destination(&star))
            else {
                continue;
            };
            updates.push(Update {
                remote: remote_ref.clone(),
                local: Some(local),
                force: spec.force || force,
                listed: Listed::No,
            });
        }
    }
}

/// Updates that would land on the same local ref, settled as git settles them: the first
/// stays, and a later one of the same remote ref goes. Two remote refs for one local ref are
/// an error, unless the later was only in passing: it goes with a warning.
fn drop_duplicates(updates: Vec<Update>) -> anyhow::Result<Vec<Update>> {
    let mut kept: Vec<Update> = Vec::with_capacity(updates.len());
    let mut first_for: HashMap<String, usize> = HashMap::new();
    for update in updates {
        let Some(local) = update.local.clone() else {
            kept.push(update);
            continue;
        };
        let Some(&at) = first_for.get(&local) else {
            first_for.insert(local, kept.len());
            kept.push(update);
            continue;
        };
        let earlier = &kept[at];
        let (first, later) = (&earlier.remote.name, &update.remote.name);
        if first == later {
            continue;
        }
        match (earlier.listed, update.listed) {
            (Listed::No, _) => bail!("{local} tracks both {first} and {later}"),
            (_, Listed::No) => eprintln!("warning: {local} usually tracks {later}, not {first}"),
            _ => bail!("Cannot fetch both {first} and {later} to {local}"),
        }
    }
    Ok(kept)
}

/// What git calls a remote ref in the report and FETCH_HEAD, and its short name: a branch, a
/// tag or a remote-tracking branch; `None` for any other ref.
fn kind_of(name: &str) -> Option<(&'static str, &str)> {
    [
        ("refs/heads/", "branch"),
        ("refs/tags/", "tag"),
        ("refs/remotes/", "remote-tracking branch"),
    ]
    .into_iter()
    .find_map(|(prefix, kind)| Some((kind, name.strip_prefix(prefix)?)))
}

/// `FETCH_HEAD` (or, with `append`, what it gets added): the refs fetched, merge candidates first, each as `<id>\t[not-for-merge]\t
/// <kind> '<name>' of <url>`.
fn write_fetch_head(
    repo: &Repository,
    updates: &[Update],
    url: &str,
    append: bool,
) -> anyhow::Result<()> {
    let path = repo.git_dir().join("FETCH_HEAD");
    let mut text = match append {
        true => std::fs::read_to_string(&path).unwrap_or_default(),
        false => String::new(),
    };
    for listed in [Listed::ForMerge, Listed::NotForMerge] {
        for update in updates.iter().filter(|u| u.listed == listed) {
            let name = &update.remote.name;
            let what = match kind_of(name) {
                Some((kind, short)) => format!("{kind} '{short}' of "),
                None if name == "HEAD" => String::new(),
                None => format!("'{name}' of "),
            };
            let flag = match listed {
                Listed::ForMerge => "",
                _ => "not-for-merge",
            };
            text.push_str(&format!("{}\t{flag}\t{what}{url}\n", update.remote.id));
        }
    }
    sluice_odb::write_locked(&path, text.as_bytes(), false)?;
    Ok(())
}
