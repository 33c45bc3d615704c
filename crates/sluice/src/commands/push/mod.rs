//! `sluice push` (and `send-pack`'s job): git's flags and settings into the push library's
//! plan and options, one call, and git's report.

mod report;
pub mod send_pack;

use super::remote::RemoteLines;
use super::Context;
use crate::progress::TerminalProgress;
use clap::Args;
use sluice_client::fetch::RunError;
use sluice_push::{
    push, GivenSettings, Lease, PushChoice, PushError, PushMessages, PushOptions, PushPlan,
    Settings,
};
use sluice_repo::Repository;
use sluice_submodule::push::{push_submodule, PassedOn};
use std::process::ExitCode;

/// `git push`'s arguments (those this version supports).
#[derive(Debug, Args)]
pub struct PushArgs {
    /// Push every branch (`refs/heads/*`).
    #[arg(long, visible_alias = "branches")]
    all: bool,
    /// Push every ref, forced, and delete the remote's others.
    #[arg(long)]
    mirror: bool,
    /// Push every tag too.
    #[arg(long)]
    tags: bool,
    /// Push the annotated tags of the history pushed.
    #[arg(long)]
    follow_tags: bool,
    /// The refspecs name refs to delete.
    #[arg(short, long)]
    delete: bool,
    /// Allow updates that lose history.
    #[arg(short, long, overrides_with = "no_force")]
    force: bool,
    /// Do not force (undoes an earlier `--force`).
    #[arg(long, overrides_with = "force")]
    no_force: bool,
    /// Force, but only where the remote is where we saw it (`<ref>[:<expect>]`).
    #[arg(long, value_name = "ref[:expect]", num_args = 0..=1, require_equals = true)]
    #[arg(default_missing_value = "")]
    force_with_lease: Vec<String>,
    /// Forget the --force-with-lease given before.
    #[arg(long, overrides_with = "force_with_lease")]
    no_force_with_lease: bool,
    /// With --force-with-lease: force only where the remote-tracking ref's value is in the
    /// local branch's history (push.useForceIfIncludes).
    #[arg(long, overrides_with = "no_force_if_includes")]
    force_if_includes: bool,
    #[arg(long, hide = true)]
    no_force_if_includes: bool,
    /// All refs move or none.
    #[arg(long)]
    atomic: bool,
    /// Send this option to the server's hooks.
    #[arg(short = 'o', long = "push-option", value_name = "option")]
    push_option: Vec<String>,
    /// Say what would be pushed, and push nothing.
    #[arg(short = 'n', long)]
    dry_run: bool,
    /// Machine-readable report on standard output.
    #[arg(long)]
    porcelain: bool,
    /// Record what was pushed as the branches' upstreams.
    #[arg(short = 'u', long)]
    set_upstream: bool,
    /// Delete the remote's refs that no local ref matches.
    #[arg(long)]
    prune: bool,
    /// Say less.
    #[arg(short, long)]
    quiet: bool,
    /// Say more.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Show progress even when not on a terminal.
    #[arg(long)]
    progress: bool,
    /// The command that runs receive-pack on the other side.
    #[arg(long, alias = "exec", value_name = "command")]
    receive_pack: Option<String>,
    /// Send whole objects the server has as delta bases (the default is a thin pack).
    #[arg(long, overrides_with = "thin")]
    no_thin: bool,
    #[arg(long, hide = true)]
    thin: bool,
    /// Skip the pre-push hook.
    #[arg(long, overrides_with = "verify")]
    no_verify: bool,
    #[arg(long, hide = true)]
    verify: bool,
    /// Sign the push with gpg: `true`, `false`, or `if-asked` (when the server asks for a
    /// certificate) (push.gpgSign).
    #[arg(long, value_name = "true|false|if-asked", num_args = 0..=1, require_equals = true)]
    #[arg(default_missing_value = "true", overrides_with = "no_signed")]
    signed: Option<String>,
    #[arg(long, hide = true, overrides_with = "signed")]
    no_signed: bool,
    /// Submodule commits the pushed history needs: make sure a remote has them (`check`),
    /// push them first (`on-demand`), push only them (`only`), or not look (`no`)
    /// (push.recurseSubmodules).
    #[arg(
        long,
        value_name = "check|on-demand|only|no",
        overrides_with = "no_recurse_submodules"
    )]
    recurse_submodules: Option<String>,
    #[arg(long, hide = true, overrides_with = "recurse_submodules")]
    no_recurse_submodules: bool,
    /// Use IPv4 addresses only.
    #[arg(short = '4', long, overrides_with = "ipv6")]
    ipv4: bool,
    /// Use IPv6 addresses only.
    #[arg(short = '6', long, overrides_with = "ipv4")]
    ipv6: bool,
    /// A remote's name or a URL.
    #[arg(value_name = "repository")]
    repository: Option<String>,
    /// What to push, and where.
    #[arg(value_name = "refspec")]
    refspecs: Vec<String>,
}

/// Band 2 as git shows it, and whether progress is shown (the pack's Total line with it).
struct PushStderr(RemoteLines, bool);

impl PushMessages for PushStderr {
    fn remote_progress(&self, bytes: &[u8]) {
        self.0.show(bytes);
    }

    fn negotiation_failed(&self, error: &RunError) {
        // What git's `fetch --negotiate-only` says in its send-pack's place, then the warning.
        match error {
            RunError::NegotiateOnlyNeedsV2 => {
                eprintln!("warning: {error}\nfatal: the remote end hung up unexpectedly")
            }
            error => eprintln!("fatal: {error}"),
        }
        eprintln!("warning: push negotiation failed; proceeding anyway with push");
    }

    fn error(&self, message: &str) {
        eprintln!("error: {message}");
    }

    fn pack_sent(&self, stats: &sluice_generate::PackStats) {
        if self.1 {
            eprintln!("{stats}");
        }
    }
}

/// The leases given, as git reads them: a value that names no object is refused as git's
/// option parser refuses it (its words, 129).
pub(super) fn leases_of(
    repo: &Repository,
    given: &[String],
) -> anyhow::Result<Result<Vec<Lease>, ExitCode>> {
    match given.iter().map(|text| Lease::parse(repo, text)).collect() {
        Ok(leases) => Ok(Ok(leases)),
        Err(e @ PushError::BadLeaseValue(_)) => {
            eprintln!("error: {e}");
            Ok(Err(ExitCode::from(129)))
        }
        Err(e) => Err(e.into()),
    }
}

/// Runs push.
pub fn run(args: PushArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let given = GivenSettings {
        follow_tags: args.follow_tags,
        signed: match args.no_signed {
            true => Some("no".to_owned()),
            false => args.signed.clone(),
        },
        force_if_includes: super::either(args.force_if_includes, args.no_force_if_includes),
        recurse_submodules: match args.no_recurse_submodules {
            true => Some("no".to_owned()),
            false => args.recurse_submodules.clone(),
        },
    };
    let settings = Settings::resolve(repo.config(), &given)?;
    let choice = PushChoice {
        push_default: settings.push_default,
        auto_setup_remote: settings.auto_setup_remote,
        repository: args.repository.as_deref(),
        refspecs: &args.refspecs,
        all: args.all,
        tags: args.tags,
        mirror: args.mirror,
        delete: args.delete,
    };
    // A remote with several URLs is pushed to each in turn; any failure fails the push.
    let mut code = ExitCode::SUCCESS;
    for plan in PushPlan::all_from_config(&repo, &context.cwd, &choice)? {
        let pushed = push_to(&repo, &plan, &settings, &args, context)?;
        if pushed != ExitCode::SUCCESS {
            code = pushed;
        }
    }
    Ok(code)
}

/// Pushes as `plan` says and prints git's report.
fn push_to(
    repo: &Repository,
    plan: &PushPlan,
    settings: &Settings,
    args: &PushArgs,
    context: &Context,
) -> anyhow::Result<ExitCode> {
    let config = repo.config();
    let mut connect = context.connect_options(config, None)?;
    connect.ip_version = sluice_remote::IpVersion::from_flags(args.ipv4, args.ipv6);
    match args.receive_pack.clone().or(plan.receive_pack.clone()) {
        Some(command) => connect.receive_pack = command,
        // Into a local path, Sluice's own receive-pack takes the push (git's runs its own):
        // its checks, and a refused push that leaves no object behind.
        None if matches!(plan.remote.url, sluice_remote::RemoteUrl::Local(_)) => {
            if let Ok(exe) = std::env::current_exe() {
                let exe = sluice_object::shell::quote(&exe.to_string_lossy());
                connect.receive_pack = format!("{exe} receive-pack");
            }
        }
        None => {}
    }
    let leases = match leases_of(repo, &args.force_with_lease)? {
        Ok(leases) => leases,
        Err(code) => return Ok(code),
    };
    let show_progress = crate::progress::enabled(!args.quiet, args.progress);
    let progress = TerminalProgress::new(show_progress);
    let passed = PassedOn {
        dry_run: args.dry_run,
        push_options: &args.push_option,
        remote: plan.remote_name.as_deref(),
        refspecs: &args.refspecs,
    };
    let work_tree = repo.work_tree();
    let push_submodule = |path: &str| {
        work_tree.is_some_and(|top| push_submodule(&super::Terminal, top, path, passed))
    };
    let options = PushOptions {
        force: args.force,
        atomic: args.atomic,
        dry_run: args.dry_run,
        thin: !args.no_thin,
        leases,
        force_if_includes: settings.force_if_includes,
        push_options: args.push_option.clone(),
        follow_tags: settings.follow_tags,
        prune: args.prune,
        set_upstream: args.set_upstream,
        negotiate: settings.negotiate,
        verify: !args.no_verify,
        signed: settings.signed,
        recurse_submodules: settings.recurse_submodules,
        push_submodule: Some(&push_submodule),
        connect,
        remote_progress: show_progress,
        progress: &progress,
    };
    if args.verbose > 0 {
        eprintln!("Pushing to {}", plan.shown);
    }
    let shown = plan.shown.clone();
    let lines = RemoteLines::new(config)?;
    match push(repo, plan, &options, &PushStderr(lines, show_progress)) {
        Ok(outcome) => {
            let said = report::ReportStyle {
                verbose: args.verbose > 0,
                quiet: args.quiet,
                porcelain: args.porcelain,
                send_pack: false,
            };
            report::print(&outcome, &shown, &said)
        }
        Err(
            e @ (PushError::NoSource(_) | PushError::NoRemoteRef(_) | PushError::PrePushDeclined),
        ) => {
            if !matches!(e, PushError::PrePushDeclined) {
                eprintln!("error: {e}");
            }
            eprintln!("error: failed to push some refs to '{shown}'");
            Ok(ExitCode::from(1))
        }
        Err(e @ PushError::UnpushedSubmodules(_)) => {
            eprint!("{e}");
            eprintln!("fatal: Aborting.");
            Ok(ExitCode::from(128))
        }
        Err(e @ PushError::SigningFailed(_)) => {
            if let PushError::SigningFailed(said) = &e {
                eprintln!("error: gpg failed to sign the data:\n{said}");
            }
            eprintln!("fatal: {e}");
            Ok(ExitCode::from(128))
        }
        Err(e @ PushError::SubmodulePushFailed(_)) => {
            eprintln!("{e}");
            eprintln!("fatal: failed to push all needed submodules");
            Ok(ExitCode::from(128))
        }
        Err(e) => Err(e.into()),
    }
}
