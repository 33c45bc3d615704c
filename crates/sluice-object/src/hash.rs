//! Hashing objects (with collision detection) and files (without).

use crate::{write_header, HashKind, ObjectId, ObjectKind, MAX_HEADER_LEN};
use sha1::Digest as _;

/// Why hashing did not produce an id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HashError {
    /// The input shows the disturbance pattern of a SHA-1 collision attack.
    #[error("SHA-1 collision attack detected in object data")]
    CollisionAttack,
}

/// Hashes one object's header and content into its id, detecting collision attacks.
#[derive(Clone)]
pub struct ObjectHasher {
    inner: sha1dc::Hasher,
}

impl ObjectHasher {
    /// Starts hashing an object of `kind` with `size` bytes of content; the header is hashed here.
    pub fn new(hash: HashKind, kind: ObjectKind, size: u64) -> Self {
        let mut hasher = Self::raw(hash);
        let mut header = [0u8; MAX_HEADER_LEN];
        let len = write_header(kind, size, &mut header);
        hasher.update(&header[..len]);
        hasher
    }

    /// Starts a hash with no header, for callers that hash a header themselves.
    pub fn raw(hash: HashKind) -> Self {
        match hash {
            HashKind::Sha1 => ObjectHasher {
                inner: sha1dc::Hasher::new(),
            },
        }
    }

    /// Hashes more content.
    pub fn update(&mut self, data: &[u8]) {
        self.inner.update(data);
    }

    /// Finishes the hash.
    pub fn finalize(self) -> Result<ObjectId, HashError> {
        let digest = self
            .inner
            .finalize()
            .map_err(|_| HashError::CollisionAttack)?;
        let bytes: [u8; 20] = digest.into();
        Ok(ObjectId::Sha1(bytes))
    }
}

impl std::fmt::Debug for ObjectHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ObjectHasher")
    }
}

/// The id of an object of `kind` with `data` as content.
pub fn hash_object(hash: HashKind, kind: ObjectKind, data: &[u8]) -> Result<ObjectId, HashError> {
    let mut hasher = ObjectHasher::new(hash, kind, data.len() as u64);
    hasher.update(data);
    hasher.finalize()
}

/// Bytes of hashed stream (header and content) between two saved states. A multiple of SHA-1's
/// 64-byte block, so a saved state has nothing buffered; 1 KiB keeps the states at about a tenth
/// of the object's size while losing at most 1 KiB of a shared prefix.
const CHECKPOINT_SPACING: usize = 1024;

/// The hasher's state after every 1 KiB (`CHECKPOINT_SPACING`) of one object's hashed stream.
///
/// An object of the same kind and size that begins with the same bytes has the same header and
/// so passes through the same states: its hash resumes from the last state inside the shared
/// part instead of starting over. Trees are the case that pays: a tree whose entries change in
/// place (a file's id, not its name) keeps its size, and a delta against the previous version
/// copies everything before the first change from the same place.
#[derive(Clone)]
pub struct HashCheckpoints {
    kind: ObjectKind,
    size: u64,
    /// `states[i]` has hashed the stream's first `(i + 1) * CHECKPOINT_SPACING` bytes.
    states: Vec<ObjectHasher>,
}

impl std::fmt::Debug for HashCheckpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HashCheckpoints")
            .field("kind", &self.kind)
            .field("size", &self.size)
            .field("states", &self.states.len())
            .finish()
    }
}

/// Where an object's hash may resume: the checkpoints of another object, and how many leading
/// content bytes the two share.
#[derive(Debug, Clone, Copy)]
pub struct SharedPrefix<'a> {
    /// The other object's checkpoints.
    pub checkpoints: &'a HashCheckpoints,
    /// How many leading content bytes are equal in both.
    pub len: usize,
}

/// Hashes an object as [`hash_object`] does, resuming from `shared` when it applies (same kind,
/// same size, a shared prefix reaching past a checkpoint), and returns this object's own
/// checkpoints when `save` is set.
pub fn hash_object_resuming(
    hash: HashKind,
    kind: ObjectKind,
    data: &[u8],
    shared: Option<SharedPrefix<'_>>,
    save: bool,
) -> Result<(ObjectId, Option<HashCheckpoints>), HashError> {
    let mut header = [0u8; MAX_HEADER_LEN];
    let header_len = write_header(kind, data.len() as u64, &mut header);
    let stream_len = header_len + data.len();
    let resume = shared
        .filter(|s| s.checkpoints.kind == kind && s.checkpoints.size == data.len() as u64)
        .map(|s| {
            let reach = header_len + s.len.min(data.len());
            (
                s.checkpoints,
                (reach / CHECKPOINT_SPACING).min(s.checkpoints.states.len()),
            )
        })
        .filter(|&(_, states)| states > 0);
    let mut states = Vec::with_capacity(if save {
        stream_len / CHECKPOINT_SPACING
    } else {
        0
    });
    // `hashed`: how many stream bytes the hasher has taken.
    let (mut hasher, mut hashed) = match resume {
        Some((checkpoints, count)) => {
            if save {
                states.extend_from_slice(&checkpoints.states[..count]);
            }
            (
                checkpoints.states[count - 1].clone(),
                count * CHECKPOINT_SPACING,
            )
        }
        None => {
            let mut hasher = ObjectHasher::raw(hash);
            hasher.update(&header[..header_len]);
            (hasher, header_len)
        }
    };
    if save {
        while stream_len - hashed >= CHECKPOINT_SPACING {
            let next = (hashed / CHECKPOINT_SPACING + 1) * CHECKPOINT_SPACING;
            hasher.update(&data[hashed - header_len..next - header_len]);
            hashed = next;
            states.push(hasher.clone());
        }
    }
    hasher.update(&data[hashed - header_len..]);
    let id = hasher.finalize()?;
    let checkpoints = save.then_some(HashCheckpoints {
        kind,
        size: data.len() as u64,
        states,
    });
    Ok((id, checkpoints))
}

/// A plain hash for file trailers (pack, `.idx`, `.rev`, index files): these guard against
/// corruption, not attacks, so the faster hash without collision detection is used.
#[derive(Clone, Default)]
pub struct TrailerHasher {
    inner: sha1::Sha1,
}

impl TrailerHasher {
    /// Starts a trailer hash for `hash`.
    pub fn new(hash: HashKind) -> Self {
        match hash {
            HashKind::Sha1 => TrailerHasher::default(),
        }
    }

    /// Hashes more bytes.
    pub fn update(&mut self, data: &[u8]) {
        self.inner.update(data);
    }

    /// Finishes the hash; the result has the same form as an object id.
    pub fn finalize(self) -> ObjectId {
        let bytes: [u8; 20] = self.inner.finalize().into();
        ObjectId::Sha1(bytes)
    }
}

impl std::fmt::Debug for TrailerHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TrailerHasher")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_and_trailer_hashes_agree_on_plain_input() {
        let id = hash_object(HashKind::Sha1, ObjectKind::Blob, b"").unwrap();
        assert_eq!(id.to_string(), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        let mut trailer = TrailerHasher::new(HashKind::Sha1);
        trailer.update(b"blob 0\0");
        assert_eq!(trailer.finalize(), id);
    }

    /// Every way of resuming gives the id a hash from the start gives.
    #[test]
    fn resumed_hashes_match_whole_ones() {
        let base: Vec<u8> = (0..20_000u32).map(|i| (i * 7 + i / 300) as u8).collect();
        let (base_id, checkpoints) =
            hash_object_resuming(HashKind::Sha1, ObjectKind::Tree, &base, None, true).unwrap();
        let checkpoints = checkpoints.unwrap();
        assert_eq!(
            base_id,
            hash_object(HashKind::Sha1, ObjectKind::Tree, &base).unwrap()
        );
        for change in [0, 1, 1013, 1014, 1024, 5000, 19_999] {
            let mut other = base.clone();
            other[change] ^= 0x55;
            let whole = hash_object(HashKind::Sha1, ObjectKind::Tree, &other).unwrap();
            for kind in [ObjectKind::Tree, ObjectKind::Blob] {
                let shared = SharedPrefix {
                    checkpoints: &checkpoints,
                    len: change,
                };
                let (id, own) =
                    hash_object_resuming(HashKind::Sha1, kind, &other, Some(shared), true).unwrap();
                assert_eq!(id, hash_object(HashKind::Sha1, kind, &other).unwrap());
                if kind == ObjectKind::Tree {
                    assert_eq!(id, whole);
                }
                // The new object's own checkpoints serve a third object in turn.
                let shared = SharedPrefix {
                    checkpoints: own.as_ref().unwrap(),
                    len: other.len(),
                };
                let (again, _) =
                    hash_object_resuming(HashKind::Sha1, kind, &other, Some(shared), false)
                        .unwrap();
                assert_eq!(again, id);
            }
        }
        // A shorter object never resumes from a longer one's states.
        let short = &base[..10_000];
        let shared = SharedPrefix {
            checkpoints: &checkpoints,
            len: short.len(),
        };
        let (id, _) =
            hash_object_resuming(HashKind::Sha1, ObjectKind::Tree, short, Some(shared), false)
                .unwrap();
        assert_eq!(
            id,
            hash_object(HashKind::Sha1, ObjectKind::Tree, short).unwrap()
        );
    }
}
