//! The pack store: putting packs into `objects/pack` as git does. A pack is received into a
//! temporary file in the destination, indexed as it arrives, checked, and then it, its `.rev`
//! and its `.idx` are synced together and renamed into place, the index last, so that a reader
//! that finds the index finds everything it describes. A failure at any point leaves no file.

mod staged;
mod unpack;

pub use staged::{replace_extension, Staged};
pub use unpack::{loose_compression, unpack_limit, unpack_to_loose};

use crate::config::{Config, ConfigError};
use sluice_object::{HashKind, ObjectId, ObjectKind};
use sluice_pack::idx::write_idx;
use sluice_pack::rev::write_rev;
use sluice_pack::{
    ArrivingPack, IdxEntry, IdxWriteOptions, IndexError, IndexOptions, IndexedPack, ObjectLookup,
    PackIndexer, PackSource,
};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Why a pack could not be stored, indexed or verified.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The pack itself is bad.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The destination directory could not be made.
    #[error("unable to create directory '{}'", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No temporary file could be made in the destination.
    #[error("unable to create temporary file in '{}'", dir.display())]
    CreateTemp {
        /// The destination directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written or put in place.
    #[error("unable to write '{}'", path.display())]
    Write {
        /// The file (or, for a staged file, its directory).
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A written file could not be synced to disk.
    #[error("unable to sync a written file")]
    Sync(#[source] std::io::Error),
    /// A `.keep` or `.promisor` file could not be written.
    #[error("cannot write keep file '{}'", path.display())]
    Keep {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The pack file to write is there already.
    #[error("unable to create '{}': File exists", .0.display())]
    Exists(PathBuf),
    /// A pack (or index) file whose name does not say where the files beside it go.
    #[error("packfile name '{}' does not end with '.{suffix}'", path.display())]
    NotPackName {
        /// The name given.
        path: PathBuf,
        /// What it should end with: `pack`, or `idx` where a reverse index is derived from it.
        suffix: &'static str,
    },
    /// The pack file could not be opened (git's words, the system's reason after them).
    #[error(
        "could not open '{}' for reading: {}",
        path.display(),
        sluice_object::errno::system_words(source)
    )]
    OpenPack {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The pack to verify is not there (git names the index it was asked about).
    #[error("Cannot open existing pack file '{}'", idx.display())]
    NoPackFor {
        /// The index.
        idx: PathBuf,
    },
    /// The index to verify against could not be read.
    #[error("Cannot open existing pack idx file for '{}'", idx.display())]
    OpenIdx {
        /// The index.
        idx: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The index to verify against is not an index.
    #[error("index file '{}' is corrupt: {source}", path.display())]
    CorruptIdx {
        /// The index.
        path: PathBuf,
        /// What is wrong.
        source: sluice_pack::IdxError,
    },
    /// Verification found an object stored twice.
    #[error("The same object {0} appears twice in the pack")]
    Duplicate(ObjectId),
    /// The existing index is not what indexing the pack writes.
    #[error("index file '{}' does not match pack '{}'", idx.display(), pack.display())]
    IdxMismatch {
        /// The index.
        idx: PathBuf,
        /// The pack.
        pack: PathBuf,
    },
    /// The existing reverse index is not what indexing the pack writes.
    #[error("reverse index '{}' does not match pack '{}'", rev.display(), pack.display())]
    RevMismatch {
        /// The reverse index.
        rev: PathBuf,
        /// The pack.
        pack: PathBuf,
    },
    /// A received pack refers to an object that neither it nor the repository holds: the
    /// sender did not send everything the new tips need. Nothing was stored.
    #[error("remote did not send all necessary objects ({missing} is missing)")]
    NotConnected {
        /// The first such object.
        missing: ObjectId,
    },
    /// `index-pack --strict`: an object the pack refers to is neither in it nor in the
    /// repository.
    #[error("did not receive expected object {0}")]
    NotReceived(ObjectId),
    /// The repository's settings for packs are bad.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A thread writing one of the files panicked.
    #[error("a writer thread failed")]
    WriterPanicked,
}

/// How packs are indexed and written: git's `pack.*` and `core.*` settings, or flags.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// How the pack is indexed.
    pub index: IndexOptions,
    /// The `.idx` version and its 64-bit offset threshold.
    pub idx: IdxWriteOptions,
    /// Write a `.rev` beside the pack.
    pub write_rev: bool,
    /// Sync every file before it is renamed into place.
    pub fsync: bool,
}

/// `pack.threads`, for index-pack and pack-objects alike: 0 (or unset) is one thread a core;
/// below zero is refused, as git refuses it.
pub fn pack_threads(config: &Config) -> Result<usize, ConfigError> {
    match config.get_int32("pack.threads")? {
        None => Ok(0),
        Some(n) => usize::try_from(n).map_err(|_| ConfigError::Threads(n.into())),
    }
}

impl StoreOptions {
    /// The options a repository's configuration gives: `pack.threads`, the level of the
    /// objects `--fix-thin` appends (git's loose-object level: `core.looseCompression`, else
    /// `core.compression`, else 1, the fastest; -1 is zlib's 6), `pack.indexVersion`,
    /// `pack.writeReverseIndex` (default true) and `core.fsync` (`none` turns syncing off).
    pub fn from_config(config: &Config, hash: HashKind) -> Result<StoreOptions, ConfigError> {
        let threads = pack_threads(config)?;
        let compression_level = loose_compression(config)?;
        let mut idx = IdxWriteOptions::default();
        if let Some(version) = config.get_int("pack.indexversion")? {
            idx.version = if version == 1 { 1 } else { 2 };
        }
        let fsync = config
            .get("core.fsync")
            .is_none_or(|v| !v.split(',').any(|c| c.trim() == "none"));
        Ok(StoreOptions {
            index: IndexOptions {
                hash,
                threads,
                sync_early: fsync,
                compression_level,
                ..IndexOptions::default()
            },
            idx,
            write_rev: config.get_bool("pack.writereverseindex")?.unwrap_or(true),
            fsync,
        })
    }
}

/// Where a received pack goes and what is written beside it.
#[derive(Debug, Clone, Default)]
pub struct Destination {
    /// The pack file to write; `None` stores it in the repository's `objects/pack` under its
    /// final name, `pack-<checksum>.pack`.
    pub pack_file: Option<PathBuf>,
    /// Where the `.idx` goes, when not beside the pack.
    pub index_file: Option<PathBuf>,
    /// Write a `.keep` file beside the pack holding this message (nothing when empty).
    pub keep: Option<String>,
    /// Write a `.promisor` file beside the pack holding this message (nothing when empty):
    /// its objects' links may lead to objects the promisor remote gives later.
    pub promisor: Option<String>,
}

/// A pack put in place.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The pack's checksum, which names it.
    pub checksum: ObjectId,
    /// The pack file.
    pub pack: PathBuf,
    /// Whether a `.keep` file was asked for.
    pub kept: bool,
    /// With [`IndexOptions::links`]: what the pack's objects refer to that it does not hold.
    pub outside_links: Option<Vec<ObjectId>>,
}

impl std::fmt::Display for Stored {
    /// index-pack's report line: `pack\t<checksum>`, or `keep\t<checksum>` with a `.keep`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let word = if self.kept { "keep" } else { "pack" };
        write!(f, "{word}\t{}", self.checksum)
    }
}

/// Work that reads a received pack's objects while its deltas are resolved.
pub type Alongside<'a> = dyn Fn(&ArrivingPack<'_>) + Sync + 'a;

/// What a received pack must pass before it is put in place.
pub type Check<'a> = dyn Fn(&IndexedPack) -> Result<(), StoreError> + 'a;

/// A [`Check`] that every link leading out of the pack (with [`IndexOptions::links`]) is
/// in `objects`, or is the empty tree (git has it in every repository); `missing` names the
/// error for the first that is not.
pub fn links_present<'a>(
    objects: &'a dyn ObjectLookup,
    missing: fn(ObjectId) -> StoreError,
) -> impl Fn(&IndexedPack) -> Result<(), StoreError> + 'a {
    move |pack: &IndexedPack| {
        let outside = pack.outside_links().unwrap_or_default();
        let empty_tree = sluice_object::hash_object(pack.hash(), ObjectKind::Tree, b"").ok();
        // `contains` answers from this view's packs and loose cache; a link it misses is read,
        // which looks again (a repack may have moved the object since the view was made).
        let absent = |id: &&ObjectId| {
            Some(**id) != empty_tree
                && !objects.contains(id)
                && !objects.read(id).is_ok_and(|found| found.is_some())
        };
        match outside.iter().find(absent) {
            Some(&id) => Err(missing(id)),
            None => Ok(()),
        }
    }
}

/// Receives a pack from `input` into `objects_dir/pack` (or [`Destination::pack_file`]),
/// indexed by `indexer` with `options`; `alongside` reads the objects while deltas are
/// resolved, and `check` judges the indexed pack before anything is put in place.
pub fn receive(
    input: &mut dyn Read,
    objects_dir: &Path,
    destination: &Destination,
    indexer: &PackIndexer<'_>,
    options: &StoreOptions,
    alongside: Option<&Alongside<'_>>,
    check: &Check<'_>,
) -> Result<Stored, StoreError> {
    let dir = match &destination.pack_file {
        Some(path) => {
            if path.exists() {
                return Err(StoreError::Exists(path.clone()));
            }
            parent(path).to_owned()
        }
        None => crate::pack_dir(objects_dir),
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
    // Checked before anything is put in place: a refused pack never enters the repository.
    check(&pack)?;
    let checksum = pack.checksum();
    let pack_path = match &destination.pack_file {
        Some(path) => path.clone(),
        None => dir.join(format!("pack-{checksum}.pack")),
    };
    let idx_path = index_paths(&pack_path, destination.index_file.as_deref())?;
    let rev_path = rev_beside(&idx_path, options.write_rev)?;
    if let Some(message) = &destination.keep {
        write_beside(&pack_path, "keep", message)?;
    }
    if let Some(message) = &destination.promisor {
        write_beside(&pack_path, "promisor", message)?;
    }
    write_indexes_of(
        &pack,
        Some((staged, &pack_path)),
        &idx_path,
        rev_path.as_deref(),
        options,
    )?;
    Ok(Stored {
        checksum,
        pack: pack_path,
        kept: destination.keep.is_some(),
        outside_links: pack.outside_links().map(<[ObjectId]>::to_vec),
    })
}

/// Indexes the pack file at `pack_path` in place, writing its `.idx` (at the destination's
/// `index_file`, or beside the pack) and `.rev`, and the `.keep` and `.promisor` it asks for
/// beside the pack before the index, as git's index-pack; returns its checksum. (The
/// destination's `pack_file` is not read: the pack is where it is.)
pub fn index_file(
    pack_path: &Path,
    destination: &Destination,
    indexer: &PackIndexer<'_>,
    options: &StoreOptions,
) -> Result<ObjectId, StoreError> {
    let idx_path = index_paths(pack_path, destination.index_file.as_deref())?;
    let rev_path = rev_beside(&idx_path, options.write_rev)?;
    let pack = indexer.index(PackSource::File(&open_pack(pack_path)?))?;
    if let Some(message) = &destination.keep {
        write_beside(pack_path, "keep", message)?;
    }
    if let Some(message) = &destination.promisor {
        write_beside(pack_path, "promisor", message)?;
    }
    write_indexes_of(&pack, None, &idx_path, rev_path.as_deref(), options)?;
    Ok(pack.checksum())
}

fn open_pack(path: &Path) -> Result<File, StoreError> {
    File::open(path).map_err(|source| StoreError::OpenPack {
        path: path.to_owned(),
        source,
    })
}

/// The pack and its index a name for either stands for, as verify-pack takes it:
/// `<base>.idx`, `<base>.pack` or `<base>` itself.
pub fn pack_and_index(given: &Path) -> (PathBuf, PathBuf) {
    let text = given.to_string_lossy();
    let base = (text.strip_suffix(".idx"))
        .or_else(|| text.strip_suffix(".pack"))
        .unwrap_or(&text);
    (
        PathBuf::from(format!("{base}.pack")),
        PathBuf::from(format!("{base}.idx")),
    )
}

/// The `.idx` path of a pack, as git derives it.
fn index_paths(pack_path: &Path, index_file: Option<&Path>) -> Result<PathBuf, StoreError> {
    let idx = match index_file {
        Some(path) => path.to_owned(),
        None => {
            replace_extension(pack_path, "pack", "idx").ok_or_else(|| StoreError::NotPackName {
                path: pack_path.to_owned(),
                suffix: "pack",
            })?
        }
    };
    Ok(idx)
}

/// The `.rev` a pack's reverse index is written to, when it is: beside its index, named after
/// it, as git derives it (an index named otherwise is refused then).
fn rev_beside(idx: &Path, written: bool) -> Result<Option<PathBuf>, StoreError> {
    match written {
        false => Ok(None),
        true => (replace_extension(idx, "idx", "rev").map(Some)).ok_or_else(|| {
            StoreError::NotPackName {
                path: idx.to_owned(),
                suffix: "idx",
            }
        }),
    }
}

fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Writes `<pack>.<extension>` (`keep`, `promisor`) holding `text`, a newline after it unless
/// it is empty or ends with one, unless that file is there already: the one writer of the
/// files that mark a pack.
pub fn write_beside(pack_path: &Path, extension: &str, text: &str) -> Result<(), StoreError> {
    let path =
        replace_extension(pack_path, "pack", extension).ok_or_else(|| StoreError::NotPackName {
            path: pack_path.to_owned(),
            suffix: "pack",
        })?;
    let failed = |source| StoreError::Keep {
        path: path.clone(),
        source,
    };
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => return Err(failed(e)),
    };
    file.write_all(text.as_bytes()).map_err(failed)?;
    if !text.is_empty() && !text.ends_with('\n') {
        file.write_all(b"\n").map_err(failed)?;
    }
    Ok(())
}

/// Stores a pack this repository wrote itself, whose entries (`entries`, any order) and
/// checksum are known: its `.idx` and `.rev` are written from them, without reading the pack
/// back, and the three are put in place as [`receive`] puts them.
pub fn store_written(
    objects_dir: &Path,
    staged_pack: Staged,
    checksum: ObjectId,
    entries: Vec<IdxEntry>,
    hash: HashKind,
    options: &StoreOptions,
) -> Result<Stored, StoreError> {
    let pack_path = crate::pack_dir(objects_dir).join(format!("pack-{checksum}.pack"));
    store_written_at(pack_path, staged_pack, checksum, entries, hash, options)
}

/// [`store_written`] under any name (`pack-objects <base-name>` writes
/// `<base-name>-<checksum>.pack`): the pack put at `pack_path`, its indexes beside it.
pub fn store_written_at(
    pack_path: PathBuf,
    staged_pack: Staged,
    checksum: ObjectId,
    mut entries: Vec<IdxEntry>,
    hash: HashKind,
    options: &StoreOptions,
) -> Result<Stored, StoreError> {
    let idx_path = index_paths(&pack_path, None)?;
    let rev_path = rev_beside(&idx_path, options.write_rev)?;
    entries.sort_unstable_by_key(|e| e.offset);
    // For each entry in pack order, its place in the index (sorted by id).
    let mut by_id: Vec<u32> = (0..entries.len() as u32).collect();
    by_id.sort_unstable_by_key(|&i| entries[i as usize].id);
    let mut positions = vec![0u32; entries.len()];
    for (index_position, &pack_position) in by_id.iter().enumerate() {
        positions[pack_position as usize] = index_position as u32;
    }
    let write_idx = |out: &mut dyn Write| {
        let entry = |i: usize| entries[by_id[i] as usize];
        write_idx(hash, entries.len(), entry, &checksum, &options.idx, out).map(|_| ())
    };
    let write_rev = |out: &mut dyn Write| write_rev(hash, &positions, &checksum, out).map(|_| ());
    write_indexes(
        &IndexWriters {
            idx: &write_idx,
            rev: &write_rev,
        },
        Some((staged_pack, &pack_path)),
        &idx_path,
        rev_path.as_deref(),
        options,
    )?;
    Ok(Stored {
        checksum,
        pack: pack_path,
        kept: false,
        outside_links: None,
    })
}

/// [`write_indexes`] for a pack the indexer read.
fn write_indexes_of(
    pack: &IndexedPack,
    staged_pack: Option<(Staged, &Path)>,
    idx_path: &Path,
    rev_path: Option<&Path>,
    options: &StoreOptions,
) -> Result<(), StoreError> {
    let order = pack.index_order();
    let writers = IndexWriters {
        idx: &|out| pack.write_idx(&order, &options.idx, out).map(|_| ()),
        rev: &|out| pack.write_rev(&order, out).map(|_| ()),
    };
    write_indexes(&writers, staged_pack, idx_path, rev_path, options)
}

/// What writes a pack's `.idx` and its `.rev`.
struct IndexWriters<'a> {
    idx: &'a (dyn Fn(&mut dyn Write) -> std::io::Result<()> + Sync),
    rev: &'a (dyn Fn(&mut dyn Write) -> std::io::Result<()> + Sync),
}

/// Writes `.rev` (if asked) and `.idx`, and puts them in place after the staged pack (if
/// given): the index last, so that a reader that finds it finds everything it describes. The
/// files are written and synced at the same time (the pack's sync was started during
/// resolution); only the renames are ordered.
fn write_indexes(
    writers: &IndexWriters<'_>,
    staged_pack: Option<(Staged, &Path)>,
    idx_path: &Path,
    rev_path: Option<&Path>,
    options: &StoreOptions,
) -> Result<(), StoreError> {
    let synced = |staged: Staged| -> Result<Staged, StoreError> {
        staged.sync(options.fsync)?;
        Ok(staged)
    };
    let (staged_pack, rev, idx) = std::thread::scope(|s| {
        let staged_pack = staged_pack.map(|(staged, path)| (s.spawn(move || synced(staged)), path));
        let rev = rev_path.map(|rev_path| {
            let thread =
                s.spawn(move || synced(Staged::write(parent(rev_path), "tmp_rev_", writers.rev)?));
            (thread, rev_path)
        });
        let idx = Staged::write(parent(idx_path), "tmp_idx_", writers.idx)
            .map_err(|e| match e {
                StoreError::Write { source, .. } => StoreError::Write {
                    path: idx_path.to_owned(),
                    source,
                },
                other => other,
            })
            .and_then(synced);
        let joined = |thread: std::thread::ScopedJoinHandle<'_, Result<Staged, StoreError>>| {
            thread
                .join()
                .unwrap_or_else(|_| Err(StoreError::WriterPanicked))
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
) -> Result<IndexedPack, StoreError> {
    let idx_path = index_paths(pack_path, index_file)?;
    let rev_path = replace_extension(&idx_path, "idx", "rev");
    // In git's order: the pack must be there, then its index readable.
    if !pack_path.is_file() {
        return Err(StoreError::NoPackFor { idx: idx_path });
    }
    let existing = std::fs::read(&idx_path).map_err(|source| StoreError::OpenIdx {
        idx: idx_path.clone(),
        source,
    })?;
    let options = sluice_pack::PackIndex::new(&existing[..], HashKind::Sha1)
        .map_err(|source| StoreError::CorruptIdx {
            path: idx_path.clone(),
            source,
        })?
        .write_options();
    let pack = indexer.index(PackSource::File(&open_pack(pack_path)?))?;
    let order = pack.index_order();
    // As git, verification is strict: an object stored twice is an error.
    if let Some(id) = pack.duplicate(&order) {
        return Err(StoreError::Duplicate(id));
    }
    let mismatch = || StoreError::IdxMismatch {
        idx: idx_path.clone(),
        pack: pack_path.to_owned(),
    };
    let mut expected = Vec::new();
    pack.write_idx(&order, &options, &mut expected)
        .map_err(|_| mismatch())?;
    if expected != existing {
        return Err(mismatch());
    }
    let existing_rev = rev_path.and_then(|path| Some((std::fs::read(&path).ok()?, path)));
    if let Some((existing_rev, rev_path)) = existing_rev {
        let mut expected = Vec::new();
        let mismatch = || StoreError::RevMismatch {
            rev: rev_path.clone(),
            pack: pack_path.to_owned(),
        };
        pack.write_rev(&order, &mut expected)
            .map_err(|_| mismatch())?;
        if expected != existing_rev {
            return Err(mismatch());
        }
    }
    Ok(pack)
}
