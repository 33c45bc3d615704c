//! What a push takes from the configuration when no option says: `push.followTags`,
//! `push.gpgSign`, `push.useForceIfIncludes`, `push.recurseSubmodules` (else
//! `submodule.recurse`: true is on-demand), `push.negotiate`. Options given on the command
//! line win.

use super::{PushError, RecurseSubmodules, SignedPush};
use sluice_odb::Config;

/// The options as given (`None`: not given).
#[derive(Debug, Default, Clone)]
pub struct GivenSettings {
    /// `--follow-tags` (only ever turns it on).
    pub follow_tags: bool,
    /// `--signed[=<value>]`, `--no-signed` (as `Some("no")`).
    pub signed: Option<String>,
    /// `--[no-]force-if-includes`.
    pub force_if_includes: Option<bool>,
    /// `--recurse-submodules=<mode>`, `--no-recurse-submodules` (as `Some("no")`).
    pub recurse_submodules: Option<String>,
}

/// The settings in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Annotated tags pointing into what is pushed go too.
    pub follow_tags: bool,
    /// Whether the push is signed.
    pub signed: SignedPush,
    /// A lease must also find the remote-tracking value in the local ref's history.
    pub force_if_includes: bool,
    /// What happens to submodule commits the push needs.
    pub recurse_submodules: RecurseSubmodules,
    /// Commits in common are found by a fetch negotiation first (`push.negotiate`).
    pub negotiate: bool,
}

impl Settings {
    /// The settings `given` and `config` say, the options first.
    pub fn resolve(config: &Config, given: &GivenSettings) -> Result<Settings, PushError> {
        let signed = match given.signed.as_deref().or(config.get("push.gpgsign")) {
            Some(value) => SignedPush::parse(value)?,
            None => SignedPush::No,
        };
        let mode = (given.recurse_submodules.as_deref()).or(config.get("push.recursesubmodules"));
        let recurse_submodules = match mode {
            Some(mode) => RecurseSubmodules::parse(mode)?,
            None => match config.get_bool("submodule.recurse")? {
                Some(true) => RecurseSubmodules::OnDemand,
                _ => RecurseSubmodules::No,
            },
        };
        Ok(Settings {
            follow_tags: given.follow_tags || config.get_bool("push.followtags")?.unwrap_or(false),
            signed,
            force_if_includes: match given.force_if_includes {
                Some(given) => given,
                None => config.get_bool("push.useforceifincludes")?.unwrap_or(false),
            },
            recurse_submodules,
            negotiate: Self::negotiate(config)?,
        })
    }

    /// `push.negotiate`, which send-pack reads too.
    pub fn negotiate(config: &Config) -> Result<bool, PushError> {
        Ok(config.get_bool("push.negotiate")?.unwrap_or(false))
    }
}
