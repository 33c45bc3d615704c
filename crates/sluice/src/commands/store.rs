//! `sluice store`: repositories in object storage, shared by many `sluice serve --store`
//! nodes. A repository's URL is the store's and its name: `s3://<bucket>/<prefix>/<name>.git`;
//! credentials and endpoint come from the standard `AWS_*` variables.

use super::Context;
use crate::progress::TerminalProgress;
use clap::{Args, Subcommand};
use sluice_store::{Bucket, Manifest, Scratch, StoreUrl, StoredRepo};
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
    /// Compact a stored repository into one pack with a bitmap (what no ref reaches into a
    /// cruft pack) and write the full bundle that clients may download (bundle-uri).
    Maintain {
        /// The repository's URL.
        url: String,
        /// Only an incremental bundle of what changed since the newest bundle, no compaction.
        #[arg(long)]
        incremental: bool,
        /// No progress.
        #[arg(short, long)]
        quiet: bool,
        /// Progress even when stderr is not a terminal.
        #[arg(long)]
        progress: bool,
    },
    /// Delete the packs and bundles no generation younger than the grace period needs.
    Gc {
        /// The repository's URL.
        url: String,
        /// Seconds a pack stays after it left the manifest (longer than the longest request
        /// and than the life of the bundle URLs handed out).
        #[arg(long, value_name = "seconds", default_value_t = 7200)]
        grace: u64,
        /// Say nothing.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Check a stored repository: every file the manifest names is there, every pack matches
    /// its index, everything the refs reach is present.
    Fsck {
        /// The repository's URL.
        url: String,
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
        /// No progress.
        #[arg(short, long)]
        quiet: bool,
        /// Progress even when stderr is not a terminal.
        #[arg(long)]
        progress: bool,
    },
}

/// Runs a `store` subcommand; each says what it did on stderr unless `-q`.
pub fn run(args: StoreArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let said = match args.command {
        StoreCommand::Init {
            url,
            initial_branch,
        } => {
            let manifest = Manifest::new_repository(&initial_branch);
            Some(summary(&url, &open(&url)?.create(manifest)?))
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
            let manifest = sluice_store::import(&local, &repo, &staging, &shown)?;
            (!quiet).then(|| summary(&url, &manifest))
        }
        StoreCommand::Maintain {
            url,
            incremental,
            quiet,
            progress,
        } => {
            let repo = open(&url)?;
            let shown = TerminalProgress::new(crate::progress::enabled(!quiet, progress));
            let work = Scratch::new(&std::env::temp_dir(), "sluice-maintain")?;
            let said = match incremental {
                true => {
                    let node = sluice_store::Node::new(repo.bucket().clone(), work.path().into());
                    sluice_store::bundle_increment(&node, &repo, &shown).map(|bundle| {
                        let bundle = bundle.unwrap_or_else(|| "none: nothing changed".into());
                        format!("{url}: incremental bundle {bundle}")
                    })
                }
                false => sluice_store::maintain(&repo, work.path(), &shown, &context.cancel).map(
                    |done| {
                        let bundle = done.bundle.as_deref().unwrap_or("none");
                        let replaced = format!("{} packs replaced, bundle {bundle}", done.replaced);
                        format!("{}; {replaced}", summary(&url, &done.manifest))
                    },
                ),
            };
            let said = said?;
            (!quiet).then_some(said)
        }
        StoreCommand::Gc { url, grace, quiet } => {
            let repo = open(&url)?;
            let swept = sluice_store::gc(&repo, std::time::Duration::from_secs(grace))?;
            (!quiet).then(|| {
                format!(
                    "{url}: {} objects deleted, {} unnamed but younger than the grace period",
                    swept.deleted, swept.young
                )
            })
        }
        StoreCommand::Fsck { url, progress } => {
            let repo = open(&url)?;
            let shown = TerminalProgress::new(crate::progress::enabled(true, progress));
            let work = Scratch::new(&std::env::temp_dir(), "sluice-fsck")?;
            let checked = sluice_store::fsck(&repo, work.path(), &shown)?;
            for problem in &checked.problems {
                eprintln!("error: {problem}");
            }
            if !checked.problems.is_empty() {
                return Ok(ExitCode::from(1));
            }
            Some(format!(
                "{url}: {} packs and {} objects checked, no problem",
                checked.packs, checked.objects
            ))
        }
        StoreCommand::Export {
            url,
            dest,
            quiet,
            progress,
        } => {
            let shown = TerminalProgress::new(crate::progress::enabled(!quiet, progress));
            let dest = context.cwd.join(dest);
            let manifest = sluice_store::export(&open(&url)?, &dest, &shown)?;
            (!quiet).then(|| summary(&url, &manifest))
        }
    };
    if let Some(said) = said {
        eprintln!("{said}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What a repository now is, in one line.
fn summary(url: &str, manifest: &Manifest) -> String {
    format!(
        "{url}: generation {}, {} refs, {} packs",
        manifest.generation,
        manifest.refs.len(),
        manifest.packs.len()
    )
}

/// The stored repository a URL names.
fn open(url: &str) -> anyhow::Result<StoredRepo> {
    let (store, name) = StoreUrl::of_repository(url)?;
    Ok(StoredRepo::new(&Bucket::open(&store)?, &name)?)
}
