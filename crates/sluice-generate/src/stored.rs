//! Writing packs of the repository's own: the objects of a walk as one pack (or several, cut
//! at a size limit), named by their checksum, indexed from what was written, and put in place
//! with their `.idx` and `.rev`, for repack, gc, pack-objects and the rest of maintenance.

use crate::repack::RepackError;
use crate::split::{store_cut, CutOptions, WrittenPack};
use crate::stats::PackStats;
use crate::window_search::SearchLimits;
use crate::write::{write_pack_indexed, IndexedPack, PackOptions};
use crate::GenerateError;
use sluice_graph::Walked;
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_object::ObjectId;
use sluice_odb::pack_store::{store_written_at, Staged, StoreOptions, Stored};
use sluice_odb::ObjectDb;
use sluice_pack::idx::IdxWriteOptions;
use sluice_repo::Repository;
use std::path::{Path, PathBuf};

/// Writes the objects of `walked` (found through `odb`) as a new pack of `repo`, under a
/// temporary name, indexed from what was written: every entry comes from this repository, so
/// it is neither read back nor hashed again. Returns the pack put in place and its statistics.
pub(crate) fn write_into(
    repo: &Repository,
    odb: &ObjectDb,
    walked: &Walked,
    window_search: Option<SearchLimits>,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<(Stored, PackStats), RepackError> {
    let options = stored_pack_options(repo, window_search, cancel)?;
    write_one(repo, odb, walked, &options, progress)
}

/// Writes `walked` as one new pack of `repo` as git's pack-objects writes a roll of packs
/// (`--stdin-packs`, or the ids of a multi-pack-index's batch): stored deltas kept, every other
/// object tried within the configured limits, its Total said on `progress`.
pub(crate) fn write_rolled(
    repo: &Repository,
    odb: &ObjectDb,
    walked: &Walked,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Stored, RepackError> {
    let limits = SearchLimits::keeping_stored_deltas(repo.config())?;
    let (stored, stats) = write_into(repo, odb, walked, Some(limits), progress, cancel)?;
    progress.note(&stats.to_string());
    Ok(stored)
}

/// [`write_into`] as `options` say.
pub(crate) fn write_one(
    repo: &Repository,
    odb: &ObjectDb,
    walked: &Walked,
    options: &PackOptions,
    progress: &dyn Progress,
) -> Result<(Stored, PackStats), RepackError> {
    let (mut packs, stats) = write_packs_into(repo, odb, walked, (options, None), progress)?;
    let stored = packs.pop().expect("an unlimited write stores one pack");
    Ok((stored, stats))
}

/// [`write_into`] as `pack_options` say, in packs under `limit` bytes when given: the packs in
/// order, and what went into them.
pub(crate) fn write_packs_into(
    repo: &Repository,
    odb: &ObjectDb,
    walked: &Walked,
    (pack_options, limit): (&PackOptions, Option<u64>),
    progress: &dyn Progress,
) -> Result<(Vec<Stored>, PackStats), RepackError> {
    let pack_dir = repo.objects().pack_dir();
    let named = |checksum: ObjectId| pack_dir.join(format!("pack-{checksum}.pack"));
    let to = StoredAs {
        named: &named,
        index: None,
        limit,
    };
    write_stored_packs(repo, odb, walked, pack_options, &to, progress)
}

/// How a repack writes a pack of the repository's own: at its configured compression and
/// delta base form, its writing shown, deltas searched anew within `window_search` when given.
pub(crate) fn stored_pack_options(
    repo: &Repository,
    window_search: Option<SearchLimits>,
    cancel: &Cancel,
) -> Result<PackOptions, RepackError> {
    Ok(PackOptions {
        compression: PackOptions::compression_of(repo.config())?,
        ofs_delta: PackOptions::repack_ofs_delta(repo.config())?,
        show_writing: true,
        window_search,
        cancel: cancel.clone(),
        ..PackOptions::default()
    })
}

/// Writes the objects of `walked` as `<base>-<checksum>.pack` with its `.idx` and `.rev`, as
/// `pack-objects <base-name>` names them, the `.idx` as `index` says when given, in packs under
/// `limit` bytes when given, its phases shown on `progress`; returns the packs put in place, in
/// order, and their statistics.
pub fn write_stored_at(
    repo: &Repository,
    (odb, walked): (&ObjectDb, &Walked),
    options: &PackOptions,
    base: &Path,
    (index, limit): (Option<&IdxWriteOptions>, Option<u64>),
    progress: &dyn Progress,
) -> Result<(Vec<Stored>, PackStats), RepackError> {
    let named = named_at(base);
    let to = StoredAs {
        named: &named,
        index,
        limit,
    };
    write_stored_packs(repo, odb, walked, options, &to, progress)
}

/// A pack's path as `pack-objects <base-name>` names it: `<base>-<checksum>.pack`.
pub(crate) fn named_at(base: &Path) -> impl Fn(ObjectId) -> PathBuf + '_ {
    move |checksum| {
        let mut name = base.as_os_str().to_owned();
        name.push(format!("-{checksum}.pack"));
        PathBuf::from(name)
    }
}

/// Where [`write_stored_packs`] puts what it writes.
pub struct StoredAs<'a> {
    /// A pack's path from its checksum (its directory holds the temporary files).
    pub named: &'a dyn Fn(ObjectId) -> PathBuf,
    /// How the `.idx` is written (pack-objects' `--index-version`); `None`: as configured.
    pub index: Option<&'a IdxWriteOptions>,
    /// The largest pack, in bytes ([`crate::PackSizeLimit`]); `None`: one pack, however large.
    pub limit: Option<u64>,
}

/// Writes the objects of `walked` as one pack named by `named` from its checksum, with its
/// `.idx` and `.rev` written from what the writer recorded; returns the pack put in place and
/// its statistics. The `.idx` is written as `index` says when given (pack-objects'
/// `--index-version`), else as the configuration does.
pub fn write_stored(
    repo: &Repository,
    odb: &ObjectDb,
    walked: &Walked,
    options: &PackOptions,
    named: &dyn Fn(ObjectId) -> PathBuf,
    progress: &dyn Progress,
    index: Option<&IdxWriteOptions>,
) -> Result<(Stored, PackStats), RepackError> {
    let to = StoredAs {
        named,
        index,
        limit: None,
    };
    let (mut packs, stats) = write_stored_packs(repo, odb, walked, options, &to, progress)?;
    let stored = packs.pop().expect("an unlimited write stores one pack");
    Ok((stored, stats))
}

/// [`write_stored`], cut into packs under `to.limit` bytes where git cuts them (a delta whose
/// base went into an earlier pack goes whole): the packs in order, and what went into them.
pub fn write_stored_packs(
    repo: &Repository,
    odb: &ObjectDb,
    walked: &Walked,
    options: &PackOptions,
    to: &StoredAs<'_>,
    progress: &dyn Progress,
) -> Result<(Vec<Stored>, PackStats), RepackError> {
    let mut store_options = StoreOptions::from_config(repo.config(), repo.hash())?;
    if let Some(index) = to.index {
        store_options.idx = index.clone();
    }
    // The temporary file goes where the pack will be (any name shows the directory).
    let probe = (to.named)(repo.hash().null_id());
    let dir = match probe.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    };
    let staged = Staged::create(&dir, "tmp_pack_")?;
    let out = std::io::BufWriter::with_capacity(1 << 20, staged.file());
    let IndexedPack {
        out,
        checksum,
        entries,
        mut stats,
    } = write_pack_indexed(odb, walked, options, out, progress)?;
    out.into_inner()
        .map_err(|e| GenerateError::Io(e.into_error()))?;
    let size = (staged.file().metadata()).map_err(GenerateError::Io)?.len();
    match to.limit.filter(|limit| size >= *limit) {
        None => {
            let named = (to.named)(checksum);
            let stored = store_written_at(
                named,
                staged,
                checksum,
                entries,
                repo.hash(),
                &store_options,
            )?;
            Ok((vec![stored], stats))
        }
        Some(limit) => {
            let written = WrittenPack { staged, entries };
            let cut = CutOptions {
                limit,
                compression: options.compression,
                store: &store_options,
                cancel: &options.cancel,
            };
            let (packs, made_whole) = store_cut(odb, written, to.named, &cut)?;
            stats.deltas -= made_whole.min(stats.deltas);
            Ok((packs, stats))
        }
    }
}
