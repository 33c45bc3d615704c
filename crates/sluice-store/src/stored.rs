//! One repository in a store: its keys, and its manifest read and committed.
//!
//! Layout under `<prefix>/<name>.git/`: `manifest`, and `packs/pack-<hex>.{pack,idx,rev,bitmap}`
//! and `midx/multi-pack-index-<checksum>[.bitmap]` (a geometric roll's), immutable and named by
//! their content, uploaded before any manifest names them.

use crate::bucket::{Bucket, Fetched, Version, WriteRefused};
use crate::manifest::{Manifest, RefSnapshot, INLINE_REFS};
use crate::ref_snapshot;
use crate::StoreError;
use sluice_object::HashKind;
use std::sync::Arc;
use std::time::Duration;

/// How many times a commit is tried when other writers keep winning.
const COMMIT_ATTEMPTS: u32 = 12;

/// A stored repository.
#[derive(Debug, Clone)]
pub struct StoredRepo {
    bucket: Bucket,
    /// `<name>.git`, the repository's folder under the prefix.
    folder: String,
}

/// A manifest with the version a commit is conditional on.
#[derive(Debug, Clone)]
pub struct Read {
    /// What it says.
    pub manifest: Manifest,
    /// Its version in the store.
    pub version: Version,
}

impl StoredRepo {
    /// The repository `name` (a path under the prefix; `.git` is added if missing). Names that
    /// could step out of the prefix are refused.
    pub fn new(bucket: &Bucket, name: &str) -> Result<StoredRepo, StoreError> {
        let name = name.trim_matches('/');
        let bad = name.is_empty()
            || name.split('/').any(|part| {
                part.is_empty() || part == "." || part == ".." || part.starts_with('.')
            });
        if bad || name.bytes().any(|b| b.is_ascii_control() || b == b'\\') {
            return Err(StoreError::BadName(name.to_owned()));
        }
        let folder = match name.ends_with(".git") {
            true => name.to_owned(),
            false => format!("{name}.git"),
        };
        Ok(StoredRepo {
            bucket: bucket.clone(),
            folder,
        })
    }

    /// The bucket it is in.
    pub fn bucket(&self) -> &Bucket {
        &self.bucket
    }

    /// Its folder, `<name>.git`.
    pub fn folder(&self) -> &str {
        &self.folder
    }

    /// The key of one of its objects.
    pub fn key(&self, relative: &str) -> String {
        format!("{}/{relative}", self.folder)
    }

    /// The key of a pack's file.
    pub fn pack_key(&self, pack: &str, extension: &str) -> String {
        self.key(&format!("packs/{pack}.{extension}"))
    }

    /// Reads the manifest; `None` when the repository does not exist.
    pub fn read(&self) -> Result<Option<Read>, StoreError> {
        self.read_after(None)
    }

    /// Reads the manifest, taking the refs of `previous` (a snapshot read before) if it
    /// names the same snapshot.
    fn read_after(&self, previous: Option<&RefSnapshot>) -> Result<Option<Read>, StoreError> {
        match self.read_if_changed(None, previous)? {
            Fetched::Changed(read) => Ok(Some(read)),
            _ => Ok(None),
        }
    }

    /// Reads the manifest unless it is still `known`: an up-to-date reader costs the store one
    /// request that moves no data. A snapshot of refs it names is read too, unless it is
    /// `previous` (immutable: the same name, the same refs).
    pub fn read_if_changed(
        &self,
        known: Option<&Version>,
        previous: Option<&RefSnapshot>,
    ) -> Result<Fetched<Read>, StoreError> {
        let v = match self.bucket.get_if_changed(&self.key("manifest"), known)? {
            Fetched::Unchanged => return Ok(Fetched::Unchanged),
            Fetched::Missing => return Ok(Fetched::Missing),
            Fetched::Changed(v) => v,
        };
        let damaged = |source| StoreError::Manifest {
            repo: self.folder.clone(),
            source,
        };
        let mut manifest = Manifest::parse(&v.bytes, HashKind::Sha1).map_err(damaged)?;
        if let Some(name) = manifest.snapshot.as_ref().map(|s| s.name.clone()) {
            let refs = match previous.filter(|p| p.name == name) {
                Some(previous) => Arc::clone(&previous.refs),
                None => {
                    let key = self.key(&format!("refs/{name}"));
                    let Some(stored) = self.bucket.get(&key)? else {
                        return Err(damaged(crate::manifest::ManifestError {
                            line: 0,
                            why: format!("its ref snapshot '{key}' is not in the store"),
                        }));
                    };
                    let refs = ref_snapshot::parse(&stored.bytes, HashKind::Sha1);
                    Arc::new(refs.map_err(damaged)?)
                }
            };
            manifest = manifest.resolve(refs);
        }
        Ok(Fetched::Changed(Read {
            manifest,
            version: v.version,
        }))
    }

    /// When `manifest` carries more ref lines than [`INLINE_REFS`], writes its refs as a new
    /// snapshot object (before the manifest that names it), so that the manifest stays small.
    fn fold_refs(&self, manifest: &mut Manifest) -> Result<(), StoreError> {
        let inline = match &manifest.snapshot {
            None => manifest.refs.len(),
            Some(snapshot) => manifest.changed_refs(&snapshot.refs).count(),
        };
        if inline <= INLINE_REFS {
            return Ok(());
        }
        let name = format!("{}-{}", manifest.generation, manifest.transaction);
        let key = self.key(&format!("refs/{name}"));
        self.bucket
            .put_immutable(&key, ref_snapshot::write(&manifest.refs))?;
        manifest.snapshot = Some(RefSnapshot {
            name,
            refs: Arc::new(manifest.refs.clone()),
        });
        Ok(())
    }

    /// Writes the first manifest; refused if the repository exists.
    pub fn create(&self, mut manifest: Manifest) -> Result<Manifest, StoreError> {
        manifest.generation = 1;
        manifest.transaction = transaction_id();
        self.fold_refs(&mut manifest)?;
        match self.bucket.create(&self.key("manifest"), manifest.write()) {
            Ok(_) => Ok(manifest),
            Err(WriteRefused::Conflict) => Err(StoreError::Exists(self.folder.clone())),
            Err(WriteRefused::Unknown(e)) => Err(e),
        }
    }

    /// Commits a change: reads the manifest, asks `change` for the next one (or why it cannot
    /// apply, as a ref that moved), writes it as generation + 1 conditionally on the version
    /// read. Another writer's win means reading again and asking again (with a growing,
    /// jittered pause); an answer lost (a timeout, a 5xx) means reading again and looking for
    /// this commit's own transaction id before deciding. Returns the manifest written.
    pub fn commit<R>(
        &self,
        mut change: impl FnMut(&Manifest) -> Result<Manifest, R>,
    ) -> Result<Result<Manifest, R>, StoreError> {
        let transaction = transaction_id();
        let mut pause = Duration::from_millis(10);
        let mut failed = None;
        let mut previous: Option<RefSnapshot> = None;
        for attempt in 0..COMMIT_ATTEMPTS {
            if attempt > 0 {
                self.bucket.count_retry();
            }
            let Some(read) = self.read_after(previous.as_ref())? else {
                return Err(StoreError::NoRepository(self.folder.clone()));
            };
            previous.clone_from(&read.manifest.snapshot);
            let mut next = match change(&read.manifest) {
                Ok(next) => next,
                Err(refused) => return Ok(Err(refused)),
            };
            next.retire_tips(&read.manifest, crate::unix_now());
            next.generation = read.manifest.generation + 1;
            next.transaction.clone_from(&transaction);
            self.fold_refs(&mut next)?;
            match self
                .bucket
                .replace(&self.key("manifest"), next.write(), &read.version)
            {
                Ok(_) => return Ok(Ok(next)),
                Err(WriteRefused::Conflict) => failed = None,
                Err(WriteRefused::Unknown(error)) => {
                    // Did it land? Only this commit writes this transaction id.
                    match self.read()? {
                        Some(now) if now.manifest.transaction == transaction => {
                            return Ok(Ok(now.manifest))
                        }
                        Some(_) => failed = Some(error),
                        None => return Err(error),
                    }
                }
            }
            std::thread::sleep(jittered(pause));
            pause = (pause * 2).min(Duration::from_millis(800));
        }
        // The store's own failure, if that is what the last attempt met.
        Err(failed.unwrap_or_else(|| StoreError::Contended(self.folder.clone())))
    }
}

/// A fresh transaction id: the time, the process and a counter, hashed into 16 hex digits.
pub fn transaction_id() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    hasher.write_u128(now.as_nanos());
    hasher.write_u32(std::process::id());
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    format!("{:016x}{:08x}", hasher.finish(), std::process::id())
}

/// `pause` times a factor between 0.5 and 1.5, so that racing writers spread out.
fn jittered(pause: Duration) -> Duration {
    let noise = transaction_id();
    let byte = u8::from_str_radix(&noise[..2], 16).unwrap_or(128);
    pause.mul_f64(0.5 + f64::from(byte) / 255.0)
}
