//! git's fsck checks of objects, with its message ids and severities (`git help fsck`, "FSCK
//! MESSAGES"): what `index-pack --strict` / `--fsck-objects`, `fetch.fsckObjects` and
//! `receive.fsckObjects` run on every object that arrives. One checker serves them all.
//!
//! Commits, trees and tags are judged as the indexer resolves them ([`Checker::check`]); a tree
//! that names a `.gitmodules` or `.gitattributes` asks for that blob, which is judged once the
//! pack is indexed ([`Checker::wanted_blobs`], [`Checker::check_blob`]), as git's
//! `fsck_finish` does. Findings are kept, in order, for the caller to print.

mod blobs;
mod commit;
mod messages;
mod names;
mod tree;

pub use messages::{Message, Severity};

use sluice_object::{HashKind, ObjectId, ObjectKind};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What one check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The object at fault.
    pub id: ObjectId,
    /// What is wrong, as git names it.
    pub message: Message,
    /// How much it matters, after the options.
    pub severity: Severity,
    /// git's words for it.
    pub text: String,
}

impl Finding {
    /// The word git prints before it: `error`, or `warning` for what does not refuse.
    pub fn level(&self) -> &'static str {
        match self.severity {
            Severity::Error => "error",
            _ => "warning",
        }
    }
}

impl std::fmt::Display for Finding {
    /// git's line, without its `error: `/`warning: ` prefix: `object <id>: <msgId>: <text>`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "object {}: {}: {}", self.id, self.message, self.text)
    }
}

/// Why fsck options could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FsckError {
    /// A message id git does not have.
    #[error("Unhandled message id: {0}")]
    UnknownMessage(String),
    /// A severity other than error, warn and ignore.
    #[error("Unknown fsck message type: '{0}'")]
    UnknownSeverity(String),
    /// An item of the list is not `<id>=<severity>`.
    #[error("invalid fsck option: '{0}'")]
    Malformed(String),
    /// The skip list could not be read (git's words).
    #[error("could not open object name list: {}", path.display())]
    SkipList {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A setting has a value of the wrong type.
    #[error(transparent)]
    Config(#[from] crate::ConfigError),
    /// A line of the skip list is no object id (git's words name the line's text).
    #[error("invalid object name: {text}")]
    SkipListLine {
        /// The file.
        path: PathBuf,
        /// Its number, from 1.
        line: usize,
        /// What it holds.
        text: String,
    },
}

/// How objects are judged: severities changed from git's defaults, objects skipped.
#[derive(Debug, Clone, Default)]
pub struct FsckOptions {
    /// Severities set for message ids (git's `<prefix>fsck.<msg-id>`, `--strict=<id>=<sev>`).
    pub severities: HashMap<Message, Severity>,
    /// Objects whose findings are not reported (`fsck.skipList`).
    pub skip: HashSet<ObjectId>,
}

impl FsckOptions {
    /// Sets `id` (git's camelCase name, any case) to `severity` (`error`, `warn`, `ignore`).
    pub fn set(&mut self, id: &str, severity: &str) -> Result<(), FsckError> {
        let message = Message::from_name(id)
            .ok_or_else(|| FsckError::UnknownMessage(id.to_ascii_lowercase()))?;
        let severity = Severity::from_name(severity)
            .ok_or_else(|| FsckError::UnknownSeverity(severity.to_owned()))?;
        self.severities.insert(message, severity);
        Ok(())
    }

    /// Reads index-pack's `--strict=<list>` / `--fsck-objects=<list>`: `<id>=<severity>` and
    /// `skiplist=<file>` items, separated by commas (or spaces), relative to `cwd`.
    pub fn parse_list(&mut self, list: &str, hash: HashKind, cwd: &Path) -> Result<(), FsckError> {
        for item in list.split([',', ' ']).filter(|item| !item.is_empty()) {
            let (id, value) = item
                .split_once(['=', ':'])
                .ok_or_else(|| FsckError::Malformed(item.to_owned()))?;
            if id.eq_ignore_ascii_case("skiplist") {
                self.read_skip_list(&cwd.join(value), hash)?;
            } else {
                self.set(id, value)?;
            }
        }
        Ok(())
    }

    /// Adds the object ids of `path` (one a line; `#` comments and blank lines allowed).
    pub fn read_skip_list(&mut self, path: &Path, hash: HashKind) -> Result<(), FsckError> {
        let text = std::fs::read_to_string(path).map_err(|source| FsckError::SkipList {
            path: path.to_owned(),
            source,
        })?;
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let id =
                ObjectId::from_hex(hash, line.as_bytes()).map_err(|_| FsckError::SkipListLine {
                    path: path.to_owned(),
                    line: number + 1,
                    text: line.to_owned(),
                })?;
            self.skip.insert(id);
        }
        Ok(())
    }

    /// Reads `<prefix>fsck.<msg-id>` and `<prefix>fsck.skipList` from `config` (`prefix` is
    /// `""` for fsck itself, `fetch.` or `receive.`).
    pub fn from_config(
        config: &crate::Config,
        prefix: &str,
        hash: HashKind,
    ) -> Result<FsckOptions, FsckError> {
        let mut options = FsckOptions::default();
        let section = format!("{prefix}fsck");
        for (name, value) in config.names_under(&section) {
            if name == "skiplist" {
                options.read_skip_list(Path::new(&value), hash)?;
            } else if Message::from_name(&name).is_some() {
                options.set(&name, &value)?;
            }
        }
        Ok(options)
    }
}

/// Judges objects and keeps what it finds; shared by the indexer's threads.
#[derive(Debug)]
pub struct Checker {
    hash: HashKind,
    options: FsckOptions,
    findings: Mutex<Vec<Finding>>,
    /// Blobs named `.gitmodules` or `.gitattributes` by a tree: judged at the end.
    wanted: Mutex<HashMap<ObjectId, blobs::Special>>,
}

/// An object failed a check of error severity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fsck error in packed object")]
pub struct Refused {
    /// The object.
    pub id: ObjectId,
}

impl Checker {
    /// The checker a transfer asks for: `<side>.fsckObjects`, else `transfer.fsckObjects`
    /// (`side` is `fetch` or `receive`), with the severities and skip list of `<side>.fsck.*`;
    /// `None` when neither asks.
    pub fn for_transfer(
        config: &crate::Config,
        side: &str,
        hash: HashKind,
    ) -> Result<Option<Checker>, FsckError> {
        let on = match config.get_bool(&format!("{side}.fsckobjects"))? {
            Some(on) => on,
            None => config.get_bool("transfer.fsckobjects")?.unwrap_or(false),
        };
        if !on {
            return Ok(None);
        }
        let options = FsckOptions::from_config(config, &format!("{side}."), hash)?;
        Ok(Some(Checker::new(hash, options)))
    }

    /// A checker with `options`, for objects of `hash`.
    pub fn new(hash: HashKind, options: FsckOptions) -> Checker {
        Checker {
            hash,
            options,
            findings: Mutex::default(),
            wanted: Mutex::default(),
        }
    }

    /// Judges the object `id` of `kind`, holding `data`. Blobs are judged only when a tree
    /// asked for them (see [`Checker::wanted_blobs`]).
    pub fn check(&self, kind: ObjectKind, id: &ObjectId, data: &[u8]) -> Result<(), Refused> {
        let mut report = Report::new(self, *id);
        match kind {
            ObjectKind::Commit => commit::check_commit(self.hash, data, &mut report),
            ObjectKind::Tag => commit::check_tag(self.hash, data, &mut report),
            ObjectKind::Tree => tree::check_tree(self.hash, data, &mut report),
            ObjectKind::Blob => {}
        }
        report.finish()
    }

    /// The blobs trees named as `.gitmodules` or `.gitattributes`, to judge once they can be
    /// read.
    pub fn wanted_blobs(&self) -> Vec<ObjectId> {
        let wanted = self.wanted.lock().unwrap_or_else(|e| e.into_inner());
        let mut ids: Vec<ObjectId> = wanted.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Judges a wanted blob (`kind` is what the object turned out to be).
    pub fn check_blob(&self, id: &ObjectId, kind: ObjectKind, data: &[u8]) -> Result<(), Refused> {
        let special = self
            .wanted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .copied();
        let Some(special) = special else {
            return Ok(());
        };
        let mut report = Report::new(self, *id);
        blobs::check(special, kind, data, &mut report);
        report.finish()
    }

    /// Everything found so far, in order (warnings included).
    pub fn findings(&self) -> Vec<Finding> {
        self.findings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn severity(&self, message: Message) -> Severity {
        match self.options.severities.get(&message) {
            Some(&set) => set,
            // index-pack, fetch and receive-pack check strictly: git's warnings refuse.
            None => match message.default_severity() {
                Severity::Warn => Severity::Error,
                other => other,
            },
        }
    }

    fn want(&self, id: ObjectId, special: blobs::Special) {
        self.wanted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, special);
    }
}

impl sluice_pack::ObjectCheck for Checker {
    fn check(&self, kind: ObjectKind, id: &ObjectId, data: &[u8]) -> bool {
        Checker::check(self, kind, id, data).is_ok()
    }
    fn wanted_blobs(&self) -> Vec<ObjectId> {
        Checker::wanted_blobs(self)
    }
    fn check_blob(&self, id: &ObjectId, kind: ObjectKind, data: &[u8]) -> bool {
        Checker::check_blob(self, id, kind, data).is_ok()
    }
}

/// The findings of one object, judged against the checker's severities.
pub(crate) struct Report<'a> {
    checker: &'a Checker,
    id: ObjectId,
    refused: bool,
}

impl<'a> Report<'a> {
    fn new(checker: &'a Checker, id: ObjectId) -> Self {
        Report {
            checker,
            id,
            refused: false,
        }
    }

    /// Records `message` with git's `text`, unless its severity is ignore or the object is
    /// on the skip list (which silences it, but still has its `.gitmodules` judged, as git).
    pub(crate) fn add(&mut self, message: Message, text: impl Into<String>) {
        let severity = self.checker.severity(message);
        if severity == Severity::Ignore || self.checker.options.skip.contains(&self.id) {
            return;
        }
        self.refused |= severity == Severity::Error;
        let finding = Finding {
            id: self.id,
            message,
            severity,
            text: text.into(),
        };
        let mut findings = self.checker.findings.lock();
        findings
            .as_mut()
            .unwrap_or_else(|e| e.get_mut())
            .push(finding);
    }

    /// Asks for the blob `id`, named `.gitmodules` or `.gitattributes`, to be judged.
    pub(crate) fn want(&self, id: ObjectId, special: blobs::Special) {
        self.checker.want(id, special);
    }

    fn finish(self) -> Result<(), Refused> {
        match self.refused {
            true => Err(Refused { id: self.id }),
            false => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
