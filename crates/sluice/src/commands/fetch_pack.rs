//! `sluice fetch-pack`: git's plumbing that receives the objects of some refs from another
//! repository's upload-pack into this one and prints those refs. Protocol v2 over a local path
//! or `file://` URL; there is no negotiation yet, so nothing is sent of what this side has.

use super::index_pack::receive_into;
use super::Context;
use anyhow::{anyhow, bail};
use clap::Args;
use sluice_fetch::{Connection, FetchRequest, RemoteRef};
use sluice_object::ObjectId;
use sluice_odb::Repository;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// `git fetch-pack`'s arguments.
#[derive(Debug, Args)]
pub struct FetchPackArgs {
    /// Fetch all remote refs.
    #[arg(long)]
    all: bool,
    /// The command that runs upload-pack on the other side.
    #[arg(long, value_name = "command", default_value = "git-upload-pack")]
    upload_pack: String,
    /// Keep the received pack (write a `.keep` file beside it).
    #[arg(short = 'k', long)]
    keep: bool,
    /// No progress.
    #[arg(short, long)]
    quiet: bool,
    /// The repository to fetch from: a path or a `file://` URL.
    #[arg(value_name = "repository")]
    repository: String,
    /// The refs to fetch, by full name.
    #[arg(value_name = "refs")]
    refs: Vec<String>,
}

/// Whether `wanted` names `remote`: full names only, as git's fetch-pack takes them.
fn names(wanted: &str, remote: &RemoteRef) -> bool {
    remote.name == wanted
}

/// Fetches `wants` (duplicates allowed) and stores the pack in `repo` as `index-pack --stdin`
/// does, showing the server's progress (asked for when `remote_progress`) as `remote: …`
/// lines; returns index-pack's report line.
pub(crate) fn receive_wanted(
    connection: &mut Connection,
    repo: &Repository,
    mut wants: Vec<ObjectId>,
    remote_progress: bool,
    show_progress: bool,
    keep: Option<String>,
) -> anyhow::Result<String> {
    wants.sort_unstable();
    wants.dedup();
    let mut at_line_start = true;
    let progress = |text: &[u8]| {
        let mut err = std::io::stderr().lock();
        for piece in text.split_inclusive(|&b| b == b'\n' || b == b'\r') {
            if at_line_start {
                let _ = err.write_all(b"remote: ");
            }
            let _ = err.write_all(piece);
            at_line_start = piece.ends_with(b"\n") || piece.ends_with(b"\r");
        }
    };
    let request = FetchRequest {
        wants,
        haves: Vec::new(),
        progress: remote_progress,
    };
    let mut pack = connection.fetch(&request, progress)?;
    receive_into(&mut pack, repo, keep, show_progress)
}

/// Runs fetch-pack.
pub fn run(args: FetchPackArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context
        .repository()?
        .ok_or_else(|| anyhow!("not a git repository (or any of the parent directories): .git"))?;
    if !args.all && args.refs.is_empty() {
        bail!("no refs to fetch: name some, or give --all");
    }
    let path = args
        .repository
        .strip_prefix("file://")
        .unwrap_or(&args.repository);
    let path = context.cwd.join(PathBuf::from(path));
    let mut connection = Connection::local(&path, &args.upload_pack)?;
    let advertised = connection.ls_refs(&[])?;
    let selected: Vec<&RemoteRef> = advertised
        .iter()
        .filter(|r| args.all || args.refs.iter().any(|w| names(w, r)))
        .collect();
    for wanted in &args.refs {
        if !advertised.iter().any(|r| names(wanted, r)) {
            bail!("no such remote ref {wanted}");
        }
    }
    let show_progress = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let keep = args.keep.then(String::new);
    let wants = selected.iter().map(|r| r.id).collect();
    let report = receive_wanted(
        &mut connection,
        &repo,
        wants,
        !args.quiet,
        show_progress,
        keep,
    )?;
    connection.finish()?;
    let mut out = std::io::stdout().lock();
    if args.keep {
        writeln!(out, "{report}")?;
    }
    for remote in selected {
        writeln!(out, "{} {}", remote.id, remote.name)?;
    }
    Ok(ExitCode::SUCCESS)
}
