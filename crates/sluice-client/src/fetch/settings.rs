//! What a fetch takes from the configuration for the whole command when no option says:
//! `fetch.output`, `fetch.showForcedUpdates` (and `advice.fetchShowForcedUpdates`),
//! `fetch.writeCommitGraph`. Read once, before anything is fetched, as git reads them with its
//! configuration; options given win. A remote's own settings are read with its plan
//! ([`super::FetchPlan`]).

use super::NamesFormat;
use sluice_odb::{Config, ConfigError};

/// The options as given (`None`: neither the option nor its `--no-` form).
#[derive(Debug, Default, Clone, Copy)]
pub struct GivenSettings {
    /// `--[no-]show-forced-updates`.
    pub show_forced_updates: Option<bool>,
    /// `--[no-]write-commit-graph`.
    pub write_commit_graph: Option<bool>,
}

/// The settings in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchSettings {
    /// How the report names refs (`fetch.output`).
    pub names: NamesFormat,
    /// Whether each move is checked to be a fast-forward.
    pub show_forced_updates: bool,
    /// Whether git's warning follows a fetch that did not check them.
    pub advise_unchecked: bool,
    /// Whether a layer of the split commit-graph is written once every remote is fetched.
    pub write_commit_graph: bool,
}

/// git's warning after a fetch that took every move as a fast-forward, unchecked.
pub const UNCHECKED_FORCED_UPDATES: &str = "fetch normally indicates which branches had a forced update,\nbut that check has been disabled; to re-enable, use '--show-forced-updates'\nflag or run 'git config fetch.showForcedUpdates true'";

impl FetchSettings {
    /// The settings `given` and `config` make; a bad value refused in git's words.
    pub fn resolve(config: &Config, given: GivenSettings) -> Result<FetchSettings, ConfigError> {
        let names = NamesFormat::from_config(config)?;
        let show_forced_updates = match given.show_forced_updates {
            Some(given) => given,
            None => config.get_bool("fetch.showforcedupdates")?.unwrap_or(true),
        };
        let advice = config.get_bool("advice.fetchshowforcedupdates")?;
        let write_commit_graph = match given.write_commit_graph {
            Some(given) => given,
            None => config.get_bool("fetch.writecommitgraph")?.unwrap_or(false),
        };
        Ok(FetchSettings {
            names,
            show_forced_updates,
            advise_unchecked: !show_forced_updates && advice.unwrap_or(true),
            write_commit_graph,
        })
    }
}
