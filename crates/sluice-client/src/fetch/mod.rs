//! Fetch's engine, in its steps: which refs the refspecs take and where ([`RefPlan`],
//! [`follow_known_tags`], [`track_in_passing`], [`drop_duplicates`]), what to ask the server for
//! and the pack received ([`crate::receive`]), then the refs moved ([`update_refs`],
//! [`prune_stale`], a shallow remote's [`RemoteCut`]) with each ref's report as data, and
//! `FETCH_HEAD`. The command line decides the plan from its flags and the configuration, and
//! prints the report.

mod command;
mod fetch_head;
pub mod legacy_remotes;
mod mapping;
mod negotiation_tips;
mod plan;
mod remotes;
mod report;
mod run;
mod settings;
mod update;
mod upstream;

pub use command::{
    run_fetch, FetchApart, FetchCommand, FetchCommandError, FetchEnd, FetchHost, HostError,
};
pub use fetch_head::write_fetch_head;
pub use mapping::{
    drop_duplicates, follow_known_tags, track_in_passing, Listed, Mapping, MappingError, RefPlan,
    Update, TAG_REFSPEC,
};
pub use plan::{FetchChoice, FetchPlan, FetchPlanError};
pub use remotes::{remotes_to_fetch, Remotes, Selection, SelectionError};
pub use report::{short_name, NamesFormat, Report, Summary};
pub use run::{
    fetch_remote, negotiate_only, FetchMessages, FetchOptions, FetchOutcome, Moved, RunError,
};
pub use settings::{FetchSettings, GivenSettings, UNCHECKED_FORCED_UPDATES};
pub use update::{
    any_rejected, conflicts, decide, prune_stale, stale_refs, update_refs, Changes, New, Outcome,
    Refused, RemoteCut, UpdateError,
};
pub use upstream::set_upstream;
