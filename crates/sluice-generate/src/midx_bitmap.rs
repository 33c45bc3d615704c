//! A multi-pack-index with its bitmap (`multi-pack-index write --bitmap`, `repack
//! --write-midx -b`): counting stays on bitmaps when history is spread over several packs,
//! as after a geometric repack, without rewriting the big pack.

use crate::repack::RepackError;
use crate::tips::branch_tips;
use sluice_object::cancel::Cancel;
use sluice_object::parse::{parse_commit, parse_tag};
use sluice_object::progress::Progress;
use sluice_object::{IdSet, ObjectId, ObjectKind};
use sluice_odb::midx::{write_midx_with, MidxOptions, MidxSummary};
use sluice_repo::Repository;

/// Writes the multi-pack-index of every pack of `repo` and its bitmap of everything the refs
/// reach; the preferred pack (given, else the oldest) comes first in its bit order, and a
/// pack bitmap there, if any, is carried over rather than rebuilt.
pub fn write_midx_bitmap(
    repo: &Repository,
    preferred_pack: Option<String>,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<MidxSummary, RepackError> {
    let request = MidxBitmap {
        preferred_pack,
        ..MidxBitmap::default()
    };
    write_midx_bitmap_of(repo, request, progress, cancel)
}

/// What `multi-pack-index write --bitmap` is asked for beside the preferred pack.
#[derive(Debug, Clone, Default)]
pub struct MidxBitmap {
    /// The pack whose objects come first (else the oldest).
    pub preferred_pack: Option<String>,
    /// Only these packs (`--stdin-packs`: their index files' names), not every one.
    pub packs: Option<Vec<String>>,
    /// The tips the bitmap covers, as a repack read them before it wrote its packs
    /// (`--refs-snapshot`), instead of the refs as they are now.
    pub refs_snapshot: Option<Vec<ObjectId>>,
}

/// Why a refs snapshot (`--refs-snapshot`) could not be read; git's words.
#[derive(Debug, thiserror::Error)]
pub enum RefsSnapshotError {
    /// The file could not be read.
    #[error("could not open '{}': {source}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line that is no object id (after an optional `+`).
    #[error("could not parse line: {0}")]
    BadLine(String),
}

/// The tips of the refs snapshot at `path`, as git's repack writes it for `multi-pack-index
/// write --bitmap`: an id a line, `+` before a preferred one (which Sluice's selection of
/// bitmapped commits does not weigh).
pub fn read_refs_snapshot(
    path: &std::path::Path,
    hash: sluice_object::HashKind,
) -> Result<Vec<ObjectId>, RefsSnapshotError> {
    let text = std::fs::read_to_string(path).map_err(|source| RefsSnapshotError::Read {
        path: path.to_owned(),
        source,
    })?;
    let hex_of = |line: &str| line.strip_prefix('+').unwrap_or(line).trim().to_owned();
    (text.lines())
        .map(|line| {
            ObjectId::from_hex(hash, hex_of(line).as_bytes())
                .map_err(|_| RefsSnapshotError::BadLine(line.to_owned()))
        })
        .collect()
}

/// [`write_midx_bitmap`] as `request` says.
pub fn write_midx_bitmap_of(
    repo: &Repository,
    request: MidxBitmap,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<MidxSummary, RepackError> {
    let pack_dir = repo.objects().pack_dir();
    // Refs before packs: every object a ref read here names is in a pack listed after it.
    let refs = repo.refs().list()?;
    let head = repo.refs().resolve("HEAD").ok().and_then(|(_, id)| id);
    let options = MidxOptions {
        preferred_pack: request.preferred_pack,
        bitmap: true,
        packs: request.packs,
    };
    let (summary, layout) = write_midx_with(&pack_dir, repo.hash(), &options)?;
    let odb = repo.objects();
    // A bitmap answers fetches, which start from refs: what else is alive is in the packs.
    let (branches, tips): (Vec<ObjectId>, Vec<ObjectId>) = match request.refs_snapshot {
        // The snapshot names no refs: every commit in it is taken as a branch's tip.
        Some(snapshot) => {
            let commits = (snapshot.iter())
                .filter(|id| odb.peel_to_commit(**id) == Some(**id))
                .copied()
                .collect();
            (commits, snapshot)
        }
        None => (
            branch_tips(&refs, head),
            refs.into_iter().map(|(_, id)| id).chain(head).collect(),
        ),
    };
    // Commits made since the packs were written are in none: the bitmap covers what they
    // stand on, as git's does.
    let tips = in_file(odb, &layout.ids, &tips)?;
    let branches = in_file(odb, &layout.ids, &branches)?;
    // The bitmap of the pack whose objects come first, when it has one.
    let first = layout
        .bit_of
        .iter()
        .position(|&bit| bit == 0)
        .and_then(|index| odb.locate(&layout.ids[index]))
        .map(|(pack, _)| &*odb.packs()[pack]);
    let replaced = first.filter(|pack| pack.path().with_extension("bitmap").exists());
    let shallow = repo.shallow_set()?;
    let (at, tips) = ((&*pack_dir, &layout), (&tips[..], &branches[..], &shallow));
    let format = sluice_graph::bitmap::BitmapFormat::from_config(repo.config())?;
    let replaced = (replaced, format);
    sluice_graph::bitmap::write_midx_bitmap(at, odb, tips, replaced, progress, cancel)?;
    Ok(summary)
}

/// `tips`, each as the file (its sorted `ids`) holds it: itself where it is there; for a
/// commit (or tag) that is not, the nearest commits it stands on that are (git's bitmap walk
/// passes over commits outside the file); nothing for any other object outside it. Sorted,
/// once each.
fn in_file(
    odb: &sluice_odb::ObjectDb,
    ids: &[ObjectId],
    tips: &[ObjectId],
) -> Result<Vec<ObjectId>, RepackError> {
    let held = |id: &ObjectId| ids.binary_search(id).is_ok();
    let mut found = Vec::new();
    let mut seen = IdSet::default();
    let mut pending: Vec<ObjectId> = tips.to_vec();
    while let Some(id) = pending.pop() {
        if !seen.insert(id) {
            continue;
        }
        if held(&id) {
            found.push(id);
            continue;
        }
        match odb.read(&id)? {
            Some((ObjectKind::Commit, data)) => {
                pending.extend(
                    parse_commit(odb.hash(), &data)
                        .map(|c| c.parents)
                        .unwrap_or_default(),
                );
            }
            // A tag made since: what it names, as git peels a ref's tag.
            Some((ObjectKind::Tag, data)) => {
                pending.extend(parse_tag(odb.hash(), &data).map(|t| t.object))
            }
            _ => {}
        }
    }
    found.sort_unstable();
    Ok(found)
}

/// The name of `repo`'s pack with the most objects: a geometric series' largest, which a
/// multi-pack-index bitmap puts first.
pub fn largest_pack(repo: &Repository) -> Result<Option<String>, RepackError> {
    let odb = repo.objects();
    Ok((odb.packs().iter())
        .max_by_key(|pack| pack.index().len())
        .and_then(|pack| pack.path().file_name())
        .map(|name| name.to_string_lossy().into_owned()))
}
