//! `repack --filter=<spec> [--filter-to=<base>]`: the new pack holds what the roots reach less
//! what the filter leaves out (a server keeping blobs elsewhere, say), and every other object
//! of the packs it replaces goes into a pack of its own, beside it or at `<base>-<checksum>.pack`
//! (an object directory the repository borrows from), so that nothing is lost with them.

use crate::pack_objects::objects_of_packs;
use crate::repack::RepackError;
use crate::stored::write_stored;
use crate::write::PackOptions;
use sluice_graph::ObjectFilter;
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_object::{IdSet, ObjectId};
use sluice_repo::Repository;
use std::path::{Path, PathBuf};

/// What `--filter` leaves out of the new pack, and where it goes instead.
#[derive(Debug, Clone)]
pub struct FilterOut {
    /// The filter (`blob:none`, `blob:limit=<n>`, `tree:<depth>`, `object:type=<type>`).
    pub filter: ObjectFilter,
    /// `--filter-to=<base>`: the pack is `<base>-<checksum>.pack`; `None`: beside the new
    /// pack.
    pub to: Option<PathBuf>,
}

/// Writes every object of the packs `replaced` that none of the packs `written` holds (and,
/// with `only`, that it holds) into a pack of its own, where `filter_out` says; returns it
/// (`None` when there is nothing to write).
pub(crate) fn write_filtered_pack(
    repo: &Repository,
    (replaced, written, only): (&[PathBuf], &[&Path], Option<&IdSet>),
    filter_out: &FilterOut,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Option<PathBuf>, RepackError> {
    // The view after the new packs went in: they are what stays out.
    let odb = repo.objects().with_alternate_packs();
    let replaced: Vec<&Path> = replaced.iter().map(PathBuf::as_path).collect();
    let mut walked = objects_of_packs(&odb, &replaced, written)?;
    if let Some(only) = only {
        walked.objects.retain(|o| only.contains(&o.id));
        walked.located = None;
    }
    if walked.objects.is_empty() {
        return Ok(None);
    }
    let options = PackOptions {
        compression: PackOptions::compression_of(repo.config())?,
        ofs_delta: PackOptions::repack_ofs_delta(repo.config())?,
        show_writing: true,
        cancel: cancel.clone(),
        ..PackOptions::default()
    };
    let pack_dir = repo.objects().pack_dir();
    let named = |checksum: ObjectId| match &filter_out.to {
        Some(base) => {
            let mut name = base.as_os_str().to_owned();
            name.push(format!("-{checksum}.pack"));
            PathBuf::from(name)
        }
        None => pack_dir.join(format!("pack-{checksum}.pack")),
    };
    let (stored, _) = write_stored(repo, &odb, &walked, &options, &named, progress, None)?;
    Ok(Some(stored.pack))
}
