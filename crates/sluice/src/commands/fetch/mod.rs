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
use sluice_client::fetch::{
    run_fetch, FetchApart, FetchChoice, FetchCommand, FetchEnd, FetchHost, FetchSettings,
    GivenSettings, HostError, Moved, RunError, Selection,
};
use sluice_client::partial::filter_spec;
use sluice_client::ServerLines;
use sluice_object::progress::Progress;
use sluice_odb::Config;
use sluice_remote::remote_colors::RemoteColorError;
use sluice_remote::{Deepen, IpVersion};
use sluice_repo::date::parse_since;
use sluice_repo::Repository;
use sluice_submodule::fetch::SubmoduleFetch;
use sluice_submodule::jobs::{self, job_count, JobOutput};
use sluice_submodule::Recursion;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Mutex;

mod report;

use report::{print_report, ReportFormat};

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
pub fn run(args: FetchArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let filter = args.filter.as_deref().map(filter_spec).transpose()?;
    let repo = context.require_repository()?;
    let recursion = recursion(&args)?;
    // What each remote's fetch under `--all`, and each submodule's, is passed on.
    let (each_passed, submodule_passed) = (
        passed_on(&args, recursion.map(Recursion::option)),
        passed_on(&args, None),
    );
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
    let cancel = context.cancel.clone();
    let submodules = SubmoduleFetch::from_config(&repo, recursion, jobs_given(&args), cancel)?;
    // How many remotes at once under `--all` (`fetch.parallel` is read, and refused, above).
    let remote_jobs = job_count(jobs_given(&args), repo.config(), &["fetch.parallel"])?;
    // `fetch.output` is read (and a bad value refused) under `--porcelain` too, as git's.
    let given = GivenSettings {
        show_forced_updates: either(args.show_forced_updates, args.no_show_forced_updates),
        write_commit_graph: either(args.write_commit_graph, args.no_write_commit_graph),
    };
    let settings = FetchSettings::resolve(repo.config(), given)?;
    let show_progress = crate::progress::enabled(!args.quiet, args.progress);
    let request = FetchCommand {
        selection: Selection {
            all: args.all,
            multiple: args.multiple,
            repository: args.repository.as_ref(),
            refspecs: &args.refspecs,
        },
        stdin: args.stdin,
        choice: FetchChoice {
            repository: None,
            refspecs: Vec::new(),
            prune: either(args.prune, args.no_prune),
            prune_tags: either(args.prune_tags, args.no_prune_tags),
            tags: either(args.tags, args.no_tags),
            force: args.force,
            update_head_ok: args.update_head_ok,
            filter: filter.as_deref(),
            no_filter: args.no_filter,
            refmap: &args.refmap,
            prefetch: args.prefetch,
        },
        upload_pack: args.upload_pack.as_deref(),
        server_options: &args.server_option,
        ip_version: IpVersion::from_flags(args.ipv4, args.ipv6),
        negotiate_only: args.negotiate_only,
        negotiation_tips: &args.negotiation_tip,
        deepen,
        unshallow: args.unshallow,
        refetch: args.refetch,
        keep: args.keep,
        update_shallow: args.update_shallow,
        atomic: args.atomic,
        dry_run: args.dry_run,
        verbose: args.verbose > 0,
        set_upstream: args.set_upstream,
        append: args.append,
        writes_fetch_head: writes_fetch_head(&args),
        unannounced: args.quiet || args.porcelain,
        progress: show_progress,
        unpack_progress: crate::progress::enabled(!args.quiet, false),
        action: reflog_action(),
        passed_on: each_passed,
        remote_jobs,
        settings,
        cwd: &context.cwd,
        cancel: context.cancel.clone(),
    };
    let host = FetchTerminal {
        args: &args,
        context,
        format: match args.porcelain {
            true => ReportFormat::Porcelain,
            false => ReportFormat::Human(settings.names),
        },
        submodule_passed,
        submodules: Mutex::new(submodules),
    };
    Ok(match run_fetch(&repo, &request, &host)? {
        FetchEnd::Done => ExitCode::SUCCESS,
        FetchEnd::Failed => ExitCode::from(1),
        FetchEnd::Aborted => ExitCode::from(128),
    })
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

/// A fetch's words and progress on the terminal, its report, and what it needs of the floors
/// above the client: the submodules, and Sluice run for each remote under `--all -j`.
struct FetchTerminal<'a> {
    args: &'a FetchArgs,
    context: &'a Context,
    format: ReportFormat,
    /// The options each submodule's fetch is passed on.
    submodule_passed: Vec<&'static str>,
    /// What the fetches moved is noted here; the submodules are fetched once they are done.
    submodules: Mutex<SubmoduleFetch>,
}

impl FetchHost for FetchTerminal<'_> {
    fn out(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    }

    fn err(&self, text: &str) {
        eprint!("{text}");
    }

    fn progress(&self, shown: bool) -> Box<dyn Progress> {
        Box::new(TerminalProgress::new(shown))
    }

    fn server_lines(&self, config: &Config) -> Result<ServerLines<'_>, RemoteColorError> {
        let lines = RemoteLines::new(config)?;
        Ok(Box::new(move |text| lines.show(text)))
    }

    fn stdin(&self) -> std::io::Result<String> {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
        Ok(text)
    }

    fn report(&self, url: &str, moved: &Moved) -> std::io::Result<()> {
        let mut submodules = self.submodules.lock().unwrap_or_else(|e| e.into_inner());
        submodules.note(&moved.lines);
        let (quiet, width) = (self.args.quiet, moved.summary_width);
        print_report(url, &moved.lines, quiet, self.format, width)
    }

    fn fatal(&self, error: &(dyn std::error::Error + 'static)) {
        eprintln!("fatal: {}", crate::describe(error));
    }

    fn fetch_apart(
        &self,
        fetches: &[FetchApart],
        jobs: usize,
        announce: bool,
    ) -> Result<bool, HostError> {
        let fetch = |one: &FetchApart, output: &mut JobOutput| -> anyhow::Result<_> {
            if announce {
                self.out(&format!("Fetching {}\n", one.name));
            }
            let mut command = std::process::Command::new(std::env::current_exe()?);
            command.current_dir(&self.context.cwd).args(&one.words);
            Ok(output.run(&mut command)?)
        };
        let mut all_well = true;
        let fetches: Vec<&FetchApart> = fetches.iter().collect();
        jobs::for_each(&super::Terminal, &fetches, jobs, fetch, |one, status| {
            if !status.success() {
                let code = status.code().unwrap_or(-1);
                eprintln!("could not fetch '{}' (exit code: {code})", one.name);
                all_well = false;
            }
            Ok(true)
        })?;
        Ok(all_well)
    }

    fn fetch_submodules(&self, repo: &Repository) -> Result<bool, HostError> {
        let prefix = self.args.submodule_prefix.as_deref().unwrap_or_default();
        let said = (self.args.quiet, prefix);
        let submodules = self.submodules.lock().unwrap_or_else(|e| e.into_inner());
        let failed = submodules.run(&super::Terminal, repo, &self.submodule_passed, said)?;
        if !failed.is_empty() {
            eprintln!("Errors during submodule fetch:");
            for path in &failed {
                eprintln!("\t{path}");
            }
        }
        Ok(failed.is_empty())
    }
}
