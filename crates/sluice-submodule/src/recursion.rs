//! The submodule recursion a fetch is asked for (`--[no-]recurse-submodules[=<mode>]`), else
//! the one configured (`fetch.recurseSubmodules`, `submodule.recurse`,
//! `submodule.<name>.fetchRecurseSubmodules`), else on demand.

use crate::registry::Submodule;
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
            (false, Some(mode)) => Some(Recursion::parse("recurse-submodules", mode)?),
            (false, None) if porcelain => Some(Recursion::Off),
            (false, None) => None,
        })
    }

    /// The `value` of `option` (a command line's or a setting's), as git reads it: `on-demand`
    /// or a boolean; anything else refused with git's message, naming `option`.
    fn parse(option: &str, value: &str) -> Result<Recursion, SubmoduleError> {
        Ok(match value.to_ascii_lowercase().as_str() {
            "no" | "false" | "off" | "" => Recursion::Off,
            "yes" | "true" | "on" => Recursion::On,
            "on-demand" => Recursion::OnDemand,
            number => match number.parse::<i64>() {
                Ok(0) => Recursion::Off,
                Ok(_) => Recursion::On,
                Err(_) => {
                    return Err(SubmoduleError::BadRecursion {
                        option: option.to_owned(),
                        value: value.to_owned(),
                    })
                }
            },
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
/// index for nothing. The configuration is read (and a bad value refused) either way, as git's.
pub fn mode_of(given: Option<Recursion>, repo: &Repository) -> Result<Mode, SubmoduleError> {
    let configured = configured(repo)?;
    if !repo.common_dir().join("modules").is_dir() {
        return Ok(Mode::Given(Recursion::Off));
    }
    if let Some(given) = given {
        return Ok(Mode::Given(given));
    }
    // Configured off, as git: no submodule is looked at, whatever its own setting.
    Ok(match configured {
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
    /// The recursion for `submodule`, whose own setting is `submodule.<name>.fetchRecurseSubmodules`
    /// in the repository's configuration, else in `.gitmodules`.
    pub(crate) fn for_submodule(
        self,
        repo: &Repository,
        submodule: &Submodule,
    ) -> Result<Recursion, SubmoduleError> {
        let key = format!("submodule.{}.fetchRecurseSubmodules", submodule.name);
        let own = (repo.config().get(&key)).or(submodule.fetch_recurse.as_deref());
        Ok(match (self, own) {
            (Mode::Default(_), Some(value)) => Recursion::parse(&key, value)?,
            (Mode::Given(mode) | Mode::Default(mode), _) => mode,
        })
    }
}

/// `fetch.recurseSubmodules` or `submodule.recurse` (a boolean), whichever is set last, as git
/// reads them in turn; else on demand. Both are read, and a bad value refused, either way.
fn configured(repo: &Repository) -> Result<Recursion, SubmoduleError> {
    let config = repo.config();
    let key = "fetch.recursesubmodules";
    let fetch = config
        .get(key)
        .map(|v| Recursion::parse(key, v))
        .transpose()?;
    let recurse = (config.get_bool("submodule.recurse")?).map(|on| match on {
        true => Recursion::On,
        false => Recursion::Off,
    });
    let decides = config.last_of(&["submodule.recurse", key]);
    let mode = match decides {
        Some("submodule.recurse") => recurse,
        _ => fetch,
    };
    Ok(mode.unwrap_or(Recursion::OnDemand))
}
