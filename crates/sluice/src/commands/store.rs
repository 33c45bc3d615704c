//! `sluice store`: repositories in object storage, shared by many `sluice serve --store`
//! nodes. A repository's URL is the store's and its name: `s3://<bucket>/<prefix>/<name>.git`;
//! credentials and endpoint come from the standard `AWS_*` variables.

use super::Context;
use crate::progress::TerminalProgress;
use clap::{Args, Subcommand};
use sluice_store::{Bucket, Manifest, StoreUrl, StoredRepo};
use std::path::PathBuf;
use std::process::ExitCode;

/// `sluice store`'s arguments.
#[derive(Debug, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(Debug, Subcommand)]
enum StoreCommand {
    /// Make an empty repository in a store.
    Init {
        /// The repository's URL, `s3://<bucket>/<prefix>/<name>.git`.
        url: String,
        /// The branch HEAD names.
        #[arg(short = 'b', long, value_name = "name", default_value = "main")]
        initial_branch: String,
    },
    /// Copy a local repository (its refs, HEAD and what they reach) into a new one in a store.
    Import {
        /// The new repository's URL, `s3://<bucket>/<prefix>/<name>.git`.
        url: String,
        /// The local repository.
        #[arg(default_value = ".")]
        dir: PathBuf,
        /// No progress.
        #[arg(short, long)]
        quiet: bool,
        /// Progress even when stderr is not a terminal.
        #[arg(long)]
        progress: bool,
    },
    /// Copy a stored repository into a new local bare repository.
    Export {
        /// The repository's URL.
        url: String,
        /// The new bare repository.
        dest: PathBuf,
    },
}

/// Runs a `store` subcommand.
pub fn run(args: StoreArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let (url, manifest) = match args.command {
        StoreCommand::Init {
            url,
            initial_branch,
        } => {
            let repo = open(&url)?;
            let manifest = Manifest {
                head: format!("refs/heads/{initial_branch}"),
                ..Manifest::default()
            };
            (url, repo.create(manifest)?)
        }
        StoreCommand::Import {
            url,
            dir,
            quiet,
            progress,
        } => {
            let repo = open(&url)?;
            let local = sluice_repo::Repository::open_served(&context.cwd.join(&dir), false)?;
            let shown = TerminalProgress::new(crate::progress::enabled(!quiet, progress));
            let staging = std::env::temp_dir();
            (url, sluice_store::import(&local, &repo, &staging, &shown)?)
        }
        StoreCommand::Export { url, dest } => {
            let repo = open(&url)?;
            (url, sluice_store::export(&repo, &context.cwd.join(dest))?)
        }
    };
    eprintln!(
        "{url}: generation {}, {} refs, {} packs",
        manifest.generation,
        manifest.refs.len(),
        manifest.packs.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// The stored repository a URL names.
fn open(url: &str) -> anyhow::Result<StoredRepo> {
    let (store, name) = StoreUrl::of_repository(url)?;
    Ok(StoredRepo::new(&Bucket::open(&store)?, &name)?)
}
