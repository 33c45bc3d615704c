//! The submodule recursion a fetch is asked for (`--[no-]recurse-submodules[=<mode>]`), else
//! the one configured (`fetch.recurseSubmodules`, `submodule.recurse`,
//! `submodule.<name>.fetchRecurseSubmodules`), else on demand.

use crate::SubmoduleError;
use sluice_repo::Repository;

/// How a fetch treats submodules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recursion {
    /// Not at all.
    Off,
    /// Every submodule.
    On,
    /// Those whose commits the fetch brings.
    OnDemand,
}

impl Recursion {
    /// From `--no-recurse-submodules` (`no`) and `--recurse-submodules[=<mode>]` (`mode`),
    /// `None` when neither is given; `--porcelain` alone means off, since its output has no room
    /// for submodules. A mode git does not know is refused with git's message.
    pub fn from_flags(
        no: bool,
        mode: Option<&str>,
        porcelain: bool,
    ) -> Result<Option<Recursion>, SubmoduleError> {
        Ok(match (no, mode) {
            (true, _) => Some(Recursion::Off),
            (false, Some(mode)) => match mode.to_ascii_lowercase().as_str() {
                "no" | "false" | "off" => Some(Recursion::Off),
                "yes" | "true" | "on" => Some(Recursion::On),
                "on-demand" => Some(Recursion::OnDemand),
                _ => return Err(SubmoduleError::BadRecursion(mode.to_owned())),
            },
            (false, None) if porcelain => Some(Recursion::Off),
            (false, None) => None,
        })
    }

    /// The option git passes on for it.
    pub fn option(self) -> &'static str {
        match self {
            Recursion::Off => "--no-recurse-submodules",
            Recursion::On => "--recurse-submodules",
            Recursion::OnDemand => "--recurse-submodules=on-demand",
        }
    }
}

/// The recursion in effect: the command line's, else the configuration's, else on demand;
/// off where no submodule has a repository (`modules/`), so that a fetch elsewhere reads no
/// index for nothing.
pub fn mode_of(given: Option<Recursion>, repo: &Repository) -> Result<Mode, SubmoduleError> {
    if !repo.common_dir().join("modules").is_dir() {
        return Ok(Mode::Given(Recursion::Off));
    }
    if let Some(given) = given {
        return Ok(Mode::Given(given));
    }
    // Configured off, as git: no submodule is looked at, whatever its own setting.
    Ok(match configured(repo)? {
        Recursion::Off => Mode::Given(Recursion::Off),
        mode => Mode::Default(mode),
    })
}

/// The recursion for a submodule: the command line's, else its own
/// `submodule.<name>.fetchRecurseSubmodules`, else the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Said on the command line: for every submodule.
    Given(Recursion),
    /// From the configuration, or on demand: a submodule's own setting comes first.
    Default(Recursion),
}

impl Mode {
    /// The recursion for a submodule whose own setting is `own`.
    pub(crate) fn for_submodule(self, own: Option<&str>) -> Result<Recursion, SubmoduleError> {
        Ok(match (self, own) {
            (Mode::Default(mode), Some(value)) => {
                Recursion::from_flags(false, Some(value), false)?.unwrap_or(mode)
            }
            (Mode::Given(mode) | Mode::Default(mode), _) => mode,
        })
    }
}

/// `fetch.recurseSubmodules`, else `submodule.recurse`, else on demand.
fn configured(repo: &Repository) -> Result<Recursion, SubmoduleError> {
    let config = repo.config();
    if let Some(value) = config.get("fetch.recursesubmodules") {
        let mode = Recursion::from_flags(false, Some(value), false)?;
        return Ok(mode.unwrap_or(Recursion::OnDemand));
    }
    Ok(match config.get_bool("submodule.recurse")? {
        Some(true) => Recursion::On,
        _ => Recursion::OnDemand,
    })
}
