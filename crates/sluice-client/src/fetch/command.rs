//! `git fetch` as the command runs it, around [`fetch_remote`]: which remotes the command line
//! names (one, or each of a group or `--all`, one after another or as processes of their own,
//! as git runs them), each one's plan and connection, git's words after each fetch, the
//! submodules once every remote is fetched and a layer of the split commit-graph when asked.
//! The command line merges its flags into a [`FetchCommand`]; what it shows, and what needs a
//! higher floor (the submodules, Sluice run for a remote), goes through a [`FetchHost`].

use super::plan::{FetchChoice, FetchPlan, FetchPlanError};
use super::remotes::{remotes_to_fetch, Remotes, Selection, SelectionError};
use super::report::Report;
use super::run::{
    fetch_remote, negotiate_only, FetchMessages, FetchOptions, FetchOutcome, Moved, RunError,
};
use super::settings::{FetchSettings, UNCHECKED_FORCED_UPDATES};
use super::update::Refused;
use crate::ServerLines;
use sluice_graph::commit_graph::{self, CommitGraphError, GraphCommits, SplitOptions};
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_odb::{Config, LockError};
use sluice_remote::remote_colors::RemoteColorError;
use sluice_remote::{server_options, ConnectOptions, Deepen, IpVersion, SettingsError};
use sluice_repo::fetch_head::{clear as clear_fetch_head, display_url};
use sluice_repo::refspec::{self, CommandLineError, InvalidRefspec, Refspec};
use sluice_repo::Repository;
use std::path::Path;

/// An error the host met doing what it was asked.
pub type HostError = Box<dyn std::error::Error + Send + Sync>;

/// Why the command stopped. Each cause stays in the chain of causes (no variant is
/// transparent), where the command line finds a refused setting or the server's words.
#[derive(Debug, thiserror::Error)]
pub enum FetchCommandError {
    /// Where a fetch runs one fetch per remote, an option only one fetch can take.
    #[error("{0}")]
    OneRemoteOnly(&'static str),
    /// The fetch itself failed.
    #[error("{0}")]
    Run(#[from] RunError),
    /// The remotes to fetch could not be told from the command line.
    #[error("{0}")]
    Selection(#[from] SelectionError),
    /// A remote's fetch could not be planned.
    #[error("{0}")]
    Plan(#[from] FetchPlanError),
    /// A refspec of the command line is no refspec.
    #[error("{0}")]
    CommandLine(#[from] CommandLineError),
    /// A refspec of standard input is no refspec.
    #[error("{0}")]
    Refspec(#[from] InvalidRefspec),
    /// How to reach the remote is configured in a way git refuses.
    #[error("{0}")]
    Connect(#[from] SettingsError),
    /// `color.remote` is configured in a way git refuses.
    #[error("{0}")]
    Colors(#[from] RemoteColorError),
    /// A setting has a value git refuses.
    #[error("{0}")]
    Config(#[from] sluice_odb::ConfigError),
    /// FETCH_HEAD could not be emptied.
    #[error("{0}")]
    FetchHead(#[from] LockError),
    /// The commit-graph's new layer could not be written.
    #[error("{0}")]
    CommitGraph(#[from] CommitGraphError),
    /// Standard input could not be read, or the report written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// What the host was asked to do failed.
    #[error("{0}")]
    Host(HostError),
}

/// A fetch's command line, its flags merged.
pub struct FetchCommand<'a> {
    /// Which remotes the words name.
    pub selection: Selection<'a>,
    /// `--stdin`: more refspecs, a line each.
    pub stdin: bool,
    /// What the command line says of each fetch (the remote and refspecs are set per fetch).
    pub choice: FetchChoice<'a>,
    /// `--upload-pack`.
    pub upload_pack: Option<&'a str>,
    /// `--server-option`.
    pub server_options: &'a [String],
    /// `-4`/`-6`.
    pub ip_version: IpVersion,
    /// `--negotiate-only`: the common commits said, nothing fetched.
    pub negotiate_only: bool,
    /// `--negotiation-tip`.
    pub negotiation_tips: &'a [String],
    /// How far history is cut or extended.
    pub deepen: Deepen,
    /// `--unshallow`.
    pub unshallow: bool,
    /// `--refetch`.
    pub refetch: bool,
    /// `--keep`.
    pub keep: bool,
    /// `--update-shallow`.
    pub update_shallow: bool,
    /// `--atomic`.
    pub atomic: bool,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `-v`.
    pub verbose: bool,
    /// `--set-upstream`.
    pub set_upstream: bool,
    /// `--append`.
    pub append: bool,
    /// Whether FETCH_HEAD is written: not under `--dry-run` or `--no-write-fetch-head`.
    pub writes_fetch_head: bool,
    /// `-q` or `--porcelain`: no `Fetching <remote>` lines.
    pub unannounced: bool,
    /// Whether progress is shown.
    pub progress: bool,
    /// Whether unpack-objects' progress is shown (git's, run without `--progress`, shows its
    /// own on a terminal only).
    pub unpack_progress: bool,
    /// The reflog's action (`fetch` and the arguments).
    pub action: String,
    /// The options passed on to each remote's fetch under `--all`, in git's order.
    pub passed_on: Vec<&'a str>,
    /// How many remotes are fetched at once under `--all`.
    pub remote_jobs: usize,
    /// The command's settings, read once.
    pub settings: FetchSettings,
    /// Where relative paths start.
    pub cwd: &'a Path,
    /// Stops the transfers.
    pub cancel: Cancel,
}

/// One remote's fetch run as a process of its own (`--all` with `-j`): Sluice with `words`.
pub struct FetchApart {
    /// The remote.
    pub name: String,
    /// The command line git gives the fetch it runs for that remote.
    pub words: Vec<String>,
}

/// What the command's host does for it: its words, and what needs a higher floor.
pub trait FetchHost: Sync {
    /// Text for standard output, as it is (flushed).
    fn out(&self, text: &str);

    /// Text for standard error, as it is.
    fn err(&self, text: &str);

    /// Progress of the host's, shown if `shown`.
    fn progress(&self, shown: bool) -> Box<dyn Progress>;

    /// What shows the server's progress, coloured as `config` says.
    fn server_lines(&self, config: &Config) -> Result<ServerLines<'_>, RemoteColorError>;

    /// The refspecs of standard input (`--stdin`).
    fn stdin(&self) -> std::io::Result<String>;

    /// Shows the report of one remote's fetch from `url` (and notes what it moved, for the
    /// submodules).
    fn report(&self, url: &str, moved: &Moved) -> std::io::Result<()>;

    /// Says why one remote's fetch failed under `--all`, as a fatal error is said.
    fn fatal(&self, error: &(dyn std::error::Error + 'static));

    /// Runs `fetches`, `jobs` at a time, each announced if `announce`; true when each ended
    /// well.
    fn fetch_apart(
        &self,
        fetches: &[FetchApart],
        jobs: usize,
        announce: bool,
    ) -> Result<bool, HostError>;

    /// Fetches the submodules, once every remote is fetched; true when each ended well.
    fn fetch_submodules(&self, repo: &Repository) -> Result<bool, HostError>;
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchEnd {
    /// Every fetch done.
    Done,
    /// A fetch failed as git's fails (exit code 1): said to the host.
    Failed,
    /// A hook aborted the ref updates (git's fatal error, exit code 128): said to the host.
    Aborted,
}

/// One remote's fetch, and what it writes to FETCH_HEAD and the reflogs.
struct OneFetch<'a> {
    /// A remote's name or a URL (the default remote when `None`).
    repository: Option<&'a str>,
    /// The refspecs of the command line (and `--stdin`).
    refspecs: Vec<Refspec>,
    /// Whether FETCH_HEAD is added to rather than replaced.
    append: bool,
    /// The reflog's action.
    action: String,
    /// How far history is cut or extended.
    deepen: Deepen,
    /// `--unshallow`.
    unshallow: bool,
}

/// Runs `fetch` in `repo`: of one remote, or of several as git's `--all` does.
pub fn run_fetch(
    repo: &Repository,
    request: &FetchCommand<'_>,
    host: &dyn FetchHost,
) -> Result<FetchEnd, FetchCommandError> {
    let one = |repository, refspecs| OneFetch {
        repository,
        refspecs,
        append: request.append,
        action: request.action.clone(),
        deepen: request.deepen.clone(),
        unshallow: request.unshallow,
    };
    let end = match remotes_to_fetch(repo, &request.selection)? {
        Remotes::Given => {
            let mut refspecs = refspec::command_line(request.selection.refspecs)?;
            if request.stdin {
                refspecs.extend(refspec::lines(&host.stdin()?)?);
            }
            let repository = request.selection.repository.map(String::as_str);
            fetch_one(repo, request, &one(repository, refspecs), host)?
        }
        Remotes::Only(name) => fetch_one(repo, request, &one(Some(&name), Vec::new()), host)?,
        Remotes::Each(names) => fetch_each(repo, request, &names, host)?,
    };
    if end != FetchEnd::Done {
        return Ok(end);
    }
    if !host
        .fetch_submodules(repo)
        .map_err(FetchCommandError::Host)?
    {
        return Ok(FetchEnd::Failed);
    }
    // As git: once every remote is fetched, a layer of the split commit-graph when asked.
    if request.settings.write_commit_graph {
        let shown = host.progress(request.progress);
        let (commits, options) = (GraphCommits::Reachable, SplitOptions::default());
        if commit_graph::write_split(repo, &commits, &options, &*shown)?.is_none() {
            host.err(&format!("warning: {}\n", commit_graph::DISABLED));
        }
    }
    Ok(FetchEnd::Done)
}

/// Fetches each of `names`, as git's `--all` runs one `fetch --append` per remote: one after
/// another, or `remote_jobs` at a time as processes of their own. A remote that fails is
/// reported and the others are still fetched.
fn fetch_each(
    repo: &Repository,
    request: &FetchCommand<'_>,
    names: &[String],
    host: &dyn FetchHost,
) -> Result<FetchEnd, FetchCommandError> {
    refuse_for_each(request)?;
    if request.writes_fetch_head && !request.append {
        clear_fetch_head(repo)?;
    }
    if request.remote_jobs <= 1 {
        return Ok(fetch_in_turn(repo, request, names, host));
    }
    let apart: Vec<FetchApart> = (names.iter())
        .map(|name| FetchApart {
            name: name.clone(),
            words: each_words(request, name, true),
        })
        .collect();
    let (jobs, announce) = (request.remote_jobs, !request.unannounced);
    let all_well = host.fetch_apart(&apart, jobs, announce);
    Ok(match all_well.map_err(FetchCommandError::Host)? {
        true => FetchEnd::Done,
        false => FetchEnd::Failed,
    })
}

/// Fetches each of `names` in this process, one after another, as git's `--all` without `-j`.
fn fetch_in_turn(
    repo: &Repository,
    request: &FetchCommand<'_>,
    names: &[String],
    host: &dyn FetchHost,
) -> FetchEnd {
    let mut failed = false;
    for name in names {
        if !request.unannounced {
            host.out(&format!("Fetching {name}\n"));
        }
        let one = OneFetch {
            repository: Some(name),
            refspecs: Vec::new(),
            append: true,
            action: each_words(request, name, false).join(" "),
            // As git's, which runs a fetch per remote without the history options.
            deepen: Deepen::default(),
            unshallow: false,
        };
        let fetched = match fetch_one(repo, request, &one, host) {
            Ok(end) => end == FetchEnd::Done,
            Err(error) => {
                host.fatal(&error);
                false
            }
        };
        if !fetched {
            host.err(&format!("error: could not fetch {name}\n"));
            failed = true;
        }
    }
    match failed {
        true => FetchEnd::Failed,
        false => FetchEnd::Done,
    }
}

/// What git refuses where a fetch runs one fetch per remote, in git's order.
fn refuse_for_each(request: &FetchCommand<'_>) -> Result<(), FetchCommandError> {
    let refused = [
        (
            request.negotiate_only,
            "must supply remote when using --negotiate-only",
        ),
        (
            request.choice.filter.is_some(),
            "--filter can only be used with the remote configured in extensions.partialclone",
        ),
        (
            request.atomic,
            "--atomic can only be used when fetching from one remote",
        ),
        (
            request.stdin,
            "--stdin can only be used when fetching from one remote",
        ),
    ];
    match refused.iter().find(|(given, _)| *given) {
        Some((_, message)) => Err(FetchCommandError::OneRemoteOnly(message)),
        None => Ok(()),
    }
}

/// The command line git gives the `fetch` it runs for the remote `name` under `--all`, the
/// options passed on in git's order; `apart`, for a process of its own, with the remote's
/// name after `--end-of-options`, as git's parallel fetches have it.
fn each_words(request: &FetchCommand<'_>, name: &str, apart: bool) -> Vec<String> {
    let mut words = vec![
        "fetch",
        "--append",
        "--no-auto-gc",
        "--no-write-commit-graph",
    ];
    words.extend(&request.passed_on);
    if apart {
        words.push("--end-of-options");
    }
    words.push(name);
    words.into_iter().map(str::to_owned).collect()
}

/// Fetches one remote or URL, and says what git says after it.
fn fetch_one(
    repo: &Repository,
    request: &FetchCommand<'_>,
    one: &OneFetch<'_>,
    host: &dyn FetchHost,
) -> Result<FetchEnd, FetchCommandError> {
    let choice = FetchChoice {
        repository: one.repository,
        refspecs: one.refspecs.clone(),
        ..request.choice.clone()
    };
    let plan = FetchPlan::from_config(repo, request.cwd, &choice)?;
    let upload_pack = request.upload_pack.or(plan.upload_pack.as_deref());
    let remote_name = &plan.refs.remote_name;
    let connect = ConnectOptions {
        server_options: server_options(request.server_options, repo.config(), remote_name),
        ip_version: request.ip_version,
        cancel: request.cancel.clone(),
        ..ConnectOptions::from_config(repo.config(), upload_pack)?
    };
    if request.negotiate_only {
        for id in negotiate_only(&plan.remote, repo, request.negotiation_tips, &connect)? {
            host.out(&format!("{id}\n"));
        }
        return Ok(FetchEnd::Done);
    }
    let progress = host.progress(request.progress);
    let unpacking = host.progress(request.unpack_progress);
    let options = FetchOptions {
        refs: plan.refs,
        negotiation: plan.negotiation,
        bundle_uri: crate::bundle_uri::wanted(repo.config())?,
        filter: plan.filter,
        prune: plan.prune,
        deepen: one.deepen.clone(),
        unshallow: one.unshallow,
        refetch: request.refetch,
        keep: request.keep,
        negotiation_tips: request.negotiation_tips.to_vec(),
        update_shallow: request.update_shallow,
        atomic: request.atomic,
        dry_run: request.dry_run,
        verbose: request.verbose,
        show_forced_updates: request.settings.show_forced_updates,
        fetch_head: request.writes_fetch_head.then_some(one.append),
        set_upstream: request.set_upstream,
        action: one.action.clone(),
        connect,
        remote_progress: request.progress,
        receive_progress: &*progress,
        unpack_progress: &*unpacking,
        cwd: request.cwd,
    };
    let words = Words {
        host,
        server: host.server_lines(repo.config())?,
    };
    let shown = display_url(&plan.remote.shown);
    let moved = match fetch_remote(&plan.remote, repo, &options, &words)? {
        FetchOutcome::Moved(moved) => moved,
        // git's words and exit code; nothing was fetched or changed.
        FetchOutcome::Unadvertised(id) => {
            let why = "Server does not allow request for unadvertised object";
            host.err(&format!("error: {why} {id}\n"));
            return Ok(FetchEnd::Failed);
        }
        FetchOutcome::NotConnected(missing) => {
            host.err(&format!("error: missing object {missing}\n"));
            host.err(&format!(
                "error: {shown} did not send all necessary objects\n"
            ));
            return Ok(FetchEnd::Failed);
        }
    };
    drop(words);
    host.report(shown, &moved)?;
    Ok(said_after(&moved, &options.refs.remote_name, request, host))
}

/// git's words after one remote's fetch and its report, and how it ended.
fn said_after(
    moved: &Moved,
    remote_name: &str,
    request: &FetchCommand<'_>,
    host: &dyn FetchHost,
) -> FetchEnd {
    if moved.aborted_by_hook {
        host.err("fatal: ref updates aborted by hook\n");
        return FetchEnd::Aborted;
    }
    for error in &moved.in_the_way {
        host.err(&format!("error: {error}\n"));
    }
    if request.settings.advise_unchecked {
        host.err(&format!("warning: {UNCHECKED_FORCED_UPDATES}\n"));
    }
    if let Some(warning) = &moved.upstream_warning {
        host.err(&format!("warning: {warning}\n"));
    }
    if moved.refused == Refused::InTheWay {
        // As git 2.47 advises; 2.39 gives the advice only when the ref in the way is loose.
        host.err(&format!("error: some local refs could not be updated; try running\n 'git remote prune {remote_name}' to remove any old, conflicting branches\n"));
    }
    // A ref that could not be moved or deleted fails the fetch, as in git.
    let failed_line = (moved.lines.iter())
        .any(|report| matches!(report, Report::Line(line) if line.error.is_some()));
    match moved.refused == Refused::None && moved.in_the_way.is_empty() && !failed_line {
        true => FetchEnd::Done,
        false => FetchEnd::Failed,
    }
}

/// A fetch's messages, as git words them.
struct Words<'a> {
    host: &'a dyn FetchHost,
    server: ServerLines<'a>,
}

impl FetchMessages for Words<'_> {
    fn warning(&self, message: &str) {
        self.host.err(&format!("warning: {message}\n"));
    }

    fn remote_progress(&self, text: &[u8]) {
        (self.server)(text);
    }
}
