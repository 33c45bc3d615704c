//! Receiving a pack into a repository with its own settings, as `index-pack --stdin
//! [--fix-thin] [--keep]` stores it there: for fetches, pushes and repacks alike.

use crate::Repository;
use sluice_object::cancel::Cancel;
use sluice_object::progress::{Discard, Progress};
use sluice_odb::pack_store::{
    links_present, receive, Alongside, Destination, StoreError, StoreOptions, Stored,
};
use sluice_pack::{LinkCheck, ObjectCheck, ObjectLookup, PackIndexer};
use std::io::Read;

/// How a received pack is stored.
pub struct Receiving<'a> {
    /// Where index-pack's progress goes.
    pub progress: &'a dyn Progress,
    /// Keep the pack with a `.keep` file holding this message.
    pub keep: Option<String>,
    /// Work that reads the objects while the deltas are resolved; the pack must then not be
    /// thin (no haves were offered).
    pub alongside: Option<&'a Alongside<'a>>,
    /// Where fix-thin finds the delta bases a thin pack leaves out, when not simply in the
    /// repository (a partial clone fetches those it lacks, a repack needs none).
    pub objects: Option<&'a dyn ObjectLookup>,
    /// Refuse the pack, before it is put in place, unless it and the repository hold all that
    /// these tips reach.
    pub connectivity: Option<LinkCheck>,
    /// Judge every object (fsck: `fetch.fsckObjects`, `receive.fsckObjects`).
    pub fsck: Option<&'a dyn ObjectCheck>,
    /// Stops the indexing between two objects; the pack is then not put in place.
    pub cancel: Cancel,
    /// Refuse a pack larger than this many bytes (`--max-input-size`).
    pub max_input_size: Option<u64>,
}

impl Default for Receiving<'_> {
    fn default() -> Self {
        Receiving {
            progress: &Discard,
            keep: None,
            alongside: None,
            objects: None,
            connectivity: None,
            fsck: None,
            cancel: Cancel::default(),
            max_input_size: None,
        }
    }
}

/// Stores a pack arriving on `input` in `repo` as `index-pack --stdin [--fix-thin] [--keep]`
/// does, with the repository's settings; fix-thin unless work runs alongside.
pub fn receive_into(
    input: &mut dyn Read,
    repo: &Repository,
    receiving: Receiving<'_>,
) -> Result<Stored, StoreError> {
    let destination = Destination {
        keep: receiving.keep.clone(),
        ..Destination::default()
    };
    receive_at(input, repo, receiving, &destination)
}

/// Why a pack could not be unpacked.
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    /// The pack is bigger than the limit it was given (`--max-input-size`,
    /// `receive.maxInputSize`), in unpack-objects' words, which do not name the limit.
    #[error("pack exceeds maximum allowed size")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// The pack could not be read or indexed.
    #[error(transparent)]
    Store(StoreError),
    /// An object of it could not be read back or written loose.
    #[error(transparent)]
    Odb(#[from] sluice_odb::OdbError),
}

impl From<StoreError> for UnpackError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Index(sluice_pack::IndexError::TooLarge { limit }) => {
                UnpackError::TooLarge { limit }
            }
            error => UnpackError::Store(error),
        }
    }
}

/// `unpack-objects`: the pack arriving on `input` written as loose objects of `repo` (those it
/// has already are not written again; its deltas may name them as bases), the pack itself kept
/// only in a temporary directory while it is read. Returns how many objects it held; with
/// `dry_run`, nothing is written.
pub fn unpack_into(
    input: &mut dyn Read,
    repo: &Repository,
    receiving: Receiving<'_>,
    dry_run: bool,
) -> Result<usize, UnpackError> {
    let dir = (repo.objects().pack_dir()).join(format!("tmp_unpack_{}", std::process::id()));
    let _removed_after = sluice_odb::tempfiles::NewDirectory::new(dir.clone(), false);
    std::fs::create_dir_all(&dir).map_err(|source| StoreError::CreateDir {
        path: dir.clone(),
        source,
    })?;
    let destination = Destination {
        pack_file: Some(dir.join("unpack.pack")),
        ..Destination::default()
    };
    let stored = receive_at(input, repo, receiving, &destination)?;
    let count = sluice_odb::Pack::open(&stored.pack.with_extension("idx"), repo.hash())?
        .index()
        .len();
    if !dry_run {
        let level =
            sluice_odb::pack_store::loose_compression(repo.config()).map_err(StoreError::from)?;
        let had = |id: &sluice_object::ObjectId| repo.objects().contains(id);
        let objects = repo.objects().dir();
        sluice_odb::pack_store::unpack_to_loose(&stored.pack, objects, repo.hash(), level, &had)?;
    }
    Ok(count)
}

/// Indexes the pack arriving on `input` into `destination`, with the repository's settings.
fn receive_at(
    input: &mut dyn Read,
    repo: &Repository,
    receiving: Receiving<'_>,
    destination: &Destination,
) -> Result<Stored, StoreError> {
    let Receiving {
        progress,
        keep: _,
        alongside,
        objects,
        connectivity,
        fsck,
        cancel,
        max_input_size,
    } = receiving;
    let mut options = StoreOptions::from_config(repo.config(), repo.hash())?;
    options.index.fix_thin = alongside.is_none();
    options.index.links = connectivity;
    options.index.max_input_size = max_input_size.or(options.index.max_input_size);
    let objects = objects.unwrap_or(repo.objects());
    let mut indexer = PackIndexer::new(options.index.clone())
        .progress(progress)
        .lookup(objects)
        .interrupt(cancel.flag());
    if let Some(fsck) = fsck {
        indexer = indexer.check(fsck);
    }
    let connected = links_present(objects, |missing| StoreError::NotConnected { missing });
    receive(
        input,
        repo.objects().dir(),
        destination,
        &indexer,
        &options,
        alongside,
        &connected,
    )
}
