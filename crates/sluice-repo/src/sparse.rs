//! A sparse checkout's patterns: which paths the work tree holds when `core.sparseCheckout` is
//! set, read from `$GIT_DIR/info/sparse-checkout` in cone mode, the form `git sparse-checkout
//! set` writes (`git-sparse-checkout(1)`, "Internals — cone mode handling"):
//!
//! ```text
//! /*          every file at the top
//! !/*/        but no directory, except:
//! /a/         a directory wholly, ...
//! !/a/*/      ... or only its own files (a parent of a directory wholly in)
//! /a/x/
//! ```
//!
//! Patterns of any other form are git's non-cone mode, gitignore-like and matched one by one,
//! which Sluice does not implement: they are refused rather than read as something else.

use crate::Repository;
use sluice_odb::ConfigError;
use std::collections::HashSet;
use std::path::PathBuf;

/// Why a sparse checkout's patterns could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SparseError {
    /// `core.sparseCheckout` or `core.sparseCheckoutCone` is not a boolean, or the worktree's
    /// configuration could not be written.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `core.sparseCheckoutCone` is false: the patterns are gitignore-like.
    #[error("sparse-checkout patterns in non-cone mode (core.sparseCheckoutCone=false) are not supported")]
    NonCone,
    /// A line that is not of cone mode's forms.
    #[error("'{}' line {line}: '{text}' is not a cone-mode sparse-checkout pattern (non-cone mode is not supported)", .path.display())]
    NotCone {
        /// The patterns' file.
        path: PathBuf,
        /// Its line number, from 1.
        line: usize,
        /// The line.
        text: String,
    },
    /// The patterns' file could not be read.
    #[error("cannot read '{}': {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The directories a cone-mode sparse checkout holds: those wholly in, and those of which only
/// the files directly inside are (the parents of a directory wholly in). Files at the top are
/// always in.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SparseCone {
    whole: HashSet<Vec<u8>>,
    parents: HashSet<Vec<u8>>,
}

impl SparseCone {
    /// The cone of `git clone --sparse`: the files at the top, no directory.
    pub fn top_level() -> SparseCone {
        SparseCone::default()
    }

    /// Makes the repository at `git_dir` a sparse checkout of the files at the top, as `git
    /// clone --sparse` does: its patterns' file, and the settings in the worktree's own
    /// configuration (which `extensions.worktreeConfig`, set by the caller with the rest of
    /// the shared configuration, makes git read).
    pub fn write_top_level(git_dir: &std::path::Path) -> Result<(), SparseError> {
        let mut config = sluice_odb::ConfigFile::open(&git_dir.join("config.worktree"))?;
        for name in ["sparseCheckout", "sparseCheckoutCone"] {
            config.set(&sluice_odb::ConfigKey::new("core", None, name), "true")?;
        }
        config.write()?;
        let info = git_dir.join("info");
        let path = info.join("sparse-checkout");
        let io = |source| SparseError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&info).map_err(io)?;
        let temporary = info.join("sparse-checkout.lock");
        std::fs::write(&temporary, b"/*\n!/*/\n").map_err(io)?;
        std::fs::rename(&temporary, &path).map_err(io)
    }

    /// The cone of the repository's sparse checkout; `None` when there is none
    /// (`core.sparseCheckout` unset or false, or no patterns' file, where git checks out
    /// everything too).
    pub fn of(repo: &Repository) -> Result<Option<SparseCone>, SparseError> {
        let config = repo.config();
        if config.get_bool("core.sparsecheckout")? != Some(true) {
            return Ok(None);
        }
        let path = repo.git_dir().join("info").join("sparse-checkout");
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(SparseError::Io { path, source }),
        };
        // git 2.37 on writes cone mode unless told otherwise; the setting names the mode.
        if config.get_bool("core.sparsecheckoutcone")? == Some(false) {
            return Err(SparseError::NonCone);
        }
        SparseCone::parse(&text)
            .map(Some)
            .map_err(|(line, text)| SparseError::NotCone { path, line, text })
    }

    /// The cone the patterns `text` describe; the first line of another form (its number from
    /// 1, and the line) when they are not cone mode's.
    pub fn parse(text: &[u8]) -> Result<SparseCone, (usize, String)> {
        let mut cone = SparseCone::default();
        for (number, line) in text.split(|&b| b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let refused = || (number + 1, String::from_utf8_lossy(line).into_owned());
            if line.is_empty() || line.starts_with(b"#") || line == b"/*" || line == b"!/*/" {
                continue;
            }
            if let Some(dir) = line
                .strip_prefix(b"!/")
                .and_then(|l| l.strip_suffix(b"/*/"))
            {
                // Only a directory already wholly in becomes a parent, as in git.
                let dir = unescape(dir).ok_or_else(refused)?;
                if !cone.whole.remove(&dir) {
                    return Err(refused());
                }
                cone.parents.insert(dir);
                continue;
            }
            match line.strip_prefix(b"/").and_then(|l| l.strip_suffix(b"/")) {
                Some(dir) if !dir.is_empty() => {
                    cone.whole.insert(unescape(dir).ok_or_else(refused)?);
                }
                _ => return Err(refused()),
            }
        }
        Ok(cone)
    }

    /// Whether the work tree holds the file at `path` (`/`-separated, from the top).
    pub fn includes(&self, path: &[u8]) -> bool {
        let Some(end) = path.iter().rposition(|&b| b == b'/') else {
            return true;
        };
        let dir = &path[..end];
        if self.parents.contains(dir) {
            return true;
        }
        // The directory or one above it wholly in.
        let mut above = dir;
        loop {
            if self.whole.contains(above) {
                return true;
            }
            match above.iter().rposition(|&b| b == b'/') {
                Some(end) => above = &above[..end],
                None => return false,
            }
        }
    }
}

/// A directory's name as the pattern writes it: git escapes `*`, `?`, `[`, `]` and `\` with a
/// backslash there. A wildcard left unescaped is not cone mode's.
fn unescape(escaped: &[u8]) -> Option<Vec<u8>> {
    let mut name = Vec::with_capacity(escaped.len());
    let mut bytes = escaped.iter();
    while let Some(&b) = bytes.next() {
        match b {
            b'\\' => name.push(*bytes.next()?),
            b'*' | b'?' | b'[' => return None,
            b => name.push(b),
        }
    }
    Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cone_patterns_hold_the_top_the_parents_files_and_whole_directories() {
        let cone = SparseCone::parse(b"/*\n!/*/\n/a/\n!/a/*/\n/a/x/\n/b\\*c/\n").unwrap();
        for path in ["top", "a/f", "a/x/f", "a/x/y/z", "b*c/d/e"] {
            assert!(cone.includes(path.as_bytes()), "{path}");
        }
        for path in ["a/y/f", "c/f", "ax/f", "b/f"] {
            assert!(!cone.includes(path.as_bytes()), "{path}");
        }
    }

    #[test]
    fn other_patterns_are_not_cone_mode() {
        for text in ["*.c\n", "/*\n!/*/\n!/a/*/\n", "/a/*\n", "a/\n", "/a*/\n"] {
            assert!(SparseCone::parse(text.as_bytes()).is_err(), "{text}");
        }
        assert_eq!(
            SparseCone::parse(b"/*\n!/*/\n*.c\n"),
            Err((3, "*.c".to_owned()))
        );
    }
}
