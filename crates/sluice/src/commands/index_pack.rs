//! `sluice index-pack`: `git index-pack` with its flags, outputs and exit codes.

use super::output::{replace_extension, Staged};
use super::remote::Receiving;
use super::Context;
use crate::progress::TerminalProgress;
use anyhow::{anyhow, bail, Context as _};
use sluice_object::ObjectId;
use sluice_odb::{Config, Repository};
use sluice_pack::{
    ArrivingPack, IdxWriteOptions, IndexOptions, IndexedPack, PackIndexer, PackSource,
};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
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
    #[arg(long, value_name = "version[,offset]", value_parser = parse_index_version)]
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

fn parse_index_version(value: &str) -> Result<(u32, Option<u64>), String> {
    let (version, offset) = match value.split_once(',') {
        Some((v, o)) => (v, Some(o)),
        None => (value, None),
    };
    let version: u32 = version
        .parse()
        .map_err(|_| format!("bad version '{value}'"))?;
    if version != 1 && version != 2 {
        return Err(format!("unsupported index version {version}"));
    }
    let offset = match offset {
        Some(o) => {
            let parsed = match o.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => o.parse(),
            };
            Some(parsed.map_err(|_| format!("bad offset '{o}'"))?)
        }
        None => None,
    };
    Ok((version, offset))
}

/// Settings of one run, after flags and configuration met (flags win).
struct Settings {
    index: IndexOptions,
    idx: IdxWriteOptions,
    write_rev: bool,
    fsync: bool,
}

fn settings(
    args: &IndexPackArgs,
    config: &Config,
    repo: Option<&Repository>,
) -> anyhow::Result<Settings> {
    let threads = match args.threads {
        Some(n) => n,
        None => config.get_int("pack.threads")?.unwrap_or(0).max(0) as usize,
    };
    let level = config
        .get_int("pack.compression")?
        .or(config.get_int("core.compression")?)
        .unwrap_or(-1);
    let mut idx = IdxWriteOptions::default();
    if let Some(version) = config.get_int("pack.indexversion")? {
        idx.version = if version == 1 { 1 } else { 2 };
    }
    if let Some((version, offset)) = args.index_version {
        idx.version = version;
        if let Some(offset) = offset {
            idx.off32_limit = offset;
        }
    }
    let write_rev = if args.rev_index {
        true
    } else if args.no_rev_index {
        false
    } else {
        config.get_bool("pack.writereverseindex")?.unwrap_or(true)
    };
    let fsync = config
        .get("core.fsync")
        .is_none_or(|v| !v.split(',').any(|c| c.trim() == "none"));
    Ok(Settings {
        index: IndexOptions {
            hash: repo.map_or_else(Default::default, |r| r.hash()),
            threads,
            max_input_size: args.max_input_size.filter(|&n| n > 0),
            fix_thin: args.fix_thin,
            sync_early: fsync,
            links: None,
            compression_level: if (0..=9).contains(&level) {
                level as u32
            } else {
                6
            },
        },
        idx,
        write_rev,
        fsync,
    })
}

/// Runs `index-pack`.
pub fn run(args: IndexPackArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.repository()?;
    let config = context.config(repo.as_ref())?;
    let settings = settings(&args, &config, repo.as_ref())?;
    if args.fix_thin && !args.stdin {
        bail!("the option '--fix-thin' requires '--stdin'");
    }
    if args.verify && args.stdin {
        bail!("options '--verify' and '--stdin' cannot be used together");
    }
    if args.stdin && repo.is_none() {
        bail!("--stdin requires a git repository");
    }
    let progress = TerminalProgress::new(crate::progress::enabled(args.verbose, args.progress));
    let mut indexer = PackIndexer::new(settings.index.clone()).progress(&progress);
    if let Some(repo) = &repo {
        indexer = indexer.lookup(repo.objects());
    }
    if args.verify {
        let pack_path = args
            .pack_file
            .as_deref()
            .ok_or_else(|| anyhow!("--verify with no packfile name given"))?;
        verify(pack_path, args.index_file.as_deref(), &indexer)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.stdin {
        let stdin = std::io::stdin();
        let report = receive(
            &mut stdin.lock(),
            &args,
            repo.as_ref().expect("checked above"),
            &indexer,
            &settings,
            None,
            &|_| Ok(()),
        )?;
        writeln!(std::io::stdout().lock(), "{report}")?;
        Ok(ExitCode::SUCCESS)
    } else {
        let pack_path = args.pack_file.as_deref().ok_or_else(|| {
            anyhow!("usage: sluice index-pack [-v] [-o <index-file>] <pack-file>")
        })?;
        index_file(pack_path, args.index_file.as_deref(), &indexer, &settings)
    }
}

fn index_paths(pack_path: &Path, index_file: Option<&Path>) -> anyhow::Result<(PathBuf, PathBuf)> {
    let idx = match index_file {
        Some(path) => path.to_owned(),
        None => replace_extension(pack_path, "pack", "idx").ok_or_else(|| {
            anyhow!(
                "packfile name '{}' does not end with '.pack'",
                pack_path.display()
            )
        })?,
    };
    let rev = replace_extension(pack_path, "pack", "rev")
        .or_else(|| replace_extension(&idx, "idx", "rev"))
        .unwrap_or_else(|| idx.with_extension("rev"));
    Ok((idx, rev))
}

fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Indexes a pack file in place.
fn index_file(
    pack_path: &Path,
    index_file: Option<&Path>,
    indexer: &PackIndexer<'_>,
    settings: &Settings,
) -> anyhow::Result<ExitCode> {
    let (idx_path, rev_path) = index_paths(pack_path, index_file)?;
    let file = File::open(pack_path)
        .with_context(|| format!("cannot open packfile '{}'", pack_path.display()))?;
    let pack = indexer.index(PackSource::File(&file))?;
    write_indexes(
        &pack,
        None,
        &idx_path,
        settings.write_rev.then_some(&*rev_path),
        settings,
    )?;
    println!("{}", pack.checksum());
    Ok(ExitCode::SUCCESS)
}

/// Stores a pack arriving on `input` in `repo` as `index-pack --stdin [--fix-thin] [--keep]`
/// does, with the repository's settings; returns index-pack's report line (`pack\t<sha>` or `keep\t<sha>`).
pub(crate) fn receive_into(
    input: &mut dyn Read,
    repo: &Repository,
    receiving: Receiving<'_>,
) -> anyhow::Result<String> {
    let Receiving {
        show_progress,
        keep,
        alongside,
        objects,
        connectivity,
    } = receiving;
    let args = IndexPackArgs {
        stdin: true,
        fix_thin: alongside.is_none(),
        keep,
        index_file: None,
        threads: None,
        rev_index: false,
        no_rev_index: false,
        index_version: None,
        max_input_size: None,
        verify: false,
        verbose: false,
        progress: show_progress,
        pack_file: None,
    };
    let mut settings = settings(&args, repo.config(), Some(repo))?;
    settings.index.links = connectivity;
    let progress = TerminalProgress::new(crate::progress::enabled(false, show_progress));
    let objects = objects.unwrap_or(repo.objects());
    let indexer = PackIndexer::new(settings.index.clone())
        .progress(&progress)
        .lookup(objects);
    let connected = |pack: &IndexedPack| match pack.outside_links() {
        Some(outside) => match outside.iter().find(|id| !objects.contains(id)) {
            Some(&missing) => Err(NotConnected { missing }),
            None => Ok(()),
        },
        None => Ok(()),
    };
    receive(
        input, &args, repo, &indexer, &settings, alongside, &connected,
    )
}

/// A received pack refers to an object that neither it nor the repository holds: the server
/// did not send everything the new tips need.
#[derive(Debug)]
pub(crate) struct NotConnected {
    /// The first such object, by id.
    pub(crate) missing: ObjectId,
}

impl std::fmt::Display for NotConnected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "remote did not send all necessary objects ({} is missing)",
            self.missing
        )
    }
}

impl std::error::Error for NotConnected {}

/// Work that reads a received pack's objects while its deltas are resolved.
pub(crate) type Alongside<'a> = dyn Fn(&ArrivingPack<'_>) + Sync + 'a;

/// Receives a pack from `input` into the repository (or into <pack-file>); returns the
/// report line.
fn receive(
    input: &mut dyn Read,
    args: &IndexPackArgs,
    repo: &Repository,
    indexer: &PackIndexer<'_>,
    settings: &Settings,
    alongside: Option<&Alongside<'_>>,
    connected: &dyn Fn(&IndexedPack) -> Result<(), NotConnected>,
) -> anyhow::Result<String> {
    let dir = match &args.pack_file {
        Some(path) => {
            if path.exists() {
                bail!("unable to create '{}': File exists", path.display());
            }
            parent(path).to_owned()
        }
        None => repo.objects().dir().join("pack"),
    };
    let staged = Staged::create(&dir, "tmp_pack_")?;
    let source = PackSource::Stream {
        input,
        pack: staged.file(),
    };
    let pack = match alongside {
        Some(alongside) => indexer.index_alongside(source, alongside)?,
        None => indexer.index(source)?,
    };
    // Checked before anything is put in place: an incomplete pack never enters the repository.
    connected(&pack)?;
    let checksum = pack.checksum();
    let pack_path = match &args.pack_file {
        Some(path) => path.clone(),
        None => dir.join(format!("pack-{checksum}.pack")),
    };
    let (idx_path, rev_path) = index_paths(&pack_path, args.index_file.as_deref())?;
    if let Some(message) = &args.keep {
        write_keep(&pack_path, message)?;
    }
    write_indexes(
        &pack,
        Some((staged, &pack_path)),
        &idx_path,
        settings.write_rev.then_some(&*rev_path),
        settings,
    )?;
    let report = if args.keep.is_some() { "keep" } else { "pack" };
    Ok(format!("{report}\t{checksum}"))
}

fn write_keep(pack_path: &Path, message: &str) -> anyhow::Result<()> {
    let keep = replace_extension(pack_path, "pack", "keep").expect("pack path ends in .pack");
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&keep)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot write keep file '{}'", keep.display()))
        }
    };
    if !message.is_empty() {
        writeln!(file, "{message}")?;
    }
    Ok(())
}

/// Writes `.rev` (if asked) and `.idx`, and puts them in place after the staged pack (if
/// given): the index last, so that a reader that finds it finds everything it describes. The
/// files are written and synced at the same time (the pack's sync was started during
/// resolution); only the renames are ordered.
fn write_indexes(
    pack: &IndexedPack,
    staged_pack: Option<(Staged, &Path)>,
    idx_path: &Path,
    rev_path: Option<&Path>,
    settings: &Settings,
) -> anyhow::Result<()> {
    let order = pack.index_order();
    let synced = |staged: Staged| -> anyhow::Result<Staged> {
        staged.sync(settings.fsync)?;
        Ok(staged)
    };
    let (staged_pack, rev, idx) = std::thread::scope(|s| {
        let staged_pack = staged_pack.map(|(staged, path)| (s.spawn(move || synced(staged)), path));
        let rev = rev_path.map(|rev_path| {
            let order = &order;
            let thread = s.spawn(move || {
                synced(Staged::write(parent(rev_path), "tmp_rev_", |out| {
                    pack.write_rev(order, out).map(|_| ())
                })?)
            });
            (thread, rev_path)
        });
        let idx = Staged::write(parent(idx_path), "tmp_idx_", |out| {
            pack.write_idx(&order, &settings.idx, out).map(|_| ())
        })
        .with_context(|| format!("unable to write index '{}'", idx_path.display()))
        .and_then(synced);
        let joined = |thread: std::thread::ScopedJoinHandle<'_, anyhow::Result<Staged>>| {
            thread
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("a writer thread failed")))
        };
        (
            staged_pack.map(|(thread, path)| (joined(thread), path)),
            rev.map(|(thread, path)| (joined(thread), path)),
            idx,
        )
    });
    for (staged, path) in staged_pack.into_iter().chain(rev) {
        staged?.commit(path, false)?;
    }
    idx?.commit(idx_path, false)
}

/// Indexes `pack_path` and checks that its existing index (and reverse index, if present) is
/// exactly what indexing writes. Returns the indexed pack for listings.
pub fn verify(
    pack_path: &Path,
    index_file: Option<&Path>,
    indexer: &PackIndexer<'_>,
) -> anyhow::Result<IndexedPack> {
    let (idx_path, rev_path) = index_paths(pack_path, index_file)?;
    let existing = std::fs::read(&idx_path).with_context(|| {
        format!(
            "cannot open existing pack idx file for '{}'",
            pack_path.display()
        )
    })?;
    let options = sluice_pack::PackIndex::new(&existing[..], sluice_object::HashKind::Sha1)
        .map_err(|e| anyhow!("index file '{}' is corrupt: {e}", idx_path.display()))?
        .write_options();
    let file = File::open(pack_path)
        .with_context(|| format!("cannot open packfile '{}'", pack_path.display()))?;
    let pack = indexer.index(PackSource::File(&file))?;
    let order = pack.index_order();
    // As git, verification is strict: an object stored twice is an error.
    if let Some(id) = pack.duplicate(&order) {
        bail!("The same object {id} appears twice in the pack");
    }
    let mut expected = Vec::new();
    pack.write_idx(&order, &options, &mut expected)?;
    if expected != existing {
        bail!(
            "index file '{}' does not match pack '{}'",
            idx_path.display(),
            pack_path.display()
        );
    }
    if let Ok(existing_rev) = std::fs::read(&rev_path) {
        let mut expected = Vec::new();
        pack.write_rev(&order, &mut expected)?;
        if expected != existing_rev {
            bail!(
                "reverse index '{}' does not match pack '{}'",
                rev_path.display(),
                pack_path.display()
            );
        }
    }
    Ok(pack)
}
