//! `sluice index-pack`: `git index-pack` with its flags, outputs and exit codes.

use super::Context;
use crate::progress::TerminalProgress;
use anyhow::{anyhow, bail};
use sluice_odb::pack_store::{self, Destination, StoreOptions};
use sluice_odb::{Config, Repository};
use sluice_pack::{IdxWriteOptions, PackIndexer};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `index-pack`, as git spells them.
#[derive(Debug, clap::Args)]
pub struct IndexPackArgs {
    /// Read the pack from standard input; inside a repository without <pack-file>, store it in
    /// objects/pack under its final name.
    #[arg(long)]
    pub stdin: bool,
    /// Complete a thin pack with the bases it lacks, taken from the repository (with --stdin).
    #[arg(long)]
    pub fix_thin: bool,
    /// Write a .keep file beside the pack, holding <msg> if given.
    #[arg(long, value_name = "msg", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub keep: Option<String>,
    /// Write the index to <index-file>.
    #[arg(short = 'o', value_name = "index-file")]
    pub index_file: Option<PathBuf>,
    /// Threads for delta resolution (0: one per core); default pack.threads.
    #[arg(long, value_name = "n")]
    pub threads: Option<usize>,
    /// Write a reverse index (.rev); default pack.writeReverseIndex, true.
    #[arg(long, overrides_with = "no_rev_index")]
    pub rev_index: bool,
    /// Do not write a reverse index.
    #[arg(long, overrides_with = "rev_index")]
    pub no_rev_index: bool,
    /// Index version (1 or 2), optionally with the offset above which 64-bit offsets are used.
    #[arg(long, value_name = "version[,offset]", value_parser = IdxWriteOptions::parse_version)]
    pub index_version: Option<(u32, Option<u64>)>,
    /// Refuse packs larger than this many bytes.
    #[arg(long, value_name = "bytes")]
    pub max_input_size: Option<u64>,
    /// Check the pack against its existing index instead of writing one.
    #[arg(long)]
    pub verify: bool,
    /// Show progress on a terminal.
    #[arg(short = 'v')]
    pub verbose: bool,
    /// Show progress even when stderr is not a terminal.
    #[arg(long)]
    pub progress: bool,
    /// The pack to index (or, with --stdin, where to store it).
    #[arg(value_name = "pack-file")]
    pub pack_file: Option<PathBuf>,
}

/// The options of one run: the repository's configuration, then the flags (flags win).
fn options(
    args: &IndexPackArgs,
    config: &Config,
    repo: Option<&Repository>,
) -> anyhow::Result<StoreOptions> {
    let hash = repo.map_or_else(Default::default, |r| r.hash());
    let mut options = StoreOptions::from_config(config, hash)?;
    if let Some(threads) = args.threads {
        options.index.threads = threads;
    }
    options.index.max_input_size = args.max_input_size.filter(|&n| n > 0);
    options.index.fix_thin = args.fix_thin;
    if let Some((version, offset)) = args.index_version {
        options.idx.version = version;
        if let Some(offset) = offset {
            options.idx.off32_limit = offset;
        }
    }
    if args.rev_index {
        options.write_rev = true;
    } else if args.no_rev_index {
        options.write_rev = false;
    }
    Ok(options)
}

/// Runs `index-pack`.
pub fn run(args: IndexPackArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.repository()?;
    let config = context.config(repo.as_ref())?;
    let options = options(&args, &config, repo.as_ref())?;
    if args.fix_thin && !args.stdin {
        bail!("the option '--fix-thin' requires '--stdin'");
    }
    if args.verify && args.stdin {
        bail!("options '--verify' and '--stdin' cannot be used together");
    }
    let progress = TerminalProgress::new(crate::progress::enabled(args.verbose, args.progress));
    let mut indexer = PackIndexer::new(options.index.clone()).progress(&progress);
    if let Some(repo) = &repo {
        indexer = indexer.lookup(repo.objects());
    }
    if args.verify {
        let pack_path = args
            .pack_file
            .as_deref()
            .ok_or_else(|| anyhow!("--verify with no packfile name given"))?;
        pack_store::verify(pack_path, args.index_file.as_deref(), &indexer)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.stdin {
        let Some(repo) = &repo else {
            bail!("--stdin requires a git repository");
        };
        let destination = Destination {
            pack_file: args.pack_file.clone(),
            index_file: args.index_file.clone(),
            keep: args.keep.clone(),
        };
        let stdin = std::io::stdin();
        let stored = pack_store::receive(
            &mut stdin.lock(),
            repo.objects().dir(),
            &destination,
            &indexer,
            &options,
            None,
            &|_| Ok(()),
        )?;
        writeln!(std::io::stdout().lock(), "{stored}")?;
    } else {
        let pack_path = args.pack_file.as_deref().ok_or_else(|| {
            anyhow!("usage: sluice index-pack [-v] [-o <index-file>] <pack-file>")
        })?;
        let checksum =
            pack_store::index_file(pack_path, args.index_file.as_deref(), &indexer, &options)?;
        writeln!(std::io::stdout().lock(), "{checksum}")?;
    }
    Ok(ExitCode::SUCCESS)
}
