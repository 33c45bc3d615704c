//! Command-line parsing, first layer: clap structures that mirror git's flags. Each command
//! turns its arguments into the options its library takes.

use crate::commands::commit_graph::CommitGraphArgs;
use crate::commands::gc::GcArgs;
use crate::commands::maintenance::MaintenanceArgs;
use crate::commands::multi_pack_index::MultiPackIndexArgs;
use crate::commands::pack_objects::PackObjectsArgs;
use crate::commands::pack_refs::PackRefsArgs;
use crate::commands::prune::PruneArgs;
use crate::commands::push::{send_pack::SendPackArgs, PushArgs};
use crate::commands::reflog::ReflogArgs;
use crate::commands::repack::RepackArgs;
use crate::commands::unpack_objects::UnpackObjectsArgs;
use crate::commands::update_server_info::UpdateServerInfoArgs;
use crate::commands::upload_pack::{ServiceArgs, UploadPackArgs};
use crate::commands::{checkout::CheckoutArgs, checkout_index::CheckoutIndexArgs};
use crate::commands::{clone::CloneArgs, fetch::FetchArgs, fetch_pack::FetchPackArgs};
use crate::commands::{index_pack::IndexPackArgs, serve::ServeArgs, verify_pack::VerifyPackArgs};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// A Git-compatible engine that moves repositories fast.
#[derive(Debug, Parser)]
// git takes an option given twice (`-q -q`, `--force --force`): the last one counts. Counted
// and repeated options (`-v -v`, `-c a -c b`) still add up.
#[command(name = "sluice", version, about, args_override_self = true)]
pub struct Cli {
    /// The options before the command's name.
    #[command(flatten)]
    pub global: crate::global::GlobalArgs,
    /// The command to run (none: `--exec-path` alone, or the usage).
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Command {
    /// Whether the command's peak memory is a received pack's tables (index-pack and the
    /// commands that receive packs): the commands run with the allocator's thresholds fixed
    /// (see `allocator`), which the delta search of repack must not be.
    pub fn receives_packs(&self) -> bool {
        matches!(
            self,
            Command::IndexPack(_)
                | Command::UnpackObjects(_)
                | Command::ReceivePack(_)
                | Command::FetchPack(_)
                | Command::Fetch(_)
                | Command::Clone(_)
        )
    }
}

/// Sluice's commands, named after the git commands they replace.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a pack index (.idx, .rev) for a pack, from a file or from standard input.
    IndexPack(IndexPackArgs),
    /// Check a pack and its index, optionally listing every object.
    VerifyPack(VerifyPackArgs),
    /// Switch the work tree, index and HEAD to a branch or commit.
    Checkout(CheckoutArgs),
    /// Write files from the index into the work tree.
    CheckoutIndex(CheckoutIndexArgs),
    /// Send objects a fetching client asks for (over standard input and output).
    UploadPack(UploadPackArgs),
    /// Take a push: the objects and ref updates a client sends (over standard input and output).
    ReceivePack(ServiceArgs),
    /// Receive the objects of some refs from another repository.
    FetchPack(FetchPackArgs),
    /// Download objects and refs from another repository.
    Fetch(FetchArgs),
    /// Make a new repository from another, over any transport git has.
    Clone(CloneArgs),
    /// Update another repository's refs, sending the objects they need.
    Push(PushArgs),
    /// Send refs and their objects to a repository (the plumbing under push).
    SendPack(SendPackArgs),
    /// Write the file that lets walks skip reading commits.
    CommitGraph(CommitGraphArgs),
    /// Pack everything reachable into one pack, with its bitmap.
    Repack(RepackArgs),
    /// Write a pack of the objects (or revisions) listed on standard input.
    PackObjects(PackObjectsArgs),
    /// Write or check the index of every pack in the object directory.
    MultiPackIndex(MultiPackIndexArgs),
    /// Run maintenance tasks (gc, commit-graph, loose-objects, pack-refs).
    Maintenance(MaintenanceArgs),
    /// Run a command in every repository a setting lists (`maintenance.repo`).
    ForEachRepo(crate::commands::for_each_repo::ForEachRepoArgs),
    /// Move loose refs into packed-refs.
    PackRefs(PackRefsArgs),
    /// Remove the loose objects nothing reaches.
    Prune(PruneArgs),
    /// Expire old reflog entries.
    Reflog(ReflogArgs),
    /// Pack refs, expire reflogs, repack, prune and write the commit-graph.
    Gc(GcArgs),
    /// Write the files dumb HTTP clients read (info/refs, objects/info/packs).
    UpdateServerInfo(UpdateServerInfoArgs),
    /// Write a pack from standard input as loose objects.
    UnpackObjects(UnpackObjectsArgs),
    /// Serve every repository under a directory (or in a store) over smart HTTP and git://.
    Serve(ServeArgs),
    /// Repositories in object storage: init, import, export, maintain, fsck, gc.
    Store(crate::commands::store::StoreArgs),
    /// Print a shell's completion script for sluice.
    Completions {
        /// The shell (bash, zsh, fish, elvish, powershell).
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write sluice's man pages (sluice.1, sluice-<command>.1) into a directory.
    Man {
        /// Where the pages go.
        #[arg(value_name = "dir")]
        dir: PathBuf,
    },
}

/// Parses argv; on a usage error says it as git does and returns git's exit code for usage
/// (129): the first line in git's words (``error: unknown option `no-ipv4'``, ``error: option
/// `depth' requires a value``, ``error: unknown subcommand: `bogus'``), then the usage line.
/// Errors git has no words for are clap's.
pub fn parse() -> Result<Cli, ExitCode> {
    // git's `--end-of-options` ends the options as `--` does (git passes it to the fetches it
    // runs for `fetch --all -j`).
    let mut ended = false;
    let args = std::env::args_os().map(|arg| {
        let end = !ended && (arg == "--end-of-options" || arg == "--");
        ended |= end;
        match end {
            true => std::ffi::OsString::from("--"),
            false => arg,
        }
    });
    Cli::try_parse_from(args).map_err(|e| {
        use clap::error::ErrorKind;
        match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            _ => {}
        }
        if let Some(name) = unknown_command(&e) {
            eprintln!("sluice: '{name}' is not a sluice command. See 'sluice --help'.");
            return ExitCode::from(1);
        }
        if let Some(words) = missing_words(&e) {
            let usage = e
                .get(clap::error::ContextKind::Usage)
                .map(|u| u.to_string());
            let usage = usage.as_deref().unwrap_or_default();
            eprintln!(
                "{words}\n\nusage: {}",
                usage.trim().trim_start_matches("Usage: ")
            );
            return ExitCode::from(129);
        }
        // git says a value it cannot read in one line, without the usage.
        let usage = match e.kind() {
            ErrorKind::ValueValidation => None,
            _ => e.get(clap::error::ContextKind::Usage),
        };
        match (git_words(&e), usage) {
            (Some(words), Some(usage)) => {
                let usage = usage.to_string();
                let usage = usage.trim().trim_start_matches("Usage: ");
                eprintln!("{words}\nusage: {usage}\n\nFor more information, try '--help'.");
            }
            // As git: a value missing is said in one line.
            (Some(words), None) => eprintln!("{words}"),
            (None, _) => {
                let _ = e.print();
            }
        }
        ExitCode::from(129)
    })
}

/// The command named on the command line when Sluice has none of that name (git says so in
/// its own words, exit code 1), as against an unknown subcommand of a command.
fn unknown_command(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::String(name)) = e.get(ContextKind::InvalidSubcommand) else {
        return None;
    };
    // The usage of the program itself, not of one of its commands: `sluice [OPTIONS] …`.
    let usage = e.get(ContextKind::Usage)?.to_string();
    let after = usage
        .trim()
        .trim_start_matches("Usage: ")
        .split_whitespace()
        .nth(1)?;
    after.starts_with('[').then(|| name.clone())
}

/// The first line git's option parser gives for `e`, when it has one.
fn git_words(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if let Some(ContextValue::String(name)) = e.get(ContextKind::InvalidSubcommand) {
        return Some(format!("error: unknown subcommand: `{name}'"));
    }
    let ContextValue::String(arg) = e.get(ContextKind::InvalidArg)? else {
        return None;
    };
    match e.kind() {
        ErrorKind::UnknownArgument => match arg.strip_prefix("--") {
            Some(long) => Some(format!("error: unknown option `{long}'")),
            None if arg.starts_with('-') => Some(format!(
                "error: unknown switch `{}'",
                arg.trim_start_matches('-')
            )),
            None => None,
        },
        // A value missing: clap names the option as `--depth <depth>`.
        ErrorKind::InvalidValue if matches!(e.get(ContextKind::InvalidValue), Some(ContextValue::String(v)) if v.is_empty()) =>
        {
            let option = arg.split_whitespace().next()?;
            match option.strip_prefix("--") {
                Some(long) => Some(format!("error: option `{long}' requires a value")),
                None => Some(format!(
                    "error: switch `{}' requires a value",
                    option.trim_start_matches('-')
                )),
            }
        }
        // A number option given something else (`--deepen=abc`).
        ErrorKind::ValueValidation if number_expected(e) => {
            let option = arg.split_whitespace().next()?;
            match option.strip_prefix("--") {
                Some(long) => Some(format!("error: option `{long}' expects a numerical value")),
                None => Some(format!(
                    "error: switch `{}' expects a numerical value",
                    option.trim_start_matches('-')
                )),
            }
        }
        _ => None,
    }
}

/// Whether `e` is a value that is no number given to an option that takes one.
fn number_expected(e: &clap::Error) -> bool {
    let source = std::error::Error::source(e);
    source.is_some_and(|source| source.is::<std::num::ParseIntError>())
}

/// git's words for a command line that lacks what a command needs, where git has words of
/// its own for it (else clap's are said).
fn missing_words(e: &clap::Error) -> Option<&'static str> {
    if e.kind() != clap::error::ErrorKind::MissingRequiredArgument {
        return None;
    }
    let usage = e.get(clap::error::ContextKind::Usage)?.to_string();
    let command = usage
        .trim()
        .trim_start_matches("Usage: ")
        .split_whitespace()
        .nth(1)?;
    match command {
        "clone" => Some("fatal: You must specify a repository to clone."),
        _ => None,
    }
}
