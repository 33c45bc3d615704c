//! The submodule recursion a fetch is asked for (`--[no-]recurse-submodules[=<mode>]`).

/// A recursion mode git does not know, refused with git's message.
#[derive(Debug, thiserror::Error)]
#[error("bad recurse-submodules argument: {0}")]
pub struct BadRecursion(pub String);

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
    ) -> Result<Option<Recursion>, BadRecursion> {
        Ok(match (no, mode) {
            (true, _) => Some(Recursion::Off),
            (false, Some(mode)) => match mode.to_ascii_lowercase().as_str() {
                "no" | "false" | "off" => Some(Recursion::Off),
                "yes" | "true" | "on" => Some(Recursion::On),
                "on-demand" => Some(Recursion::OnDemand),
                _ => return Err(BadRecursion(mode.to_owned())),
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
