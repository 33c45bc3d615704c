//! Clone's engine, in its steps: the plan from the remote's refs ([`ClonePlan`]), the pack
//! received with the checkout running while its deltas resolve ([`EarlyCheckout`] given to
//! [`receive::fetch_into`](crate::receive::fetch_into)), and the refs written
//! ([`write_refs`]). The command line around it makes the repository, reads the options and
//! shows progress.

mod early;
mod plan;
mod refs;

pub use early::EarlyCheckout;
pub use plan::{ClonePlan, CloneShape, Mapped, Origin, PlanError};
pub use refs::{write_refs, RefLog};
