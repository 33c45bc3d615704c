//! Checking out a commit: into an empty work tree (clone's last step) or over the current one
//! (a branch switch, touching only what differs and refusing to lose local changes).

use crate::attributes::Attributes;
use crate::convert::{AutoCrlf, Conversion, ConvertConfig, CoreEol};
use crate::filter::{FilterDriver, Filters};
use crate::tree::{flatten, FlatTree, TreeFile};
use crate::writer::{write_all, Job, Workers, WriteOptions};
use crate::CheckoutError;
use crate::Objects;
use rayon::prelude::*;
use sluice_index::{read_index, write_index_to, Index, IndexEntry, Stat};
use sluice_object::parse::{parse_commit, parse_tag};
use sluice_object::progress::Progress;
use sluice_object::{ObjectId, ObjectKind};
use sluice_odb::Config;
use sluice_repo::sparse::SparseCone;
use sluice_repo::Repository;
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Settings of a checkout, from configuration (and flags, which the caller applies on top).
#[derive(Debug, Clone)]
pub struct CheckoutOptions {
    /// How files are written.
    pub write: WriteOptions,
    /// `core.autocrlf`, `core.eol`.
    pub convert: ConvertConfig,
    /// `core.ignorecase`: warn about paths that collide on a case-insensitive file system.
    pub ignore_case: bool,
    /// `core.fileMode`: whether a file's executable bit in the work tree is trusted, so that
    /// a file whose bit no longer matches its index entry is a local change.
    pub file_mode: bool,
    /// Filter drivers by name.
    pub filters: HashMap<String, FilterDriver>,
    /// The sparse checkout's cone: files outside it are left out of the work tree and marked
    /// skip-worktree in the index (`None`: every file is checked out).
    pub sparse: Option<SparseCone>,
}

impl CheckoutOptions {
    /// Reads `checkout.workers` (unset: [`Workers::Auto`]; below 1: one per core, as git),
    /// `checkout.thresholdForParallelism` (100), `core.symlinks`, `core.autocrlf`, `core.eol`,
    /// `core.ignorecase`, `core.fileMode` and `filter.*`.
    pub fn from_config(config: &Config) -> Result<Self, CheckoutError> {
        let workers = match config.get_int("checkout.workers")? {
            None => Workers::Auto,
            Some(n) if n < 1 => Workers::PerCore,
            Some(n) => Workers::Exactly(n as usize),
        };
        let threshold = config
            .get_int("checkout.thresholdForParallelism")?
            .map_or(100, |n| n.max(0) as usize);
        let autocrlf = match config
            .get("core.autocrlf")
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("input") => AutoCrlf::Input,
            _ => match config.get_bool("core.autocrlf") {
                Ok(Some(true)) => AutoCrlf::True,
                _ => AutoCrlf::False,
            },
        };
        let eol = match config
            .get("core.eol")
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("crlf") => CoreEol::Crlf,
            Some("lf") => CoreEol::Lf,
            _ => CoreEol::Native,
        };
        let mut filters: HashMap<String, FilterDriver> = HashMap::new();
        for key in ["smudge", "process", "required"] {
            for (name, value) in config.subsections("filter", key) {
                let driver = filters.entry(name).or_default();
                match key {
                    "smudge" => driver.smudge = Some(value),
                    "process" => driver.process = Some(value),
                    _ => {
                        driver.required = matches!(
                            value.to_ascii_lowercase().as_str(),
                            "" | "true" | "yes" | "on" | "1"
                        )
                    }
                }
            }
        }
        Ok(CheckoutOptions {
            write: WriteOptions {
                workers,
                threshold,
                symlinks: config.get_bool("core.symlinks")?.unwrap_or(true),
                fresh: true,
                big_file_threshold: config
                    .get_int("core.bigfilethreshold")?
                    .map_or(512 << 20, |n| n.max(0) as u64),
                cancel: Default::default(),
            },
            convert: ConvertConfig { autocrlf, eol },
            ignore_case: config.get_bool("core.ignorecase")?.unwrap_or(false),
            file_mode: config.get_bool("core.filemode")?.unwrap_or(true),
            filters,
            sparse: None,
        })
    }

    /// [`CheckoutOptions::from_config`] of `repo`'s configuration, with its sparse checkout's
    /// cone.
    pub fn of_repository(repo: &Repository) -> Result<Self, CheckoutError> {
        let mut options = CheckoutOptions::from_config(repo.config())?;
        options.sparse = SparseCone::of(repo)?;
        Ok(options)
    }
}

/// The tree of a commit (peeling annotated tags).
pub fn commit_tree(odb: &dyn Objects, id: &ObjectId) -> Result<ObjectId, CheckoutError> {
    let mut id = *id;
    for _ in 0..16 {
        let (kind, data) = odb.read(&id)?.ok_or_else(|| CheckoutError::MissingObject {
            id,
            path: String::new(),
        })?;
        let bad = |_| CheckoutError::BadCommit(id);
        match kind {
            ObjectKind::Commit => return Ok(parse_commit(odb.hash(), &data).map_err(bad)?.tree),
            ObjectKind::Tag => id = parse_tag(odb.hash(), &data).map_err(bad)?.object,
            ObjectKind::Tree => return Ok(id),
            ObjectKind::Blob => return Err(CheckoutError::BadCommit(id)),
        }
    }
    Err(CheckoutError::BadCommit(id))
}

/// Attributes for a checkout of `tree`: the global file, the tree's own `.gitattributes`
/// (shallowest first), then `info/attributes`.
pub(crate) fn load_attributes(
    repo: &Repository,
    objects: &dyn Objects,
    files: &[TreeFile],
) -> Result<Attributes, CheckoutError> {
    let mut attributes = Attributes::new();
    let global = repo.config().get_path("core.attributesfile");
    let global = global.or_else(|| {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")))?;
        Some(base.join("git/attributes"))
    });
    if let Some(text) = global.and_then(|p| std::fs::read(p).ok()) {
        attributes.add_file(b"", &text);
    }
    let mut files: Vec<&TreeFile> = files
        .iter()
        .filter(|f| {
            f.mode != 0o120000
                && (f.path == b".gitattributes" || f.path.ends_with(b"/.gitattributes"))
        })
        .collect();
    files.sort_by_key(|f| f.path.iter().filter(|&&b| b == b'/').count());
    for file in files {
        if let Some((_, data)) = objects.read(&file.id)? {
            let dir = &file.path[..file.path.len() - b".gitattributes".len()];
            attributes.add_file(dir.strip_suffix(b"/").unwrap_or(dir), &data);
        }
    }
    if let Ok(text) = std::fs::read(repo.git_dir().join("info/attributes")) {
        attributes.add_file(b"", &text);
    }
    Ok(attributes)
}

pub(crate) fn jobs_for<'a>(
    files: impl Iterator<Item = &'a TreeFile>,
    attributes: &Attributes,
    convert: ConvertConfig,
) -> Vec<Job<'a>> {
    let planner = Conversion::planner(attributes, convert);
    let job = |f: &'a TreeFile| Job {
        path: &f.path,
        mode: f.mode,
        id: f.id,
        conversion: planner.for_path(&f.path),
    };
    let files: Vec<&TreeFile> = files.collect();
    // Matching every path against the attributes is ~1 us a path (git/git's tree: 6 ms before
    // the first file is written): on all cores when there are many.
    if files.len() >= PLAN_IN_PARALLEL {
        files.into_par_iter().map(job).collect()
    } else {
        files.into_iter().map(job).collect()
    }
}

/// Paths from which planning conversions is spread over the cores.
const PLAN_IN_PARALLEL: usize = 1024;

/// git's clone warning for paths that only differ in case, when `core.ignorecase` says the
/// file system cannot hold both.
fn case_collisions(tree: &FlatTree) -> Vec<Vec<String>> {
    let mut groups: HashMap<Vec<u8>, Vec<String>> = HashMap::new();
    for f in &tree.files {
        groups
            .entry(f.path.to_ascii_lowercase())
            .or_default()
            .push(String::from_utf8_lossy(&f.path).into_owned());
    }
    let mut out: Vec<Vec<String>> = groups.into_values().filter(|g| g.len() > 1).collect();
    out.sort();
    out
}

pub(crate) fn write_index_file(repo: &Repository, index: &Index) -> Result<(), CheckoutError> {
    // File times come from the kernel's coarse clock; stamping the index from the fine system
    // clock after writing it puts its mtime strictly after every file just written, so git
    // finds no racily-clean entry to re-hash (and a file that does not round-trip through
    // conversion, such as an expanded $Id$, is not reported modified by chance).
    let path = repo.index_path();
    sluice_odb::write_locked_with(&path, true, |out| write_index_to(index, out)).map_err(
        |e| match e {
            sluice_odb::LockError::Io { path, source } => CheckoutError::Io { path, source },
            locked => CheckoutError::Io {
                path,
                source: std::io::Error::other(locked.to_string()),
            },
        },
    )
}

/// The index for a checked-out tree; takes the tree to move its paths rather than copy them,
/// and fills `entries` (emptied first), whose allocation a switch passes on from the old index:
/// fresh memory costs a page fault every 4 KiB (1,900 of them for 100,000 entries).
pub(crate) fn build_index(
    repo: &Repository,
    tree: FlatTree,
    stats: &[Stat],
    mut entries: Vec<IndexEntry>,
) -> Index {
    entries.clear();
    entries.extend(
        (tree.files.into_iter().zip(stats))
            .map(|(f, stat)| IndexEntry::new(f.path, f.mode, f.id, *stat)),
    );
    Index {
        version: 2,
        entries,
        tree: Some(tree.cache_tree),
        extensions: Vec::new(),
        hash: repo.hash(),
    }
}

/// Checks `tree` out into the repository's (empty) work tree and writes the index. Returns
/// the warnings to show (case collisions, failed optional filters).
pub fn checkout_fresh(
    repo: &Repository,
    tree: &ObjectId,
    options: &CheckoutOptions,
    progress: &dyn Progress,
) -> Result<Vec<String>, CheckoutError> {
    checkout_fresh_from(repo, repo.objects(), tree, options, progress)
}

/// [`checkout_fresh`] reading objects from `objects` rather than the repository's database:
/// a clone checks out from the pack it is still resolving, each file as soon as its blob is in.
pub fn checkout_fresh_from(
    repo: &Repository,
    objects: &dyn Objects,
    tree: &ObjectId,
    options: &CheckoutOptions,
    progress: &dyn Progress,
) -> Result<Vec<String>, CheckoutError> {
    let root = repo.work_tree().ok_or(CheckoutError::Bare)?.to_owned();
    let flat = flatten(objects, tree)?;
    let attributes = load_attributes(repo, objects, &flat.files)?;
    let inside = |file: &&TreeFile| {
        options
            .sparse
            .as_ref()
            .is_none_or(|c| c.includes(&file.path))
    };
    let jobs = jobs_for(
        flat.files.iter().filter(inside),
        &attributes,
        options.convert,
    );
    let mut filters = Filters::new(options.filters.clone(), &root);
    // Delayed, as git's: a quick checkout says nothing.
    progress.delayed_phase("Updating files", Some(jobs.len() as u64));
    let written = write_all(
        objects,
        &root,
        &jobs,
        &options.write,
        &mut filters,
        progress,
    )?;
    progress.finish();
    drop(jobs);
    // Outside the sparse checkout: no stat data, and the skip-worktree bit.
    let mut outside = Vec::new();
    let stats: Vec<Stat> = match options.sparse {
        None => written,
        Some(_) => {
            let mut written = written.into_iter();
            (flat.files.iter().enumerate())
                .map(|(i, file)| match inside(&file) {
                    true => written.next().unwrap_or_default(),
                    false => {
                        outside.push(i);
                        Stat::default()
                    }
                })
                .collect()
        }
    };
    let collisions = if options.ignore_case {
        case_collisions(&flat)
    } else {
        Vec::new()
    };
    let mut index = build_index(repo, flat, &stats, Vec::new());
    for i in outside {
        index.entries[i].set_skip_worktree(true);
    }
    write_index_file(repo, &index)?;
    let mut warnings = std::mem::take(&mut filters.warnings);
    if options.ignore_case && !collisions.is_empty() {
        let mut text = String::from("the following paths have collided (e.g. case-sensitive paths\non a case-insensitive filesystem) and only one from the same\ncolliding group is in the working tree:\n");
        for group in collisions {
            for path in group {
                text.push_str(&format!("\n  '{path}'"));
            }
        }
        warnings.push(text);
    }
    Ok(warnings)
}

/// The index file, or an empty one where there is none (a clone made with `--no-checkout`).
pub(crate) fn read_index_or_empty(repo: &Repository) -> Result<Index, CheckoutError> {
    // Mapped, not read: the 9 MB index of a 100,000-file tree read into fresh memory cost a
    // page fault every 4 KiB, a tenth of a switch's time before its first lstat.
    let path = repo.index_path();
    match std::fs::File::open(&path).and_then(|file| sluice_odb::mmap::map(&file)) {
        Ok(bytes) => Ok(read_index(bytes.as_ref(), repo.hash())?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Index {
            version: 2,
            hash: repo.hash(),
            ..Index::default()
        }),
        Err(source) => Err(CheckoutError::Io { path, source }),
    }
}

/// What `checkout-index` has to report.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CheckoutIndexReport {
    /// Lines for stderr, as git words them.
    pub messages: Vec<String>,
    /// A file was not checked out (it exists and differs, or is not in the index): git
    /// exits 1.
    pub failed: bool,
    /// How many files were written (those whose stat data matched their entry were not).
    pub written: usize,
}

/// What `checkout-index` writes, and how.
#[derive(Debug, Clone, Copy, Default)]
pub struct IndexCheckout<'a> {
    /// The entries at these paths; `None` for every entry (`--all`).
    pub paths: Option<&'a [Vec<u8>]>,
    /// Replace a file that exists and differs from its entry (`--force`).
    pub force: bool,
    /// Write under this string prepended to each path (`--prefix=out/`), not the work tree.
    pub prefix: Option<&'a [u8]>,
    /// Record the new files' stat data in the index (`--index`; a checkout of paths does).
    pub update_index: bool,
    /// Write only files that are there already (`--no-create`).
    pub no_create: bool,
    /// Entries marked skip-worktree too (`--ignore-skip-worktree-bits`).
    pub skip_worktree_too: bool,
}

/// `checkout-index`: writes index entries (all, or those at `paths`) to the work tree, or
/// under `prefix` (prepended as a string, as git does: `--prefix=out/`). As git, a file whose
/// stat data matches its entry is left alone, and one that differs is only replaced with
/// `force`; the index is written only when asked to record the files' stat data.
pub fn checkout_index(
    repo: &Repository,
    request: &IndexCheckout<'_>,
    options: &CheckoutOptions,
    progress: &dyn Progress,
) -> Result<CheckoutIndexReport, CheckoutError> {
    let IndexCheckout {
        paths,
        force,
        prefix,
        ..
    } = *request;
    let index_path = repo.index_path();
    let bytes = std::fs::read(&index_path).map_err(|source| CheckoutError::Io {
        path: index_path,
        source,
    })?;
    let mut index = read_index(&bytes, repo.hash())?;
    // The entries to write, with their positions in the index (for their new stat data).
    let (positions, files): (Vec<usize>, Vec<TreeFile>) = index
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.stage() == 0 && (request.skip_worktree_too || !e.skip_worktree()))
        .map(|(position, e)| {
            let file = TreeFile {
                path: e.path.clone(),
                mode: e.mode,
                id: e.id,
            };
            (position, file)
        })
        .unzip();
    let attributes = load_attributes(repo, repo.objects(), &files)?;
    let root = match prefix {
        Some(_) => std::env::current_dir().map_err(|source| CheckoutError::Io {
            path: ".".into(),
            source,
        })?,
        None => repo.work_tree().ok_or(CheckoutError::Bare)?.to_owned(),
    };
    let mut report = CheckoutIndexReport::default();
    let mut selected = Vec::new();
    let wanted: Option<HashSet<&[u8]>> =
        paths.map(|paths| paths.iter().map(Vec::as_slice).collect());
    for (i, file) in files.iter().enumerate() {
        if wanted
            .as_ref()
            .is_some_and(|wanted| !wanted.contains(file.path.as_slice()))
        {
            continue;
        }
        let mut target = prefix.map(<[u8]>::to_vec).unwrap_or_default();
        target.extend_from_slice(&file.path);
        crate::path_check::verify_path(&file.path, file.mode).map_err(|source| {
            CheckoutError::UnsafePath {
                path: String::from_utf8_lossy(&file.path).into_owned(),
                source,
            }
        })?;
        let existing = root.join(OsStr::from_bytes(&target)).symlink_metadata();
        if existing.is_err() && request.no_create {
            continue;
        }
        if let Ok(meta) = existing {
            // A submodule's directory is its own business, as git leaves it.
            if file.mode == 0o160000 && meta.is_dir() {
                continue;
            }
            // As git: a file whose stat data matches its entry is left alone, even with -f.
            let cached = index.entries[positions[i]].stat;
            if cached != Stat::default() && Stat::from_metadata(&meta) == cached {
                continue;
            }
            if !force {
                report.messages.push(format!(
                    "{} already exists, no checkout",
                    String::from_utf8_lossy(&target)
                ));
                report.failed = true;
                continue;
            }
        }
        selected.push((i, target));
    }
    if let Some(paths) = paths {
        let known: HashSet<&[u8]> = files.iter().map(|f| f.path.as_slice()).collect();
        for path in paths {
            if !known.contains(path.as_slice()) {
                report.messages.push(format!(
                    "git checkout-index: {} is not in the cache",
                    String::from_utf8_lossy(path)
                ));
                report.failed = true;
            }
        }
    }
    let mut jobs = jobs_for(
        selected.iter().map(|(i, _)| &files[*i]),
        &attributes,
        options.convert,
    );
    for (job, (_, target)) in jobs.iter_mut().zip(&selected) {
        job.path = target;
    }
    let mut filters = Filters::new(options.filters.clone(), &root);
    let mut write = options.write.clone();
    write.fresh = false;
    // Delayed, as git's: a quick checkout says nothing.
    progress.delayed_phase("Updating files", Some(jobs.len() as u64));
    let stats = write_all(repo.objects(), &root, &jobs, &write, &mut filters, progress)?;
    progress.finish();
    report.messages.extend(
        filters
            .warnings
            .drain(..)
            .map(|w| format!("git checkout-index: {w}")),
    );
    report.written = jobs.len();
    // As git's: a checkout that failed somewhere leaves the index as it was.
    if request.update_index && prefix.is_none() && !jobs.is_empty() && !report.failed {
        for ((i, _), stat) in selected.iter().zip(stats) {
            index.entries[positions[*i]].stat = stat;
        }
        write_index_file(repo, &index)?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workers(text: &str) -> Workers {
        let mut config = Config::default();
        config
            .parse(text, Path::new("config"))
            .expect("valid config");
        CheckoutOptions::from_config(&config)
            .expect("valid options")
            .write
            .workers
    }

    #[test]
    fn checkout_workers_below_one_mean_one_per_core_as_git() {
        assert_eq!(workers(""), Workers::Auto);
        assert_eq!(workers("[checkout]\n\tworkers = 0\n"), Workers::PerCore);
        assert_eq!(workers("[checkout]\n\tworkers = -3\n"), Workers::PerCore);
        assert_eq!(workers("[checkout]\n\tworkers = 3\n"), Workers::Exactly(3));
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(Workers::PerCore.count(), cores);
        assert_eq!(Workers::Auto.count(), (2 * cores).min(16));
        assert_eq!(Workers::Exactly(0).count(), 1);
    }

    #[test]
    fn a_cancelled_checkout_stops_between_files() {
        use sluice_object::cancel::{Cancel, Cancelled};
        use sluice_odb::testing::{git, CancelAt};
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "."]);
        for file in 0..20 {
            std::fs::write(dir.path().join(format!("f{file}")), "text\n").unwrap();
        }
        git(dir.path(), &["add", "."]);
        git(dir.path(), &["commit", "-q", "-m", "files"]);
        git(dir.path(), &["rm", "-q", "--cached", "-r", "."]);
        for file in 0..20 {
            std::fs::remove_file(dir.path().join(format!("f{file}"))).unwrap();
        }
        let repo = Repository::discover(dir.path()).unwrap();
        let head = repo.refs().resolve("HEAD").unwrap().1.unwrap();
        let tree = commit_tree(repo.objects(), &head).unwrap();
        let cancel = Cancel::new();
        let mut options = CheckoutOptions::from_config(repo.config()).unwrap();
        options.write.cancel = cancel.clone();
        let progress = CancelAt {
            at: "Updating files",
            cancel,
        };
        let error = checkout_fresh(&repo, &tree, &options, &progress).unwrap_err();
        assert!(Cancelled::is_cause_of(&error), "{error}");
        assert!(
            !dir.path().join("f0").exists(),
            "a file was written after the stop"
        );
    }
}
