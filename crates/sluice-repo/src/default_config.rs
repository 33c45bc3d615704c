//! The settings every git command that works in a repository reads with its configuration
//! (git's `git_default_config`: the `core.*` and `branch.*` it knows), checked as git checks
//! them, so that a value git refuses stops a Sluice command in git's words too, before it does
//! anything. Where a setting is used, its reader takes its meaning; this only refuses.

use sluice_odb::{Config, ConfigError};

/// Booleans git reads among its default settings.
const BOOLEANS: [&str; 13] = [
    "core.filemode",
    "core.ignorecase",
    "core.prefersymlinkrefs",
    "core.warnambiguousrefs",
    "core.trustctime",
    "core.symlinks",
    "core.precomposeunicode",
    "core.protecthfs",
    "core.protectntfs",
    "core.sparsecheckout",
    "core.sparsecheckoutcone",
    "core.quotepath",
    "core.preloadindex",
];

/// Booleans that also take words of their own (git reads the `core.*` words in any case, the
/// `branch.*` ones as written).
const BOOLEANS_OR: [(&str, &[&str]); 4] = [
    ("core.autocrlf", &["input"]),
    ("core.safecrlf", &["warn"]),
    ("core.logallrefupdates", &["always"]),
    ("branch.autosetupmerge", &["always", "inherit", "simple"]),
];

/// Sizes git reads as unsigned numbers: a sign is no unit it knows.
const SIZES: [&str; 4] = [
    "core.packedgitwindowsize",
    "core.bigfilethreshold",
    "core.packedgitlimit",
    "core.deltabasecachelimit",
];

/// Refuses, as git does, the first of the default settings in `config` that git refuses.
pub fn check(config: &Config) -> Result<(), DefaultConfigError> {
    for key in BOOLEANS {
        config.get_bool(key)?;
    }
    for (key, words) in BOOLEANS_OR {
        let own = |value: &str| match key.starts_with("core.") {
            true => words.iter().any(|word| value.eq_ignore_ascii_case(word)),
            false => words.contains(&value),
        };
        if !config.get(key).is_some_and(own) {
            config.get_bool(key)?;
        }
    }
    for key in SIZES {
        config.get_unsigned(key)?;
    }
    for key in ["core.compression", "core.loosecompression"] {
        match config.get_int(key)? {
            Some(level) if !(-1..=9).contains(&level) => {
                return Err(DefaultConfigError::CompressionLevel(level))
            }
            _ => {}
        }
    }
    check_words(config)?;
    abbrev(config)?;
    PushDefault::from_config(config)?;
    Ok(())
}

/// `push.default`: what a push with no refspec (and no `remote.<name>.push`) pushes. git
/// reads it with its default settings, so that every command refuses a value it does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushDefault {
    /// Nothing: a refspec must be given.
    Nothing,
    /// Every branch both sides have.
    Matching,
    /// The branch checked out, to its upstream of the same name where it is fetched from.
    Simple,
    /// The branch checked out, to its upstream (`tracking`, git's old name, too).
    Upstream,
    /// The branch checked out, to its own name.
    Current,
}

impl PushDefault {
    /// `push.default`, `None` when unset (`simple`, with git's advice where it matters).
    pub fn from_config(config: &Config) -> Result<Option<PushDefault>, ConfigError> {
        let Some(value) = config.get("push.default") else {
            return Ok(None);
        };
        Ok(Some(match value {
            "nothing" => PushDefault::Nothing,
            "matching" => PushDefault::Matching,
            "simple" => PushDefault::Simple,
            "upstream" | "tracking" => PushDefault::Upstream,
            "current" => PushDefault::Current,
            _ => {
                let why = format!("malformed value for push.default: {value}\nmust be one of nothing, matching, simple, upstream or current");
                return Err(config.refuse("push.default", why));
            }
        }))
    }
}

/// The settings of a few words each.
fn check_words(config: &Config) -> Result<(), DefaultConfigError> {
    if let Some(value) = config.get("core.checkstat") {
        if !["default", "minimal"]
            .iter()
            .any(|w| value.eq_ignore_ascii_case(w))
        {
            let why = format!("invalid value for 'core.checkstat': '{value}'");
            return Err(config.refuse("core.checkstat", why).into());
        }
    }
    if let Some(value) = config.get("core.createobject") {
        if !["rename", "link"].contains(&value) {
            return Err(DefaultConfigError::ObjectCreation(value.to_owned()));
        }
    }
    if let Some(value) = config.get("branch.autosetuprebase") {
        if !["never", "local", "remote", "always"].contains(&value) {
            let why = "malformed value for branch.autosetuprebase".to_owned();
            return Err(config.refuse("branch.autosetuprebase", why).into());
        }
    }
    Ok(())
}

/// `core.abbrev`: `auto`, `false`/`no`/`off` (no abbreviation), or a length from 4 to the
/// length of a full id (any other word is read as a number, and refused as one).
fn abbrev(config: &Config) -> Result<(), DefaultConfigError> {
    let Some(value) = config.get("core.abbrev") else {
        return Ok(());
    };
    let word = value.to_ascii_lowercase();
    if matches!(word.as_str(), "auto" | "false" | "no" | "off" | "") {
        return Ok(());
    }
    let length = config.get_int("core.abbrev")?.unwrap_or_default();
    let full = match config.get("extensions.objectformat") {
        Some(format) if format.eq_ignore_ascii_case("sha256") => 64,
        _ => 40,
    };
    if !(4..=full).contains(&length) {
        let why = format!("abbrev length out of range: {length}");
        return Err(config.refuse("core.abbrev", why).into());
    }
    Ok(())
}

/// A default setting git refuses.
#[derive(Debug, thiserror::Error)]
pub enum DefaultConfigError {
    /// A value of the wrong type, or one its setting does not take.
    // Not transparent: the refused setting stays in the chain of causes, where the binary
    // finds git's error lines for it.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// `core.compression` or `core.looseCompression` past zlib's levels (git's words).
    #[error("bad zlib compression level {0}")]
    CompressionLevel(i64),
    /// `core.createObject` names no way git knows (git's words).
    #[error("invalid mode for object creation: {0}")]
    ObjectCreation(String),
}
