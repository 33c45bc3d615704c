//! `sluice checkout-index`: write files from the index to the work tree (or under a prefix).

use super::Context;
use crate::progress::TerminalProgress;
use anyhow::bail;
use sluice_checkout::{checkout_index, CheckoutOptions, IndexCheckout};
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
    /// Record the checked-out files' stat data in the index.
    #[arg(short = 'u', long)]
    pub index: bool,
    /// Write only files that are there already, refreshing them.
    #[arg(short = 'n', long)]
    pub no_create: bool,
    /// Write under <string><path> instead of the work tree.
    #[arg(long, value_name = "string")]
    pub prefix: Option<String>,
    /// Read the paths from standard input, one a line.
    #[arg(long)]
    pub stdin: bool,
    /// With --stdin, the paths end with NUL, not a newline.
    #[arg(short = 'z')]
    pub nul: bool,
    /// Check out entries marked skip-worktree too.
    #[arg(long)]
    pub ignore_skip_worktree_bits: bool,
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
    if args.stdin && args.all {
        bail!("git checkout-index: don't mix '--all' and '--stdin'");
    }
    if args.stdin && !args.files.is_empty() {
        bail!("git checkout-index: don't mix '--stdin' and explicit filenames");
    }
    let mut files: Vec<Vec<u8>> = args.files.iter().map(|f| f.as_bytes().to_vec()).collect();
    if args.stdin {
        let mut input = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut input)?;
        let end = if args.nul { b'\0' } else { b'\n' };
        files.extend(
            (input.split(|&b| b == end))
                .filter(|path| !path.is_empty())
                .map(<[u8]>::to_vec),
        );
    }
    if !args.all && files.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let mut options = CheckoutOptions::from_config(repo.config())?;
    options.write.cancel = context.cancel.clone();
    let request = IndexCheckout {
        paths: (!args.all).then_some(&files[..]),
        force: args.force,
        prefix: args.prefix.as_deref().map(str::as_bytes),
        update_index: args.index,
        no_create: args.no_create,
        skip_worktree_too: args.ignore_skip_worktree_bits,
    };
    let report = checkout_index(&repo, &request, &options, &TerminalProgress::new(false))?;
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
