//! What a push takes from the configuration when no option says: `push.default`,
//! `push.autoSetupRemote`, `push.followTags`, `push.gpgSign`, `push.useForceIfIncludes`,
//! `push.recurseSubmodules` (else `submodule.recurse`: true is on-demand), `push.negotiate`.
//! Options given on the command line win. Every one is read, and a bad value refused in git's
//! words, before the push starts, as git reads them with its configuration.

use super::{PushError, RecurseSubmodules, SignedPush};
use sluice_odb::Config;
pub use sluice_repo::default_config::PushDefault;

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
    /// `push.default` (`None`: unset).
    pub push_default: Option<PushDefault>,
    /// A branch with no upstream gets one by its push, as with `--set-upstream`.
    pub auto_setup_remote: bool,
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
        let key = "push.gpgsign";
        let configured = (config.get(key).map(SignedPush::parse).transpose())
            .map_err(|_| config.refuse(key, format!("invalid value for '{key}'")))?;
        let signed = match &given.signed {
            Some(value) => SignedPush::parse(value)?,
            None => configured.unwrap_or(SignedPush::No),
        };
        let key = "push.recursesubmodules";
        let configured = (config.get(key))
            .map(|mode| RecurseSubmodules::parse(key, mode))
            .transpose()?;
        let recurse = (config.get_bool("submodule.recurse")?).map(|on| match on {
            true => RecurseSubmodules::OnDemand,
            false => RecurseSubmodules::No,
        });
        // Of the two settings, the one set last decides, as git reads them in turn.
        let configured = match config.last_of(&["submodule.recurse", key]) {
            Some("submodule.recurse") => recurse,
            _ => configured,
        };
        let recurse_submodules = match &given.recurse_submodules {
            Some(mode) => RecurseSubmodules::parse("recurse-submodules", mode)?,
            None => configured.unwrap_or(RecurseSubmodules::No),
        };
        Ok(Settings {
            push_default: PushDefault::from_config(config)?,
            auto_setup_remote: config.get_bool("push.autosetupremote")?.unwrap_or(false),
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
