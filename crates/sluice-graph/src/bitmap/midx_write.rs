//! The bitmap of a multi-pack-index (`multi-pack-index-<checksum>.bitmap`): the same format as
//! a pack's, its bits in the file's pseudo-pack order, for a repository whose history is
//! spread over several packs (a big one and the geometric series of the pushes since). Every
//! object the refs reach must be in one of the packs; objects no ref reaches are typed from
//! their pack and get no name hash, as git leaves them.

use super::target::BitmapTarget;
use super::write::{
    build_commit_bitmaps, write_bitmap_file, BitmapFormat, BitmapWriteError, CommitsIn,
};
use crate::walk::{walk_objects, WalkRequest, WalkedObject};
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_object::{IdSet, ObjectId, ObjectKind};
use sluice_odb::midx::MidxLayout;
use sluice_odb::ObjectDb;
use sluice_odb::Pack;
use std::path::{Path, PathBuf};

/// Writes the bitmap of the multi-pack-index just written in `pack_dir` (`layout`) for the
/// objects `tips` reach, down to a shallow repository's cut (`shallow`) (every tip, and the
/// branches among them, which get a bitmap each);
/// `replaced` is a pack whose bitmaps may be carried over; the file has the sections of
/// `format`. Bitmaps of earlier
/// multi-pack-indexes are removed once it is in place.
pub fn write_midx_bitmap(
    (pack_dir, layout): (&Path, &MidxLayout),
    odb: &ObjectDb,
    (tips, branches, shallow): (&[ObjectId], &[ObjectId], &IdSet),
    (replaced, format): (Option<&Pack>, BitmapFormat),
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<PathBuf, BitmapWriteError> {
    let request = WalkRequest {
        shallow,
        ..WalkRequest::reachable(tips, &[], cancel.clone())
    };
    // git's multi-pack-index shows no phase for this walk.
    let discard = sluice_object::progress::Discard;
    let mut walked = walk_objects(odb, &request, &discard).map_err(BitmapWriteError::Walk)?;
    let target = BitmapTarget::Midx { pack_dir, layout };
    // Bitmaps are chosen among the commits the refs reach (a reached object outside the file
    // is refused as the bitmaps are built).
    let commits: Vec<ObjectId> = (walked.objects.iter())
        .filter(|o| o.kind == ObjectKind::Commit)
        .map(|o| o.id)
        .collect();
    let mut listed: IdSet = walked.objects.iter().map(|o| o.id).collect();
    // What no ref reaches still needs its kind in the type bitmaps.
    for &id in &layout.ids {
        if listed.insert(id) {
            walked.objects.push(WalkedObject {
                id,
                kind: stored_kind(odb, &id)?,
                name_hash: 0,
                previous: None,
            });
        }
    }
    let bitmaps = build_commit_bitmaps(
        &target,
        odb,
        CommitsIn::Ids(&commits),
        branches,
        replaced,
        progress,
    )?;
    let path = write_bitmap_file(&target, &walked, &bitmaps, format)?;
    sluice_odb::midx::remove_midx_bitmaps(pack_dir, Some(&path));
    Ok(path)
}

/// The kind of a stored object, from its pack entry (following its delta chain).
fn stored_kind(odb: &ObjectDb, id: &ObjectId) -> Result<ObjectKind, BitmapWriteError> {
    let (pack, position) = odb.locate(id).ok_or(BitmapWriteError::NotInPack(*id))?;
    odb.packs()[pack]
        .kind_at(position)?
        .ok_or(BitmapWriteError::NotInPack(*id))
}
