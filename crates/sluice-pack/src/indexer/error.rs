//! Why a pack could not be indexed: one enum for both passes and fix-thin, each content
//! error naming the offset of the entry at fault.

use crate::delta::DeltaError;
use crate::entry::EntryError;
use crate::inflate::InflateError;
use sluice_object::ObjectId;
use std::io;

/// Why a pack could not be indexed. Every variant that concerns the pack's content names the
/// offset of the entry at fault.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// Reading or writing failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The underlying error.
        source: io::Error,
    },
    /// No input at all.
    #[error("empty input: no pack data")]
    Empty,
    /// The input does not start with "PACK".
    #[error("pack signature mismatch: not a pack file")]
    Signature,
    /// A pack version other than 2 or 3.
    #[error("pack version {0} unsupported")]
    Version(u32),
    /// The input ends early.
    #[error("pack is truncated: unexpected end of data at offset {offset}")]
    Truncated {
        /// Where the data ran out.
        offset: u64,
    },
    /// The header declares more objects than the pack holds.
    #[error("pack claims {declared} objects but holds only {found}: the trailer comes at offset {offset}")]
    ObjectCount {
        /// Objects the header declares.
        declared: u32,
        /// Entries found before the trailer.
        found: u32,
        /// Where the trailer starts.
        offset: u64,
    },
    /// An entry header is invalid.
    #[error("bad entry at offset {offset}: {source}")]
    Entry {
        /// Offset of the entry.
        offset: u64,
        /// What is wrong with it.
        source: EntryError,
    },
    /// An entry's zlib data is corrupt or has the wrong size.
    #[error("bad object data at offset {offset}: {source}")]
    Inflate {
        /// Offset of the entry.
        offset: u64,
        /// What is wrong with it.
        source: InflateError,
    },
    /// An ofs-delta's base offset is not where an entry starts.
    #[error("delta at offset {offset} has base offset {base_offset}, which is not the start of an entry")]
    BaseNotAnEntry {
        /// Offset of the delta.
        offset: u64,
        /// Where its base would be.
        base_offset: u64,
    },
    /// A delta cannot be applied to its base.
    #[error("bad delta at offset {offset}: {source}")]
    Delta {
        /// Offset of the delta.
        offset: u64,
        /// What is wrong with it.
        source: DeltaError,
    },
    /// An object's data shows a SHA-1 collision attack.
    #[error("SHA-1 collision attack detected in the object at offset {offset}")]
    CollisionAttack {
        /// Offset of the entry.
        offset: u64,
    },
    /// The repository has an object with this id and different content.
    #[error("SHA-1 collision found with {id}")]
    Collision {
        /// The id both objects claim.
        id: ObjectId,
    },
    /// The repository could not read an object it claims to have.
    #[error("cannot read object {id} from the repository: {source}")]
    Lookup {
        /// The object.
        id: ObjectId,
        /// Why.
        source: super::LookupError,
    },
    /// The trailing checksum does not match the pack.
    #[error("pack is corrupted (SHA-1 mismatch): bad trailer at offset {offset}")]
    TrailerMismatch {
        /// Offset of the trailer.
        offset: u64,
    },
    /// Data follows the trailer.
    #[error("pack has junk at the end, after offset {offset}")]
    JunkAtEnd {
        /// Where the junk starts.
        offset: u64,
    },
    /// An entry past what an index records here (objects up to 1 TiB, offsets up to 128 TiB).
    #[error("entry at offset {offset} of {size} bytes is beyond the indexer's limits (objects up to 1 TiB, packs up to 128 TiB)")]
    EntryTooLarge {
        /// Where the entry starts.
        offset: u64,
        /// Its declared size.
        size: u64,
    },
    /// The pack is bigger than `--max-input-size`.
    #[error("pack exceeds maximum allowed size ({limit} bytes)")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// Deltas whose base is neither in the pack nor (with --fix-thin) in the repository, or
    /// that form a cycle.
    #[error("pack has {count} unresolved delta{plural} (first at offset {offset}{base})",
        plural = if *count == 1 { "" } else { "s" },
        base = base.map(|b| format!(", base {b}")).unwrap_or_default())]
    Unresolved {
        /// How many deltas were not resolved.
        count: usize,
        /// Offset of the first.
        offset: u64,
        /// The first's base, when it is a ref-delta.
        base: Option<ObjectId>,
    },
    /// A ref-delta would be built a second time: its base id is held by two entries, a
    /// duplicate object or a cycle of ref-deltas leading back to an object stored whole.
    #[error("REF_DELTA at offset {offset} already resolved (duplicate base {base}?)")]
    ResolvedTwice {
        /// Offset of the ref-delta.
        offset: u64,
        /// The base it names.
        base: ObjectId,
    },
    /// A commit, tree or tag cannot be read for its links.
    #[error("object {id} at offset {offset} is malformed: {source}")]
    Malformed {
        /// Offset of the entry.
        offset: u64,
        /// The object.
        id: ObjectId,
        /// What is wrong with it.
        source: sluice_object::parse::ParseError,
    },
    /// The object check (fsck) refused an object; the checker holds what it found.
    #[error("fsck error in packed object")]
    Refused {
        /// Offset of the entry.
        offset: u64,
        /// The object.
        id: ObjectId,
    },
    /// The object check refused a blob it asked for after resolution (a `.gitmodules`).
    #[error("fsck error in pack objects")]
    RefusedAtEnd {
        /// The object.
        id: ObjectId,
    },
    /// --fix-thin was asked for a pack that is not being written.
    #[error("--fix-thin needs a pack received on a stream")]
    FixThinNeedsStream,
    /// The operation was interrupted.
    #[error("interrupted")]
    Interrupted,
    /// Objects were to be read alongside indexing, but the pack is thin: its missing bases are
    /// only appended after resolution.
    #[error("a thin pack cannot be read while it is indexed")]
    AlongsideFixThin,
}
