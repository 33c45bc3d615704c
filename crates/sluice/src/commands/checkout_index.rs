//! `sluice checkout-index`: write files from the index to the work tree (or under a prefix).

use super::Context;
use crate::progress::TerminalProgress;
use anyhow::bail;
use sluice_checkout::{checkout_index, CheckoutOptions};
use std::process::ExitCode;

/// Arguments of `checkout-index`.
#[derive(Debug, clap::Args)]
pub struct CheckoutIndexArgs {
    /// Check out every file in the index.
    #[arg(short = 'a', long)]
    pub all: bool,
    /// Overwrite existing files.
    #[arg(short = 'f', long)]
    pub force: bool,
    /// Be quiet about files that exist or are not in the index.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Write under <string><path> instead of the work tree.
    #[arg(long, value_name = "string")]
    pub prefix: Option<String>,
    /// Files to check out.
    #[arg(value_name = "file")]
    pub files: Vec<String>,
}

/// Runs `checkout-index`.
pub fn run(args: CheckoutIndexArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    if args.all && !args.files.is_empty() {
        bail!("git checkout-index: don't mix '--all' and explicit filenames");
    }
    if !args.all && args.files.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let mut options = CheckoutOptions::from_config(repo.config())?;
    options.write.cancel = context.cancel.clone();
    let paths: Option<Vec<Vec<u8>>> =
        (!args.all).then(|| args.files.iter().map(|f| f.as_bytes().to_vec()).collect());
    let progress = TerminalProgress::new(false);
    let report = checkout_index(
        &repo,
        paths.as_deref(),
        args.force,
        args.prefix.as_deref().map(str::as_bytes),
        &options,
        &progress,
    )?;
    if !args.quiet {
        for message in &report.messages {
            eprintln!("{message}");
        }
    }
    Ok(if report.failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
