//! Changing one configuration file as `git config` changes it, so that git and Sluice leave the
//! same bytes: a new value goes right after the last line of the last section it belongs in (or
//! into a new section at the end of the file), and setting a value replaces the one line that
//! holds it. Names are written as given and matched without regard to case (but for
//! subsections), values escaped and quoted as git writes them. The file is replaced through its lock file.

use super::{parse_header, ConfigError};
use std::fmt;
use std::path::{Path, PathBuf};

/// What is wrong with a key git would refuse to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyProblem {
    /// No dot, or nothing before the first one.
    NoSection,
    /// Nothing after the last dot.
    NoName,
    /// A newline in the subsection.
    Newline,
    /// A section or variable name with characters git does not allow.
    Invalid,
}

impl fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyProblem::NoSection => "key does not contain a section",
            KeyProblem::NoName => "key does not contain variable name",
            KeyProblem::Newline => "invalid key (newline)",
            KeyProblem::Invalid => "invalid key",
        })
    }
}

/// A key to write: `section[.subsection].name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigKey {
    section: String,
    subsection: Option<String>,
    name: String,
}

impl ConfigKey {
    /// A key from its parts, as the program names them (`remote`, a remote's name, `url`).
    pub fn new(section: &str, subsection: Option<&str>, name: &str) -> ConfigKey {
        ConfigKey {
            section: section.to_owned(),
            subsection: subsection.map(str::to_owned),
            name: name.to_owned(),
        }
    }

    /// The key with its section and variable names in lowercase, as git reads `-c` settings.
    pub fn lowercased(&self) -> ConfigKey {
        ConfigKey {
            section: self.section.to_ascii_lowercase(),
            subsection: self.subsection.clone(),
            name: self.name.to_ascii_lowercase(),
        }
    }

    /// A key as a user writes it: the section up to the first dot, the name after the last, the
    /// subsection between. Checked as git checks a key it is asked to write: sections of
    /// letters, digits and `-`, names that also start with a letter.
    pub fn parse(key: &str) -> Result<ConfigKey, ConfigError> {
        let refuse = |problem| ConfigError::Key {
            key: key.to_owned(),
            problem,
        };
        let (first, last) = match (key.find('.'), key.rfind('.')) {
            (Some(first), Some(last)) if first > 0 => (first, last),
            _ => return Err(refuse(KeyProblem::NoSection)),
        };
        let (section, name) = (&key[..first], &key[last + 1..]);
        if name.is_empty() {
            return Err(refuse(KeyProblem::NoName));
        }
        let subsection = (first != last).then(|| &key[first + 1..last]);
        if subsection.is_some_and(|s| s.contains('\n')) {
            return Err(refuse(KeyProblem::Newline));
        }
        let word = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !word(section) || !word(name) || !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return Err(refuse(KeyProblem::Invalid));
        }
        Ok(ConfigKey::new(section, subsection, name))
    }

    /// Whether a span of the file (whose section name is in lowercase) is in this key's section.
    fn in_section(&self, span: &Span) -> bool {
        self.section.eq_ignore_ascii_case(&span.section)
            && self.subsection.as_deref() == span.subsection.as_deref()
    }

    /// Whether a span of the file holds this key's value.
    fn held_by(&self, span: &Span) -> bool {
        self.in_section(span)
            && span
                .name
                .as_deref()
                .is_some_and(|name| self.name.eq_ignore_ascii_case(name))
    }
}

/// A line (or a value's continued lines) of the file that belongs to a section.
struct Span {
    section: String,
    subsection: Option<String>,
    /// The variable a value line sets; `None` for a section header.
    name: Option<String>,
    /// Byte range in the text, newline included.
    start: usize,
    end: usize,
}

/// The lines of `text` that belong to sections, in order. Comments and blank lines belong to
/// none: a value added to a section goes before the comments that follow it, as in git.
fn layout(text: &str) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut current: Option<(String, Option<String>)> = None;
    let mut lines = text.split_inclusive('\n').peekable();
    let mut offset = 0;
    while let Some(line) = lines.next() {
        let start = offset;
        offset += line.len();
        let mut body = line.trim_start();
        if body.starts_with('[') {
            let Some(header) = parse_header(body) else {
                current = None;
                continue;
            };
            current = Some((header.section.clone(), header.subsection.clone()));
            body = header.rest.trim_start();
            let comment = body.trim_end().is_empty() || body.starts_with(['#', ';']);
            if comment {
                let (section, subsection) = current.clone().expect("just set");
                spans.push(Span {
                    section,
                    subsection,
                    name: None,
                    start,
                    end: offset,
                });
                continue;
            }
        }
        if body.trim_end().is_empty() || body.starts_with(['#', ';']) {
            continue;
        }
        // A value ending in a backslash goes on to the next line.
        let mut last = line;
        while last.trim_end_matches(['\n', '\r']).ends_with('\\') {
            match lines.next() {
                Some(next) => {
                    offset += next.len();
                    last = next;
                }
                None => break,
            }
        }
        let Some((section, subsection)) = current.clone() else {
            continue;
        };
        let name_end = body.find(|c: char| c == '=' || c.is_whitespace());
        let name = body[..name_end.unwrap_or(body.len())].to_ascii_lowercase();
        spans.push(Span {
            section,
            subsection,
            name: Some(name),
            start,
            end: offset,
        });
    }
    spans
}

/// The value a line of the file sets (the line read as the configuration reads it).
fn line_value(line: &str) -> Option<String> {
    let mut config = super::Config::default();
    config.parse(&format!("[s]\n{line}"), Path::new("")).ok()?;
    let value = config.entries.first()?.value.clone();
    value
}

/// `value` as git writes it: backslash, double quote, newline and tab escaped; the whole in
/// double quotes when it starts or ends with a space or holds a comment character or a
/// carriage return, which would otherwise be lost on reading.
fn quote_value(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            '\n' => escaped.push_str("\\n"),
            '\t' => escaped.push_str("\\t"),
            c => escaped.push(c),
        }
    }
    let quote = value.starts_with(' ') || value.ends_with(' ') || value.contains(['#', ';', '\r']);
    if quote {
        format!("\"{escaped}\"")
    } else {
        escaped
    }
}

/// One configuration file being changed. Nothing reaches the disk before [`ConfigFile::write`].
pub struct ConfigFile {
    path: PathBuf,
    text: String,
}

impl ConfigFile {
    /// A repository's own configuration file, `config` in `common_dir` (the directory its
    /// worktrees share, where git records every setting a command writes), empty if there is
    /// none yet.
    pub fn of_repository(common_dir: &Path) -> Result<ConfigFile, ConfigError> {
        ConfigFile::open(&repository_file(common_dir))
    }

    /// The file at `path`, empty if there is none yet.
    pub fn open(path: &Path) -> Result<ConfigFile, ConfigError> {
        let text = match std::fs::read(path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => {
                return Err(ConfigError::Io {
                    path: path.to_owned(),
                    source,
                })
            }
        };
        Ok(ConfigFile {
            path: path.to_owned(),
            text,
        })
    }

    /// Adds a value, keeping any the key has (`git config --add`).
    pub fn add(&mut self, key: &ConfigKey, value: &str) {
        let line = format!("\t{} = {}\n", key.name, quote_value(value));
        let spans = layout(&self.text);
        let section_end = spans
            .iter()
            .rev()
            .find(|s| key.in_section(s))
            .map(|s| s.end);
        match section_end {
            Some(end) => {
                let newline = if self.text[..end].ends_with('\n') {
                    ""
                } else {
                    "\n"
                };
                self.text.insert_str(end, &format!("{newline}{line}"));
            }
            None => {
                if !self.text.is_empty() && !self.text.ends_with('\n') {
                    self.text.push('\n');
                }
                match &key.subsection {
                    Some(sub) => {
                        let sub = sub.replace('\\', "\\\\").replace('"', "\\\"");
                        self.text
                            .push_str(&format!("[{} \"{sub}\"]\n", key.section));
                    }
                    None => self.text.push_str(&format!("[{}]\n", key.section)),
                }
                self.text.push_str(&line);
            }
        }
    }

    /// Sets a key to one value (`git config <key> <value>`): the line holding its value is
    /// replaced, or the value added when it has none. A key with several values is refused.
    pub fn set(&mut self, key: &ConfigKey, value: &str) -> Result<(), ConfigError> {
        let spans = layout(&self.text);
        let mut holders = spans.iter().filter(|s| {
            // A value on its section's header line stays; a new line overrides it.
            key.held_by(s) && !self.text[s.start..].trim_start().starts_with('[')
        });
        match (holders.next(), holders.next()) {
            (None, _) => self.add(key, value),
            (Some(one), None) => {
                let line = format!("\t{} = {}\n", key.name, quote_value(value));
                self.text.replace_range(one.start..one.end, &line);
            }
            (Some(_), Some(_)) => return Err(ConfigError::MultipleValues(key.to_string())),
        }
        Ok(())
    }

    /// Removes every value of `key` equal to `value` (`git config --unset --fixed-value`);
    /// a section left with nothing in it goes too, as git removes it. Whether any went.
    pub fn remove_value(&mut self, key: &ConfigKey, value: &str) -> bool {
        let mut removed = false;
        // One at a time, the layout read again after each.
        while let Some((start, end)) = self.last_holding(key, value) {
            self.text.replace_range(start..end, "");
            removed = true;
            let spans = layout(&self.text);
            let headers = spans.iter().filter(|s| s.name.is_none());
            let header = headers.clone().rev().find(|h| h.start < start);
            let next = headers.clone().find(|h| h.start >= start);
            if let Some(header) = header {
                let until = next.map_or(self.text.len(), |n| n.start);
                if self.text[header.end..until].trim().is_empty() {
                    self.text.replace_range(header.start..until, "");
                }
            }
        }
        removed
    }

    /// The byte range of the last line setting `key` to `value`.
    fn last_holding(&self, key: &ConfigKey, value: &str) -> Option<(usize, usize)> {
        let spans = layout(&self.text);
        let found = (spans.iter().rev())
            .filter(|s| key.held_by(s) && !self.text[s.start..].trim_start().starts_with('['))
            .find(|s| line_value(&self.text[s.start..s.end]).as_deref() == Some(value));
        found.map(|s| (s.start, s.end))
    }

    /// Replaces the file with the changed text, through `<path>.lock`.
    pub fn write(self) -> Result<(), ConfigError> {
        let io = |source| ConfigError::Io {
            path: self.path.clone(),
            source,
        };
        crate::lockfile::write_locked(&self.path, self.text.as_bytes(), false).map_err(
            |e| match e {
                crate::LockError::Io { source, .. } => io(source),
                locked => io(std::io::Error::other(locked.to_string())),
            },
        )
    }
}

impl fmt::Display for ConfigKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.subsection {
            Some(sub) => write!(f, "{}.{sub}.{}", self.section, self.name),
            None => write!(f, "{}.{}", self.section, self.name),
        }
    }
}

/// The path of a repository's own configuration file: `config` in `common_dir`.
pub fn repository_file(common_dir: &Path) -> std::path::PathBuf {
    common_dir.join("config")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edited(text: &str, edit: impl FnOnce(&mut ConfigFile)) -> String {
        let mut file = ConfigFile {
            path: PathBuf::from("unused"),
            text: text.to_owned(),
        };
        edit(&mut file);
        file.text
    }

    #[test]
    fn values_go_to_the_end_of_their_last_section() {
        let key = |k| ConfigKey::parse(k).unwrap();
        let text =
            "[core]\n\tbare = false\n# note\n[remote \"o\"]\n\turl = a\n[core]\n\tx = 1 \\\n2\n";
        let out = edited(text, |f| {
            f.add(&key("Core.New").lowercased(), "v");
            f.add(&key("remote.o.fetch"), "f");
            f.add(&key("remote.O.fetch"), " g");
        });
        assert_eq!(
            out,
            "[core]\n\tbare = false\n# note\n[remote \"o\"]\n\turl = a\n\tfetch = f\n[core]\n\tx = 1 \\\n2\n\tnew = v\n[remote \"O\"]\n\tfetch = \" g\"\n"
        );
        let out = edited("[a]\n\tb = 1\n\tc = 2", |f| {
            f.set(&key("A.B"), "x\ty\"").unwrap();
            f.set(&key("a.dD"), "#").unwrap();
            f.add(&key("New.Sub.Key"), "1");
        });
        assert_eq!(
            out,
            "[a]\n\tB = x\\ty\\\"\n\tc = 2\n\tdD = \"#\"\n[New \"Sub\"]\n\tKey = 1\n"
        );
        let mut twice = ConfigFile {
            path: PathBuf::from("unused"),
            text: "[a]\n\tb = 1\n\tb = 2\n".into(),
        };
        assert!(twice.set(&key("a.b"), "3").is_err());
    }

    #[test]
    fn keys_are_checked_as_git_checks_them() {
        for (bad, problem) in [
            ("foo", KeyProblem::NoSection),
            (".c", KeyProblem::NoSection),
            ("a.", KeyProblem::NoName),
            ("a b.c", KeyProblem::Invalid),
            ("a.1c", KeyProblem::Invalid),
            ("a.x\ny.c", KeyProblem::Newline),
        ] {
            match ConfigKey::parse(bad) {
                Err(ConfigError::Key { problem: p, .. }) => assert_eq!(p, problem, "{bad}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        let key = ConfigKey::parse("Remote.My.Origin.URL").unwrap();
        assert_eq!(key.lowercased().to_string(), "remote.My.Origin.url");
    }
}
