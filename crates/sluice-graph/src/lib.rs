//! The object graph of a repository: revision walks that count and list objects (with
//! filters, limits and cores), reachability bitmaps (reading, writing, reuse), the
//! commit-graph file (reading, writing, split chains) and ancestry questions (merge bases,
//! "is this an ancestor").
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod ancestry;
pub mod bitmap;
pub mod commit_graph;
pub mod promised;
pub mod walk;

pub use walk::{
    traverse_objects, walk_objects, KnownObjects, Located, Missing, ObjectFilter, WalkCores,
    WalkError, WalkRequest, Walked, WalkedObject,
};
