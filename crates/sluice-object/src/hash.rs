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
}
