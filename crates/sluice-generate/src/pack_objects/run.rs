//! pack-objects' steps, in git's order, once its command line is read: the objects selected
//! (less what packfile URIs serve), the unreachable ones asked for, the tags that follow,
//! the delta islands, then the pack written to a stream or stored (its unreachable objects
//! loosened, its bitmap where `--all` went into one pack).

use super::Unreachable;
use super::{add_unreachable, include_tags, loosen_unreachable, select, Filters, Selection};
use crate::packfile_uris::PackfileUris;
use crate::{IslandRules, Marked, PackOptions, PackStats, RepackError};
use sluice_graph::bitmap::{write_bitmap, BitmapFormat};
use sluice_object::progress::Progress;
use sluice_odb::pack_store::Stored;
use sluice_odb::{ObjectDb, Pack};
use sluice_pack::idx::IdxWriteOptions;
use sluice_repo::Repository;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What pack-objects packs, read from its command line.
pub struct PackObjectsJob<'a> {
    /// The objects or revisions named on standard input.
    pub selection: Selection,
    /// What is left out although named.
    pub filters: Filters<'a>,
    /// What no revision reaches that goes in too.
    pub unreachable: Unreachable,
    /// `--include-tag`.
    pub include_tag: bool,
    /// `--delta-islands`: the rules, read before anything is walked.
    pub islands: Option<IslandRules>,
    /// The packfile URIs configured, and the protocols the client takes them over.
    pub uris: (PackfileUris, &'a [String]),
    /// How the pack is written (its islands are set from `islands`).
    pub options: PackOptions,
}

/// Where the pack goes.
pub enum PackOutput<'a> {
    /// `--stdout`.
    Stream(&'a mut dyn Write),
    /// `<base-name>`: stored packs with their indexes.
    Stored(StoredOutput<'a>),
}

/// A pack stored at a base name.
pub struct StoredOutput<'a> {
    /// `<base-name>`.
    pub base: &'a Path,
    /// `--index-version`, else the configuration's.
    pub index: Option<IdxWriteOptions>,
    /// The largest pack, in bytes.
    pub limit: Option<u64>,
    /// `--non-empty`: nothing written when nothing is packed.
    pub non_empty: bool,
    /// `--unpack-unreachable`: what the other packs hold that the new one does not is
    /// written loose, for packs written after this.
    pub loosen_after: Option<SystemTime>,
    /// `--write-bitmap-index` (`Some(false)`: `--write-bitmap-index-quiet`), with `--all`.
    pub bitmap: Option<bool>,
}

/// What pack-objects says as it goes, in git's order.
pub trait PackObjectsMessages {
    /// A packfile URI line the client downloads instead of objects (on the pack's stream).
    fn uri(&self, line: &str);
    /// A loose object that could not be examined (git warns and goes on).
    fn unexaminable(&self, path: &Path);
    /// The delta islands marked.
    fn islands(&self, marked: Marked);
    /// No bitmap, and git's reason, where one was asked for loudly.
    fn no_bitmap(&self, why: &str);
}

/// What was written.
pub struct PackedObjects {
    /// The stored packs (none for a stream, or `--non-empty` with nothing to pack).
    pub stored: Vec<Stored>,
    /// What went into the pack, for git's "Total" line (`None`: nothing written).
    pub stats: Option<PackStats>,
}

/// Runs pack-objects' steps for `job`, writing to `output`.
pub fn pack_objects(
    repo: &Repository,
    mut job: PackObjectsJob<'_>,
    output: PackOutput<'_>,
    (progress, messages): (&dyn Progress, &dyn PackObjectsMessages),
) -> Result<PackedObjects, RepackError> {
    let odb = repo.objects().with_alternate_packs();
    let mut walked = select(&odb, &job.selection, &job.filters, progress)?;
    let (uris, protocols) = &job.uris;
    for line in uris.leave_out(&odb, &mut walked, protocols) {
        messages.uri(&line);
    }
    let unreachable = job.unreachable;
    for path in add_unreachable(repo, &odb, &mut walked, unreachable, &job.filters)? {
        messages.unexaminable(&path);
    }
    if job.include_tag {
        include_tags(repo, &odb, &mut walked)?;
    }
    if let Some(rules) = &job.islands {
        let refs = repo.refs().list()?;
        let islands = crate::mark_islands(&odb, rules, &refs, &walked, progress)?;
        messages.islands(islands.marked());
        job.options.islands = Some(std::sync::Arc::new(islands));
    }
    let stored = match output {
        PackOutput::Stream(out) => {
            let (_, stats) = crate::write_pack(&odb, &walked, &job.options, out, progress)?;
            return Ok(PackedObjects {
                stored: Vec::new(),
                stats: Some(stats),
            });
        }
        PackOutput::Stored(stored) => stored,
    };
    if stored.non_empty && walked.objects.is_empty() {
        return Ok(PackedObjects {
            stored: Vec::new(),
            stats: None,
        });
    }
    let (index, limit) = (stored.index.as_ref(), stored.limit);
    let (options, base) = (&job.options, stored.base);
    let written = crate::write_stored_at(
        repo,
        (&odb, &walked),
        options,
        base,
        (index, limit),
        progress,
    )?;
    let (packs, stats) = written;
    let paths: Vec<PathBuf> = packs.iter().map(|stored| stored.pack.clone()).collect();
    if let Some(after) = stored.loosen_after {
        loosen_unreachable(repo, &paths, after, &job.filters)?;
    }
    if let Some(loud) = stored.bitmap {
        let said = |why: &str| {
            if loud {
                messages.no_bitmap(why)
            }
        };
        bitmap_of_all(
            repo,
            (&odb, &job.selection),
            (&walked, &packs),
            progress,
            said,
        )?;
    }
    Ok(PackedObjects {
        stored: packs,
        stats: Some(stats),
    })
}

/// `--write-bitmap-index` with `--all`: a bitmap beside the one pack written, as git; none
/// where the pack was cut by a size limit or some objects were left out, with git's reason.
fn bitmap_of_all(
    repo: &Repository,
    (odb, selection): (&ObjectDb, &Selection),
    (walked, packs): (&sluice_graph::Walked, &[Stored]),
    progress: &dyn Progress,
    said: impl Fn(&str),
) -> Result<(), RepackError> {
    match (selection.bitmap_tips(), packs) {
        (Some(tips), [stored]) => {
            let packed = Pack::open(&stored.pack.with_extension("idx"), repo.hash())?;
            let format = BitmapFormat::from_config(repo.config())?;
            write_bitmap(&packed, odb, walked, tips, None, (progress, format))?;
        }
        (Some(_), _) => said("packs are split due to pack.packSizeLimit"),
        (None, _) => said("as some objects are not being packed"),
    }
    Ok(())
}
