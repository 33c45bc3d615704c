//! `sluice send-pack`: the plumbing under push. The refs named (or `--all`, `--mirror`) go to
//! the repository at a URL or path, with no remote-tracking refs, pre-push hook or defaults
//! from configuration; a refusal ends it with git's 255.

use super::report::{print, ReportStyle};
use super::PushStderr;
use crate::commands::remote::RemoteLines;
use crate::commands::Context;
use clap::Args;
use sluice_client::push::{push, PushChoice, PushOptions, PushPlan, Settings, SignedPush};
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
        let text = std::io::read_to_string(std::io::stdin())?;
        refs.extend(text.lines().filter(|l| !l.is_empty()).map(str::to_owned));
    }
    let choice = PushChoice {
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
    let progress = crate::progress::TerminalProgress::new(false);
    let options = PushOptions {
        force: args.force,
        atomic: args.atomic,
        dry_run: args.dry_run,
        thin: args.thin,
        push_options: args.push_option.clone(),
        signed: (args.signed.as_deref()).map_or(Ok(SignedPush::No), SignedPush::parse)?,
        negotiate: Settings::negotiate(repo.config())?,
        ..PushOptions::new(connect, &progress)
    };
    let lines = RemoteLines::new(repo.config())?;
    let outcome = push(&repo, &plan, &options, &PushStderr(lines))?;
    let shown = ReportStyle {
        verbose: args.verbose,
        quiet: false,
        porcelain: false,
        send_pack: true,
    };
    print(&outcome, &repo, &plan.shown, &shown)
}
