//! Git configuration files (`git-config`, "CONFIGURATION FILE"): sections, subsections,
//! quoting and escapes, read from the system, global and repository files and `-c` overrides,
//! later sources winning as in git.

use std::path::{Path, PathBuf};

pub mod color;
mod edit;
pub mod environment;
pub use edit::{ConfigFile, ConfigKey, KeyProblem};

/// Why a configuration file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A line that is not valid configuration syntax.
    #[error("bad config line {line} in file {path}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
    },
    /// The file exists but could not be read.
    #[error("cannot read config file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A value that is not of the type its key needs.
    #[error("bad {kind} config value '{value}' for '{key}'{}{why}", match file {
        Some(file) => format!(" in file {}", file.display()),
        None => String::new(),
    })]
    Value {
        /// The key, as the reader names it: as git does in this message (mostly in lowercase,
        /// as git's configuration callbacks see it; in camelCase where git asks for it so).
        key: Box<str>,
        /// The value.
        value: Box<str>,
        /// What was expected ("boolean", "numeric").
        kind: &'static str,
        /// git's reason, with its separator (": invalid unit"), or nothing.
        why: &'static str,
        /// For a number, the file it was set in, as git names it (none from the command line;
        /// git names none for a boolean). Boxed, as the keys: every error that may carry this
        /// one stays small.
        file: Option<Box<Path>>,
    },
    /// A `-c` override without `=` or a key with no section.
    #[error("bogus config parameter: {0}")]
    Parameter(String),
    /// A thread count below zero (`pack.threads`), which git refuses in these words.
    #[error("invalid number of threads specified ({0})")]
    Threads(i64),
    /// A key git would refuse to write.
    #[error("{problem}: {key}")]
    Key {
        /// The key as given.
        key: String,
        /// What is wrong with it.
        problem: KeyProblem,
    },
    /// `GIT_CONFIG_COUNT` and its keys and values, or `GIT_CONFIG_PARAMETERS`, cannot be read.
    #[error("{0}")]
    Environment(String),
    /// Setting one value for a key that has several.
    #[error("{0} has multiple values")]
    MultipleValues(String),
    /// A value that is none of those its setting takes (git's words for such a setting).
    #[error("invalid value for '{key}': '{value}'")]
    Invalid {
        /// The key, as git names it.
        key: String,
        /// The value.
        value: String,
    },
    /// A value its reader refuses (`why`, which git says first as an error), named by where
    /// it was set: a file and line, or the command line.
    #[error("{}", match origin {
        Some((path, line)) => format!("bad config variable '{key}' in file '{}' at line {line}", path.display()),
        None => format!("unable to parse '{key}' from command-line config"),
    })]
    BadVariable {
        /// The key, as git names it (lowercase).
        key: String,
        /// What is wrong with the value, in the reader's words (git's error lines, one a line).
        why: String,
        /// The file (as shown: below the working directory, relative to it) and line.
        origin: Option<(PathBuf, usize)>,
    },
}

impl ConfigError {
    /// What git says as errors (a line each) before its fatal line, for a refused value.
    pub fn said_first(&self) -> Option<&str> {
        match self {
            ConfigError::BadVariable { why, .. } => Some(why),
            _ => None,
        }
    }
}

/// One `key = value` line, with its key normalised to `section.subsection.name` where section
/// and name are lowercase and the subsection keeps its case.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    key: String,
    value: Option<String>,
    /// The file and line it was read from; `None` for the command line and the environment.
    origin: Option<(std::sync::Arc<Path>, usize)>,
}

/// The file git's `--global` settings are written to: `GIT_CONFIG_GLOBAL`; else
/// `~/.gitconfig`, unless only `$XDG_CONFIG_HOME/git/config` (`~/.config/git/config`) exists.
/// `None` with neither that variable nor `HOME`.
pub fn global_file() -> Option<PathBuf> {
    let env = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(global) = env("GIT_CONFIG_GLOBAL") {
        return Some(PathBuf::from(global));
    }
    let home = env("HOME").map(PathBuf::from);
    let user = home.as_ref().map(|h| h.join(".gitconfig"));
    let xdg = env("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")))
        .map(|dir| dir.join("git/config"));
    match (&user, xdg) {
        (Some(user), Some(xdg)) if xdg.is_file() && !user.is_file() => Some(xdg),
        _ => user,
    }
}

/// All configuration values in the order they were read.
#[derive(Debug, Clone, Default)]
pub struct Config {
    entries: Vec<Entry>,
}

impl Config {
    /// Reads the system, global and (if given) repository configuration, as git does: the
    /// system file unless `GIT_CONFIG_NOSYSTEM`, `$XDG_CONFIG_HOME/git/config` and
    /// `~/.gitconfig`, then the repository's `config`, then `GIT_CONFIG_PARAMETERS`.
    pub fn load(git_dir: Option<&Path>) -> Result<Config, ConfigError> {
        Config::load_layers(git_dir.map(|dir| (dir, dir)))
    }

    /// [`Config::load`] of a repository whose settings are shared by its worktrees
    /// (`common_dir`) and, with `extensions.worktreeConfig`, also kept per worktree
    /// (`git_dir/config.worktree`, read after the shared file: `git sparse-checkout` writes its
    /// settings there).
    pub fn load_repository(common_dir: &Path, git_dir: &Path) -> Result<Config, ConfigError> {
        Config::load_layers(Some((common_dir, git_dir)))
    }

    fn load_layers(repository: Option<(&Path, &Path)>) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        let env = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        if env("GIT_CONFIG_NOSYSTEM").is_none() {
            let system =
                env("GIT_CONFIG_SYSTEM").map_or_else(|| "/etc/gitconfig".into(), PathBuf::from);
            config.read_file(&system)?;
        }
        if let Some(global) = env("GIT_CONFIG_GLOBAL") {
            config.read_file(Path::new(&global))?;
        } else {
            let xdg = env("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".config")));
            if let Some(xdg) = xdg {
                config.read_file(&xdg.join("git/config"))?;
            }
            if let Some(home) = env("HOME") {
                config.read_file(&PathBuf::from(home).join(".gitconfig"))?;
            }
        }
        if let Some((common_dir, git_dir)) = repository {
            config.read_file(&edit::repository_file(common_dir))?;
            if config.get_bool("extensions.worktreeconfig")? == Some(true) {
                config.read_file(&git_dir.join("config.worktree"))?;
            }
        }
        for (key, value) in environment::parameters()? {
            config.push_parameter(&key, value)?;
        }
        Ok(config)
    }

    /// Reads one file, if it exists.
    pub fn read_file(&mut self, path: &Path) -> Result<(), ConfigError> {
        match std::fs::read(path) {
            Ok(bytes) => self.parse(&String::from_utf8_lossy(&bytes), path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(ConfigError::Io {
                path: path.to_owned(),
                source,
            }),
        }
    }

    /// Adds a `-c name=value` override (`name` alone means true).
    pub fn set_parameter(&mut self, param: &str) -> Result<(), ConfigError> {
        let (key, value) = match param.split_once('=') {
            Some((k, v)) => (k, Some(v.to_owned())),
            None => (param, None),
        };
        self.push_parameter(key, value)
    }

    /// Adds the override `key` = `value` (`None`: a key given alone, which means true); a key
    /// git would refuse is refused with git's words.
    fn push_parameter(&mut self, key: &str, value: Option<String>) -> Result<(), ConfigError> {
        ConfigKey::parse(key)?;
        let key = normalize_key(key).ok_or_else(|| ConfigError::Parameter(key.to_owned()))?;
        self.entries.push(Entry {
            key,
            value,
            origin: None,
        });
        Ok(())
    }

    /// Parses configuration text.
    pub fn parse(&mut self, text: &str, path: &Path) -> Result<(), ConfigError> {
        let bad = |line| ConfigError::Syntax {
            path: path.to_owned(),
            line,
        };
        let mut section = String::new();
        let file: std::sync::Arc<Path> = path.into();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let number = i + 1;
            let mut line = lines[i].trim_start().to_owned();
            i += 1;
            if line.starts_with('[') {
                let header = parse_header(&line).ok_or_else(|| bad(number))?;
                section = match &header.subsection {
                    Some(sub) => format!("{}.{sub}", header.section),
                    None => header.section.clone(),
                };
                let close = line.len() - header.rest.len();
                line = line[close..].trim_start().to_owned();
                if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                    continue;
                }
            }
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            // Continuation lines: a value ending in an unescaped backslash goes on.
            while line.ends_with('\\') && !line.ends_with("\\\\") && i < lines.len() {
                line.pop();
                line.push_str(lines[i]);
                i += 1;
            }
            if section.is_empty() {
                return Err(bad(number));
            }
            let (name, raw) = match line.split_once('=') {
                Some((n, v)) => (n.trim(), Some(v)),
                None => (line.trim(), None),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                return Err(bad(number));
            }
            let value = match raw {
                Some(raw) => Some(parse_value(raw).ok_or_else(|| bad(number))?),
                None => None,
            };
            self.entries.push(Entry {
                key: format!("{section}.{}", name.to_ascii_lowercase()),
                value,
                origin: Some((std::sync::Arc::clone(&file), number)),
            });
        }
        Ok(())
    }

    /// The last value of `key` (`section.name` or `section.subsection.name`); a key without
    /// `=` reads as the empty string here.
    pub fn get(&self, key: &str) -> Option<&str> {
        let key = normalize_key(key)?;
        self.entries
            .iter()
            .rev()
            .find(|e| e.key == key)
            .map(|e| e.value.as_deref().unwrap_or(""))
    }

    /// Which of `keys` was set last, where several settings decide the same thing and git lets
    /// the one read last win.
    pub fn last_of<'k>(&self, keys: &[&'k str]) -> Option<&'k str> {
        let normalized: Vec<Option<String>> = keys.iter().map(|k| normalize_key(k)).collect();
        let entry = (self.entries.iter().rev())
            .find(|e| normalized.iter().flatten().any(|key| *key == e.key))?;
        let at = (normalized.iter()).position(|key| key.as_deref() == Some(entry.key.as_str()))?;
        Some(keys[at])
    }

    /// The refusal of `key`'s value for `why`, naming where the value in force was set, as
    /// git's "bad config variable" does.
    pub fn refuse(&self, key: &str, why: String) -> ConfigError {
        ConfigError::BadVariable {
            key: normalize_key(key).unwrap_or_else(|| key.to_owned()),
            why,
            origin: self.origin(key),
        }
    }

    /// The file (as shown: below the working directory, relative to it) and line that set
    /// `key`'s value in force; `None` for the command line, the environment, or no value.
    fn origin(&self, key: &str) -> Option<(PathBuf, usize)> {
        let normalized = normalize_key(key)?;
        let entry = self.entries.iter().rev().find(|e| e.key == normalized)?;
        let (path, line) = entry.origin.as_ref()?;
        let cwd = std::env::current_dir().unwrap_or_default();
        Some((path.strip_prefix(&cwd).unwrap_or(path).to_owned(), *line))
    }

    /// The last value of `key` read as a path, as git reads path settings: a leading `~/`
    /// stands for the home directory.
    pub fn get_path(&self, key: &str) -> Option<std::path::PathBuf> {
        let value = self.get(key)?;
        Some(match (value.strip_prefix("~/"), std::env::var_os("HOME")) {
            (Some(rest), Some(home)) => std::path::Path::new(&home).join(rest),
            _ => std::path::PathBuf::from(value),
        })
    }

    /// Every value of a multi-valued key, in order.
    pub fn get_all(&self, key: &str) -> Vec<&str> {
        let Some(key) = normalize_key(key) else {
            return Vec::new();
        };
        self.entries
            .iter()
            .filter(|e| e.key == key)
            .map(|e| e.value.as_deref().unwrap_or(""))
            .collect()
    }

    /// The subsections of `section` (`remote.<name>.*` → the names), in the order they first
    /// appear.
    pub fn subsection_names(&self, section: &str) -> Vec<String> {
        let prefix = format!("{}.", section.to_ascii_lowercase());
        let mut out: Vec<String> = Vec::new();
        for entry in &self.entries {
            let Some((sub, _)) = entry
                .key
                .strip_prefix(&prefix)
                .and_then(|rest| rest.rsplit_once('.'))
            else {
                continue;
            };
            if !out.iter().any(|s| s == sub) {
                out.push(sub.to_owned());
            }
        }
        out
    }

    /// Every `<prefix>.<name>` with no further dot in the name, as (name, value) in order:
    /// `fetch.fsck` gives the message ids `[fetch "fsck"]` sets.
    pub fn names_under(&self, prefix: &str) -> Vec<(String, String)> {
        let prefix = format!("{}.", prefix.to_ascii_lowercase());
        self.entries
            .iter()
            .filter_map(|entry| {
                let name = entry.key.strip_prefix(&prefix)?;
                (!name.contains('.'))
                    .then(|| (name.to_owned(), entry.value.clone().unwrap_or_default()))
            })
            .collect()
    }

    /// For every `<section>.<subsection>.<key>`, the subsection and the last value, in the order
    /// subsections first appear (`filter.lfs.smudge` → ("lfs", …)).
    pub fn subsections(&self, section: &str, key: &str) -> Vec<(String, String)> {
        let section = section.to_ascii_lowercase();
        let key = key.to_ascii_lowercase();
        let mut out: Vec<(String, String)> = Vec::new();
        for entry in &self.entries {
            let Some(rest) = entry
                .key
                .strip_prefix(&section)
                .and_then(|r| r.strip_prefix('.'))
            else {
                continue;
            };
            let Some((sub, name)) = rest.rsplit_once('.') else {
                continue;
            };
            if name != key {
                continue;
            }
            let value = entry.value.clone().unwrap_or_default();
            match out.iter_mut().find(|(s, _)| s == sub) {
                Some(slot) => slot.1 = value,
                None => out.push((sub.to_owned(), value)),
            }
        }
        out
    }

    /// Every value of `<section>.<subsection>.<key>`, as (subsection, value) in the order read
    /// (`url.<base>.insteadOf` takes several per base).
    pub fn subsection_values(&self, section: &str, key: &str) -> Vec<(&str, &str)> {
        let section = section.to_ascii_lowercase();
        let key = key.to_ascii_lowercase();
        (self.entries.iter())
            .filter_map(|entry| {
                let rest = entry.key.strip_prefix(&section)?.strip_prefix('.')?;
                let (sub, name) = rest.rsplit_once('.')?;
                (name == key).then(|| (sub, entry.value.as_deref().unwrap_or("")))
            })
            .collect()
    }

    /// A boolean as git reads it: true/yes/on/1 (or no value), false/no/off/0/empty.
    pub fn get_bool(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        let Some(normalized) = normalize_key(key) else {
            return Ok(None);
        };
        let Some(entry) = self.entries.iter().rev().find(|e| e.key == normalized) else {
            return Ok(None);
        };
        let Some(value) = entry.value.as_deref() else {
            return Ok(Some(true));
        };
        match value.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => Ok(Some(true)),
            "false" | "no" | "off" | "" => Ok(Some(false)),
            other => match other.parse::<i64>() {
                Ok(n) => Ok(Some(n != 0)),
                Err(_) => Err(ConfigError::Value {
                    key: key.into(),
                    value: value.into(),
                    kind: "boolean",
                    why: "",
                    file: None,
                }),
            },
        }
    }

    /// An integer with git's optional k, m, g suffixes (powers of 1024).
    pub fn get_int(&self, key: &str) -> Result<Option<i64>, ConfigError> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        parse_int(value)
            .map(Some)
            .ok_or_else(|| ConfigError::Value {
                key: key.into(),
                value: value.into(),
                kind: "numeric",
                // As git: a number too large is out of range, anything else a bad unit.
                why: match value
                    .trim()
                    .trim_end_matches(['k', 'K', 'm', 'M', 'g', 'G'])
                {
                    digits if digits.parse::<i128>().is_ok() => ": out of range",
                    _ => ": invalid unit",
                },
                file: self.origin(key).map(|(file, _)| file.into()),
            })
    }

    /// [`Config::get_int`] for the settings git keeps in an `int` (`pack.depth`,
    /// `pack.window`, `pack.threads`): a value past 32 bits is out of range, as git says.
    pub fn get_int32(&self, key: &str) -> Result<Option<i32>, ConfigError> {
        match self.get_int(key)? {
            None => Ok(None),
            Some(n) => i32::try_from(n).map(Some).map_err(|_| ConfigError::Value {
                key: key.into(),
                value: self.get(key).unwrap_or_default().into(),
                kind: "numeric",
                why: ": out of range",
                file: self.origin(key).map(|(file, _)| file.into()),
            }),
        }
    }

    /// An unsigned number with git's optional k, m, g suffixes, as git reads its `ulong`
    /// settings (`core.bigFileThreshold`): a sign is no unit git knows.
    pub fn get_unsigned(&self, key: &str) -> Result<Option<u64>, ConfigError> {
        match self.get(key) {
            Some(value) if value.trim_start().starts_with('-') => Err(ConfigError::Value {
                key: key.into(),
                value: value.into(),
                kind: "numeric",
                why: ": invalid unit",
                file: self.origin(key).map(|(file, _)| file.into()),
            }),
            _ => self.get_size(key),
        }
    }

    /// A size: a non-negative integer with git's optional k, m, g suffixes, as git reads
    /// unsigned settings (`pack.packSizeLimit`); a negative one is out of range.
    pub fn get_size(&self, key: &str) -> Result<Option<u64>, ConfigError> {
        match self.get_int(key)? {
            None => Ok(None),
            Some(size) => u64::try_from(size)
                .map(Some)
                .map_err(|_| ConfigError::Value {
                    key: key.into(),
                    value: self.get(key).unwrap_or_default().into(),
                    kind: "numeric",
                    why: ": out of range",
                    file: self.origin(key).map(|(file, _)| file.into()),
                }),
        }
    }
}

/// Parses an integer with an optional k, m or g suffix.
pub fn parse_int(value: &str) -> Option<i64> {
    let value = value.trim();
    let (digits, factor) = match value.chars().last()?.to_ascii_lowercase() {
        'k' => (&value[..value.len() - 1], 1i64 << 10),
        'm' => (&value[..value.len() - 1], 1 << 20),
        'g' => (&value[..value.len() - 1], 1 << 30),
        _ => (value, 1),
    };
    digits.parse::<i64>().ok()?.checked_mul(factor)
}

fn normalize_key(key: &str) -> Option<String> {
    let first = key.find('.')?;
    let last = key.rfind('.')?;
    if first == last {
        return Some(key.to_ascii_lowercase());
    }
    Some(format!(
        "{}{}{}",
        key[..first].to_ascii_lowercase(),
        &key[first..last],
        key[last..].to_ascii_lowercase()
    ))
}

/// A section header line (`[section]`, `[section "subsection"]` or the old `[section.sub]`),
/// with the section in lowercase and what follows the `]`.
pub(crate) struct Header<'a> {
    pub(crate) section: String,
    pub(crate) subsection: Option<String>,
    pub(crate) rest: &'a str,
}

/// Parses the header `line` starts with (after any indentation), if it is a valid one.
pub(crate) fn parse_header(line: &str) -> Option<Header<'_>> {
    let line = line.trim_start().strip_prefix('[')?;
    let close = line.find(']')?;
    let (header, rest) = (&line[..close], &line[close + 1..]);
    let (section, subsection) = match header.find(' ') {
        Some(space) => {
            let sub = header[space..].trim_start();
            let sub = sub.strip_prefix('"').and_then(|s| s.strip_suffix('"'))?;
            let sub = sub.replace("\\\"", "\"").replace("\\\\", "\\");
            (&header[..space], Some(sub))
        }
        None => match header.split_once('.') {
            Some((name, sub)) => (name, Some(sub.to_ascii_lowercase())),
            None => (header, None),
        },
    };
    Some(Header {
        section: section.to_ascii_lowercase(),
        subsection,
        rest,
    })
}

fn parse_value(raw: &str) -> Option<String> {
    let mut out = String::new();
    let mut quoted = false;
    let mut pending_space = String::new();
    let mut chars = raw.trim_start().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push_str(&pending_space);
                pending_space.clear();
                quoted = !quoted;
            }
            '#' | ';' if !quoted => break,
            '\\' => {
                out.push_str(&pending_space);
                pending_space.clear();
                match chars.next()? {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'b' => {
                        out.pop();
                    }
                    '\\' => out.push('\\'),
                    '"' => out.push('"'),
                    _ => return None,
                }
            }
            c if c.is_whitespace() && !quoted => pending_space.push(c),
            c => {
                out.push_str(&pending_space);
                pending_space.clear();
                out.push(c);
            }
        }
    }
    if quoted {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_values_and_types() {
        let mut config = Config::default();
        config
            .parse(
                "[core]\n\tbare = false\n\tBigFileThreshold = 1m\n[remote \"Origin\"]\n\turl = \"a b\" # c\n[pack]\n\tthreads\n\tx = 1\\\n2\n",
                Path::new("test"),
            )
            .unwrap();
        assert_eq!(config.get_bool("core.bare").unwrap(), Some(false));
        assert_eq!(
            config.get_int("core.bigfilethreshold").unwrap(),
            Some(1 << 20)
        );
        assert_eq!(config.get("remote.Origin.url"), Some("a b"));
        assert_eq!(config.get("remote.origin.url"), None);
        assert_eq!(config.get_bool("pack.threads").unwrap(), Some(true));
        assert_eq!(config.get("pack.x"), Some("12"));
        config.set_parameter("pack.threads=3").unwrap();
        assert_eq!(config.get_int("pack.threads").unwrap(), Some(3));
        assert!(config.parse("key = 1\n", Path::new("t")).is_err());
    }

    #[test]
    fn subsections_come_in_the_order_they_first_appear() {
        let mut config = Config::default();
        let text = "[remote \"up\"]\n\turl = a\n[remote \"Origin\"]\n\tprune\n\
                    [remote \"up\"]\n\tfetch = x\n[remote]\n\tplain = 1\n[branch \"m\"]\n\tx = 1\n";
        config.parse(text, Path::new("test")).unwrap();
        assert_eq!(config.subsection_names("remote"), vec!["up", "Origin"]);
        assert_eq!(config.subsection_names("REMOTE"), vec!["up", "Origin"]);
    }
}
