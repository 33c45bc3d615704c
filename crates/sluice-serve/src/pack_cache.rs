//! A bounded on-disk cache of the packs upload-pack generates (GitLab's pack-objects cache
//! idea): CI fleets send the very same request again and again, and a pack, once made, can be
//! streamed from disk at a fraction of the cost of counting and writing it anew.
//!
//! The key covers everything that decides the pack's content: the repository, the wants, the
//! common haves, the shallow boundary, the filter, the capabilities that shape the pack, and
//! with include-tag the refs. Entries are written under a temporary name and renamed, so a
//! reader never sees half a pack; the least recently used go when the cache outgrows its bound.
//!
//! Nodes serving one store share a second tier ([`SharedPacks`]): a pack a node served twice
//! is offered to the store, and a node that lacks a pack looks there before making it, so the
//! third identical request anywhere is a copy.

use sluice_generate::PackStats;
use sluice_object::{HashKind, TrailerHasher};
use sluice_repo::storage::SharedPacks;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::SystemTime;

/// Bytes in front of each cached pack: its statistics, for git's "Total" line.
const HEADER: usize = 20;

/// A cache of packs in one directory.
pub struct PackCache {
    dir: PathBuf,
    max_bytes: u64,
    hits: AtomicU64,
    misses: AtomicU64,
    /// Serialises eviction.
    evicting: Mutex<()>,
    /// Packs being made now: an identical request waits for the one making its pack rather
    /// than making it a second time (sixteen CI jobs cloning at once cost one pack).
    in_flight: Mutex<std::collections::HashSet<String>>,
    landed: Condvar,
    /// The tier every node shares, if any.
    shared: std::sync::OnceLock<std::sync::Arc<dyn SharedPacks>>,
    /// The packs offered to it already.
    offered: Mutex<std::collections::HashSet<String>>,
}

impl std::fmt::Debug for PackCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackCache")
            .field("dir", &self.dir)
            .field("max_bytes", &self.max_bytes)
            .finish()
    }
}

/// The identity of a request's pack, built from its parts, and the repository it is shared
/// under (for a store's repositories).
#[derive(Debug)]
pub(crate) struct CacheKey {
    hash: TrailerHasher,
    scope: Option<String>,
}

impl CacheKey {
    pub(crate) fn new(scope: Option<String>) -> Self {
        CacheKey {
            hash: TrailerHasher::new(HashKind::Sha1),
            scope,
        }
    }

    /// Adds one part; parts are length-prefixed so that no two lists of parts collide.
    pub(crate) fn add(&mut self, part: &[u8]) -> &mut Self {
        self.hash.update(&(part.len() as u64).to_be_bytes());
        self.hash.update(part);
        self
    }

    fn name(self) -> (String, Option<String>) {
        (self.hash.finalize().to_string(), self.scope)
    }
}

impl PackCache {
    /// A cache in `dir` (created if missing) holding at most `max_bytes`; every hit and miss
    /// is an event (target `sluice::pack_cache`) with the running counts. Leftover temporary
    /// files of an earlier process are removed.
    pub fn new(dir: &Path, max_bytes: u64) -> io::Result<PackCache> {
        std::fs::create_dir_all(dir)?;
        for entry in std::fs::read_dir(dir)?.flatten() {
            if entry.file_name().to_string_lossy().starts_with("tmp-") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(PackCache {
            dir: dir.to_owned(),
            max_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evicting: Mutex::new(()),
            in_flight: Mutex::new(std::collections::HashSet::new()),
            landed: Condvar::new(),
            shared: std::sync::OnceLock::new(),
            offered: Mutex::default(),
        })
    }

    /// Shares packs with the other nodes through `tier` from now on.
    pub fn share_with(&self, tier: std::sync::Arc<dyn SharedPacks>) {
        let _ = self.shared.set(tier);
    }

    /// A local hit of a shared repository's pack: offered to the others, once.
    fn offer(&self, scope: Option<&str>, name: &str, path: &Path) {
        let (Some(tier), Some(scope)) = (self.shared.get(), scope) else {
            return;
        };
        let first =
            (self.offered.lock().unwrap_or_else(|e| e.into_inner())).insert(name.to_owned());
        if first {
            tier.offer(scope, name, path);
        }
    }

    /// A local miss: the shared tier's copy, if it has one, put in place under `path`.
    fn fetch_shared(&self, scope: Option<&str>, name: &str, path: &Path) -> bool {
        let (Some(tier), Some(scope)) = (self.shared.get(), scope) else {
            return false;
        };
        let temp = self.dir.join(format!("tmp-shared-{name}"));
        let fetched = tier.fetch(scope, name, &temp) && std::fs::rename(&temp, path).is_ok();
        let _ = std::fs::remove_file(&temp);
        fetched
    }

    /// Hits and misses so far.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    fn note(&self, hit: bool, name: &str) {
        let counter = if hit { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
        let (hits, misses) = self.counts();
        let what = if hit { "hit" } else { "miss" };
        let pack = &name[..12];
        tracing::info!(target: "sluice::pack_cache", pack, hits, misses, "pack cache {what}");
    }

    /// Copies the cached pack for `key` to `out` and returns its statistics, or hands back a
    /// writer that stores the pack about to be made.
    pub(crate) fn lookup(
        &self,
        key: CacheKey,
        out: &mut dyn Write,
    ) -> io::Result<Result<PackStats, CacheWriter<'_>>> {
        let (name, scope) = key.name();
        let path = self.dir.join(&name);
        let mut looked_shared = false;
        loop {
            if let Ok(mut file) = File::open(&path) {
                let mut header = [0u8; HEADER];
                if file.read_exact(&mut header).is_ok() {
                    self.note(true, &name);
                    let _ = file.set_modified(SystemTime::now());
                    io::copy(&mut file, out)?;
                    if !looked_shared {
                        // Served twice here: worth sharing.
                        self.offer(scope.as_deref(), &name, &path);
                    }
                    return Ok(Ok(decode_stats(&header)));
                }
            }
            if !looked_shared {
                looked_shared = true;
                if self.fetch_shared(scope.as_deref(), &name, &path) {
                    continue;
                }
            }
            let mut flying = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if !flying.contains(&name) {
                flying.insert(name.clone());
                break;
            }
            // Another request is making this pack: wait for it to land (or to fail, and
            // then make it here).
            while flying.contains(&name) {
                flying = self.landed.wait(flying).unwrap_or_else(|e| e.into_inner());
            }
        }
        self.note(false, &name);
        Ok(Err(CacheWriter::new(self, name)))
    }

    /// Removes the least recently used entries until the cache fits its bound.
    fn evict(&self) {
        let _guard = self.evicting.lock().unwrap_or_else(|e| e.into_inner());
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files: Vec<(SystemTime, u64, PathBuf)> = entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with("tmp-"))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        files.sort();
        for (_, len, path) in files {
            if total <= self.max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// Stores one pack as it is generated; nothing is kept unless [`CacheWriter::commit`] is
/// called, and a write error only means the pack is not cached.
pub(crate) struct CacheWriter<'a> {
    cache: &'a PackCache,
    name: String,
    temp: PathBuf,
    file: Option<io::BufWriter<File>>,
}

impl<'a> CacheWriter<'a> {
    fn new(cache: &'a PackCache, name: String) -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let temp = cache.dir.join(format!(
            "tmp-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&temp)
            .ok()
            .map(|f| io::BufWriter::with_capacity(1 << 16, f))
            .and_then(|mut f| f.write_all(&[0u8; HEADER]).ok().map(|()| f));
        CacheWriter {
            cache,
            name,
            temp,
            file,
        }
    }

    /// Keeps part of the pack.
    pub(crate) fn keep(&mut self, data: &[u8]) {
        if let Some(file) = &mut self.file {
            if file.write_all(data).is_err() {
                self.file = None;
            }
        }
    }

    /// The pack is complete: name it, then make room.
    pub(crate) fn commit(mut self, stats: &PackStats) {
        let Some(file) = self.file.take() else {
            return;
        };
        let stored = file.into_inner().ok().and_then(|mut f| {
            f.seek(SeekFrom::Start(0)).ok()?;
            f.write_all(&encode_stats(stats)).ok()?;
            std::fs::rename(&self.temp, self.cache.dir.join(&self.name)).ok()
        });
        if stored.is_some() {
            self.cache.evict();
        }
    }
}

impl Drop for CacheWriter<'_> {
    fn drop(&mut self) {
        // Renamed away on success; anything left is an abandoned pack.
        let _ = std::fs::remove_file(&self.temp);
        let mut flying = self
            .cache
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        flying.remove(&self.name);
        self.cache.landed.notify_all();
    }
}

fn encode_stats(stats: &PackStats) -> [u8; HEADER] {
    let mut out = [0u8; HEADER];
    for (i, value) in [
        stats.total,
        stats.deltas,
        stats.reused,
        stats.reused_deltas,
        stats.pack_reused,
    ]
    .into_iter()
    .enumerate()
    {
        out[4 * i..4 * i + 4].copy_from_slice(&value.to_be_bytes());
    }
    out
}

fn decode_stats(header: &[u8; HEADER]) -> PackStats {
    let field =
        |i: usize| u32::from_be_bytes(header[4 * i..4 * i + 4].try_into().unwrap_or_default());
    PackStats {
        total: field(0),
        deltas: field(1),
        reused: field(2),
        reused_deltas: field(3),
        pack_reused: field(4),
    }
}

/// Writes to the client and, on the side, to the cache.
pub(crate) struct Tee<'a, 'b, W: Write> {
    pub(crate) out: W,
    pub(crate) cache: &'a mut CacheWriter<'b>,
}

impl<W: Write> Write for Tee<'_, '_, W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let written = self.out.write(data)?;
        self.cache.keep(&data[..written]);
        Ok(written)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
