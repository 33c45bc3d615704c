//! `sluice checkout [-f] <commit>`: switch the work tree, index and HEAD to a branch or commit.

use super::Context;
use crate::progress::TerminalProgress;
use anyhow::anyhow;
use sluice_checkout::revision::resolve;
use sluice_checkout::{commit_tree, switch, CheckoutError, CheckoutOptions};
use sluice_odb::refs::reflog_identity as identity;
use sluice_odb::RefTarget;
use std::process::ExitCode;

/// Arguments of `checkout`.
#[derive(Debug, clap::Args)]
pub struct CheckoutArgs {
    /// Throw away local changes.
    #[arg(short = 'f', long)]
    pub force: bool,
    /// Quiet: no messages, no progress.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Show progress even when stderr is not a terminal.
    #[arg(long, overrides_with = "no_progress")]
    pub progress: bool,
    /// Never show progress.
    #[arg(long, overrides_with = "progress")]
    pub no_progress: bool,
    /// The branch or commit to check out.
    #[arg(value_name = "branch|commit")]
    pub target: String,
}

fn subject(repo: &sluice_odb::Repository, id: &sluice_object::ObjectId) -> String {
    let Ok(Some((_, data))) = repo.objects().read(id) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&data);
    text.split_once("\n\n")
        .and_then(|(_, body)| body.lines().next())
        .unwrap_or("")
        .to_owned()
}

/// Runs `checkout`.
pub fn run(args: CheckoutArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context
        .repository()?
        .ok_or_else(|| anyhow!("not a git repository (or any of the parent directories): .git"))?;
    if repo.work_tree().is_none() {
        return Err(CheckoutError::Bare.into());
    }
    let target = resolve(&repo, &args.target)?;
    if let Some(remote) = &target.created_from {
        // git prints this line on standard output.
        println!("branch '{0}' set up to track '{remote}/{0}'.", args.target);
    }
    let tree = commit_tree(repo.objects(), &target.id)?;
    let options = CheckoutOptions::from_config(repo.config())?;
    let show = !args.quiet && !args.no_progress;
    let progress =
        TerminalProgress::new(crate::progress::enabled(show, args.progress && !args.quiet));
    let refs = repo.refs();
    let (head_ref, head_id) = refs.resolve("HEAD")?;
    match switch(&repo, &tree, args.force, &options, &progress) {
        Ok(_) => {}
        Err(e @ (CheckoutError::LocalChanges(_) | CheckoutError::Untracked(_))) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(1));
        }
        Err(e) => return Err(e.into()),
    }
    let null = repo.hash().null_id();
    let old = head_id.unwrap_or(null);
    let from = head_ref
        .strip_prefix("refs/heads/")
        .map_or_else(|| old.to_string(), str::to_owned);
    match &target.branch {
        Some(branch) => {
            refs.write("HEAD", &RefTarget::Symbolic(branch.clone()))?;
            let short = branch.trim_start_matches("refs/heads/");
            let _ = refs.append_log(
                "HEAD",
                &old,
                &target.id,
                &identity(repo.config()),
                &format!("checkout: moving from {from} to {short}"),
            );
            if !args.quiet {
                if target.created_from.is_some() {
                    eprintln!("Switched to a new branch '{short}'");
                } else if head_ref == *branch {
                    eprintln!("Already on '{short}'");
                } else {
                    eprintln!("Switched to branch '{short}'");
                }
            }
        }
        None => {
            refs.write("HEAD", &RefTarget::Id(target.id))?;
            let _ = refs.append_log(
                "HEAD",
                &old,
                &target.id,
                &identity(repo.config()),
                &format!("checkout: moving from {from} to {}", args.target),
            );
            if !args.quiet {
                let hex = target.id.to_string();
                eprintln!(
                    "HEAD is now at {} {}",
                    &hex[..7],
                    subject(&repo, &target.id)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
