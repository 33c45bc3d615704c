//! Loose objects (`objects/ab/cdef…`): zlib streams of a header and content, written under a
//! temporary name and renamed, and a lazy cache of which ones exist.

use crate::odb::OdbError;
use sluice_object::{
    hash_object, parse_header, write_header, HashKind, ObjectId, ObjectKind, MAX_HEADER_LEN,
};
use sluice_pack::inflate::{deflate, Inflater, ZlibInflate};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Which loose objects exist, one fan-out directory at a time: each `objects/xx` is read the
/// first time a lookup needs it, then answered from memory.
#[derive(Debug)]
pub struct LooseObjectCache {
    dir: PathBuf,
    hash: HashKind,
    buckets: Box<[OnceLock<Box<[ObjectId]>>]>,
    /// Objects this process wrote after their directory was read.
    written: std::sync::Mutex<Vec<ObjectId>>,
}

impl LooseObjectCache {
    /// A cache over the object directory `dir`; nothing is read yet.
    pub fn new(dir: &Path, hash: HashKind) -> Self {
        LooseObjectCache {
            dir: dir.to_owned(),
            hash,
            buckets: (0..256).map(|_| OnceLock::new()).collect(),
            written: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Whether a loose object with this id exists (as of the first look at its directory, or
    /// written by this process since).
    pub fn contains(&self, id: &ObjectId) -> bool {
        let first = id.first_byte();
        self.buckets[first as usize]
            .get_or_init(|| self.read_bucket(first))
            .binary_search(id)
            .is_ok()
            || self
                .written
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(id)
    }

    /// Records an object this process just wrote.
    fn insert(&self, id: ObjectId) {
        self.written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(id);
    }

    fn read_bucket(&self, first: u8) -> Box<[ObjectId]> {
        let dir = self.dir.join(format!("{first:02x}"));
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Box::new([]);
        };
        let mut hex = [0u8; 64];
        hex[..2].copy_from_slice(format!("{first:02x}").as_bytes());
        let rest = self.hash.len_in_hex() - 2;
        let mut ids: Vec<ObjectId> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name();
                let name = name.as_encoded_bytes();
                if name.len() != rest {
                    return None;
                }
                hex[2..2 + rest].copy_from_slice(name);
                ObjectId::from_hex(self.hash, &hex[..2 + rest]).ok()
            })
            .collect();
        ids.sort_unstable();
        ids.into_boxed_slice()
    }
}

/// A loose object's file, as [`LooseObjects::list`] finds it.
#[derive(Debug, Clone)]
pub struct LooseFile {
    /// The object.
    pub id: ObjectId,
    /// Its file.
    pub path: PathBuf,
    /// When the file was last written (what a prune's grace period is measured against).
    pub modified: std::time::SystemTime,
}

/// The loose objects of one object directory.
#[derive(Debug)]
pub struct LooseObjects {
    dir: PathBuf,
    hash: HashKind,
    cache: LooseObjectCache,
}

impl LooseObjects {
    /// The loose objects under the object directory `dir`.
    pub fn new(dir: &Path, hash: HashKind) -> Self {
        LooseObjects {
            dir: dir.to_owned(),
            hash,
            cache: LooseObjectCache::new(dir, hash),
        }
    }

    fn path(&self, id: &ObjectId) -> PathBuf {
        let hex = id.to_string();
        self.dir.join(&hex[..2]).join(&hex[2..])
    }

    /// Whether the object exists, through the lazy cache.
    pub fn contains(&self, id: &ObjectId) -> bool {
        self.cache.contains(id)
    }

    /// Every loose object on disk now, with its file and when it was last written (files
    /// whose names are not ids are passed over, as git passes them over).
    pub fn list(&self) -> std::io::Result<Vec<LooseFile>> {
        let mut found = Vec::new();
        for fanout in 0..=255u8 {
            let sub = self.dir.join(format!("{fanout:02x}"));
            let entries = match std::fs::read_dir(&sub) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            for entry in entries {
                let entry = entry?;
                let hex = format!("{fanout:02x}{}", entry.file_name().to_string_lossy());
                let Ok(id) = ObjectId::from_hex(self.hash, hex.as_bytes()) else {
                    continue;
                };
                let modified = (entry.metadata().and_then(|m| m.modified()))
                    .unwrap_or_else(|_| std::time::SystemTime::now());
                found.push(LooseFile {
                    id,
                    path: entry.path(),
                    modified,
                });
            }
        }
        Ok(found)
    }

    /// Reads a loose object, checking that its content matches its declared size.
    pub fn read(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, OdbError> {
        let path = self.path(id);
        let compressed = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(OdbError::Io { path, source }),
        };
        let corrupt = |why: String| OdbError::Corrupt { id: *id, why };
        let mut inflater = Inflater::new();
        // Inflate the start to read the header and learn the size, then the whole object.
        inflater.begin();
        let mut head = [0u8; MAX_HEADER_LEN];
        let mut head_len = 0;
        let mut at = 0;
        while head_len < MAX_HEADER_LEN && !head[..head_len].contains(&0) {
            let fed = inflater
                .feed(&compressed[at..], true, true)
                .map_err(|e| corrupt(e.to_string()))?;
            let take = fed.output.len().min(MAX_HEADER_LEN - head_len);
            head[head_len..head_len + take].copy_from_slice(&fed.output[..take]);
            head_len += take;
            at += fed.consumed;
            if fed.done || (fed.consumed == 0 && fed.produced == 0) {
                break;
            }
        }
        let (kind, size, header_len) =
            parse_header(&head[..head_len]).map_err(|e| corrupt(e.to_string()))?;
        // A zlib stream expands at most ~1032 times; a larger declared size is a lie.
        if size > (compressed.len() as u64).saturating_mul(1032) {
            return Err(corrupt(format!("declared size {size} is impossible")));
        }
        let mut whole = Vec::new();
        inflater
            .inflate_exact(&compressed, header_len + size as usize, &mut whole)
            .map_err(|e| corrupt(e.to_string()))?;
        whole.drain(..header_len);
        Ok(Some((kind, whole)))
    }

    /// Writes an object unless it exists; returns its id. The file is written under a
    /// temporary name in its directory and renamed, so readers never see a partial object.
    pub fn write(&self, kind: ObjectKind, data: &[u8], level: u32) -> Result<ObjectId, OdbError> {
        let id = hash_object(self.hash, kind, data).map_err(|_| OdbError::Corrupt {
            id: self.hash.null_id(),
            why: "collision attack in object data".into(),
        })?;
        let path = self.path(&id);
        if path.exists() {
            return Ok(id);
        }
        let dir = path.parent().expect("fan-out directory");
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| OdbError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut header = [0u8; MAX_HEADER_LEN];
        let len = write_header(kind, data.len() as u64, &mut header);
        let mut whole = Vec::with_capacity(len + data.len());
        whole.extend_from_slice(&header[..len]);
        whole.extend_from_slice(data);
        let compressed = deflate(&whole, level);
        let tmp = dir.join(format!("tmp_obj_{}", std::process::id()));
        let result = std::fs::File::create(&tmp)
            .and_then(|mut f| f.write_all(&compressed))
            .and_then(|_| std::fs::rename(&tmp, &path));
        if let Err(source) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(OdbError::Io { path, source });
        }
        self.cache.insert(id);
        Ok(id)
    }
}
