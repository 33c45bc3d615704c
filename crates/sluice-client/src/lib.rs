//! The client side of git's transfers that bring objects in: `fetch` (refspecs, tag following,
//! ref updates and their report, pruning, FETCH_HEAD) and `clone` (the plan, the layout, the
//! checkout during delta resolution), with what they share (and `sluice-push` uses too):
//! receiving a pack into the repository, the haves of a negotiation, local and reference
//! repositories, shallow and partial clones.
//! Reaching the server and speaking its protocol is `sluice-remote`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod bundle_uri;
pub mod clone;
pub mod fetch;
pub mod fetch_pack;
pub mod local_clone;
mod negotiate;
pub mod partial;
pub mod promised;
pub mod receive;
pub mod reference;
pub use sluice_repo::refspec;
pub mod remote_shallow;
pub mod upstream;

pub use negotiate::{HistoryNegotiator, NegotiationAlgorithm, UnknownNegotiation};

/// Shows the server's progress (band 2) as a command's host shows it: each packet as it
/// arrives; what the server left open is ended when it is dropped.
pub type ServerLines<'a> = Box<dyn Fn(&[u8]) + Sync + 'a>;
