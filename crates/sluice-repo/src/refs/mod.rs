//! References (`gitrepository-layout`, "refs", "packed-refs"): loose files under `refs/`, the
//! `packed-refs` file, and symbolic refs such as `HEAD`. Updates write `<ref>.lock` and rename
//! it into place, as git does, so readers never see a half-written ref.

mod directories;
mod identity;
pub mod namespace;
mod pack_refs;
mod packed;
pub mod reflog;
mod transaction;

pub use identity::{committer, reflog_identity, reflog_identity_for};
pub use pack_refs::PackRefsOptions;
pub use transaction::{
    Expected, Prepared, RefUpdate, Transaction, TransactionError, TransactionObserver,
};

use directories::{clear_empty_directory, remove_empty_parents};
use packed::PackedCache;
use sluice_object::{HashKind, ObjectId};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a reference could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RefError {
    /// A ref update in a push's quarantine (a hook's environment, `GIT_QUARANTINE_PATH`):
    /// objects there may yet be refused, so no ref may name them, as git refuses.
    #[error("ref updates forbidden inside quarantine environment")]
    Quarantined,
    /// A branch (or `HEAD`) would name an object that is not a commit: git refuses it.
    #[error(
        "cannot update ref '{name}': trying to write non-commit object {id} to branch '{name}'"
    )]
    NotACommit {
        /// The ref.
        name: String,
        /// The object.
        id: ObjectId,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A ref file that holds neither an id nor `ref: …`.
    #[error("bad ref file '{0}'")]
    Corrupt(String),
    /// A name git would refuse (`check-ref-format`).
    #[error("'{0}' is not a valid ref name")]
    BadName(String),
    /// Symbolic refs that point at each other.
    #[error("symbolic ref loop at '{0}'")]
    Loop(String),
    /// Another process holds the lock (the lock file; git's words).
    #[error(
        "Unable to create '{0}': File exists.\n\n\
         Another git process seems to be running in this repository, e.g.\n\
         an editor opened by 'git commit'. Please make sure all processes\n\
         are terminated then try again. If it still fails, a git process\n\
         may have crashed in this repository earlier:\n\
         remove the file manually to continue."
    )]
    Locked(String),
    /// A ref whose name is a directory of this one's, or that lies in its directory: loose
    /// refs are files, so `refs/x` and `refs/x/y` cannot both exist.
    #[error("cannot lock ref '{name}': '{existing}' exists; cannot create '{name}'")]
    NameConflict {
        /// The ref to be written.
        name: String,
        /// The ref in its way.
        existing: String,
    },
    /// A directory that holds files other than refs stands where the ref's file would go.
    #[error("cannot lock ref '{name}': there is a non-empty directory '{}' blocking reference '{name}'", dir.display())]
    Blocked {
        /// The ref to be written.
        name: String,
        /// The directory.
        dir: PathBuf,
    },
}

/// What a ref holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefTarget {
    /// An object id.
    Id(ObjectId),
    /// Another ref's name (`ref: refs/heads/main`).
    Symbolic(String),
}

pub use sluice_object::ref_name::is_valid_ref_name;

impl From<sluice_odb::LockError> for RefError {
    fn from(e: sluice_odb::LockError) -> Self {
        match e {
            sluice_odb::LockError::Locked(lock) => RefError::Locked(lock.display().to_string()),
            sluice_odb::LockError::Io { path, source } => RefError::Io { path, source },
        }
    }
}

/// `Err` inside a push's quarantine (`GIT_QUARANTINE_PATH` set, as for the hooks of a push):
/// every ref writer asks first.
pub(crate) fn refuse_in_quarantine() -> Result<(), RefError> {
    match std::env::var_os("GIT_QUARANTINE_PATH") {
        Some(_) => Err(RefError::Quarantined),
        None => Ok(()),
    }
}

/// What a ref peels to, as far as `packed-refs` tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peeled {
    /// The file says: this object (through annotated tags), or nothing (no tag).
    Known(Option<ObjectId>),
    /// The file does not say (a loose ref, or an older `packed-refs`).
    Unknown,
}

/// git's rule for branches (`refs/heads/…` and `HEAD`): they name commits only, never a tag,
/// a tree or a blob; an object `objects` cannot read is refused too.
pub fn check_branch_target(
    name: &str,
    id: &ObjectId,
    objects: &sluice_odb::ObjectDb,
) -> Result<(), RefError> {
    if !(name == "HEAD" || name.starts_with("refs/heads/")) {
        return Ok(());
    }
    match objects.read(id) {
        Ok(Some((sluice_object::ObjectKind::Commit, _))) => Ok(()),
        _ => Err(RefError::NotACommit {
            name: name.to_owned(),
            id: *id,
        }),
    }
}

/// git's default wait for a ref's lock (`core.filesRefLockTimeout`): two writers of one ref
/// (fetches of several remotes creating the same tag) wait for each other briefly.
pub const DEFAULT_LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(100);

/// The refs of one repository.
#[derive(Debug, Clone)]
pub struct Refs {
    git_dir: PathBuf,
    common_dir: PathBuf,
    hash: HashKind,
    packed: PackedCache,
    /// How long a transaction waits for a ref's lock another writer holds.
    lock_timeout: std::time::Duration,
}

impl Refs {
    /// The refs of the repository at `git_dir` (per-worktree refs) and `common_dir` (shared).
    pub fn new(git_dir: &Path, common_dir: &Path, hash: HashKind) -> Self {
        Refs {
            git_dir: git_dir.to_owned(),
            common_dir: common_dir.to_owned(),
            hash,
            packed: PackedCache::default(),
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
        }
    }

    /// These refs, a transaction waiting up to `timeout` for a ref's lock that another
    /// writer holds (git's `core.filesRefLockTimeout`) before it fails.
    pub fn with_lock_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    fn file(&self, name: &str) -> PathBuf {
        // HEAD and other pseudo-refs live in the worktree's git dir; refs/ in the common dir.
        if name.starts_with("refs/") {
            self.common_dir.join(name)
        } else {
            self.git_dir.join(name)
        }
    }

    /// Reads one ref without following symbolic refs.
    pub fn read(&self, name: &str) -> Result<Option<RefTarget>, RefError> {
        if !is_valid_ref_name(name) {
            return Err(RefError::BadName(name.to_owned()));
        }
        let path = self.file(name);
        match std::fs::read(&path) {
            Ok(bytes) => self.parse_loose(name, &bytes).map(Some),
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.kind() == std::io::ErrorKind::IsADirectory =>
            {
                Ok(self
                    .packed_refs()?
                    .find(name)
                    .map(|(_, id, _)| RefTarget::Id(*id)))
            }
            Err(source) => Err(RefError::Io { path, source }),
        }
    }

    /// The content of the loose ref file of `name`: `ref: <target>` or an id.
    pub(crate) fn parse_loose(&self, name: &str, bytes: &[u8]) -> Result<RefTarget, RefError> {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end();
        if let Some(target) = text.strip_prefix("ref:") {
            return Ok(RefTarget::Symbolic(target.trim().to_owned()));
        }
        let hex = text.get(..self.hash.len_in_hex()).unwrap_or(text);
        ObjectId::from_hex(self.hash, hex.as_bytes())
            .map(RefTarget::Id)
            .map_err(|_| RefError::Corrupt(name.to_owned()))
    }

    /// Follows symbolic refs to an id; returns the final ref name too (None if unborn).
    pub fn resolve(&self, name: &str) -> Result<(String, Option<ObjectId>), RefError> {
        let mut name = name.to_owned();
        for _ in 0..8 {
            match self.read(&name)? {
                Some(RefTarget::Symbolic(target)) => name = target,
                Some(RefTarget::Id(id)) => return Ok((name, Some(id))),
                None => return Ok((name, None)),
            }
        }
        Err(RefError::Loop(name))
    }

    /// The ref a short name means, by git's rules for revisions (gitrevisions): the name
    /// itself when it starts with `refs/` or is a root ref (`HEAD`, `FETCH_HEAD`,
    /// `ORIG_HEAD`: capitals and `_`, ending in `HEAD`), then `refs/<name>`, `refs/tags/<name>`,
    /// `refs/heads/<name>`, `refs/remotes/<name>`, `refs/remotes/<name>/HEAD`; the first that
    /// exists, with the full name tried and its id.
    pub fn dwim(&self, name: &str) -> Result<Option<(String, ObjectId)>, RefError> {
        let candidates = [
            name.to_owned(),
            format!("refs/{name}"),
            format!("refs/tags/{name}"),
            format!("refs/heads/{name}"),
            format!("refs/remotes/{name}"),
            format!("refs/remotes/{name}/HEAD"),
        ];
        for candidate in candidates {
            if !is_valid_ref_name(&candidate)
                || (candidate == name && !name.starts_with("refs/") && !is_root_ref(name))
            {
                continue;
            }
            if let Ok((_, Some(id))) = self.resolve(&candidate) {
                return Ok(Some((candidate, id)));
            }
        }
        Ok(None)
    }

    /// Whether `name` has a reflog.
    pub fn has_log(&self, name: &str) -> bool {
        self.log_path(name).is_file()
    }

    /// Whether an update of `name` gets a reflog entry under `policy` (see
    /// [`reflog::LogRefs`]).
    pub fn logs(&self, policy: reflog::LogRefs, name: &str) -> bool {
        policy.logs(name, || self.has_log(name))
    }

    /// Where the reflog of `name` is kept (per worktree unless under `refs/`).
    pub fn log_path(&self, name: &str) -> PathBuf {
        match name.starts_with("refs/") {
            true => self.common_dir.join("logs").join(name),
            false => self.git_dir.join("logs").join(name),
        }
    }

    /// The values `name` has had, as its reflog records them (each entry's new id), oldest
    /// first; none when it has no reflog.
    pub fn logged_values(&self, name: &str) -> Vec<ObjectId> {
        self.log_entries(name, |e| e.new)
    }

    /// The messages of `name`'s reflog entries (`checkout: moving from … to …`), oldest first;
    /// none when it has no reflog.
    pub fn logged_messages(&self, name: &str) -> Vec<String> {
        self.log_entries(name, |e| e.message.to_owned())
    }

    /// What `take` keeps of each entry of `name`'s reflog, oldest first; none without one.
    fn log_entries<T>(&self, name: &str, take: impl FnMut(reflog::ReflogEntry<'_>) -> T) -> Vec<T> {
        let Ok(text) = std::fs::read(self.log_path(name)) else {
            return Vec::new();
        };
        reflog::entries(&text, self.hash).map(take).collect()
    }

    /// The `packed-refs` entries with what the file says they peel to.
    pub fn packed(&self) -> Result<Vec<(String, ObjectId, Peeled)>, RefError> {
        Ok(self.packed_refs()?.entries().to_vec())
    }

    fn packed_refs(&self) -> Result<std::sync::Arc<packed::PackedRefs>, RefError> {
        self.packed
            .load(&self.common_dir.join("packed-refs"), self.hash)
    }

    /// A ref, loose or packed, that stops `name` from being created: one whose name is a
    /// directory of `name`'s, or the first one (by name) inside `name` taken as a directory.
    pub fn conflict(&self, name: &str) -> Result<Option<String>, RefError> {
        let packed = self.packed_refs()?;
        let mut at = 0;
        while let Some(slash) = name[at..].find('/') {
            let prefix = &name[..at + slash];
            at += slash + 1;
            if self.common_dir.join(prefix).is_file() || packed.find(prefix).is_some() {
                return Ok(Some(prefix.to_owned()));
            }
        }
        let inside = format!("{name}/");
        let loose = self
            .loose_names_in(&self.common_dir.join(name))
            .into_iter()
            .min();
        let packed = packed.first_under(&inside).map(str::to_owned);
        Ok(match (loose, packed) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }

    /// The names of the loose refs in `dir` and below.
    fn loose_names_in(&self, dir: &Path) -> Vec<String> {
        let mut names = Vec::new();
        let mut stack = vec![dir.to_owned()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(path);
                    continue;
                }
                let Ok(relative) = path.strip_prefix(&self.common_dir) else {
                    continue;
                };
                let name = relative.to_string_lossy().into_owned();
                if is_valid_ref_name(&name) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// Every ref under `refs/` (loose ones override packed ones), sorted by name.
    pub fn list(&self) -> Result<Vec<(String, ObjectId)>, RefError> {
        Ok(self
            .list_peeled()?
            .into_iter()
            .map(|(name, id, _)| (name, id))
            .collect())
    }

    /// The symbolic refs under `refs/` (loose files `ref: <target>`), with their targets;
    /// [`Refs::list`] leaves them out.
    pub fn list_symbolic(&self) -> Vec<(String, String)> {
        (self
            .loose_names_in(&self.common_dir.join("refs"))
            .into_iter())
        .filter_map(|name| match self.read(&name) {
            Ok(Some(RefTarget::Symbolic(to))) => Some((name, to)),
            _ => None,
        })
        .collect()
    }

    /// [`Refs::list`] with what `packed-refs` says each peels to (loose refs: unknown).
    pub fn list_peeled(&self) -> Result<Vec<(String, ObjectId, Peeled)>, RefError> {
        let mut map: std::collections::BTreeMap<String, (ObjectId, Peeled)> = self
            .packed()?
            .into_iter()
            .map(|(n, id, peeled)| (n, (id, peeled)))
            .collect();
        for name in self.loose_names_in(&self.common_dir.join("refs")) {
            if let Ok(Some(RefTarget::Id(id))) = self.read(&name) {
                map.insert(name, (id, Peeled::Unknown));
            }
        }
        Ok(map
            .into_iter()
            .map(|(name, (id, peeled))| (name, id, peeled))
            .collect())
    }

    /// [`Refs::write`], refusing what git refuses to write: an object other than a commit into
    /// a branch or `HEAD` ([`check_branch_target`]).
    pub fn write_checked(
        &self,
        name: &str,
        target: &RefTarget,
        objects: &sluice_odb::ObjectDb,
    ) -> Result<(), RefError> {
        if let RefTarget::Id(id) = target {
            check_branch_target(name, id, objects)?;
        }
        self.write(name, target)
    }

    /// Writes `target` to `name` through `<name>.lock`.
    pub fn write(&self, name: &str, target: &RefTarget) -> Result<(), RefError> {
        refuse_in_quarantine()?;
        if !is_valid_ref_name(name) {
            return Err(RefError::BadName(name.to_owned()));
        }
        let path = self.file(name);
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| RefError::Io { path, source }
        };
        if name.starts_with("refs/") {
            if let Some(existing) = self.conflict(name)? {
                return Err(RefError::NameConflict {
                    name: name.to_owned(),
                    existing,
                });
            }
            if !clear_empty_directory(&path).map_err(io(&path))? {
                return Err(RefError::Blocked {
                    name: name.to_owned(),
                    dir: path,
                });
            }
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let text = match target {
            RefTarget::Id(id) => format!("{id}\n"),
            RefTarget::Symbolic(to) => format!("ref: {to}\n"),
        };
        sluice_odb::lockfile::write_locked_waiting(&path, text.as_bytes(), self.lock_timeout)
            .map_err(RefError::from)
    }

    /// Replaces `packed-refs` with `entries` (name, id, what it peels to), as a clone records
    /// the refs it brings.
    pub fn write_packed(&self, entries: Vec<(String, ObjectId, Peeled)>) -> Result<(), RefError> {
        packed::write(&self.common_dir.join("packed-refs"), entries)
    }

    /// Deletes `name`: its loose file, its line in `packed-refs` (rewritten through its lock)
    /// and its reflog.
    pub fn delete(&self, name: &str) -> Result<(), RefError> {
        refuse_in_quarantine()?;
        if !is_valid_ref_name(name) || !name.starts_with("refs/") {
            return Err(RefError::BadName(name.to_owned()));
        }
        self.remove_packed(&[name])?;
        let path = self.file(name);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(RefError::Io { path, source }),
        }
        remove_empty_parents(&self.common_dir, name);
        self.remove_log(name);
        Ok(())
    }

    /// Rewrites `packed-refs` (through its lock) without `names`, if it has any of them.
    fn remove_packed(&self, names: &[&str]) -> Result<(), RefError> {
        // Most deletions are of loose refs: the file is locked and rewritten only when the
        // version read now has one of them, and then read again under the lock.
        let packed = self.packed_refs()?;
        if names.iter().any(|name| packed.find(name).is_some()) {
            self.update_packed(|entries| {
                let kept = entries
                    .iter()
                    .filter(|(n, _, _)| !names.contains(&n.as_str()));
                Some(kept.cloned().collect())
            })?;
        }
        Ok(())
    }

    /// Rewrites `packed-refs` with what `change` makes of it as read under its lock (waited
    /// for up to `core.packedRefsTimeout`'s default, a second, as git waits).
    fn update_packed(
        &self,
        change: impl FnOnce(&[packed::PackedRef]) -> Option<Vec<packed::PackedRef>>,
    ) -> Result<(), RefError> {
        let path = self.common_dir.join("packed-refs");
        let timeout = std::time::Duration::from_secs(1);
        packed::update(&path, self.hash, timeout, change)
    }

    /// Removes the reflog of `name` and the directories it leaves empty.
    fn remove_log(&self, name: &str) {
        let logs = self.common_dir.join("logs");
        let _ = std::fs::remove_file(logs.join(name));
        remove_empty_parents(&logs, name);
    }

    /// The directory shared by every worktree, which holds `refs/`.
    fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// Appends a reflog line for `name`, as `core.logAllRefUpdates` asks for branches and HEAD.
    pub fn append_log(
        &self,
        name: &str,
        old: &ObjectId,
        new: &ObjectId,
        who: &str,
        message: &str,
    ) -> Result<(), RefError> {
        let path = self.log_path(name);
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| RefError::Io { path, source }
        };
        // A deleted `<name>/…` ref may have left its empty directories where this log goes.
        clear_empty_directory(&path).map_err(io(&path))?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io(&path))?;
        writeln!(file, "{old} {new} {who}\t{message}").map_err(io(&path))
    }
}

/// Whether `name` is one of the refs at the top of the repository that a revision names
/// directly, as git's root refs: `HEAD`, or capitals and `_` ending in `_HEAD`.
fn is_root_ref(name: &str) -> bool {
    let syntax = name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
    syntax && (name == "HEAD" || name.ends_with("_HEAD"))
}

/// What git calls a ref in a fetch's report and in `FETCH_HEAD`, and its short name: a
/// branch, a tag or a remote-tracking branch; `None` for any other ref.
pub fn kind_of(name: &str) -> Option<(&'static str, &str)> {
    [
        ("refs/heads/", "branch"),
        ("refs/tags/", "tag"),
        ("refs/remotes/", "remote-tracking branch"),
    ]
    .into_iter()
    .find_map(|(prefix, kind)| Some((kind, name.strip_prefix(prefix)?)))
}

#[cfg(test)]
mod tests {
    use super::is_valid_ref_name;

    #[test]
    fn ref_names() {
        for good in [
            "refs/heads/main",
            "HEAD",
            "refs/tags/v1.0",
            "refs/heads/a-b_c",
        ] {
            assert!(is_valid_ref_name(good), "{good}");
        }
        for bad in [
            "refs/heads/../x",
            "refs/heads/.x",
            "refs/heads/x.lock",
            "refs//x",
            "refs/x/",
            "a b",
            "refs/heads/x~1",
            "@",
            "refs/x@{1}",
        ] {
            assert!(!is_valid_ref_name(bad), "{bad}");
        }
    }
}
