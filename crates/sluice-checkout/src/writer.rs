//! The parallel working-tree writer. Workers take contiguous ranges of entries (directory
//! locality: interleaving small chunks between threads measured ~40% slower here) and steal
//! halves of each other's ranges when they run dry; each reads its blob, converts it, creates
//! the leading directories it needs and writes the file, returning the stat data for the index.
//! Entries with an external filter are written sequentially, as git does.

use crate::at_dir::{self, AtDir};
use crate::convert::Conversion;
use crate::filter::Filters;
use crate::CheckoutError;
use crate::Objects;
use rayon::prelude::*;
use sluice_index::Stat;
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_object::ObjectId;
use sluice_odb::ObjectContent;
use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One file to write.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    /// Path relative to the work tree.
    pub path: &'a [u8],
    /// Entry mode.
    pub mode: u32,
    /// The blob (or, for a gitlink, the commit).
    pub id: ObjectId,
    /// How to convert it.
    pub conversion: Conversion,
}

/// How many threads write files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workers {
    /// Sluice's choice (`checkout.workers` unset): two per core, up to 16. Creating a file
    /// blocks on its directory's lock and in the file system, and a second thread per core
    /// keeps the core busy meanwhile (measured on 2 cores: git/git's tree 119-129 ms with 4
    /// threads against 136-141 ms with 2; the 100,000-file tree 1.58-1.77 s against
    /// 1.75-1.87 s).
    Auto,
    /// One per core (`checkout.workers` below 1, as git).
    PerCore,
    /// Exactly this many.
    Exactly(usize),
}

impl Workers {
    /// The number of threads on this machine.
    pub fn count(self) -> usize {
        use sluice_object::threads::{cores, workers};
        match self {
            Workers::Auto => (2 * cores()).min(16),
            Workers::PerCore => cores(),
            Workers::Exactly(n) => workers(n.max(1)),
        }
    }
}

/// How to write.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    /// Worker threads (`checkout.workers`).
    pub workers: Workers,
    /// Fewer entries than this are written by one thread (`checkout.thresholdForParallelism`).
    pub threshold: usize,
    /// `core.symlinks`: false writes links as plain files holding the target.
    pub symlinks: bool,
    /// The destination holds none of these paths: create files exclusively, without checking
    /// what is there first.
    pub fresh: bool,
    /// `core.bigFileThreshold`: blobs larger than this that need no conversion are streamed
    /// from the pack to the file instead of being held whole.
    pub big_file_threshold: u64,
    /// Stops the writing between two files; those written stay, as git leaves them.
    pub cancel: Cancel,
}

fn fs_path(root: &Path, relative: &[u8]) -> PathBuf {
    // Sized once: `join` grew the buffer with a realloc for every file.
    let mut path = PathBuf::with_capacity(root.as_os_str().len() + 1 + relative.len());
    path.push(root);
    path.push(OsStr::from_bytes(relative));
    path
}

/// Maps an I/O error at `path`, copying the path only when there is an error (three copies a
/// file on the success path showed in profiles).
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckoutError + '_ {
    move |source| CheckoutError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Creates every directory the jobs' files go in before any file is written, the shallowest
/// first, refusing to pass through a symbolic link (a tree must not make the checkout write
/// outside the work tree; a directory's parents are checked before it).
///
/// All directories first, as git's parallel checkout does: ext4 places a directory made among
/// a stream of new files in a block group crowded by them, and after a large deletion (a CI
/// agent's `rm -rf` of the last checkout) every inode allocated in such a group scans past
/// the recently freed ones. Made up front, the directories spread over groups of their own,
/// and level by level more evenly than in path order.
fn create_directories(root: &Path, jobs: &[Job<'_>]) -> Result<(), CheckoutError> {
    let mut dirs: Vec<&[u8]> = Vec::new();
    let mut seen: HashSet<&[u8]> = HashSet::new();
    let mut last: &[u8] = &[];
    for job in jobs {
        let mut dir = parent(job.path);
        // Files come in path order, so most share the last file's directory.
        if dir == last {
            continue;
        }
        last = dir;
        while !dir.is_empty() && seen.insert(dir) {
            dirs.push(dir);
            dir = parent(dir);
        }
    }
    let depth = |dir: &[u8]| dir.iter().filter(|&&b| b == b'/').count();
    dirs.sort_unstable_by(|a, b| depth(a).cmp(&depth(b)).then(a.cmp(b)));
    for dir in dirs {
        let path = fs_path(root, dir);
        match std::fs::create_dir(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let meta = std::fs::symlink_metadata(&path).map_err(io(&path))?;
                if !meta.is_dir() {
                    let shown = String::from_utf8_lossy(dir).into_owned();
                    return Err(CheckoutError::BeyondSymlink(shown));
                }
            }
            Err(source) => return Err(CheckoutError::Io { path, source }),
        }
    }
    Ok(())
}

/// The directory `path` is in (empty at the top).
fn parent(path: &[u8]) -> &[u8] {
    path.iter()
        .rposition(|&b| b == b'/')
        .map_or(&[][..], |slash| &path[..slash])
}

/// The content of one entry: in memory, or (big blobs) a stream from the pack.
enum Content<'a> {
    Bytes(&'a [u8]),
    Stream(&'a mut dyn std::io::Read),
}

/// Writes one entry whose content is `data` (already converted); returns its stat data.
fn write_content(
    at: &mut AtDir<'_>,
    job: &Job,
    data: &[u8],
    options: &WriteOptions,
) -> Result<Stat, CheckoutError> {
    write_entry(at, job, Content::Bytes(data), options)
}

/// Writes one entry into its directory, which exists (`create_directories`).
fn write_entry(
    at: &mut AtDir<'_>,
    job: &Job,
    content: Content<'_>,
    options: &WriteOptions,
) -> Result<Stat, CheckoutError> {
    let root = at.root();
    // The whole path is only spelled out for an error.
    let fail = |source| CheckoutError::Io {
        path: fs_path(root, job.path),
        source,
    };
    if !options.fresh {
        // Replace, never write through: unlink whatever is there (a file or a symlink).
        match at.unlink(job.path) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                if job.mode != 0o160000 {
                    return Err(CheckoutError::Conflict(
                        String::from_utf8_lossy(job.path).into_owned(),
                    ));
                }
            }
            Err(source) => return Err(fail(source)),
        }
    }
    match job.mode {
        0o160000 => {
            // A submodule is not cloned: its directory is left empty. git records the
            // directory's stat data (and ignores most of it for gitlinks).
            at.mkdir(job.path).map_err(fail)?;
            lstat_written(at, job.path).map_err(fail)
        }
        0o120000 if options.symlinks => {
            let Content::Bytes(data) = content else {
                unreachable!("links are never streamed")
            };
            at.symlink(data, job.path).map_err(fail)?;
            lstat_written(at, job.path).map_err(fail)
        }
        mode => {
            let permissions = if mode == 0o100755 { 0o777 } else { 0o666 };
            let mut file = at.create(job.path, permissions).map_err(fail)?;
            match content {
                Content::Bytes(data) => file.write_all(data).map_err(fail)?,
                Content::Stream(reader) => {
                    let mut buf = vec![0u8; 256 << 10];
                    loop {
                        let n = match reader.read(&mut buf) {
                            Ok(0) => break,
                            Ok(n) => n,
                            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                            Err(source) => return Err(fail(source)),
                        };
                        file.write_all(&buf[..n]).map_err(fail)?;
                    }
                }
            }
            at_dir::fstat(&file).map_err(fail)
        }
    }
}

/// The stat data of what was just made at `relative`.
fn lstat_written(at: &mut AtDir<'_>, relative: &[u8]) -> std::io::Result<Stat> {
    match at.lstat(relative)? {
        Some(found) => Ok(found.stat),
        None => Err(std::io::ErrorKind::NotFound.into()),
    }
}

fn missing(job: &Job) -> CheckoutError {
    CheckoutError::MissingObject {
        id: job.id,
        path: String::from_utf8_lossy(job.path).into_owned(),
    }
}

fn read_blob(odb: &dyn Objects, job: &Job) -> Result<Vec<u8>, CheckoutError> {
    if job.mode == 0o160000 {
        return Ok(Vec::new());
    }
    let (_, data) = odb.read(&job.id)?.ok_or_else(|| missing(job))?;
    Ok(data)
}

fn convert(job: &Job, data: Vec<u8>) -> Result<Vec<u8>, CheckoutError> {
    if job.conversion.is_identity() || job.mode == 0o120000 || job.mode == 0o160000 {
        return Ok(data);
    }
    job.conversion
        .apply(data, &job.id)
        .map_err(|source| CheckoutError::Convert {
            path: String::from_utf8_lossy(job.path).into_owned(),
            source,
        })
}

/// What one writer thread keeps from file to file.
struct Worker<'r> {
    /// Where files go: the work tree, held open with the directory of the last files.
    at: AtDir<'r>,
    /// The last blob's allocation, reused for the next (a malloc and free per file showed in
    /// profiles).
    buffer: Vec<u8>,
}

impl<'r> Worker<'r> {
    fn new(root: &'r Path) -> Self {
        Worker {
            at: AtDir::new(root),
            buffer: Vec::new(),
        }
    }

    /// Keeps `data`'s allocation for the next blob, unless it is large. Its bytes stay: the
    /// next blob is inflated over them, which spares zeroing the buffer first.
    fn recycle(&mut self, data: Vec<u8>) {
        if data.capacity() <= 1 << 20 && data.capacity() > self.buffer.capacity() {
            self.buffer = data;
        }
    }
}

/// Writes every job under `root`; returns their stat data in the same order. From a source
/// whose objects are still arriving, it writes in rounds: the files whose blobs are in, then,
/// after waiting for more, those that have come since, until all are written.
pub fn write_all(
    odb: &dyn Objects,
    root: &Path,
    jobs: &[Job<'_>],
    options: &WriteOptions,
    filters: &mut Filters,
    progress: &dyn Progress,
) -> Result<Vec<Stat>, CheckoutError> {
    let filtered = |job: &Job| {
        job.mode != 0o120000
            && job
                .conversion
                .filter
                .as_deref()
                .is_some_and(|d| filters.has_smudge(d))
    };
    let (sequential, parallel): (Vec<usize>, Vec<usize>) =
        (0..jobs.len()).partition(|&i| filtered(&jobs[i]));
    let mut stats = vec![Stat::default(); jobs.len()];
    create_directories(root, jobs)?;
    let verbatim =
        |job: &Job| (job.mode == 0o100644 || job.mode == 0o100755) && job.conversion.is_identity();
    // A source still receiving objects is read by id.
    let located = if odb.all_arrived() {
        let ids: Vec<&ObjectId> = jobs.iter().map(|job| &job.id).collect();
        odb.locate(&ids)
    } else {
        Vec::new()
    };

    let write_one = |i: usize, worker: &mut Worker| -> Result<Stat, CheckoutError> {
        options.cancel.check()?;
        let job = &jobs[i];
        let data = if verbatim(job) {
            let threshold = options.big_file_threshold;
            let content = match located.get(i).copied().flatten() {
                Some(object) => Some(object.read_or_stream(threshold, &mut worker.buffer)?),
                None => odb.read_or_stream(&job.id, threshold, &mut worker.buffer)?,
            };
            match content {
                Some(ObjectContent::Whole(_, data)) => data,
                Some(ObjectContent::Stream(_, _, mut reader)) => {
                    let content = Content::Stream(&mut reader);
                    let stat = write_entry(&mut worker.at, job, content, options)?;
                    progress.add(1);
                    return Ok(stat);
                }
                None => return Err(missing(job)),
            }
        } else {
            convert(job, read_blob(odb, job)?)?
        };
        let stat = write_content(&mut worker.at, job, &data, options)?;
        worker.recycle(data);
        progress.add(1);
        Ok(stat)
    };
    let workers = options.workers.count();
    let pool = if workers > 1 && parallel.len() >= options.threshold.max(1) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .thread_name(|i| format!("sluice-checkout-{i}"))
            .build()
            .map_err(|e| CheckoutError::Io {
                path: root.to_owned(),
                source: std::io::Error::other(e),
            })?;
        Some(pool)
    } else {
        None
    };
    let mut pending = parallel;
    loop {
        // Read before sorting: an object arriving during the sort waits for the next round.
        let all_arrived = odb.all_arrived();
        let (ready, waiting): (Vec<usize>, Vec<usize>) = pending
            .into_iter()
            .partition(|&i| all_arrived || jobs[i].mode == 0o160000 || odb.is_ready(&jobs[i].id));
        match &pool {
            Some(pool) => {
                let results: Result<Vec<(usize, Stat)>, CheckoutError> = pool.install(|| {
                    ready
                        .par_iter()
                        .with_min_len(64)
                        .map_init(
                            || Worker::new(root),
                            |worker, &i| write_one(i, worker).map(|s| (i, s)),
                        )
                        .collect()
                });
                for (i, stat) in results? {
                    stats[i] = stat;
                }
            }
            None => {
                let mut worker = Worker::new(root);
                for &i in &ready {
                    stats[i] = write_one(i, &mut worker)?;
                }
            }
        }
        if waiting.is_empty() {
            break;
        }
        pending = waiting;
        odb.wait_for_more();
    }
    let mut at = AtDir::new(root);
    for i in sequential {
        let job = &jobs[i];
        let data = convert(job, read_blob(odb, job)?)?;
        let driver = job
            .conversion
            .filter
            .clone()
            .expect("filtered jobs have a driver");
        let path = String::from_utf8_lossy(job.path).into_owned();
        let data = filters.smudge(&driver, &path, data)?;
        stats[i] = write_content(&mut at, job, &data, options)?;
        progress.add(1);
    }
    Ok(stats)
}
