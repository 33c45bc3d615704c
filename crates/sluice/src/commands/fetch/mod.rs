//! `sluice fetch [<remote>] [<refspec>…]`: git fetch. Negotiates with every local ref, receives
//! the pack (or, under `transfer.unpackLimit` objects, loose objects), then updates refs as git
//! does: fast-forwards, `+` or `--force` for the rest, tags never moved unless forced, followed
//! tags, `FETCH_HEAD`, `--prune`, reflogs and git's summary lines. Objects are stored before any
//! ref moves, so an interrupted fetch leaves every ref as it was. `--filter` makes the remote a
//! promisor remote; in a partial clone, delta bases the repository lacks are fetched from it.

use super::remote::RemoteLines;
use super::{either, Context};
use crate::progress::TerminalProgress;
use anyhow::bail;
use clap::Args;
use sluice_client::partial::filter_spec;
use sluice_client::refspec::{self, Refspec};
use sluice_repo::Repository;
use std::io::Write as _;
use std::process::ExitCode;

mod report;

use report::{print_report, ReportFormat};
use sluice_client::fetch::{
    display_url, fetch_remote, negotiate_only, remotes_to_fetch, FetchChoice, FetchMessages,
    FetchOptions, FetchOutcome, FetchPlan, FetchSettings, GivenSettings, Refused, Remotes,
    RunError, Selection, UNCHECKED_FORCED_UPDATES,
};
use sluice_remote::{Deepen, IpVersion};
use sluice_repo::date::parse_since;
use sluice_submodule::fetch::SubmoduleFetch;
use sluice_submodule::jobs::{self, job_count, JobOutput};
use sluice_submodule::Recursion;

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
    /// Update every ref or none: one refused update leaves them all as they were.
    #[arg(long)]
    atomic: bool,
    /// Say what would change, and change no ref (objects are still fetched, as in git).
    #[arg(long)]
    dry_run: bool,
    /// Remove remote-tracking refs of branches gone from the remote (or as configured).
    #[arg(short, long, overrides_with = "no_prune")]
    prune: bool,
    /// Do not prune, whatever the configuration says.
    #[arg(long, overrides_with = "prune")]
    no_prune: bool,
    /// With pruning, also remove local tags the remote no longer has (or as configured).
    #[arg(short = 'P', long, overrides_with = "no_prune_tags")]
    prune_tags: bool,
    /// Do not prune tags, whatever the configuration says.
    #[arg(long, overrides_with = "prune_tags")]
    no_prune_tags: bool,
    /// Allow updating the branch checked out.
    #[arg(short, long)]
    update_head_ok: bool,
    /// Keep the downloaded pack, however few objects it holds (no loose objects).
    #[arg(short, long, overrides_with = "no_keep")]
    keep: bool,
    /// Unpack a small pack into loose objects as usual (undoes an earlier `--keep`).
    #[arg(long, overrides_with = "keep")]
    no_keep: bool,
    /// Use IPv4 addresses only.
    #[arg(short = '4', long, overrides_with = "ipv6")]
    ipv4: bool,
    /// Use IPv6 addresses only.
    #[arg(short = '6', long, overrides_with = "ipv4")]
    ipv6: bool,
    /// Update refs even when the update is not a fast-forward.
    #[arg(short, long)]
    force: bool,
    /// Read more refspecs from stdin, one per line, after those of the command line.
    #[arg(long)]
    stdin: bool,
    /// Fetch every object the refs reach, as a new clone would, not only what is missing.
    #[arg(long)]
    refetch: bool,
    /// Store every ref under `refs/prefetch/` and leave tags out (maintenance's prefetch).
    #[arg(long)]
    prefetch: bool,
    /// From a shallow remote, take refs that reach its cut too (adding it to .git/shallow).
    #[arg(long)]
    update_shallow: bool,
    /// Make the branch fetched for merging the upstream of the branch checked out.
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
    depth: Option<String>,
    /// Deepen a shallow history by this many commits.
    #[arg(long, value_name = "depth", allow_negative_numbers = true)]
    deepen: Option<i64>,
    /// Make a shallow repository whole.
    #[arg(long)]
    unshallow: bool,
    /// Deepen to commits after this date.
    #[arg(long, value_name = "date")]
    shallow_since: Option<String>,
    /// Deepen, excluding what this remote ref reaches.
    #[arg(long, value_name = "revision")]
    shallow_exclude: Vec<String>,
    /// A partial fetch: leave out what the filter excludes; the remote becomes a promisor.
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
    /// Check each move is a fast-forward (the default, `fetch.showForcedUpdates`).
    #[arg(long, overrides_with = "no_show_forced_updates")]
    show_forced_updates: bool,
    /// Take every move as a fast-forward, unchecked (faster; git's warning says so).
    #[arg(long, overrides_with = "show_forced_updates")]
    no_show_forced_updates: bool,
    /// Report ref updates for scripts, on stdout: `<flag> <old id> <new id> <local ref>`.
    #[arg(long, overrides_with = "no_porcelain")]
    porcelain: bool,
    /// Report ref updates for people (the default; undoes an earlier `--porcelain`).
    #[arg(long, overrides_with = "porcelain")]
    no_porcelain: bool,
    /// How many remotes (`--all`, `--multiple`; else `fetch.parallel`) or submodules (else
    /// `submodule.fetchJobs`, else `fetch.parallel`) to fetch at once; 0: one a core; below 0:
    /// as configured.
    #[arg(short, long, value_name = "n", allow_negative_numbers = true)]
    jobs: Option<i32>,
    /// Accepted for git's command lines: Sluice runs no maintenance after a fetch.
    #[arg(long)]
    no_auto_gc: bool,
    /// Accepted for git's command lines: Sluice runs no maintenance after a fetch.
    #[arg(long)]
    no_auto_maintenance: bool,
    /// After the fetch, add a layer to the split commit-graph (`fetch.writeCommitGraph`).
    #[arg(long, overrides_with = "no_write_commit_graph")]
    write_commit_graph: bool,
    /// Write no commit-graph, whatever `fetch.writeCommitGraph` says.
    #[arg(long, overrides_with = "write_commit_graph")]
    no_write_commit_graph: bool,
    /// Progress even when stderr is not a terminal.
    #[arg(long)]
    progress: bool,
    /// The command that runs upload-pack on the other side.
    #[arg(long, value_name = "command")]
    upload_pack: Option<String>,
    /// Map the command line's refs to remote-tracking refs with this, not remote.*.fetch.
    #[arg(long, value_name = "refspec")]
    refmap: Vec<String>,
    /// Send this option to the server (protocol v2).
    #[arg(short = 'o', long, value_name = "option")]
    server_option: Vec<String>,
    /// Offer the server only the history of these refs (globs) or commits.
    #[arg(long, value_name = "commit|glob")]
    negotiation_tip: Vec<String>,
    /// Only negotiate: print the commits the server has in common with the tips.
    #[arg(long)]
    negotiate_only: bool,
    /// Fetch submodules too (`yes`, `on-demand`, `no`): refused where submodules exist.
    #[arg(long, value_name = "mode", num_args = 0..=1, default_missing_value = "yes",
          overrides_with = "no_recurse_submodules")]
    recurse_submodules: Option<String>,
    /// Do not fetch submodules.
    #[arg(long, overrides_with = "recurse_submodules")]
    no_recurse_submodules: bool,
    /// The path shown before a submodule's own (as the superproject's fetch runs this one).
    #[arg(long, hide = true, value_name = "path")]
    submodule_prefix: Option<String>,
    /// A configured remote's name, or a URL.
    #[arg(value_name = "repository")]
    repository: Option<String>,
    /// What to fetch and where to store it.
    #[arg(value_name = "refspec")]
    refspecs: Vec<String>,
}

/// The reflog's action, as git writes it: `fetch` and the command's arguments as given, options
/// included (but not the options before the command's name).
fn reflog_action() -> String {
    std::iter::once("fetch".to_owned())
        .chain(crate::global::command_arguments())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs fetch: of one remote, or of several one after another as git's `--all` does.
pub fn run(mut args: FetchArgs, context: &Context) -> anyhow::Result<ExitCode> {
    if let Some(spec) = &args.filter {
        args.filter = Some(filter_spec(spec)?);
    }
    let repo = context.require_repository()?;
    let recursion = recursion(&args)?;
    if args.porcelain && recursion != Some(Recursion::Off) {
        bail!("options '--porcelain' and '--recurse-submodules' cannot be used together");
    }
    if args.negotiate_only && args.negotiation_tip.is_empty() {
        return Err(RunError::NegotiateOnlyWithoutTips.into());
    }
    let shallow = !repo.shallow_commits()?.is_empty();
    let (unshallow, depth) = ((args.unshallow, shallow), args.depth.as_deref());
    let depth = sluice_remote::fetch_depth(depth, args.deepen, unshallow)?;
    let deepen = Deepen {
        depth: depth.depth,
        since: parse_since(args.shallow_since.as_deref())?,
        not: args.shallow_exclude.clone(),
        relative: depth.relative,
    };
    let mut submodules =
        SubmoduleFetch::from_config(&repo, recursion, jobs_given(&args), context.cancel.clone())?;
    // How many remotes at once under `--all` (`fetch.parallel` is read, and refused, above).
    let remote_jobs = job_count(jobs_given(&args), repo.config(), &["fetch.parallel"])?;
    // `fetch.output` is read (and a bad value refused) under `--porcelain` too, as git's.
    let given = GivenSettings {
        show_forced_updates: either(args.show_forced_updates, args.no_show_forced_updates),
        write_commit_graph: either(args.write_commit_graph, args.no_write_commit_graph),
    };
    let settings = FetchSettings::resolve(repo.config(), given)?;
    let one = |repository: Option<&str>, refspecs: Vec<Refspec>| RemoteFetch {
        repository: repository.map(str::to_owned),
        refspecs,
        append: args.append,
        action: reflog_action(),
        deepen: deepen.clone(),
        unshallow: args.unshallow,
    };
    let selection = Selection {
        all: args.all,
        multiple: args.multiple,
        repository: args.repository.as_ref(),
        refspecs: &args.refspecs,
    };
    let code = match remotes_to_fetch(&repo, &selection)? {
        Remotes::Given => {
            let mut refspecs = refspec::command_line(&args.refspecs)?;
            if args.stdin {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
                refspecs.extend(refspec::lines(&text)?);
            }
            let one = one(args.repository.as_deref(), refspecs);
            fetch_one(&args, context, &repo, &one, settings, &mut submodules)
        }
        Remotes::Only(name) => {
            let one = one(Some(&name), Vec::new());
            fetch_one(&args, context, &repo, &one, settings, &mut submodules)
        }
        Remotes::Each(names) => {
            refuse_for_each(&args)?;
            match remote_jobs {
                1 => fetch_each(&args, context, &repo, &names, settings, &mut submodules),
                jobs => fetch_parallel(&args, context, &repo, &names, jobs),
            }
        }
    }?;
    if code == ExitCode::SUCCESS {
        let prefix = args.submodule_prefix.as_deref().unwrap_or_default();
        let passed = passed_on(&args, None);
        let said = (args.quiet, prefix);
        let failed = submodules.run(&super::Terminal, &repo, &passed, said)?;
        if !failed.is_empty() {
            eprintln!("Errors during submodule fetch:");
            for path in failed {
                eprintln!("\t{path}");
            }
            return Ok(ExitCode::from(1));
        }
    }
    // As git: once every remote is fetched, a layer of the split commit-graph when asked.
    if settings.write_commit_graph && code == ExitCode::SUCCESS {
        let shown = TerminalProgress::new(crate::progress::enabled(!args.quiet, args.progress));
        let options = sluice_graph::commit_graph::SplitOptions::default();
        let commits = sluice_graph::commit_graph::GraphCommits::Reachable;
        if sluice_graph::commit_graph::write_split(&repo, &commits, &options, &shown)?.is_none() {
            eprintln!("warning: {}", sluice_graph::commit_graph::DISABLED);
        }
    }
    Ok(code)
}

/// What git refuses where a fetch runs one fetch per remote, in git's order.
fn refuse_for_each(args: &FetchArgs) -> anyhow::Result<()> {
    let refused = [
        (
            args.negotiate_only,
            "must supply remote when using --negotiate-only",
        ),
        (
            args.filter.is_some(),
            "--filter can only be used with the remote configured in extensions.partialclone",
        ),
        (
            args.atomic,
            "--atomic can only be used when fetching from one remote",
        ),
        (
            args.stdin,
            "--stdin can only be used when fetching from one remote",
        ),
    ];
    match refused.iter().find(|(given, _)| *given) {
        Some((_, message)) => bail!("{message}"),
        None => Ok(()),
    }
}

/// RemoteFetch remote's fetch, and what it writes to FETCH_HEAD and the reflogs.
struct RemoteFetch {
    /// A remote's name or a URL (the default remote when `None`).
    repository: Option<String>,
    /// The refspecs of the command line (and `--stdin`).
    refspecs: Vec<Refspec>,
    /// Whether FETCH_HEAD is added to rather than replaced.
    append: bool,
    /// The reflog's action (`fetch` and the arguments).
    action: String,
    /// How far history is cut or extended.
    deepen: Deepen,
    /// `--unshallow`.
    unshallow: bool,
}

/// Fetches each of `names` in turn, as git's `--all` runs one `fetch --append` per remote: a
/// remote that fails is reported and the others are still fetched.
fn fetch_each(
    args: &FetchArgs,
    context: &Context,
    repo: &Repository,
    names: &[String],
    settings: FetchSettings,
    submodules: &mut SubmoduleFetch,
) -> anyhow::Result<ExitCode> {
    if writes_fetch_head(args) && !args.append {
        sluice_client::fetch::clear_fetch_head(repo)?;
    }
    let mut failed = false;
    for name in names {
        if !args.quiet && !args.porcelain {
            println!("Fetching {name}");
            std::io::stdout().flush()?;
        }
        let one = RemoteFetch {
            repository: Some(name.clone()),
            refspecs: Vec::new(),
            append: true,
            action: each_action(args, name),
            // As git's, which runs a fetch per remote without the history options.
            deepen: Deepen::default(),
            unshallow: false,
        };
        let fetched = match fetch_one(args, context, repo, &one, settings, submodules) {
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
    // 1 when any remote failed, as git's `fetch --all`.
    Ok(ExitCode::from(u8::from(failed)))
}

/// Fetches `names` `jobs` at a time, as git's `--all` with `-j`/`fetch.parallel`: Sluice run
/// for each with the command line git gives its own (whose reflog action it is), its messages
/// held and said whole when it ends; a failed one said as git says it.
fn fetch_parallel(
    args: &FetchArgs,
    context: &Context,
    repo: &Repository,
    names: &[String],
    jobs: usize,
) -> anyhow::Result<ExitCode> {
    if writes_fetch_head(args) && !args.append {
        sluice_client::fetch::clear_fetch_head(repo)?;
    }
    let fetch = |name: &String, output: &mut JobOutput| -> anyhow::Result<_> {
        if !args.quiet && !args.porcelain {
            println!("Fetching {name}");
            std::io::stdout().flush()?;
        }
        let mut words = each_words(args, name);
        // As git's parallel fetches: the remote's name after `--end-of-options`.
        words.insert(words.len() - 1, "--end-of-options");
        let mut command = std::process::Command::new(std::env::current_exe()?);
        command.current_dir(&context.cwd).args(words);
        Ok(output.run(&mut command)?)
    };
    let mut failed = false;
    let names: Vec<&String> = names.iter().collect();
    jobs::for_each(&super::Terminal, &names, jobs, fetch, |name, status| {
        if !status.success() {
            let code = status.code().unwrap_or(-1);
            eprintln!("could not fetch '{name}' (exit code: {code})");
            failed = true;
        }
        Ok(true)
    })?;
    // 1 when any remote failed, as git's `fetch --all`.
    Ok(ExitCode::from(u8::from(failed)))
}

/// The reflog action of one remote's fetch under `--all`: the command line git gives the
/// `fetch` it runs for that remote (see [`each_words`]).
fn each_action(args: &FetchArgs, name: &str) -> String {
    each_words(args, name).join(" ")
}

/// The command line git gives the `fetch` it runs for the remote `name` under `--all`, the
/// options passed on in git's order.
fn each_words<'a>(args: &FetchArgs, name: &'a str) -> Vec<&'a str> {
    let mut words = vec![
        "fetch",
        "--append",
        "--no-auto-gc",
        "--no-write-commit-graph",
    ];
    // A bad value was refused in `run`.
    let recurse = recursion(args).ok().flatten().map(Recursion::option);
    words.extend(passed_on(args, recurse));
    words.push(name);
    words
}

/// The options a fetch passes on to the fetches it runs (of each remote under `--all`, in each
/// submodule), in git's order, with `recurse` for the submodule recursion.
fn passed_on(args: &FetchArgs, recurse: Option<&'static str>) -> Vec<&'static str> {
    let flags = [
        (args.dry_run, "--dry-run"),
        (args.prune, "--prune"),
        (args.no_prune, "--no-prune"),
        (args.prune_tags, "--prune-tags"),
        (args.no_prune_tags, "--no-prune-tags"),
        (args.update_head_ok, "--update-head-ok"),
        (args.force, "--force"),
        (args.keep, "--keep"),
        (recurse.is_some(), recurse.unwrap_or_default()),
        (args.tags, "--tags"),
        (args.no_tags, "--no-tags"),
        (args.verbose >= 2, "-v"),
        (args.verbose >= 1, "-v"),
        (args.verbose == 0 && args.quiet, "-q"),
        (args.ipv4, "--ipv4"),
        (args.ipv6, "--ipv6"),
        (!writes_fetch_head(args), "--no-write-fetch-head"),
        (args.porcelain, "--porcelain"),
    ];
    flags
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, flag)| *flag)
        .collect()
}

/// The submodule recursion the command line asks for.
fn recursion(args: &FetchArgs) -> anyhow::Result<Option<Recursion>> {
    let (no, mode) = (
        args.no_recurse_submodules,
        args.recurse_submodules.as_deref(),
    );
    Ok(Recursion::from_flags(no, mode, args.porcelain)?)
}

/// `--jobs`, where it decides: as git's, a negative count leaves it to the configuration.
fn jobs_given(args: &FetchArgs) -> Option<u32> {
    args.jobs.and_then(|n| u32::try_from(n).ok())
}

/// Whether FETCH_HEAD is written: not under `--dry-run` or `--no-write-fetch-head`.
fn writes_fetch_head(args: &FetchArgs) -> bool {
    !args.dry_run && !args.no_write_fetch_head
}

/// Fetches one remote or URL, and reports as git does.
fn fetch_one(
    args: &FetchArgs,
    context: &Context,
    repo: &Repository,
    one: &RemoteFetch,
    settings: FetchSettings,
    submodules: &mut SubmoduleFetch,
) -> anyhow::Result<ExitCode> {
    let choice = FetchChoice {
        repository: one.repository.as_deref(),
        refspecs: one.refspecs.clone(),
        prune: either(args.prune, args.no_prune),
        prune_tags: either(args.prune_tags, args.no_prune_tags),
        tags: either(args.tags, args.no_tags),
        force: args.force,
        update_head_ok: args.update_head_ok,
        filter: args.filter.as_deref(),
        no_filter: args.no_filter,
        refmap: &args.refmap,
        prefetch: args.prefetch,
    };
    let plan = FetchPlan::from_config(repo, &context.cwd, &choice)?;
    let upload_pack = args.upload_pack.as_deref().or(plan.upload_pack.as_deref());
    let mut connect = context.connect_options(repo.config(), upload_pack)?;
    let remote_name = &plan.refs.remote_name;
    connect.server_options =
        sluice_remote::server_options(&args.server_option, repo.config(), remote_name);
    connect.ip_version = IpVersion::from_flags(args.ipv4, args.ipv6);
    if args.negotiate_only {
        for id in negotiate_only(&plan.remote, repo, &args.negotiation_tip, &connect)? {
            println!("{id}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let show_progress = crate::progress::enabled(!args.quiet, args.progress);
    let progress = TerminalProgress::new(show_progress);
    // git's unpack-objects, run without --progress, shows its own on a terminal only.
    let unpacking = TerminalProgress::new(crate::progress::enabled(!args.quiet, false));
    let options = FetchOptions {
        refs: plan.refs,
        negotiation: plan.negotiation,
        bundle_uri: sluice_client::bundle_uri::wanted(repo.config())?,
        filter: plan.filter,
        prune: plan.prune,
        deepen: one.deepen.clone(),
        unshallow: one.unshallow,
        refetch: args.refetch,
        keep: args.keep,
        negotiation_tips: args.negotiation_tip.clone(),
        update_shallow: args.update_shallow,
        atomic: args.atomic,
        dry_run: args.dry_run,
        verbose: args.verbose > 0,
        show_forced_updates: settings.show_forced_updates,
        fetch_head: writes_fetch_head(args).then_some(one.append),
        set_upstream: args.set_upstream,
        action: one.action.clone(),
        connect,
        remote_progress: show_progress,
        receive_progress: &progress,
        unpack_progress: &unpacking,
        cwd: &context.cwd,
    };
    let said = FetchStderr(RemoteLines::new(repo.config())?);
    let shown = display_url(&plan.remote.shown);
    let moved = match fetch_remote(&plan.remote, repo, &options, &said)? {
        FetchOutcome::Moved(moved) => moved,
        // git's words and exit code; nothing was fetched or changed.
        FetchOutcome::Unadvertised(id) => {
            eprintln!("error: Server does not allow request for unadvertised object {id}");
            return Ok(ExitCode::from(1));
        }
        FetchOutcome::NotConnected(missing) => {
            eprintln!("error: missing object {missing}");
            eprintln!("error: {shown} did not send all necessary objects");
            return Ok(ExitCode::from(1));
        }
    };
    submodules.note(&moved.lines);
    let format = match args.porcelain {
        true => ReportFormat::Porcelain,
        false => ReportFormat::Human(settings.names),
    };
    print_report(shown, &moved.lines, args.quiet, format, moved.summary_width)?;
    if moved.aborted_by_hook {
        eprintln!("fatal: ref updates aborted by hook");
        return Ok(ExitCode::from(128));
    }
    for error in &moved.in_the_way {
        eprintln!("error: {error}");
    }
    if settings.advise_unchecked {
        eprintln!("warning: {UNCHECKED_FORCED_UPDATES}");
    }
    if let Some(warning) = &moved.upstream_warning {
        eprintln!("warning: {warning}");
    }
    if moved.refused == Refused::InTheWay {
        // As git 2.47 advises; 2.39 gives the advice only when the ref in the way is loose.
        eprintln!("error: some local refs could not be updated; try running\n 'git remote prune {}' to remove any old, conflicting branches", options.refs.remote_name);
    }
    // A ref that could not be moved or deleted fails the fetch, as in git.
    let failed_line = (moved.lines.iter()).any(
        |report| matches!(report, sluice_client::fetch::Report::Line(line) if line.error.is_some()),
    );
    let clean = moved.refused == Refused::None && moved.in_the_way.is_empty() && !failed_line;
    Ok(match clean {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}

/// A fetch's messages on stderr, as git words them.
struct FetchStderr(RemoteLines);

impl FetchMessages for FetchStderr {
    fn warning(&self, message: &str) {
        eprintln!("warning: {message}");
    }

    fn remote_progress(&self, text: &[u8]) {
        self.0.show(text);
    }
}
