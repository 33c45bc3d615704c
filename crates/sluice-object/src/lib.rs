//! The vocabulary every floor of Sluice shares: object ids, the hash functions that make them,
//! object kinds and the `"<kind> <size>\0"` header that is hashed in front of every object.
//!
//! Object ids are hashed with collision detection (`sha1dc`), as git does by default since 2.13:
//! a pack crafted with the SHAttered technique is refused instead of silently accepted. Whole-file
//! trailers (pack, index and reverse-index checksums) only guard against corruption, so they use a
//! plain, faster SHA-1.
//!
//! ```
//! use sluice_object::{hash_object, HashKind, ObjectKind};
//! let id = hash_object(HashKind::Sha1, ObjectKind::Blob, b"hello\n").unwrap();
//! assert_eq!(id.to_string(), "ce013625030ba8dba906f756967f9e9ca394464a");
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod c_quote;
pub mod cancel;
pub mod errno;
mod hash;
mod header;
mod id;
mod id_hash;
mod kind;
pub mod parse;
pub mod percent;
pub mod progress;
pub mod ref_name;
pub mod shell;
pub mod threads;
pub mod tree_diff;

pub use hash::{
    hash_object, hash_object_resuming, portable_sha1, use_portable_sha1, HashCheckpoints,
    HashError, ObjectHasher, SharedPrefix, TrailerHasher,
};
pub use header::{parse_header, write_header, HeaderError, MAX_HEADER_LEN};
pub use id::{HashKind, ObjectId, ParseIdError};
pub use id_hash::{IdHashBuilder, IdHasher, IdMap, IdSet};
pub use kind::ObjectKind;
