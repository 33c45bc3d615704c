//! Everything the refs reach, in one pack of this repository's own, and nothing else: what
//! `git repack -a -d` leaves, which `clone --dissociate` needs before it stops borrowing from
//! its alternates.

use crate::stats::PackStats;
use crate::stored::{stored_pack_options, write_packs_into};
use crate::tips::{branch_tips, first_bad_ref, walk_tips};
use crate::window_search::{Reuse, SearchLimits};
use crate::{BitmapChoice, GenerateError};
use sluice_graph::promised::only_promised_missing;
use sluice_graph::{walk_objects, Missing, ObjectFilter, WalkError, WalkRequest, Walked};
use sluice_object::cancel::Cancel;
use sluice_object::progress::{Discard, Progress};
use sluice_object::{IdSet, ObjectId};
use sluice_odb::pack_store::StoreError;
use sluice_odb::{ConfigError, LockError, ObjectDb, OdbError, Pack};
use sluice_repo::{RefError, Repository};
use std::path::{Path, PathBuf};

/// Why the repack failed; the repository's packs are as they were unless the new one is in.
#[derive(Debug, thiserror::Error)]
pub enum RepackError {
    /// The refs could not be read.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// What keeps objects alive could not be read: nothing is removed.
    #[error(transparent)]
    Roots(#[from] sluice_repo::RootsError),
    /// The objects could not be counted.
    #[error(transparent)]
    Walk(#[from] WalkError),
    /// The object database could not be read.
    #[error(transparent)]
    Odb(#[from] OdbError),
    /// A setting has a value of the wrong type.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The pack could not be written.
    #[error(transparent)]
    Generate(#[from] GenerateError),
    /// The pack could not be stored.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `objects/info/packs` could not be written.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// `info/refs` or `objects/info/packs` could not be written.
    #[error(transparent)]
    ServerInfo(#[from] sluice_repo::server_info::ServerInfoError),
    /// `--filter` with a bitmap asked for (or written by default): the new pack does not hold
    /// everything its commits reach, so git fails too (before anything changes, here).
    #[error("failed to write bitmap index")]
    FilterWithBitmap,
    /// A file of the object directory could not be listed, removed or made.
    #[error("cannot {action} '{}'", path.display())]
    File {
        /// What was done to it.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The bitmap could not be written.
    #[error(transparent)]
    Bitmap(#[from] sluice_graph::bitmap::BitmapWriteError),
    /// The repository's shallow file could not be read.
    #[error(transparent)]
    Repo(#[from] sluice_repo::RepoError),
    /// The multi-pack-index could not be written or removed.
    #[error(transparent)]
    Midx(#[from] sluice_odb::midx::MidxError),
    /// A ref (or HEAD) names an object the repository lacks (a pack went missing): git's
    /// words, before anything changes.
    #[error("bad object {0}")]
    BadObject(String),
}

/// What a repack walks: everything `tips` reach (down to a shallow repository's cut, the
/// commits `shallow`), less what `options`' filter leaves out. In a partial clone (`partial`:
/// it has promisor packs) what the promisor remote has may be missing: set aside for the
/// caller to check that nothing else is.
fn repack_walk<'a>(
    (tips, shallow): (&'a [ObjectId], &'a IdSet),
    options: &RepackOptions,
    partial: bool,
) -> WalkRequest<'a> {
    WalkRequest {
        shallow,
        filter: (options.filter.as_ref()).map_or(ObjectFilter::None, |f| f.filter),
        missing: match partial {
            true => Missing::SetAside,
            false => Missing::Fail,
        },
        ..WalkRequest::reachable(tips, &[], options.cancel.clone())
    }
}

/// A file error, naming the file and what was done to it.
pub(crate) fn file_error(
    action: &'static str,
    path: &Path,
) -> impl FnOnce(std::io::Error) -> RepackError {
    let path = path.to_owned();
    move |source| RepackError::File {
        action,
        path,
        source,
    }
}

/// Writes one pack of every object the repository's roots reach ([`sluice_repo::Roots`]: refs,
/// `HEAD`s, reflogs, indexes), whether stored here or in an alternate, then removes the repository's other packs and the loose objects the new
/// pack holds, and lists it in `objects/info/packs`.
///
/// Stored deltas are copied as they are wherever their base goes in too, the alternates' packs
/// included, so borrowed history is not compressed anew.
pub fn repack_all(repo: &Repository) -> Result<PackStats, RepackError> {
    Ok(repack_all_with(repo, &RepackOptions::default(), &Discard)?.stats)
}

/// Every object `tips` reach, unfiltered: what a cruft pack beside `--filter` must not take.
fn reachable_ids(
    odb: &ObjectDb,
    (tips, shallow): (&[ObjectId], &IdSet),
    cancel: &Cancel,
) -> Result<sluice_object::IdSet, RepackError> {
    let request = WalkRequest {
        shallow,
        ..WalkRequest::reachable(tips, &[], cancel.clone())
    };
    let walked = walk_objects(odb, &request, &Discard)?;
    Ok(walked.objects.iter().map(|o| o.id).collect())
}

/// How `repack -a -d` runs.
#[derive(Debug, Clone, Default)]
pub struct RepackOptions {
    /// Whether the new pack gets a reachability bitmap.
    pub bitmap: BitmapChoice,
    /// `-A --unpack-unreachable=<time>`: the objects of the old packs that the new one leaves
    /// out are kept as loose objects (dated as their pack) when the pack is younger than this,
    /// for a later prune to judge, rather than dropped with the pack (`-a`). Without it, the
    /// packs of the last [`RECENT_PACK`] are treated so anyway.
    pub unpack_unreachable: Option<std::time::SystemTime>,
    /// Leave out the objects an alternate has (`-l`, `--local`): a fork's pack holds only
    /// what is its own. No bitmap is then written (it needs every object it reaches in the
    /// pack), as git skips it.
    pub local: bool,
    /// `Some`: every delta searched anew within these limits (`-f`), none reused.
    pub window_search: Option<SearchLimits>,
    /// Write a multi-pack-index of the packs left (`--write-midx`).
    pub write_midx: bool,
    /// `Some`: what no ref reaches goes into a cruft pack (`--cruft`), not loose; then
    /// `unpack_unreachable` is not used.
    pub cruft: Option<CruftOptions>,
    /// Packs left as they are, by file name (`--keep-pack`), as if they had a `.keep` file;
    /// their objects are never repacked.
    pub keep_packs: Vec<String>,
    /// Whether the objects of `.keep` packs go into the new pack too (`--pack-kept-objects`);
    /// `None`: as `repack.packKeptObjects` says, else when a bitmap was asked for (which needs
    /// every object it reaches), as git's repack (and so git's gc) decides.
    pub pack_kept_objects: Option<bool>,
    /// The objects of the replaced packs that no ref reaches go into the new pack (`-k`).
    pub keep_unreachable: bool,
    /// Stops the walk, the delta search and the writing between two objects.
    pub cancel: Cancel,
    /// `-a` without `-d`: the new pack is written beside the old ones, which stay, as do the
    /// loose objects (no `--cruft`, no `--filter` then).
    pub keep_old: bool,
    /// Leave the dumb-HTTP files as they are (`-n`), whatever `repack.updateServerInfo` says.
    pub skip_server_info: bool,
    /// The largest new pack, in bytes ([`crate::PackSizeLimit`]: `--max-pack-size`, else
    /// `pack.packSizeLimit`); `None`: one pack however large.
    pub max_pack_size: Option<u64>,
    /// `--filter=<spec>`: what the filter leaves out goes into a pack of its own
    /// ([`crate::FilterOut`]), not into the new one. No bitmap can then be written.
    pub filter: Option<crate::FilterOut>,
    /// `Some`: no delta of the new pack crosses the bounds of these delta islands (`-i`).
    pub islands: Option<crate::IslandRules>,
}

/// How a cruft pack is made (`--cruft`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CruftOptions {
    /// Objects older than this are left out (`--cruft-expiration`); `None`: none expire.
    pub expiration: Option<std::time::SystemTime>,
    /// The largest new cruft pack, in bytes (`--max-cruft-size`, else the new packs' limit);
    /// `None`: one pack however large.
    pub max_size: Option<u64>,
    /// `Some(n)`: the existing cruft packs that together stay within n bytes, smallest
    /// first, are combined into the new one; the others stay as they are (git 2.47's
    /// `--max-cruft-size` given without `--cruft-expiration`). `None`: every one is combined.
    pub combine_below: Option<u64>,
}

/// How recent a pack must be for its objects to be kept (loose) although no ref reaches them:
/// a push moves its pack in before it updates its refs, and a repack that read the refs in
/// between must not drop the pushed objects with the old packs. git's `repack -a -d` drops
/// them; its gc keeps them through `-A` and the prune grace period.
pub const RECENT_PACK: std::time::Duration = std::time::Duration::from_secs(3600);

/// [`repack_all`], as `options` say, showing its phases on `progress` as git's repack shows
/// them (enumerating, counting, compressing, writing, bitmaps); returns what went into the
/// pack, for git's "Total" line.
pub fn repack_all_with(
    repo: &Repository,
    options: &RepackOptions,
    progress: &dyn Progress,
) -> Result<Repacked, RepackError> {
    if options.filter.is_some() && options.bitmap.wanted() {
        return Err(RepackError::FilterWithBitmap);
    }
    let objects_dir = repo.objects().dir().to_owned();
    // Refs first, then packs: every object a ref read here names is in a pack listed after
    // it (or loose), since a push moves its objects in before it updates its refs.
    let refs = repo.refs().list()?;
    let head = repo.refs().resolve("HEAD").ok().and_then(|(_, id)| id);
    let roots = sluice_repo::Roots::read(repo)?;
    let shallow = repo.shallow_set()?;
    let mut split = crate::left_alone::split_packs(
        pack_files(&sluice_odb::pack_dir(&objects_dir))?,
        &options.keep_packs,
    );
    let promised = crate::promisor::take_promised(&mut split.kept);
    let before = split.replaced.clone();
    let odb = repo.objects().with_alternate_packs();
    if let Some(name) = first_bad_ref(repo, &refs, head, &odb) {
        return Err(RepackError::BadObject(name));
    }
    let branches = branch_tips(&refs, head);
    let tips = walk_tips(&roots, &odb);
    let research = (options.window_search).is_some_and(|l| l.reuse != Reuse::Deltas);
    let speculate = speculates_bitmaps(options, &odb, &before);
    let (walked, early) = std::thread::scope(|scope| {
        let early =
            speculate.then(|| scope.spawn(|| early_bitmaps(repo, &odb.packs()[0], &branches)));
        // Promisor packs kept by a `.keep` count too: what they name may be missing all the same.
        let partial = !(promised.replaced.is_empty() && promised.kept.is_empty());
        let request = repack_walk((&tips, &shallow), options, partial);
        let walked = match research {
            false => walk_objects(&odb, &request, progress),
            true => sluice_graph::traverse_objects(&odb, &request, progress),
        };
        (
            walked,
            early.and_then(|thread| thread.join().ok().flatten()),
        )
    });
    let mut walked = walked?;
    only_promised_missing(&odb, &walked.missing, &options.cancel)?;
    let mut write_bitmap = options.bitmap.wanted();
    if options.local && crate::left_alone::leave_out_borrowed(&odb, &mut walked) {
        write_bitmap = false;
    }
    let mut left_alone: Vec<&Path> = split.named.iter().map(PathBuf::as_path).collect();
    if !packs_kept_objects(repo, options)? {
        left_alone.extend(split.kept.iter().map(PathBuf::as_path));
    }
    // A partial clone's promisor packs become one (as git's repack does); their objects stay
    // out of the new pack of the repository's own.
    let promisor =
        crate::promisor::write_promisor_pack(repo, &promised.all(), progress, &options.cancel)?;
    left_alone.extend(promisor.as_ref().map(|(pack, _)| pack.as_path()));
    // The multi-pack-index's bitmap covers the packs left alone too, as git's does: what is
    // borrowed stops it, and so (unlike git, whose bitmap walk passes over what a promisor
    // remote holds) does a partial clone's missing history.
    let midx_bitmap = write_bitmap && promisor.is_none();
    if crate::left_alone::leave_out(&mut walked, &left_alone, repo.hash())? {
        // A bitmap needs every object it reaches in its pack: git disables it too.
        write_bitmap = false;
    }
    // As git's repack, which asks for them only where it replaces packs.
    if options.keep_unreachable && !options.keep_old && !before.is_empty() {
        crate::left_alone::keep_unreachable(&mut walked, &before, repo.hash())?;
        crate::left_alone::keep_loose(&mut walked, &objects_dir, repo.hash())?;
    }
    // Everything the roots reach came from the promisor remote: the promisor pack is the new
    // pack, as git then writes no other.
    let (new_packs, stats, islands) = match promisor.clone() {
        Some((pack, stats)) if walked.objects.is_empty() => (vec![pack], stats, None),
        _ => write_new_packs(repo, (&odb, &refs), &walked, options, progress)?,
    };
    let packed = (new_packs.iter())
        .map(|new| Pack::open(&new.with_extension("idx"), repo.hash()))
        .collect::<Result<Vec<_>, _>>()?;
    let (old_packs, retained) = replaced_packs(options, &before, &new_packs)?;
    // The packs left alone stand beside the new ones: what they hold is neither cruft nor to
    // loosen, and its loose copies go as packed.
    let left_alone = (left_alone.iter())
        .map(|path| Pack::open(&path.with_extension("idx"), repo.hash()))
        .collect::<Result<Vec<_>, _>>()?;
    // Before the old packs go, so that their bitmap can be carried over and a reader never
    // finds the new pack without one. Packs cut by a size limit get none, as in git.
    let split = packed.len() > 1;
    if let ([packed], true) = (&packed[..], write_bitmap || early.is_some()) {
        let new = NewPack {
            packed,
            walked: &walked,
            branches: &branches,
        };
        write_new_bitmap(repo, &odb, &new, (early, write_bitmap), &before, progress)?;
    }
    // git's pack-objects ends with its Total, before the cruft and multi-pack-index phases.
    if !new_packs.is_empty() {
        progress.note(&stats.to_string());
    }
    let left_out = LeftOut {
        new: &packed,
        old: &old_packs,
        retained: &retained,
        left_alone: &left_alone,
    };
    let (filtered, cruft_packs) = place_left_out(repo, &odb, &left_out, &tips, options, progress)?;
    // A cruft pack the same as an old one has that one's name: it stays.
    for old in old_packs.iter().filter(|old| !cruft_packs.contains(old)) {
        remove_pack(old)?;
    }
    let replaced = match options.keep_old {
        true => &[][..],
        false => &promised.replaced[..],
    };
    let promisor = crate::promisor::replace_promised(repo, replaced, promisor)?;
    let cruft = (cruft_packs.iter())
        .map(|p| Pack::open(&p.with_extension("idx"), repo.hash()))
        .collect::<Result<Vec<_>, _>>()?;
    // The filtered pack counts where it is the repository's own (beside the new one).
    let own = sluice_odb::pack_dir(&objects_dir);
    let filtered = filtered.filter(|f| f.path().parent() == Some(own.as_path()));
    if !options.keep_old {
        prune_packed(&odb, |id| {
            (packed
                .iter()
                .chain(&cruft)
                .chain(&promisor)
                .chain(&filtered)
                .chain(&left_alone))
            .any(|pack| pack.contains(id))
        })?;
    }
    if options.write_midx {
        write_midx_after(repo, options, (new_packs.first(), midx_bitmap), progress)?;
    }
    refresh_server_info(repo, options.skip_server_info)?;
    Ok(Repacked {
        stats,
        bitmap_dropped: split && write_bitmap,
        nothing_new: new_packs.is_empty(),
        islands,
    })
}

/// The packs of `before` the new ones replace, and the cruft packs kept whole (below
/// `--max-cruft-size`): not those written again (`new`), nor the kept cruft; none with
/// `keep_old` (`-a` without `-d`, where nothing is loosened or pruned either).
fn replaced_packs(
    options: &RepackOptions,
    before: &[PathBuf],
    new: &[PathBuf],
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), RepackError> {
    let retained = match options.cruft.and_then(|cruft| cruft.combine_below) {
        Some(n) => crate::cruft::retained_cruft_packs(before, n)?,
        None => Vec::new(),
    };
    let replaced = (before.iter())
        .filter(|old| !new.contains(old) && !retained.contains(old) && !options.keep_old)
        .cloned()
        .collect();
    Ok((replaced, retained))
}

/// Whether the objects of `.keep` packs go into the new pack too: `--[no-]pack-kept-objects`,
/// else `repack.packKeptObjects`, else when a pack bitmap was asked for (which needs every
/// object it reaches; with `--write-midx` the multi-pack-index's bitmap covers the kept packs
/// too), as git's repack (and so git's gc) decides.
fn packs_kept_objects(repo: &Repository, options: &RepackOptions) -> Result<bool, RepackError> {
    let asked = options.bitmap == BitmapChoice::Asked && !options.write_midx;
    Ok(match options.pack_kept_objects {
        Some(given) => given,
        None => (repo.config().get_bool("repack.packkeptobjects")?).unwrap_or(asked),
    })
}

/// `--write-midx`: the multi-pack-index of the packs left, with its bitmap where one is
/// written, the new pack (`first_new`) first in the bitmap's order, so that its own bitmap is
/// carried over whole (it stays beside the multi-pack-index's, which git reads first).
fn write_midx_after(
    repo: &Repository,
    options: &RepackOptions,
    (first_new, write_bitmap): (Option<&PathBuf>, bool),
    progress: &dyn Progress,
) -> Result<(), RepackError> {
    if write_bitmap {
        let name =
            (first_new.and_then(|pack| pack.file_name())).map(|n| n.to_string_lossy().into_owned());
        crate::write_midx_bitmap(repo, name, progress, &options.cancel)?;
    } else {
        sluice_odb::midx::write_midx(&repo.objects().pack_dir(), repo.hash())?;
    }
    Ok(())
}

/// Whether the bitmaps of the one pack there are built while the objects are counted: with
/// one pack and no bitmap to carry over, the new pack is most likely that pack again (a fresh
/// clone holds only what its refs reach), and they are used if the pack written is indeed the
/// same. Not beside a search of every delta anew, which wants every core and writes another
/// pack. (Reusing stored deltas, a search of one pack's objects tries nothing: each was tried
/// against its neighbours when that pack was written.)
fn speculates_bitmaps(options: &RepackOptions, odb: &ObjectDb, before: &[PathBuf]) -> bool {
    let research = (options.window_search).is_some_and(|l| l.reuse != Reuse::Deltas);
    options.bitmap.wanted()
        && !research
        && odb.packs().len() == 1
        && odb.alternates().is_empty()
        && !before.iter().any(|p| p.with_extension("bitmap").exists())
}

/// What a repack wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repacked {
    /// What went into the new packs, for git's "Total" line.
    pub stats: PackStats,
    /// A bitmap was asked for but the new pack was cut by `pack.packSizeLimit`: none was
    /// written (git warns "disabling bitmap writing, packs are split due to
    /// pack.packSizeLimit").
    pub bitmap_dropped: bool,
    /// The roots reach nothing to pack (an empty repository, or everything in packs left
    /// alone): no new pack was written, and git says "Nothing new to pack.".
    pub nothing_new: bool,
    /// With delta islands: what their marking found, for git's words.
    pub islands: Option<crate::Marked>,
}

/// The new packs of everything in `walked`, cut under `options.max_pack_size`, within the
/// bounds of the delta islands of `refs` when asked; and what the islands' marking found.
fn write_new_packs(
    repo: &Repository,
    (odb, refs): (&ObjectDb, &[(String, ObjectId)]),
    walked: &Walked,
    options: &RepackOptions,
    progress: &dyn Progress,
) -> Result<(Vec<PathBuf>, PackStats, Option<crate::Marked>), RepackError> {
    // git's pack-objects writes no pack of nothing (`--non-empty`).
    if walked.objects.is_empty() {
        return Ok((Vec::new(), PackStats::default(), None));
    }
    let mut pack_options = stored_pack_options(repo, options.window_search, &options.cancel)?;
    if let Some(rules) = &options.islands {
        let islands = crate::islands::mark(odb, rules, refs, walked, progress)?;
        pack_options.islands = Some(std::sync::Arc::new(islands));
    }
    let marked = pack_options
        .islands
        .as_ref()
        .map(|islands| islands.marked());
    let limits = (&pack_options, options.max_pack_size);
    let (stored, stats) = write_packs_into(repo, odb, walked, limits, progress)?;
    Ok((stored.into_iter().map(|s| s.pack).collect(), stats, marked))
}

/// The new packs, the old ones they replace, and the cruft packs kept as they are.
struct LeftOut<'a> {
    new: &'a [Pack],
    old: &'a [PathBuf],
    retained: &'a [PathBuf],
    /// Packs the repack leaves as they are (kept, named, the promisor pack).
    left_alone: &'a [Pack],
}

/// What the new packs leave out of the packs they replace: the filter's share into a pack of
/// its own first; beside cruft packs, only what the roots reach (the rest is the cruft packs'
/// to judge); then what no ref reaches into cruft packs (but what the cruft packs kept hold),
/// or loose (`-A`, and the packs of the last [`RECENT_PACK`]). Returns the filtered pack and
/// the new cruft packs.
fn place_left_out(
    repo: &Repository,
    odb: &ObjectDb,
    left_out: &LeftOut<'_>,
    tips: &[ObjectId],
    options: &RepackOptions,
    progress: &dyn Progress,
) -> Result<(Option<Pack>, Vec<PathBuf>), RepackError> {
    let (packed, old_packs) = (left_out.new, left_out.old);
    let filtered = match &options.filter {
        Some(filter_out) => {
            let reachable = match options.cruft {
                Some(_) => {
                    let shallow = repo.shallow_set()?;
                    Some(reachable_ids(odb, (tips, &shallow), &options.cancel)?)
                }
                None => None,
            };
            let written: Vec<&Path> = packed.iter().map(Pack::path).collect();
            let only = reachable.as_ref();
            crate::filtered::write_filtered_pack(
                repo,
                (old_packs, &written, only),
                filter_out,
                progress,
                &options.cancel,
            )?
        }
        None => None,
    };
    let filtered = (filtered.as_ref())
        .map(|p| Pack::open(&p.with_extension("idx"), repo.hash()))
        .transpose()?;
    let cruft_packs = match &options.cruft {
        Some(cruft) => {
            let retained = (left_out.retained.iter())
                .map(|p| Pack::open(&p.with_extension("idx"), repo.hash()))
                .collect::<Result<Vec<_>, _>>()?;
            let survivors: Vec<&Pack> = (packed.iter().chain(filtered.as_ref()))
                .chain(&retained)
                .chain(left_out.left_alone)
                .collect();
            crate::cruft::write_cruft_packs(
                repo,
                odb,
                (&survivors, old_packs),
                cruft,
                (progress, &options.cancel),
            )?
        }
        // What the new pack leaves out is in the filtered pack: none is loosened.
        None if options.filter.is_some() => Vec::new(),
        None => {
            let since = (options.unpack_unreachable)
                .unwrap_or_else(|| std::time::SystemTime::now() - RECENT_PACK);
            for old in old_packs {
                crate::left_alone::loosen_left_out(old, packed, repo.objects().dir(), repo, since)?;
            }
            Vec::new()
        }
    };
    Ok((filtered, cruft_packs))
}

/// The new pack, what went into it, and the branch tips its bitmap favours.
struct NewPack<'a> {
    packed: &'a Pack,
    walked: &'a Walked,
    branches: &'a [ObjectId],
}

/// The new pack's bitmap: the one built early when it describes this pack, else built now
/// when `write_bitmap` (carrying over what a replaced pack's bitmap had).
fn write_new_bitmap(
    repo: &Repository,
    odb: &ObjectDb,
    new: &NewPack<'_>,
    (early, write_bitmap): (Option<sluice_graph::bitmap::CommitBitmaps>, bool),
    before: &[PathBuf],
    progress: &dyn Progress,
) -> Result<(), RepackError> {
    let format = sluice_graph::bitmap::BitmapFormat::from_config(repo.config())?;
    match early.filter(|bitmaps| bitmaps.describes(new.packed)) {
        Some(bitmaps) => {
            // Built already: their phases are over.
            bitmaps.show_made(progress);
            let target = sluice_graph::bitmap::BitmapTarget::Pack(new.packed);
            sluice_graph::bitmap::write_bitmap_file(&target, new.walked, &bitmaps, format)?;
        }
        None if write_bitmap => {
            let replaced = (before.iter())
                .find(|old| old.with_extension("bitmap").exists())
                .map(|old| Pack::open(&old.with_extension("idx"), repo.hash()))
                .transpose()?;
            sluice_graph::bitmap::write_bitmap(
                new.packed,
                odb,
                new.walked,
                new.branches,
                replaced.as_ref(),
                (progress, format),
            )?;
        }
        None => {}
    }
    Ok(())
}

/// The bitmaps of `pack`'s selected commits (`branches` among them), built without counting
/// its objects; `None` when that cannot be done (a commit outside the pack, one unreadable):
/// the repack then builds them the usual way.
fn early_bitmaps(
    repo: &Repository,
    pack: &Pack,
    branches: &[ObjectId],
) -> Option<sluice_graph::bitmap::CommitBitmaps> {
    let commits = sluice_graph::commit_graph::commits_newest_first(repo).ok()?;
    let objects = repo.objects();
    let commits = sluice_graph::bitmap::CommitsIn::Read(&commits);
    let target = sluice_graph::bitmap::BitmapTarget::Pack(pack);
    sluice_graph::bitmap::build_commit_bitmaps(&target, objects, commits, branches, None, &Discard)
        .ok()
}

/// After a repack, the dumb-HTTP files (`info/refs`, `objects/info/packs`), as git's repack
/// refreshes them: unless `skip` (`-n`) or `repack.updateServerInfo` is false.
pub(crate) fn refresh_server_info(repo: &Repository, skip: bool) -> Result<(), RepackError> {
    let wanted = repo.config().get_bool("repack.updateserverinfo")?;
    if !skip && wanted.unwrap_or(true) {
        sluice_repo::server_info::update_server_info(repo)?;
    }
    Ok(())
}

/// The packs of a pack directory, as git counts them: each `.pack` with its `.idx`.
pub fn pack_files(dir: &Path) -> Result<Vec<PathBuf>, RepackError> {
    let mut packs = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(packs),
        Err(e) => return Err(file_error("read", dir)(e)),
    };
    for entry in entries {
        let path = entry.map_err(file_error("read", dir))?.path();
        // A pack is a `.pack` with its `.idx`, as git counts them: a `.pack` alone, or a
        // temporary one (`.tmp-…`, another repack still writing), is none of this repack's
        // business, and is left as it is.
        let temporary = path
            .file_name()
            .is_some_and(|name| name.as_encoded_bytes().starts_with(b"."));
        let indexed = path.with_extension("idx").is_file();
        if path.extension().is_some_and(|x| x == "pack") && indexed && !temporary {
            packs.push(path);
        }
    }
    Ok(packs)
}

/// Removes a pack with the files that go with it; the index goes first, so that nothing
/// finds a pack without its data. A multi-pack-index beside it goes before both: it would
/// name a pack that is gone (git's repack removes it too, unless it writes a new one).
pub(crate) fn remove_pack(pack: &Path) -> Result<(), RepackError> {
    if let Some(dir) = pack.parent() {
        sluice_odb::midx::remove_midx(dir)?;
    }
    for extension in ["idx", "pack", "rev", "bitmap", "mtimes", "keep", "promisor"] {
        let file = pack.with_extension(extension);
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(file_error("remove", &file)(e)),
        }
    }
    sluice_odb::written::note_written();
    Ok(())
}

/// Removes the loose objects `packed` says a pack holds, and the fan-out directories that
/// leaves empty (`git prune-packed`).
pub(crate) fn prune_packed(
    odb: &ObjectDb,
    packed: impl Fn(&ObjectId) -> bool,
) -> Result<(), RepackError> {
    let dir = odb.dir();
    for file in (odb.loose().list()).map_err(file_error("list", dir))? {
        if packed(&file.id) {
            std::fs::remove_file(&file.path).map_err(file_error("remove", &file.path))?;
        }
    }
    for fanout in 0..=255u8 {
        // Only an empty directory goes; one with other files stays.
        let _ = std::fs::remove_dir(dir.join(format!("{fanout:02x}")));
    }
    sluice_odb::written::note_written();
    Ok(())
}
