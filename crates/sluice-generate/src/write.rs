//! Writing the pack: the objects of a walk as one pack, copying every on-disk entry that can be
//! sent as it is stored.
//!
//! Objects stored in this repository's packs are written in their on-disk order, which keeps
//! reading sequential and puts every ofs-delta after its base. A stored delta is reused when its
//! base is sent too (as an ofs-delta once the base is written, a delta waiting for a base that
//! comes later is held back until it is) or, in a thin pack, when the client has the base. For
//! the rest, and for stored whole objects whose previous version the client has, the delta
//! search looks for a base; what finds none is sent whole. A pack the repository stores
//! (repack, gc, pack-objects) gets git's window search too: every stored whole object tried
//! against the objects of the other packs and the loose ones (or, with `-f`, every object
//! anew), so packs written without a search, or cut at a size limit, get their deltas.

use crate::checksum_memo::{ChecksumMemo, CopyKey};
use crate::delta_search::{search_deltas, Candidate, NewDelta, Role};
use crate::islands::Islands;
use crate::place::{CopyCheck, Job};
use crate::verbatim;
use crate::window_plan::{search_window, stored_entry, StoredEntry};
use crate::window_search::{Made, Reuse, SearchLimits};
use crate::GenerateError;
use sluice_graph::{KnownObjects, Walked};
use sluice_object::cancel::Cancel;
use sluice_object::progress::{Discard, Progress};
use sluice_object::{IdMap, IdSet, ObjectId, ObjectKind};
use sluice_odb::{Config, ConfigError, ObjectDb, Pack};
use sluice_pack::{IdxEntry, PackWriter};
use std::io::Write;

use crate::stats::PackStats;

/// How the pack may be built, from the client's capabilities and the server's config.
#[derive(Debug, Clone)]
pub struct PackOptions {
    /// Deltas may name bases the client has instead of sending them (`thin-pack`).
    pub thin: bool,
    /// Deltas may name their base by offset (`ofs-delta`); otherwise by id.
    pub ofs_delta: bool,
    /// zlib level for objects compressed anew (`pack.compression`, `core.compression`).
    pub compression: u32,
    /// Show the "Writing objects" phase: git shows it when the pack goes to a file (repack),
    /// not when it goes to a client.
    pub show_writing: bool,
    /// `Some`: the window search of repack and pack-objects, within these limits, of every tree
    /// and blob the limits' [`Reuse`](crate::Reuse) does not keep as stored. `None`: only what
    /// cannot go as stored is searched (a pack served to a client, where time counts more).
    pub window_search: Option<SearchLimits>,
    /// Stops the delta search and the writing between two objects.
    pub cancel: Cancel,
    /// `Some`: no delta (new or stored) crosses the islands' bounds, and the core island's
    /// objects are written first (`--delta-islands`).
    pub islands: Option<std::sync::Arc<Islands>>,
    /// A stored pack copied whole into a client's pack counted with a bitmap is git's pack
    /// reuse, said as such (`pack-reused N`), unless `pack.allowPackReuse` is false.
    pub allow_pack_reuse: bool,
    /// Without a window search, the threads its delta search is said to use (`pack.threads`;
    /// 0: one per core): a push says them as git's send-pack does.
    pub threads: usize,
}

impl Default for PackOptions {
    fn default() -> Self {
        PackOptions {
            thin: false,
            ofs_delta: true,
            compression: 6,
            show_writing: false,
            window_search: None,
            cancel: Cancel::default(),
            islands: None,
            allow_pack_reuse: true,
            threads: 0,
        }
    }
}

impl PackOptions {
    /// Whether a repack's packs name delta bases by offset, as git's repack asks its
    /// pack-objects: unless `repack.useDeltaBaseOffset` is false (for gits older than 1.4.4).
    pub fn repack_ofs_delta(config: &Config) -> Result<bool, ConfigError> {
        Ok(config
            .get_bool("repack.usedeltabaseoffset")?
            .unwrap_or(true))
    }

    /// Whether pack reuse is allowed, as git's pack-objects reads `pack.allowPackReuse`: a
    /// boolean, or (git 2.44 on) `single` or `multi`, which both allow it.
    pub fn allow_pack_reuse_of(config: &Config) -> Result<bool, ConfigError> {
        match config.get("pack.allowpackreuse") {
            Some("single" | "multi") => Ok(true),
            _ => Ok(config.get_bool("pack.allowpackreuse")?.unwrap_or(true)),
        }
    }

    /// The zlib level for objects compressed anew, as pack-objects reads it:
    /// `pack.compression`, else `core.compression`, else zlib's default (6); a value outside
    /// 0-9 (git's -1 among them) means the default too.
    pub fn compression_of(config: &Config) -> Result<u32, ConfigError> {
        let level = match config.get_int("pack.compression")? {
            Some(level) => level,
            None => config.get_int("core.compression")?.unwrap_or(-1),
        };
        Ok(u32::try_from(level)
            .ok()
            .filter(|level| *level <= 9)
            .unwrap_or(6))
    }
}

/// Where an object to send comes from.
#[derive(Clone, Copy)]
pub(crate) enum Source {
    /// Entry `position` of pack number `pack`, at `offset`.
    Packed {
        pack: u32,
        position: u32,
        offset: u64,
    },
    /// Anything else: loose, an alternate.
    Elsewhere,
}

pub(crate) struct Planned {
    pub(crate) id: ObjectId,
    pub(crate) source: Source,
    /// Offset in the output once written.
    pub(crate) written: Option<u64>,
    /// A delta made for it by the search (boxed: most entries of a clone have none, and a
    /// plan of every object of a big repository is tens of megabytes).
    pub(crate) delta: Option<Box<NewDelta>>,
    /// Its data compressed by the search, when it goes whole and is not stored so: its kind,
    /// size and the compressed bytes.
    pub(crate) whole: Option<Box<(ObjectKind, u64, Vec<u8>)>>,
    /// The CRC32 of its entry once written.
    pub(crate) crc32: u32,
}

/// How a stored entry can go out, as far as the delta search is concerned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// A delta whose base is sent too: copied as it is.
    ReusableDelta,
    /// A delta against a base the client has, `size` bytes uncompressed: copied as it is
    /// unless the search finds a smaller one (stored deltas are not always good ones).
    ThinDelta { size: u64 },
    /// Whole.
    Whole,
    /// Not reusable as stored (a delta against a base the client lacks) or not in a pack.
    Rebuilt,
}

/// Writes the objects of `walked` as a pack to `out`; returns `out` with the pack's statistics.
pub fn write_pack<W: Write>(
    odb: &ObjectDb,
    walked: &Walked,
    options: &PackOptions,
    out: W,
    progress: &dyn Progress,
) -> Result<(W, PackStats), GenerateError> {
    let out = Counted::new(out, options, progress);
    let written = write(odb, walked, options, Target::Client(None), out, progress)?;
    Ok((written.out.out, written.stats))
}

/// Progress passed on, with `line` said once before the phase titled `title` begins.
struct SaidBefore<'a> {
    inner: &'a dyn Progress,
    title: &'static str,
    line: std::sync::Mutex<Option<String>>,
}

impl<'a> SaidBefore<'a> {
    fn new(inner: &'a dyn Progress, title: &'static str, line: Option<String>) -> Self {
        SaidBefore {
            inner,
            title,
            line: std::sync::Mutex::new(line),
        }
    }
}

impl Progress for SaidBefore<'_> {
    fn phase(&self, title: &str, total: Option<u64>) {
        if title == self.title {
            let line = self.line.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(line) = line {
                self.inner.note(&line);
            }
        }
        self.inner.phase(title, total);
    }
    fn add(&self, count: u64) {
        self.inner.add(count);
    }
    fn add_bytes(&self, bytes: u64) {
        self.inner.add_bytes(bytes);
    }
    fn finish(&self) {
        self.inner.finish();
    }
    fn finish_with(&self, ending: &str) {
        self.inner.finish_with(ending);
    }
    fn note(&self, line: &str) {
        self.inner.note(line);
    }
}

/// A pack on its way out, its bytes counted on the writing phase where that is shown: git
/// gives a throughput for a pack it sends (a push, `pack-objects --stdout`), not for one it
/// stores.
struct Counted<'p, W> {
    out: W,
    progress: &'p dyn Progress,
}

impl<'p, W> Counted<'p, W> {
    fn new(out: W, options: &PackOptions, progress: &'p dyn Progress) -> Self {
        let progress = match options.show_writing {
            true => progress,
            false => &Discard,
        };
        Counted { out, progress }
    }
}

impl<W: Write> Write for Counted<'_, W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let written = self.out.write(bytes)?;
        self.progress.add_bytes(written as u64);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// [`write_pack`], with `memo` remembering the checksums of packs made only of stored entries
/// copied as they are: the next identical pack (the next full clone) is not hashed again.
pub fn write_pack_remembered<W: Write>(
    odb: &ObjectDb,
    walked: &Walked,
    options: &PackOptions,
    memo: &dyn ChecksumMemo,
    out: W,
    progress: &dyn Progress,
) -> Result<(W, PackStats), GenerateError> {
    let written = write(
        odb,
        walked,
        options,
        Target::Client(Some(memo)),
        out,
        progress,
    )?;
    Ok((written.out, written.stats))
}

/// A pack written, with what its index needs.
pub struct IndexedPack<W> {
    /// Where it was written.
    pub out: W,
    /// What went in.
    pub stats: PackStats,
    /// Its trailing checksum.
    pub checksum: ObjectId,
    /// Every entry: id, offset, CRC32, in no particular order (the `.idx` is written sorted).
    pub entries: Vec<IdxEntry>,
}

/// [`write_pack`], also returning every entry's offset and CRC32 and the pack's checksum: what
/// the `.idx` needs, so that a pack made here is not read back and hashed again to index it.
pub fn write_pack_indexed<W: Write>(
    odb: &ObjectDb,
    walked: &Walked,
    options: &PackOptions,
    out: W,
    progress: &dyn Progress,
) -> Result<IndexedPack<W>, GenerateError> {
    let written = write(odb, walked, options, Target::Stored, out, progress)?;
    let entries = match written.entries {
        Entries::Copied(pack) => {
            let index = pack.index();
            (0..index.len()).map(|i| index.entry(i)).collect()
        }
        Entries::Planned { copied, plan } => {
            let mut entries = Vec::with_capacity(written.stats.total as usize);
            if let Some((pack, crcs)) = copied {
                // At the offsets they have in their pack, with the CRC32s checked when copied.
                let index = pack.index();
                for i in 0..index.len() {
                    let mut entry = index.entry(i);
                    if let Some(&crc32) = pack.rank_of(i).and_then(|rank| crcs.get(rank)) {
                        entry.crc32 = crc32;
                    }
                    entries.push(entry);
                }
            }
            entries.extend(plan.into_iter().map(|p| IdxEntry {
                id: p.id,
                crc32: p.crc32,
                offset: p.written.unwrap_or_default(),
            }));
            entries
        }
    };
    Ok(IndexedPack {
        out: written.out,
        stats: written.stats,
        checksum: written.checksum,
        entries,
    })
}

/// What a pack was made of: a stored pack copied whole, or the plan written entry by entry
/// after the entries of a stored pack copied in one piece (`copied`, with their CRC32s in
/// its pack order when they were checked).
enum Entries<'a> {
    Copied(&'a Pack),
    Planned {
        copied: Option<(&'a Pack, Vec<u32>)>,
        plan: Vec<Planned>,
    },
}

struct Written<'a, W> {
    out: W,
    stats: PackStats,
    checksum: ObjectId,
    entries: Entries<'a>,
}

/// Shows git's "Counting objects" phase, `count` of them (none shown when none).
fn counted(progress: &dyn Progress, count: u32) {
    progress.phase("Counting objects", Some(count.into()));
    progress.add(count.into());
    progress.finish();
}

/// How a stored pack copied whole counts, as git's pack-objects would count the same pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PackReuse {
    /// git's pack reuse (a client's pack counted with a bitmap): its objects neither counted
    /// nor called reused, only `pack-reused`.
    Reused,
    /// Every entry reused as stored, one by one as git would (a pack to a file, one counted
    /// without a bitmap, or `pack.allowPackReuse=false`).
    Entries,
}

impl PackReuse {
    fn of(target: Target<'_>, walked: &Walked, options: &PackOptions) -> PackReuse {
        let client = matches!(target, Target::Client(_));
        match client && walked.located.is_some() && options.allow_pack_reuse {
            true => PackReuse::Reused,
            false => PackReuse::Entries,
        }
    }

    /// How many of `copied` objects git leaves out of its count.
    fn uncounted(self, copied: u32) -> u32 {
        match self {
            PackReuse::Reused => copied,
            PackReuse::Entries => 0,
        }
    }
}

/// Where a pack goes.
#[derive(Clone, Copy)]
enum Target<'m> {
    /// Into the repository, indexed: every entry's CRC32 is wanted, and checked.
    Stored,
    /// To a client, which checks what it receives; the checksums of copied packs may be
    /// remembered.
    Client(Option<&'m dyn ChecksumMemo>),
}

/// The objects going into the pack being written: the plan's, by their place in it, and
/// every object of a stored pack copied whole at its start (at the offsets it has there).
pub(crate) struct Sent<'a> {
    pub(crate) index: IdMap<u32>,
    pub(crate) copied: Option<&'a Pack>,
}

impl Sent<'_> {
    pub(crate) fn contains(&self, id: &ObjectId) -> bool {
        self.index.contains_key(id) || self.copied.is_some_and(|pack| pack.contains(id))
    }
}

fn write<'a, W: Write>(
    odb: &'a ObjectDb,
    walked: &Walked,
    options: &PackOptions,
    target: Target<'_>,
    out: W,
    progress: &dyn Progress,
) -> Result<Written<'a, W>, GenerateError> {
    let count = u32::try_from(walked.objects.len()).map_err(|_| GenerateError::TooManyObjects {
        count: walked.objects.len(),
    })?;
    // As git's pack-objects, which counts the objects it does not send within a reused pack.
    let pack_reuse = PackReuse::of(target, walked, options);
    let writing: &dyn Progress = match options.show_writing {
        true => progress,
        false => &Discard,
    };
    let locations = Locations::of(odb, walked);
    let mut sent_per_pack = vec![0u32; odb.packs().len()];
    for i in 0..walked.objects.len() {
        if let Some((pack, _)) = locations.get(i) {
            sent_per_pack[pack] += 1;
        }
    }
    // One stored pack holding exactly what goes is copied as it is, unless stored deltas are
    // searched anew: reusing them, a search tries none of its objects against another (each
    // was tried against its neighbours when the pack was written).
    let whole = match options.window_search {
        Some(limits) if limits.reuse != Reuse::Deltas => None,
        _ => verbatim::whole_pack(odb, &sent_per_pack, count, options),
    };
    // Not a pack whose chains run deeper than the search's depth (git cuts those), nor one
    // whose deltas were made without the islands' bounds.
    let whole = match (whole, options.window_search) {
        (Some(pack), Some(limits)) if !verbatim::chains_within(pack, limits.depth)? => None,
        _ if options.islands.is_some() => None,
        (whole, _) => whole,
    };
    // git counts the other side's versions it may make deltas against too.
    let bases = walked.preferred_bases;
    if let Some(pack) = whole {
        counted(progress, count - pack_reuse.uncounted(count) + bases);
        writing.phase("Writing objects", Some(count.into()));
        let (out, stats) = verbatim::send_whole_pack(pack, count, pack_reuse, out)?;
        writing.add(count.into());
        writing.finish();
        return Ok(Written {
            out,
            stats,
            checksum: pack.index().pack_checksum(),
            entries: Entries::Copied(pack),
        });
    }
    // Not beside a window search: git's tries a pack's whole objects against the other packs'
    // (the larger, newer versions first), which a pack copied in one piece would keep whole.
    let verbatim = match options.window_search {
        None => verbatim::choose(odb, &sent_per_pack, options.ofs_delta),
        Some(_) => None,
    };
    // The pack copied whole is not planned entry by entry: for a clone after pushes it is
    // nearly everything, and a plan of it tens of megabytes.
    let mut plan = plan_of(odb, walked, &locations, verbatim);
    // Stored order for packed objects, walk order (stable) for the rest; the core island's
    // objects before all others (its deltas' bases are in it too).
    let core = (options.islands.as_deref()).filter(|islands| islands.has_core());
    plan.sort_by_key(|p| {
        let outside_core = core.is_some_and(|islands| !islands.in_core(&p.id));
        match p.source {
            Source::Packed { pack, offset, .. } => (outside_core, 0, pack, offset),
            Source::Elsewhere => (outside_core, 1, 0, 0),
        }
    });
    let copied = verbatim.map(|pack| (&*odb.packs()[pack], sent_per_pack[pack]));
    counted(
        progress,
        count - copied.map_or(0, |(_, n)| pack_reuse.uncounted(n)) + bases,
    );

    let index: IdMap<u32> = (plan.iter().enumerate())
        .map(|(i, p)| (p.id, i as u32))
        .collect();
    let sent = Sent {
        index,
        copied: copied.map(|(pack, _)| pack),
    };
    search(odb, walked, &mut plan, &sent, options, progress)?;
    let (memo, copy_check) = match target {
        Target::Stored => (None, CopyCheck::Checked),
        Target::Client(memo) => (memo, CopyCheck::Trusted),
    };
    let remembered = memo.and_then(|memo| {
        let key = copy_key(odb, &plan, walked, options, verbatim, count)?;
        Some((memo, key, memo.recall(&key)))
    });
    let writer = match remembered {
        Some((_, _, Some(checksum))) => PackWriter::with_checksum(out, checksum, count)?,
        _ => PackWriter::new(out, odb.hash(), count)?,
    };
    let known = &walked.known_to_other_side;
    let mut job = Job::new(odb, plan, sent, known, options, writer, copy_check);
    writing.phase("Writing objects", Some(count.into()));
    let copied_crcs = job.write_all(copied, pack_reuse, writing)?;
    let (out, stats, checksum, plan) = match remembered {
        Some((memo, key, recalled)) => job.finish_remembered(memo, key, recalled.is_some())?,
        None => job.finish()?,
    };
    writing.finish();
    Ok(Written {
        out,
        stats,
        checksum,
        entries: Entries::Planned {
            copied: copied.map(|(pack, _)| (pack, copied_crcs)),
            plan,
        },
    })
}

/// Where each object of a walk is stored: the odb's pack number and the index position there,
/// as the walk found them (a bitmap's answer) or looked up once for the rest.
struct Locations<'w> {
    located: &'w [(u32, u32)],
    rest: Vec<Option<(u32, u32)>>,
}

impl<'w> Locations<'w> {
    fn of(odb: &ObjectDb, walked: &'w Walked) -> Self {
        let located = walked.located.as_ref().map_or(&[][..], |l| &l.at[..]);
        let rest = (walked.objects.iter().skip(located.len()))
            .map(|o| odb.locate(&o.id).map(|(p, i)| (p as u32, i as u32)))
            .collect();
        Locations { located, rest }
    }

    fn get(&self, i: usize) -> Option<(usize, usize)> {
        let found = match self.located.get(i) {
            Some(&at) => Some(at),
            None => self.rest.get(i - self.located.len()).copied().flatten(),
        };
        found.map(|(pack, position)| (pack as usize, position as usize))
    }
}

/// Each object of `walked` with where it is stored, in the walk's order, but those of pack
/// number `copied` (copied whole).
fn plan_of(
    odb: &ObjectDb,
    walked: &Walked,
    locations: &Locations<'_>,
    copied: Option<usize>,
) -> Vec<Planned> {
    let mut plan = Vec::new();
    for (i, object) in walked.objects.iter().enumerate() {
        let found = locations.get(i);
        if found.is_some_and(|(pack, _)| Some(pack) == copied) {
            continue;
        }
        let source = match found {
            Some((pack, position)) => Source::Packed {
                pack: pack as u32,
                position: position as u32,
                offset: odb.packs()[pack].index().offset(position),
            },
            None => Source::Elsewhere,
        };
        plan.push(Planned {
            id: object.id,
            source,
            written: None,
            delta: None,
            whole: None,
            crc32: 0,
        });
    }
    plan
}

/// The memo key of a pack that `plan` writes: stored entries copied, loose objects compressed
/// whole, the search's deltas (each a function of its two objects); `None` for a window search
/// (objects compressed anew in bulk), or when what the client has could change what is sent.
fn copy_key(
    odb: &ObjectDb,
    plan: &[Planned],
    walked: &Walked,
    options: &PackOptions,
    verbatim: Option<usize>,
    count: u32,
) -> Option<ObjectId> {
    if options.window_search.is_some() || (options.thin && !walked.known_to_other_side.is_empty()) {
        return None;
    }
    let mut key = CopyKey::new(odb, options, count, verbatim);
    for p in plan {
        if p.whole.is_some() {
            return None;
        }
        match (&p.delta, p.source) {
            // Made by the search: the same delta of the same two contents, compressed alike.
            (Some(delta), _) => key.delta(&p.id, &delta.base),
            (None, Source::Packed { pack, offset, .. }) => key.entry(pack, offset),
            // Compressed whole at the pack's level: the same bytes for the same content.
            (None, Source::Elsewhere) => key.loose(&p.id),
        }
    }
    Some(key.finish())
}

/// Finds deltas for the plan: with a window search, every object its reuse does not keep
/// as stored; else the objects that cannot go as stored (and a thin pack's candidates);
/// records them in `plan`.
fn search(
    odb: &ObjectDb,
    walked: &Walked,
    plan: &mut [Planned],
    sent: &Sent<'_>,
    options: &PackOptions,
    progress: &dyn Progress,
) -> Result<(), GenerateError> {
    let index = &sent.index;
    // As git's pack-objects, where its writing is shown: the threads of the search, said
    // before its phase.
    let asked = (options.window_search).map_or(options.threads, |l| l.threads);
    let threads = sluice_object::threads::workers(asked);
    let said = (options.show_writing && threads > 1)
        .then(|| format!("Delta compression using up to {threads} threads"));
    let progress = &SaidBefore::new(progress, "Compressing objects", said);
    match &options.window_search {
        Some(limits) => {
            let made = search_window(odb, (walked, plan, sent), limits, options, progress)?;
            for (id, made) in made {
                let planned = &mut plan[index[&id] as usize];
                match made {
                    Made::Delta(delta) => planned.delta = Some(Box::new(delta)),
                    Made::Whole {
                        kind,
                        size,
                        compressed,
                    } => planned.whole = Some(Box::new((kind, size, compressed))),
                }
            }
        }
        None => {
            let candidates = delta_candidates(odb, walked, plan, sent, options)?;
            let level = options.compression;
            let found = search_deltas(odb, &candidates, level, progress, &options.cancel);
            let islands = options.islands.as_deref();
            for (id, delta) in found {
                if islands.is_none_or(|islands| islands.allows(&id, &delta.base)) {
                    plan[index[&id] as usize].delta = Some(Box::new(delta));
                }
            }
        }
    }
    // A search asked to stop returns what it found so far.
    Ok(options.cancel.check()?)
}

/// What the delta search gets: every object that would be rebuilt whole; in a thin pack also
/// every stored whole object and every large stored delta with a version the client has at the
/// same path; and as bases, the client's versions (git's preferred bases) and the parent
/// commit's versions sent whole. Reused deltas against sent bases stay out: a new delta
/// against one could close a cycle through stored bases.
fn delta_candidates(
    odb: &ObjectDb,
    walked: &Walked,
    plan: &[Planned],
    sent: &Sent<'_>,
    options: &PackOptions,
) -> Result<Vec<Candidate>, GenerateError> {
    let known = &walked.known_to_other_side;
    let index = &sent.index;
    // The objects of a pack copied whole are not planned: as reused deltas, they are neither
    // searched again nor bases.
    let stored: Vec<Stored> = (plan.iter())
        .map(|p| stored_form(odb, p, sent, known, options))
        .collect::<Result<_, GenerateError>>()?;
    // A client with nothing (a clone) gets new deltas only for what cannot go as stored:
    // with everything reusable, there is no walk of the objects to make.
    if known.is_empty() && walked.known_by_path.is_empty() && !stored.contains(&Stored::Rebuilt) {
        return Ok(Vec::new());
    }
    let stored_of = |id: &ObjectId| index.get(id).map(|&i| stored[i as usize]);
    let client_has = |id: &ObjectId| options.thin && !sent.contains(id) && known.contains(odb, id);
    // Paths (by hash) at which the client has a version.
    let client_paths: std::collections::HashSet<(ObjectKind, u32)> = if options.thin {
        walked
            .known_by_path
            .iter()
            .filter(|k| k.name_hash != 0 && !sent.contains(&k.id))
            .map(|k| (k.kind, k.name_hash))
            .collect()
    } else {
        Default::default()
    };
    // Stored deltas against what the client has are searched again only when that is the
    // edge commits' trees. With a bitmap the client has everything its haves reach, and
    // stored deltas against any of it go as they are, as git sends them: searching them again
    // made a month's fetch of git/git a quarter the size for six times the CPU.
    let research_thin = !known.is_everything_reachable();
    let mut candidates = Vec::new();
    let mut bases = IdSet::default();
    let mut target_paths = std::collections::HashSet::new();
    for object in &walked.objects {
        // Commits and tags only when they must be compressed anyway (loose), as git tries
        // every object it does not reuse.
        let history = matches!(object.kind, ObjectKind::Commit | ObjectKind::Tag);
        if history && stored_of(&object.id) != Some(Stored::Rebuilt) {
            continue;
        }
        let beside_client_version = || {
            object.previous.is_some_and(|p| client_has(&p))
                || client_paths.contains(&(object.kind, object.name_hash))
        };
        let bar = match stored_of(&object.id) {
            Some(Stored::Rebuilt) => None,
            Some(Stored::Whole) if beside_client_version() => None,
            Some(Stored::ThinDelta { size })
                if research_thin && size >= MIN_STORED_DELTA && beside_client_version() =>
            {
                Some(size as usize - 1)
            }
            _ => continue,
        };
        candidates.push(Candidate {
            id: object.id,
            kind: object.kind,
            name_hash: object.name_hash,
            previous: object.previous,
            role: Role::Target { bar },
        });
        target_paths.insert((object.kind, object.name_hash));
        if let Some(previous) = object.previous {
            let usable = client_has(&previous) || stored_of(&previous) == Some(Stored::Whole);
            if usable && bases.insert(previous) {
                candidates.push(Candidate {
                    id: previous,
                    kind: object.kind,
                    name_hash: object.name_hash,
                    previous: None,
                    role: Role::BaseOnly,
                });
            }
        }
    }
    for k in &walked.known_by_path {
        if target_paths.contains(&(k.kind, k.name_hash)) && client_has(&k.id) && bases.insert(k.id)
        {
            candidates.push(Candidate {
                id: k.id,
                kind: k.kind,
                name_hash: k.name_hash,
                previous: None,
                role: Role::BaseOnly,
            });
        }
    }
    // A base that is a target itself is listed once, as a target.
    let targets: IdSet = candidates
        .iter()
        .filter(|c| c.role != Role::BaseOnly)
        .map(|c| c.id)
        .collect();
    candidates.retain(|c| c.role != Role::BaseOnly || !targets.contains(&c.id));
    Ok(candidates)
}

/// Stored thin deltas smaller than this are kept without a search.
const MIN_STORED_DELTA: u64 = 1024;

/// How `planned` would go out without a new delta, given the objects sent (`sent`) and
/// those the client has.
fn stored_form(
    odb: &ObjectDb,
    planned: &Planned,
    sent: &Sent<'_>,
    known: &KnownObjects,
    options: &PackOptions,
) -> Result<Stored, GenerateError> {
    Ok(match stored_entry(odb, planned)? {
        StoredEntry::Whole => Stored::Whole,
        StoredEntry::Delta {
            base: Some(base), ..
        } if sent.contains(&base) => Stored::ReusableDelta,
        StoredEntry::Delta {
            base: Some(base),
            size,
        } if options.thin && known.contains(odb, &base) => Stored::ThinDelta { size },
        StoredEntry::Delta { .. } | StoredEntry::NotPacked => Stored::Rebuilt,
    })
}
