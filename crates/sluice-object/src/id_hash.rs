//! Hash maps keyed by object id. Ids are already uniformly distributed, so the general-purpose
//! SipHash (a fifth of a full clone's server time went into it) is replaced by one folded
//! multiplication of the id's first eight bytes with a per-process random key. The key keeps
//! ids ground to share low bits (to crowd one bucket of a server's tables) from doing so.

use crate::ObjectId;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

/// Builds [`IdHasher`]s with this process's key.
#[derive(Debug, Clone, Copy)]
pub struct IdHashBuilder {
    key: u64,
}

impl Default for IdHashBuilder {
    fn default() -> Self {
        static KEY: OnceLock<u64> = OnceLock::new();
        let key = *KEY.get_or_init(|| {
            // RandomState is seeded from the operating system's randomness.
            std::collections::hash_map::RandomState::new().hash_one(0x0051_7569_6365_u64) | 1
        });
        IdHashBuilder { key }
    }
}

impl BuildHasher for IdHashBuilder {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher {
            key: self.key,
            state: 0,
        }
    }
}

/// Hashes an object id (or any bytes: the first eight, then the rest folded in).
#[derive(Debug, Clone, Copy)]
pub struct IdHasher {
    key: u64,
    state: u64,
}

impl Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // One uniformly random word is enough for an id; shorter input is zero-padded.
        let mut word = [0u8; 8];
        let n = bytes.len().min(8);
        word[..n].copy_from_slice(&bytes[..n]);
        let x = u64::from_le_bytes(word) ^ self.state ^ self.key;
        let product = u128::from(x) * u128::from(0x9E37_79B9_7F4A_7C15u64);
        self.state = (product as u64) ^ ((product >> 64) as u64);
    }

    fn finish(&self) -> u64 {
        self.state
    }
}

/// A map keyed by object id.
pub type IdMap<V> = HashMap<ObjectId, V, IdHashBuilder>;
/// A set of object ids.
pub type IdSet = HashSet<ObjectId, IdHashBuilder>;
