//! The client side of git's transfers: `fetch` (refspecs, tag following, ref updates and their
//! report, pruning, FETCH_HEAD), `clone` (the plan, the layout, the checkout during delta
//! resolution), and `push` (refspecs and `push.default`, the pack, report-status,
//! remote-tracking refs), with what they share: receiving a pack into the repository,
//! the haves of a negotiation, local and reference repositories, shallow and partial clones.
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
pub mod push;
pub mod receive;
pub mod reference;
pub use sluice_repo::refspec;
pub mod remote_shallow;
pub mod upstream;

pub use negotiate::{HistoryNegotiator, NegotiationAlgorithm, UnknownNegotiation};
