//! A blocking view of one bucket (and prefix) of an object store: what the rest of Sluice,
//! a thread per connection, calls. object_store is async; one small runtime per bucket drives
//! it, and every call here waits for its answer.

use crate::location::{Backend, StoreUrl};
use crate::StoreError;
use futures_util::StreamExt as _;
use object_store::path::Path as Key;
use object_store::{
    GetOptions, ObjectStore, PutMode, PutOptions, PutPayload, UpdateVersion, WriteMultipart,
};
use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Files up to this size are uploaded in one PUT; larger ones in parts of this size.
const PART_SIZE: usize = 16 << 20;

/// One bucket under a prefix, with counts of the requests made to it.
#[derive(Clone)]
pub struct Bucket {
    store: Arc<dyn ObjectStore>,
    /// What signs URLs clients can read objects from, where the store has credentials.
    signer: Option<Arc<dyn object_store::signer::Signer>>,
    prefix: String,
    runtime: Arc<tokio::runtime::Runtime>,
    counts: Arc<RequestCounts>,
}

impl std::fmt::Debug for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bucket({}, prefix {:?})", self.store, self.prefix)
    }
}

/// How many requests of each kind a bucket was sent, and the bytes they moved.
#[derive(Debug, Default)]
pub struct RequestCounts {
    /// GETs (whole or ranged, conditional or not).
    pub gets: AtomicU64,
    /// PUTs, multipart uploads counted once.
    pub puts: AtomicU64,
    /// LISTs and DELETEs.
    pub others: AtomicU64,
    /// Bytes downloaded.
    pub bytes_in: AtomicU64,
    /// Bytes uploaded.
    pub bytes_out: AtomicU64,
    /// Conditional GETs answered "not modified" (a node already up to date).
    pub not_modified: AtomicU64,
    /// Conditional writes refused because another writer got there first.
    pub conflicts: AtomicU64,
    /// Manifest commits tried again: after a conflict, or after a write whose outcome was
    /// unknown and had not landed.
    pub retries: AtomicU64,
}

/// An object's content with the version a conditional write names.
#[derive(Debug, Clone)]
pub struct Versioned {
    /// The content.
    pub bytes: Vec<u8>,
    /// Its version (ETag and, where the store keeps them, a version id).
    pub version: Version,
}

/// The version of an object, as a conditional read or write names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    e_tag: Option<String>,
    version: Option<String>,
}

/// What a conditional read found.
#[derive(Debug)]
pub enum Fetched<T = Versioned> {
    /// The object is still the version named.
    Unchanged,
    /// It changed (or none was named): its new content.
    Changed(T),
    /// There is no such object.
    Missing,
}

/// Why a conditional write did not happen.
#[derive(Debug)]
pub enum WriteRefused {
    /// Another writer got there first: the object exists (create) or changed (replace).
    Conflict,
    /// The store did not answer as expected; the write may or may not have happened.
    Unknown(StoreError),
}

impl Bucket {
    /// Opens the bucket a URL names, with credentials and endpoint from the environment (the
    /// standard `AWS_*` variables).
    pub fn open(url: &StoreUrl) -> Result<Bucket, StoreError> {
        let (store, signer): (
            Arc<dyn ObjectStore>,
            Option<Arc<dyn object_store::signer::Signer>>,
        ) = match &url.backend {
            Backend::S3 { bucket } => {
                let s3 = Arc::new(crate::location::s3_from_env(bucket)?);
                let signs = std::env::var_os("AWS_ACCESS_KEY_ID").is_some();
                let signer =
                    signs.then(|| Arc::clone(&s3) as Arc<dyn object_store::signer::Signer>);
                (s3, signer)
            }
            Backend::Memory => (Arc::new(object_store::memory::InMemory::new()), None),
        };
        let mut bucket = Bucket::with_store(store, &url.prefix)?;
        bucket.signer = signer;
        Ok(bucket)
    }

    /// A URL anyone holding it can GET `name` from for `valid` (a pre-signed URL); `None`
    /// where the store has no credentials to sign with.
    pub fn presigned_get(
        &self,
        name: &str,
        valid: std::time::Duration,
    ) -> Result<Option<String>, StoreError> {
        let Some(signer) = &self.signer else {
            return Ok(None);
        };
        let key = self.key(name);
        let signed = self
            .runtime
            .block_on(signer.signed_url(http::Method::GET, &key, valid));
        let url = signed.map_err(|e| StoreError::request("SIGN", &key, e))?;
        Ok(Some(url.to_string()))
    }

    /// A bucket on `store` (a test's in-memory store, or one wrapped to inject faults).
    pub fn with_store(store: Arc<dyn ObjectStore>, prefix: &str) -> Result<Bucket, StoreError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("sluice-store")
            .enable_all()
            .build()
            .map_err(StoreError::Runtime)?;
        Ok(Bucket {
            store,
            signer: None,
            prefix: prefix.trim_matches('/').to_owned(),
            runtime: Arc::new(runtime),
            counts: Arc::default(),
        })
    }

    /// The requests made so far.
    pub fn counts(&self) -> &RequestCounts {
        &self.counts
    }

    /// The key of `name` in the store, prefix included, as messages name it.
    pub fn full_key(&self, name: &str) -> String {
        self.key(name).to_string()
    }

    fn key(&self, name: &str) -> Key {
        match self.prefix.is_empty() {
            true => Key::from(name),
            false => Key::from(format!("{}/{name}", self.prefix)),
        }
    }

    /// Records that a manifest commit is being tried again.
    pub fn count_retry(&self) {
        self.count(&self.counts.retries, 1);
    }

    fn count(&self, counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// Reads `name` whole, unless it is still `known` (then one request that moves nothing).
    pub fn get_if_changed(
        &self,
        name: &str,
        known: Option<&Version>,
    ) -> Result<Fetched, StoreError> {
        let key = self.key(name);
        let options = GetOptions {
            if_none_match: known.and_then(|v| v.e_tag.clone()),
            ..GetOptions::default()
        };
        self.count(&self.counts.gets, 1);
        let got = self.runtime.block_on(async {
            let result = self.store.get_opts(&key, options).await?;
            let version = Version {
                e_tag: result.meta.e_tag.clone(),
                version: result.meta.version.clone(),
            };
            Ok::<_, object_store::Error>((result.bytes().await?, version))
        });
        match got {
            Ok((bytes, version)) => {
                self.count(&self.counts.bytes_in, bytes.len() as u64);
                Ok(Fetched::Changed(Versioned {
                    bytes: bytes.to_vec(),
                    version,
                }))
            }
            Err(object_store::Error::NotModified { .. }) => {
                self.count(&self.counts.not_modified, 1);
                Ok(Fetched::Unchanged)
            }
            Err(object_store::Error::NotFound { .. }) => Ok(Fetched::Missing),
            Err(e) => Err(StoreError::request("GET", &key, e)),
        }
    }

    /// Reads `name` whole; `None` when there is no such object.
    pub fn get(&self, name: &str) -> Result<Option<Versioned>, StoreError> {
        match self.get_if_changed(name, None)? {
            Fetched::Changed(v) => Ok(Some(v)),
            Fetched::Missing | Fetched::Unchanged => Ok(None),
        }
    }

    /// Writes `bytes` as `name` only if there is no such object yet.
    pub fn create(&self, name: &str, bytes: Vec<u8>) -> Result<Version, WriteRefused> {
        self.put_mode(name, bytes, PutMode::Create)
    }

    /// Replaces `name` only if it is still at `version`.
    pub fn replace(
        &self,
        name: &str,
        bytes: Vec<u8>,
        version: &Version,
    ) -> Result<Version, WriteRefused> {
        let update = UpdateVersion {
            e_tag: version.e_tag.clone(),
            version: version.version.clone(),
        };
        self.put_mode(name, bytes, PutMode::Update(update))
    }

    fn put_mode(&self, name: &str, bytes: Vec<u8>, mode: PutMode) -> Result<Version, WriteRefused> {
        let key = self.key(name);
        self.count(&self.counts.puts, 1);
        self.count(&self.counts.bytes_out, bytes.len() as u64);
        let options = PutOptions {
            mode,
            ..PutOptions::default()
        };
        let put = self.runtime.block_on(async {
            self.store
                .put_opts(&key, PutPayload::from(bytes), options)
                .await
        });
        match put {
            Ok(done) => Ok(Version {
                e_tag: done.e_tag,
                version: done.version,
            }),
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => {
                self.count(&self.counts.conflicts, 1);
                Err(WriteRefused::Conflict)
            }
            Err(e) => Err(WriteRefused::Unknown(StoreError::request("PUT", &key, e))),
        }
    }

    /// Writes `bytes` as `name`, an immutable object (written whatever is there).
    pub fn put_immutable(&self, name: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let key = self.key(name);
        self.count(&self.counts.puts, 1);
        self.count(&self.counts.bytes_out, bytes.len() as u64);
        let put = self
            .runtime
            .block_on(self.store.put(&key, PutPayload::from(bytes)));
        put.map(|_| ())
            .map_err(|e| StoreError::request("PUT", &key, e))
    }

    /// Uploads the file at `path` as `name` (an immutable object: written whatever is there).
    pub fn upload(&self, name: &str, path: &Path) -> Result<(), StoreError> {
        let key = self.key(name);
        let io = |source| StoreError::File {
            path: path.to_owned(),
            source,
        };
        let size = std::fs::metadata(path).map_err(io)?.len();
        if size <= PART_SIZE as u64 {
            return self.put_immutable(name, std::fs::read(path).map_err(io)?);
        }
        self.count(&self.counts.puts, 1);
        self.count(&self.counts.bytes_out, size);
        let mut file = std::fs::File::open(path).map_err(io)?;
        self.runtime
            .block_on(async {
                let upload = self.store.put_multipart(&key).await?;
                let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
                let mut buffer = vec![0; PART_SIZE];
                loop {
                    let n = std::io::Read::read(&mut file, &mut buffer).map_err(|e| {
                        object_store::Error::Generic {
                            store: "file",
                            source: Box::new(e),
                        }
                    })?;
                    if n == 0 {
                        break;
                    }
                    writer.wait_for_capacity(4).await?;
                    writer.write(&buffer[..n]);
                }
                writer.finish().await.map(|_| ())
            })
            .map_err(|e| StoreError::request("PUT", &key, e))
    }

    /// Downloads `name` into `dest`: written under a temporary name beside it, then renamed,
    /// so that `dest` is whole or absent.
    pub fn download(&self, name: &str, dest: &Path) -> Result<u64, StoreError> {
        let key = self.key(name);
        let temporary = crate::temporary_beside(dest);
        sluice_odb::tempfiles::register(&temporary);
        let io = |source| StoreError::File {
            path: dest.to_owned(),
            source,
        };
        self.count(&self.counts.gets, 1);
        let written = self.runtime.block_on(async {
            let mut stream = self.store.get(&key).await?.into_stream();
            let mut out = std::fs::File::create(&temporary).map_err(generic)?;
            let mut written = 0u64;
            while let Some(chunk) = stream.next().await {
                let chunk = chunk?;
                out.write_all(&chunk).map_err(generic)?;
                written += chunk.len() as u64;
            }
            out.sync_all().map_err(generic)?;
            Ok::<_, object_store::Error>(written)
        });
        let written = match written {
            Ok(n) => n,
            Err(e) => {
                let _ = std::fs::remove_file(&temporary);
                sluice_odb::tempfiles::forget(&temporary);
                return Err(StoreError::request("GET", &key, e));
            }
        };
        self.count(&self.counts.bytes_in, written);
        let renamed = std::fs::rename(&temporary, dest);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        sluice_odb::tempfiles::forget(&temporary);
        renamed.map_err(io)?;
        Ok(written)
    }

    /// The bytes `range` of `name` (a ranged GET).
    pub fn read_range(
        &self,
        name: &str,
        range: std::ops::Range<u64>,
    ) -> Result<Vec<u8>, StoreError> {
        let key = self.key(name);
        self.count(&self.counts.gets, 1);
        let got = self
            .runtime
            .block_on(self.store.get_range(&key, range))
            .map_err(|e| StoreError::request("GET", &key, e))?;
        self.count(&self.counts.bytes_in, got.len() as u64);
        Ok(got.to_vec())
    }

    /// Every object under `under`: its name (relative to the prefix) and when it was written.
    pub fn list(&self, under: &str) -> Result<Vec<(String, std::time::SystemTime)>, StoreError> {
        let key = self.key(under);
        self.count(&self.counts.others, 1);
        let strip = match self.prefix.is_empty() {
            true => 0,
            false => self.prefix.len() + 1,
        };
        self.runtime
            .block_on(async {
                let mut listing = self.store.list(Some(&key));
                let mut names = Vec::new();
                while let Some(meta) = listing.next().await {
                    let meta = meta?;
                    let name = meta.location.as_ref()[strip..].to_owned();
                    names.push((name, std::time::SystemTime::from(meta.last_modified)));
                }
                Ok(names)
            })
            .map_err(|e| StoreError::request("LIST", &key, e))
    }

    /// Deletes `name` (nothing if it is already gone).
    pub fn delete(&self, name: &str) -> Result<(), StoreError> {
        let key = self.key(name);
        self.count(&self.counts.others, 1);
        match self.runtime.block_on(self.store.delete(&key)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(StoreError::request("DELETE", &key, e)),
        }
    }
}

fn generic(e: std::io::Error) -> object_store::Error {
    object_store::Error::Generic {
        store: "file",
        source: Box::new(e),
    }
}
