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
    let Receiving {
        progress,
        keep,
        alongside,
        objects,
        connectivity,
        fsck,
        cancel,
    } = receiving;
    let mut options = StoreOptions::from_config(repo.config(), repo.hash())?;
    options.index.fix_thin = alongside.is_none();
    options.index.links = connectivity;
    let objects = objects.unwrap_or(repo.objects());
    let mut indexer = PackIndexer::new(options.index.clone())
        .progress(progress)
        .lookup(objects)
        .interrupt(cancel.flag());
    if let Some(fsck) = fsck {
        indexer = indexer.check(fsck);
    }
    let connected = links_present(objects, |missing| StoreError::NotConnected { missing });
    let destination = Destination {
        keep,
        ..Destination::default()
    };
    receive(
        input,
        repo.objects().dir(),
        &destination,
        &indexer,
        &options,
        alongside,
        &connected,
    )
}
