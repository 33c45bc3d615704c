//! The commit-graph file (`gitformat-commit-graph`): every commit's tree, parents, commit
//! time, topological level and corrected commit date, by position in a sorted id list, so
//! that walks need not inflate commits. This module is its one home: the layout below, the
//! reader (`read`), the writer (`write`) and the checks (`verify`).
//!
//! Layout: a header (`CGPH`, version 1, hash version, chunk count, base graph count), a table
//! of chunks (4-byte id, 8-byte offset; a zero id ends it at the end of the last chunk), the
//! chunks, and a trailing checksum of all that precedes it. Chunks, in git's order: `OIDF`
//! (256 cumulative counts by first byte), `OIDL` (the sorted ids), `CDAT` (per commit: tree,
//! two parent positions, level and time), `GDA2` (corrected commit date offsets), `GDO2`
//! (offsets too large for 31 bits), `EDGE` (third and later parents of octopus merges), `BASE`
//! (in a layer of a split graph: the graphs below it, bottom first; see `split`), and
//! `BIDX` and `BDAT` (changed-path Bloom filters; see `bloom`), before `BASE`.

mod bloom;
mod files;
mod read;
mod sources;
mod split;
mod verify;
mod write;

pub use bloom::ChangedPaths;
pub use read::{GraphCommit, GraphReader};
pub use sources::{GraphCommits, SourceError};
pub use split::{write_split, SplitOptions, SplitStrategy};
pub use verify::{verify, Verified};
pub use write::{
    commits_newest_first, enabled, write_graph, write_reachable, CommitGraphError, GraphOptions,
    ReachableCommit, Written, DISABLED,
};

/// The chunk ids, as the format names them.
pub(crate) const OID_FANOUT: [u8; 4] = *b"OIDF";
pub(crate) const OID_LOOKUP: [u8; 4] = *b"OIDL";
pub(crate) const COMMIT_DATA: [u8; 4] = *b"CDAT";
pub(crate) const GENERATION_DATA: [u8; 4] = *b"GDA2";
pub(crate) const GENERATION_OVERFLOW: [u8; 4] = *b"GDO2";
pub(crate) const EXTRA_EDGES: [u8; 4] = *b"EDGE";
pub(crate) const BASE_GRAPHS: [u8; 4] = *b"BASE";

/// A parent position meaning "no parent".
pub(crate) const NO_PARENT: u32 = 0x7000_0000;
/// The bit that marks an index into the extra edges (and the last of an octopus's parents).
pub(crate) const EDGE_BIT: u32 = 0x8000_0000;
/// The highest topological level the 30 bits of `CDAT` hold.
pub(crate) const LEVEL_MAX: u32 = 0x3FFF_FFFF;
/// The highest corrected-date offset `GDA2` holds itself; larger ones go to `GDO2`.
pub(crate) const OFFSET_MAX: u64 = 0x7FFF_FFFF;
