//! `sluice index-pack`: `git index-pack` with its flags, outputs and exit codes.

use super::Context;
use crate::progress::TerminalProgress;
use anyhow::{anyhow, bail};
use sluice_object::progress::FirstPhaseEnd;
use sluice_odb::fsck::{Checker, FsckOptions};
use sluice_odb::pack_store::{self, links_present, Destination, StoreError, StoreOptions};
use sluice_odb::Config;
use sluice_pack::{IdxWriteOptions, LinkCheck, Listing, PackIndexer};
use sluice_repo::Repository;
use std::io::Read;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `index-pack`, as git spells them.
#[derive(Debug, clap::Args)]
pub struct IndexPackArgs {
    /// Read the pack from stdin; without <pack-file>, store it in objects/pack under its name.
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
    /// --verify, then list the objects and the delta chain histogram, as `verify-pack -v`.
    #[arg(long)]
    pub verify_stat: bool,
    /// --verify, then print the delta chain histogram, as `verify-pack -s`.
    #[arg(long)]
    pub verify_stat_only: bool,
    /// The pack's header, read already by git's fetch-pack or receive-pack: version, count.
    #[arg(long = "pack_header", value_name = "version,count")]
    pub pack_header: Option<String>,
    /// Exit 1, after storing the pack, unless it holds everything its objects refer to.
    #[arg(long)]
    pub check_self_contained_and_connected: bool,
    /// Write a .promisor file beside the pack, holding <msg> if given.
    #[arg(long, value_name = "msg", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub promisor: Option<String>,
    /// Check every object as fsck does (warnings refuse), and that everything the pack refers
    /// to is in it or in the repository; <msg-id>=<severity> items, comma-separated.
    #[arg(long, value_name = "opts", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub strict: Option<String>,
    /// Check every object as fsck does, with <msg-id>=<severity> items, comma-separated.
    #[arg(long, value_name = "opts", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub fsck_objects: Option<String>,
    /// The hash of the pack's objects: sha1.
    #[arg(long, value_name = "hash")]
    pub object_format: Option<String>,
    /// Write a NUL byte to stderr once the whole pack was read.
    #[arg(long)]
    pub report_end_of_input: bool,
    /// Accepted for git's callers; resolution progress shows with -v.
    #[arg(long, hide = true)]
    pub show_resolving_progress: bool,
    /// Show progress, on a terminal or not.
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
    if args.check_self_contained_and_connected || args.strict.is_some() {
        // A shallow repository's cut (`--shallow-file`'s, for a shallow fetch): the parents of
        // those commits are not links.
        let shallow = repo.map(Repository::shallow_commits).transpose()?;
        let shallow = shallow.unwrap_or_default();
        options.index.links = Some(LinkCheck {
            shallow,
            ..LinkCheck::default()
        });
    }
    if let Some((version, offset)) = args.index_version {
        options.idx.version = version;
        options.idx.off32_limit = offset.unwrap_or(options.idx.off32_limit);
    }
    options.write_rev = args.rev_index || (options.write_rev && !args.no_rev_index);
    Ok(options)
}

/// Runs `index-pack`; what fsck found is printed before the outcome, as git prints it.
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
    if let Some(format) = args.object_format.as_deref().filter(|f| *f != "sha1") {
        bail!("unknown hash algorithm '{format}' (only sha1 is supported yet)");
    }
    let fsck = args.strict.as_deref().or(args.fsck_objects.as_deref());
    let checker = fsck
        .map(|list| -> anyhow::Result<Checker> {
            let mut fsck = FsckOptions::default();
            fsck.parse_list(list, options.index.hash, Path::new("."))?;
            Ok(Checker::new(options.index.hash, fsck))
        })
        .transpose()?;
    let progress = TerminalProgress::new(args.verbose || args.progress);
    // git's fetch-pack waits for a NUL on stderr: the whole pack was read.
    let progress = FirstPhaseEnd::new(&progress, || {
        if args.report_end_of_input {
            let _ = std::io::stderr().write_all(b"\0");
        }
    });
    let mut indexer = (PackIndexer::new(options.index.clone()).progress(&progress))
        .interrupt(context.cancel.flag());
    if let Some(repo) = &repo {
        indexer = indexer.lookup(repo.objects());
    }
    if let Some(checker) = &checker {
        indexer = indexer.check(checker);
    }
    let outcome = index(&args, repo.as_ref(), &indexer, &options);
    for finding in checker.iter().flat_map(Checker::findings) {
        eprintln!("{}: {finding}", finding.level());
    }
    outcome
}

/// Indexes, verifies or receives the pack, as the flags ask.
fn index(
    args: &IndexPackArgs,
    repo: Option<&Repository>,
    indexer: &PackIndexer<'_>,
    options: &StoreOptions,
) -> anyhow::Result<ExitCode> {
    if args.verify || args.verify_stat || args.verify_stat_only {
        let pack_path = args
            .pack_file
            .as_deref()
            .ok_or_else(|| anyhow!("--verify with no packfile name given"))?;
        let pack = pack_store::verify(pack_path, args.index_file.as_deref(), indexer)?;
        let listing = match args.verify_stat_only {
            true => Listing::Histogram,
            false => Listing::Objects,
        };
        if args.verify_stat || args.verify_stat_only {
            pack.write_listing(listing, &mut std::io::stdout().lock())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let destination = Destination {
        pack_file: args.pack_file.clone(),
        index_file: args.index_file.clone(),
        keep: args.keep.clone(),
        promisor: args.promisor.clone(),
    };
    if !args.stdin {
        let Some(pack_path) = args.pack_file.as_deref() else {
            // git's usage, on stderr, with its exit code for usage.
            eprintln!("usage: sluice index-pack [-v] [-o <index-file>] [--keep | --keep=<msg>] [--[no-]rev-index] [--verify] [--strict[=<msg-id>=<severity>...]] [--fsck-objects[=<msg-id>=<severity>...]] (<pack-file> | --stdin [--fix-thin] [<pack-file>])");
            return Ok(ExitCode::from(129));
        };
        let checksum = pack_store::index_file(pack_path, &destination, indexer, options)?;
        writeln!(std::io::stdout().lock(), "{checksum}")?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(repo) = repo else {
        bail!("--stdin requires a git repository");
    };
    let header = (args.pack_header.as_deref())
        .map(sluice_pack::entry::pack_header_option)
        .transpose()?;
    let header = header.as_ref().map_or(&[][..], |h| &h[..]);
    // --strict: everything the pack refers to must be in it or in the repository.
    let present = links_present(repo.objects(), StoreError::NotReceived);
    let stored = pack_store::receive(
        &mut header.chain(std::io::stdin().lock()),
        repo.objects().dir(),
        &destination,
        indexer,
        options,
        None,
        &|pack| match args.strict.is_some() {
            true => present(pack),
            false => Ok(()),
        },
    )?;
    writeln!(std::io::stdout().lock(), "{stored}")?;
    let outside = stored.outside_links.unwrap_or_default();
    if args.check_self_contained_and_connected && !outside.is_empty() {
        // git's callers read 1 as "stored, but not self-contained": they walk the rest.
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
