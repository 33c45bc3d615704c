//! `sluice send-pack`: the plumbing under push. The refs named (or `--all`, `--mirror`) go to
//! the repository at a URL or path, with no remote-tracking refs, pre-push hook or defaults
//! from configuration; a refusal ends it with git's 255. With `--stateless-rpc
//! --helper-status`, as git's HTTP helper starts it, the conversation is relayed through
//! standard input and output and each ref's fate is told on standard output for the helper.

use super::report::{print, ReportStyle};
use super::PushStderr;
use crate::commands::remote::RemoteLines;
use crate::commands::Context;
use clap::Args;
use sluice_push::{
    helper, push, PushChoice, PushOptions, PushPlan, RefStatus, Settings, SignedPush,
};
use std::io::Write as _;
use std::process::ExitCode;

/// `git send-pack`'s arguments.
#[derive(Debug, Args)]
pub struct SendPackArgs {
    /// Every branch.
    #[arg(long)]
    all: bool,
    /// Every ref, and the remote's others deleted.
    #[arg(long)]
    mirror: bool,
    /// Say what would be sent, send nothing.
    #[arg(long)]
    dry_run: bool,
    /// Allow updates that lose history.
    #[arg(long)]
    force: bool,
    /// All refs move or none.
    #[arg(long)]
    atomic: bool,
    /// The command that runs receive-pack on the other side.
    #[arg(long, alias = "exec", value_name = "command")]
    receive_pack: Option<String>,
    /// Say more.
    #[arg(short, long)]
    verbose: bool,
    /// Say nothing but errors; the server is asked for no progress either.
    #[arg(short, long)]
    quiet: bool,
    /// Progress even when standard error is not a terminal.
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    /// No progress (the server is asked for none).
    #[arg(long, overrides_with = "progress")]
    no_progress: bool,
    /// Force, but only where the remote is where we saw it (`<ref>[:<expect>]`).
    #[arg(long, value_name = "ref[:expect]", num_args = 0..=1, require_equals = true)]
    #[arg(default_missing_value = "")]
    force_with_lease: Vec<String>,
    /// With --force-with-lease: force only where the remote-tracking ref's value is in the
    /// local branch's history.
    #[arg(long)]
    force_if_includes: bool,
    /// The conversation is relayed through standard input and output by the program that
    /// started this one (git's HTTP helper); the refs `--stdin` reads come as pkt-lines first.
    #[arg(long)]
    stateless_rpc: bool,
    /// Tell each ref's fate on standard output, a line each, for a remote helper.
    #[arg(long)]
    helper_status: bool,
    /// Send a thin pack.
    #[arg(long)]
    thin: bool,
    /// Sign the push: `true`, `false`, or `if-asked` (when the server asks for a certificate).
    #[arg(long, value_name = "true|false|if-asked", num_args = 0..=1, require_equals = true)]
    #[arg(default_missing_value = "true")]
    signed: Option<String>,
    /// Send this option to the server's hooks.
    #[arg(long = "push-option", value_name = "option")]
    push_option: Vec<String>,
    /// Read more refs, one per line, from standard input.
    #[arg(long)]
    stdin: bool,
    /// The repository: a path or URL.
    #[arg(value_name = "repository")]
    repository: String,
    /// What to send.
    #[arg(value_name = "ref")]
    refs: Vec<String>,
}

/// Runs send-pack.
pub fn run(args: SendPackArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let mut refs = args.refs.clone();
    if args.stdin {
        refs.extend(helper::refs_to_push(std::io::stdin(), args.stateless_rpc)?);
    }
    let choice = PushChoice {
        // As git's send-pack, whatever `push.default` says: with no ref named, the matching.
        push_default: Some(sluice_push::PushDefault::Matching),
        repository: Some(&args.repository),
        refspecs: &refs,
        all: args.all,
        mirror: args.mirror,
        ..PushChoice::default()
    };
    let mut plan = PushPlan::from_config(&repo, &context.cwd, &choice)?;
    // A URL, never a configured remote: nothing here follows what was sent.
    plan.remote_name = None;
    let mut connect = context.connect_options(repo.config(), None)?;
    if let Some(command) = &args.receive_pack {
        connect.receive_pack = command.clone();
    }
    connect.stateless_rpc = args.stateless_rpc;
    let show_progress = crate::progress::enabled(!args.quiet && !args.no_progress, args.progress);
    let progress = crate::progress::TerminalProgress::new(show_progress);
    let leases = match super::leases_of(&repo, &args.force_with_lease)? {
        Ok(leases) => leases,
        Err(code) => return Ok(code),
    };
    let options = PushOptions {
        force: args.force,
        atomic: args.atomic,
        dry_run: args.dry_run,
        thin: args.thin,
        leases,
        force_if_includes: args.force_if_includes,
        push_options: args.push_option.clone(),
        signed: (args.signed.as_deref()).map_or(Ok(SignedPush::No), SignedPush::parse)?,
        negotiate: Settings::negotiate(repo.config())?,
        remote_progress: show_progress,
        ..PushOptions::new(connect, &progress)
    };
    let lines = RemoteLines::new(repo.config())?;
    let outcome = push(&repo, &plan, &options, &PushStderr(lines, show_progress))?;
    if args.helper_status {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(&helper::helper_status(&outcome))?;
        stdout.flush()?;
        // As git's: a refusal fails the command (the helper then says its report and fails
        // too); nothing to push is said.
        let refs = &outcome.refs;
        if refs.iter().any(|r| r.status.refused()) {
            return Ok(ExitCode::from(255));
        }
        if !refs.iter().any(|r| r.status == RefStatus::Ok) && !args.quiet {
            eprintln!("Everything up-to-date");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let shown = ReportStyle {
        verbose: args.verbose,
        quiet: false,
        porcelain: false,
        send_pack: true,
    };
    print(&outcome, &plan.shown, &shown)
}
