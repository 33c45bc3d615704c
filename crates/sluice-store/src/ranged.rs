//! Ranged reads on a node: a pack at least `--read-ranges-above` bytes large is not
//! downloaded whole when a generation needs it; it is placed as a ranged pack
//! ([`sluice_odb::ranged`]) under `<repository>/ranged/`, and the chunks a request reads are
//! fetched with ranged GETs. A fetch that reads a few objects of a large pack (an incremental
//! fetch after a bundle-uri clone, a ref listing) then costs the store a few requests, not the
//! pack; a full clone fetches every chunk, in runs, about as much as the whole download.

use crate::manifest::PackEntry;
use crate::stored::StoredRepo;
use crate::{Bucket, StoreError};
use sluice_odb::ranged::PackSource;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The bytes of a store's packs, by key.
#[derive(Debug)]
pub(crate) struct BucketSource {
    bucket: Bucket,
}

impl PackSource for BucketSource {
    fn read_range(&self, key: &str, range: Range<u64>) -> std::io::Result<Vec<u8>> {
        (self.bucket)
            .read_range(key, range)
            .map_err(std::io::Error::other)
    }
}

/// What every repository a node opens reads its ranged packs' bytes from.
pub(crate) fn source(bucket: &Bucket) -> Arc<dyn PackSource> {
    Arc::new(BucketSource {
        bucket: bucket.clone(),
    })
}

/// The smallest and largest chunk: a chunk is one ranged GET at least, so not so small that a
/// full clone takes tens of thousands of them; about 1/256 of the pack in between.
const CHUNKS: Range<u64> = (64 << 10)..(4 << 20);

/// Where `pack`'s ranged `.pack` lives in the repository folder `folder`.
pub(crate) fn ranged_pack(folder: &Path, pack: &PackEntry) -> PathBuf {
    folder.join("ranged").join(format!("{}.pack", pack.name))
}

/// Places `pack` of `repo` as a ranged pack in `folder`, unless it is there already.
pub(crate) fn place(folder: &Path, repo: &StoredRepo, pack: &PackEntry) -> Result<(), StoreError> {
    let path = ranged_pack(folder, pack);
    if path.exists() && sluice_odb::ranged::marks_path(&path).exists() {
        return Ok(());
    }
    let dir = folder.join("ranged");
    std::fs::create_dir_all(&dir).map_err(StoreError::file(&dir))?;
    let chunk = (pack.size / 256)
        .clamp(CHUNKS.start, CHUNKS.end)
        .next_multiple_of(4096);
    let key = repo.pack_key(&pack.name, "pack");
    sluice_odb::ranged::create(&path, &key, pack.size, chunk).map_err(StoreError::file(&path))
}
