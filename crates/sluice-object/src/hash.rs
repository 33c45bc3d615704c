//! Hashing objects (with collision detection) and files (without).

use crate::{write_header, HashKind, ObjectId, ObjectKind, MAX_HEADER_LEN};
use sha1::Digest as _;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether every SHA-1 is computed by the portable kernel, whatever the CPU offers.
static PORTABLE_SHA1: AtomicBool = AtomicBool::new(false);

/// Makes every hash from now on use the portable SHA-1 kernel, not the CPU's SHA-1 instructions
/// (SHA-NI, ARMv8): so that a machine with them can measure what one without them does. The
/// portable kernel is also the one the instructions are checked against. Set once, at start.
///
/// The figures it gives are an upper bound for a CPU without the instructions: such a CPU gets
/// `sha1dc`'s SSE2 schedule and AVX2 collision filter where they exist, this switch the scalar
/// ones.
pub fn use_portable_sha1() {
    PORTABLE_SHA1.store(true, Ordering::Relaxed);
}

/// Whether [`use_portable_sha1`] was called.
pub fn portable_sha1() -> bool {
    PORTABLE_SHA1.load(Ordering::Relaxed)
}

/// A collision-detecting hasher on the kernel chosen for this process.
fn detecting_hasher() -> sha1dc::Hasher {
    detecting_hasher_on(portable_sha1())
}

/// A collision-detecting hasher, on the portable kernel or on the fastest this CPU has.
fn detecting_hasher_on(portable: bool) -> sha1dc::Hasher {
    if portable {
        // `internal_scalar_backend` is hidden from sha1dc's documentation and exempt from its
        // semver (Cargo.lock pins the version); it is the crate's own way to run the portable
        // path on a machine with the instructions, which is exactly this switch's purpose.
        sha1dc::Hasher::builder().internal_scalar_backend().build()
    } else {
        sha1dc::Hasher::new()
    }
}

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
                inner: detecting_hasher(),
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
#[derive(Clone)]
pub struct TrailerHasher {
    inner: Trailer,
}

/// The kernel a trailer is hashed with.
#[derive(Clone)]
enum Trailer {
    /// The `sha1` crate, on the CPU's SHA-1 instructions where it finds them.
    Plain(sha1::Sha1),
    /// Under [`use_portable_sha1`]: `sha1dc`'s portable kernel, whose detection costs a
    /// little here but keeps one portable kernel in the process.
    Portable(sha1dc::Hasher),
}

impl Default for TrailerHasher {
    fn default() -> Self {
        let inner = if portable_sha1() {
            Trailer::Portable(detecting_hasher())
        } else {
            Trailer::Plain(sha1::Sha1::default())
        };
        TrailerHasher { inner }
    }
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
        match &mut self.inner {
            Trailer::Plain(hasher) => hasher.update(data),
            Trailer::Portable(hasher) => hasher.update(data),
        }
    }

    /// Finishes the hash; the result has the same form as an object id.
    pub fn finalize(self) -> ObjectId {
        let bytes: [u8; 20] = match self.inner {
            Trailer::Plain(hasher) => hasher.finalize().into(),
            // A trailer is a checksum: a collision pattern in it changes nothing.
            Trailer::Portable(hasher) => match hasher.finalize() {
                Ok(digest) => digest.to_bytes(),
                Err(collision) => collision.digest().to_bytes(),
            },
        };
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

    /// The first 320 bytes of the two SHAttered PDFs (Stevens, Bursztein, Karpman, Albertini,
    /// Markov, 2017; published at shattered.io): two different inputs with one plain SHA-1.
    /// Every kernel must call both an attack, as git's sha1dc does.
    const SHATTERED: [&[&str]; 2] = [
        &[
        "255044462d312e330a25e2e3cfd30a0a0a312030206f626a0a3c3c2f57696474682032203020522f48656967",
        "68742033203020522f547970652034203020522f537562747970652035203020522f46696c74657220362030",
        "20522f436f6c6f7253706163652037203020522f4c656e6774682038203020522f42697473506572436f6d70",
        "6f6e656e7420383e3e0a73747265616d0affd8fffe00245348412d3120697320646561642121212121852fec",
        "092339759c39b1a1c63c4c97e1fffe017f46dc93a6b67e013b029aaa1db2560b45ca67d688c7f84b8c4c791f",
        "e02b3df614f86db1690901c56b45c1530afedfb76038e972722fe7ad728f0e4904e046c230570fe9d41398ab",
        "e12ef5bc942be33542a4802d98b5d70f2a332ec37fac3514e74ddc0f2cc1a874cd0c78305a21566461309789",
        "606bd0bf3f98cda8044629a1",
        ],
        &[
        "255044462d312e330a25e2e3cfd30a0a0a312030206f626a0a3c3c2f57696474682032203020522f48656967",
        "68742033203020522f547970652034203020522f537562747970652035203020522f46696c74657220362030",
        "20522f436f6c6f7253706163652037203020522f4c656e6774682038203020522f42697473506572436f6d70",
        "6f6e656e7420383e3e0a73747265616d0affd8fffe00245348412d3120697320646561642121212121852fec",
        "092339759c39b1a1c63c4c97e1fffe017346dc9166b67e118f029ab621b2560ff9ca67cca8c7f85ba84c7903",
        "0c2b3de218f86db3a90901d5df45c14f26fedfb3dc38e96ac22fe7bd728f0e45bce046d23c570feb141398bb",
        "552ef5a0a82be331fea48037b8b5d71f0e332edf93ac3500eb4ddc0decc1a864790c782c76215660dd309791",
        "d06bd0af3f98cda4bc4629b1",
        ],
    ];

    fn from_hex(pieces: &[&str]) -> Vec<u8> {
        let hex: String = pieces.concat();
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn every_kernel_detects_the_shattered_collision() {
        let [one, two] = SHATTERED.map(from_hex);
        assert_ne!(one, two);
        let plain = |data: &[u8]| -> [u8; 20] { sha1::Sha1::digest(data).into() };
        assert_eq!(
            plain(&one),
            plain(&two),
            "the inputs collide in plain SHA-1"
        );
        for portable in [false, true] {
            for data in [&one, &two] {
                let mut hasher = detecting_hasher_on(portable);
                hasher.update(data);
                assert!(hasher.finalize().is_err(), "portable: {portable}");
            }
        }
        let mut object = ObjectHasher::raw(HashKind::Sha1);
        object.update(&one);
        assert_eq!(object.finalize(), Err(HashError::CollisionAttack));
    }

    /// The kernel the machine offers and the portable one give the same digests, and agree on
    /// what is an attack (a random input never is), whatever the length and the split of the
    /// updates.
    #[test]
    fn every_kernel_agrees_with_the_portable_one() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..300 {
            let len = (next() % 5000) as usize;
            let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let split = if len == 0 { 0 } else { (next() as usize) % len };
            let digest = |portable: bool| {
                let mut hasher = detecting_hasher_on(portable);
                hasher.update(&data[..split]);
                hasher.update(&data[split..]);
                hasher.finalize().map(|d| d.to_bytes())
            };
            let fastest = digest(false);
            assert_eq!(fastest, digest(true), "{len} bytes split at {split}");
            let mut plain = sha1::Sha1::default();
            plain.update(&data);
            let plain: [u8; 20] = plain.finalize().into();
            assert_eq!(fastest, Ok(plain));
        }
    }

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
