//! One module per command, each with its clap arguments and a `run`.

pub mod checkout;
pub mod checkout_index;
pub mod clone;
pub mod commit_graph;
mod detach;
pub mod docs;
pub mod fetch;
pub mod fetch_pack;
pub mod for_each_repo;
pub mod gc;
pub mod index_pack;
pub mod maintenance;
pub mod multi_pack_index;
pub mod pack_objects;
pub mod pack_refs;
pub mod prune;
pub mod push;
pub mod reflog;
mod remote;
pub mod repack;
pub mod serve;
pub mod store;
mod store_node;
pub mod unpack_objects;
pub mod update_server_info;
pub mod upload_pack;
pub mod verify_pack;

use crate::cli::{Cli, Command};
use sluice_object::cancel::Cancel;
use sluice_odb::Config;
use sluice_remote::ConnectOptions;
use sluice_repo::{RepoError, Repository};
use std::path::PathBuf;
use std::process::ExitCode;

/// What every command may need: where it runs, and what stops its long work (a signal).
pub struct Context {
    pub cwd: PathBuf,
    pub cancel: Cancel,
    /// `--bare`: the repository is opened without its work tree.
    pub bare: bool,
}

impl Context {
    /// The repository around the working directory, if there is one.
    pub fn repository(&self) -> anyhow::Result<Option<Repository>> {
        match Repository::discover(&self.cwd) {
            Ok(repo) if self.bare => Ok(Some(repo.without_work_tree())),
            Ok(repo) => Ok(Some(repo)),
            Err(RepoError::NotFound(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The repository the command runs in, which it needs: git's fatal error when there is none.
    /// Its default settings are checked first, as every git command that reads them does (a
    /// value git refuses stops the command, `push.default` among them).
    pub fn require_repository(&self) -> anyhow::Result<Repository> {
        let repo = self.repository()?.ok_or_else(|| {
            anyhow::anyhow!("not a git repository (or any of the parent directories): .git")
        })?;
        sluice_repo::default_config::check(repo.config())?;
        Ok(repo)
    }

    /// How to reach a server, as `config` (and `--upload-pack`) says; a signal stops it.
    pub fn connect_options(
        &self,
        config: &Config,
        upload_pack: Option<&str>,
    ) -> anyhow::Result<ConnectOptions> {
        let mut options = ConnectOptions::from_config(config, upload_pack)?;
        options.cancel = self.cancel.clone();
        Ok(options)
    }

    /// The configuration of `repo`, or the user's and system's when outside a repository.
    pub fn config(&self, repo: Option<&Repository>) -> anyhow::Result<Config> {
        if let Some(repo) = repo {
            return Ok(repo.config().clone());
        }
        Ok(Config::load(None)?)
    }
}

/// `-q`/`--no-quiet` and `--[no-]detach`, as git's gc and maintenance take them (git's own
/// commands pass `--no-quiet` and, from 2.47, `--detach` after a commit or a fetch).
#[derive(Debug, clap::Args)]
pub struct Foreground {
    /// Say nothing.
    #[arg(short, long, overrides_with = "no_quiet")]
    quiet: bool,
    /// Show progress on a terminal.
    #[arg(long, overrides_with = "quiet")]
    no_quiet: bool,
    /// Run in the background: the command returns at once (gc's default with `--auto`,
    /// unless `gc.autoDetach` is false).
    #[arg(long, overrides_with = "no_detach")]
    detach: bool,
    /// Run in the foreground.
    #[arg(long, overrides_with = "detach", hide = true)]
    no_detach: bool,
}

impl Foreground {
    /// `--detach` or `--no-detach`, the last given; `None` for neither.
    pub fn detach(&self) -> Option<bool> {
        either(self.detach, self.no_detach)
    }

    /// The progress to show: on a terminal, none with `-q`.
    pub fn progress(&self) -> crate::progress::TerminalProgress {
        crate::progress::TerminalProgress::new(self.shows_progress())
    }

    /// Whether progress is shown: on a terminal, unless `-q`.
    fn shows_progress(&self) -> bool {
        crate::progress::enabled(!self.is_quiet(), false)
    }

    /// Whether `-q` was given (last of `-q`/`--no-quiet`): git's gc then says nothing.
    pub fn is_quiet(&self) -> bool {
        either(self.quiet, self.no_quiet).unwrap_or(false)
    }

    /// Whether the commands run for the work are told `--quiet`: as given, else when stderr
    /// is no terminal (git's maintenance).
    pub fn quiet(&self) -> bool {
        use std::io::IsTerminal as _;
        either(self.quiet, self.no_quiet).unwrap_or(!std::io::stderr().is_terminal())
    }
}

/// A flag and its `--no-` form (the last given wins, as clap's overrides keep it):
/// `Some(true)`, `Some(false)`, or `None` for neither.
pub(crate) fn either(on: bool, off: bool) -> Option<bool> {
    (on || off).then_some(on)
}

/// A path option's value as given, the empty one too (clap's own path parser refuses it), for
/// options where git gives the empty path a meaning (`--template=`: no templates).
pub(crate) fn any_path() -> impl clap::builder::TypedValueParser<Value = std::path::PathBuf> {
    clap::builder::TypedValueParser::map(
        clap::builder::OsStringValueParser::new(),
        std::path::PathBuf::from,
    )
}

/// The lines of standard input (refs, ids or pack names a command reads with `--stdin*`).
pub(crate) fn stdin_lines() -> anyhow::Result<Vec<String>> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
    Ok(text.lines().map(str::to_owned).collect())
}

/// `path` as git names it in messages: from the top of the work tree (of a bare repository,
/// from its git directory).
pub(crate) fn shown_path<'a>(
    repo: &sluice_repo::Repository,
    path: &'a std::path::Path,
) -> std::path::Display<'a> {
    let top = repo.work_tree().unwrap_or(repo.git_dir());
    path.strip_prefix(top).unwrap_or(path).display()
}

/// Runs the command line's command; `cancel` is set when a signal asks it to stop.
pub fn run(cli: Cli, cancel: Cancel) -> anyhow::Result<ExitCode> {
    if let Some(path) = cli.global.exec_path_query() {
        println!("{}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let cwd = cli.global.apply()?;
    let Some(command) = cli.command else {
        // git's usage on standard output, and 1, for `git` alone.
        <Cli as clap::CommandFactory>::command().print_help()?;
        return Ok(ExitCode::from(1));
    };
    let context = Context {
        cwd,
        cancel,
        bare: cli.global.bare,
    };
    match command {
        Command::IndexPack(args) => index_pack::run(args, &context),
        Command::VerifyPack(args) => verify_pack::run(args, &context),
        Command::Checkout(args) => checkout::run(args, &context),
        Command::CheckoutIndex(args) => checkout_index::run(args, &context),
        Command::UploadPack(args) => upload_pack::run(args, &context),
        Command::ReceivePack(args) => upload_pack::receive(args, &context),
        Command::FetchPack(args) => fetch_pack::run(args, &context),
        Command::Fetch(args) => fetch::run(args, &context),
        Command::Clone(args) => clone::run(args, &context),
        Command::Push(args) => push::run(args, &context),
        Command::CommitGraph(args) => commit_graph::run(args, &context),
        Command::Repack(args) => repack::run(args, &context),
        Command::PackObjects(args) => pack_objects::run(args, &context),
        Command::MultiPackIndex(args) => multi_pack_index::run(args, &context),
        Command::Maintenance(args) => maintenance::run(args, &context),
        Command::ForEachRepo(args) => for_each_repo::run(args, &context),
        Command::PackRefs(args) => pack_refs::run(args, &context),
        Command::Prune(args) => prune::run(args, &context),
        Command::Reflog(args) => reflog::run(args, &context),
        Command::Gc(args) => gc::run(args, &context),
        Command::UpdateServerInfo(args) => update_server_info::run(args, &context),
        Command::UnpackObjects(args) => unpack_objects::run(args, &context),
        Command::SendPack(args) => push::send_pack::run(args, &context),
        Command::Serve(args) => serve::run(args, &context),
        Command::Store(args) => store::run(args, &context),
        Command::Completions { shell } => docs::completions(shell),
        Command::Man { dir } => docs::man(&dir),
    }
}

/// The terminal, for the submodules' recursion: this program, to run in a submodule, and its
/// words on standard output and error.
struct Terminal;

impl sluice_submodule::Host for Terminal {
    fn sluice(&self) -> std::io::Result<std::process::Command> {
        Ok(std::process::Command::new(std::env::current_exe()?))
    }

    fn out(&self, bytes: &[u8]) {
        use std::io::Write as _;
        // As a print: a closed standard output is not the recursion's failure.
        let _ = std::io::stdout().lock().write_all(bytes);
    }

    fn err(&self, bytes: &[u8]) {
        use std::io::Write as _;
        let _ = std::io::stderr().lock().write_all(bytes);
    }
}

/// A size option's value as git takes it (`--max-pack-size`): a non-negative integer with k,
/// m or g; `Err` once git's refusal is said, with its exit code.
fn size_option(option: &str, value: Option<&str>) -> Result<Option<u64>, ExitCode> {
    let Some(text) = value else {
        return Ok(None);
    };
    match sluice_odb::config::parse_int(text).and_then(|n| u64::try_from(n).ok()) {
        Some(bytes) => Ok(Some(bytes)),
        None => {
            eprintln!(
                "error: option `{option}' expects a non-negative integer value with an optional k/m/g suffix"
            );
            Err(ExitCode::from(129))
        }
    }
}

/// The object database `--object-dir` names (commit-graph, multi-pack-index): the repository's
/// own or one of its alternates, as git requires.
fn object_dir_db(
    repo: &sluice_repo::Repository,
    cwd: &std::path::Path,
    given: &std::path::Path,
) -> anyhow::Result<sluice_odb::ObjectDb> {
    match repo.objects().self_or_alternate_at(&cwd.join(given)) {
        Some(found) => Ok(found.clone()),
        None => anyhow::bail!(
            "could not find object directory matching {}",
            given.display()
        ),
    }
}
