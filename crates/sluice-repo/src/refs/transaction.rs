//! Ref transactions: several refs moved together, each only from the value its caller saw
//! (compare-and-swap under the ref's lock file), all or none, as git's ref transactions.
//!
//! Every ref is locked (`<ref>.lock`, created exclusively) before any is checked, in name
//! order, so two transactions on the same refs cannot both go ahead: the second finds a lock
//! (git's "Unable to create ... File exists") or, once the first is done, a value it did not
//! expect (git's "is at ... but expected ..."). Only when every ref is locked and holds what
//! was expected are the new values written to the locks and renamed into place; any failure
//! before that removes every lock and changes nothing.

use super::directories::{clear_empty_directory, remove_empty_parents};
use super::{is_valid_ref_name, RefError, RefTarget, Refs};
use sluice_object::ObjectId;
use sluice_odb::lockfile::create_lock_waiting;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a ref must hold for its update to go ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// Whatever it holds.
    Any,
    /// Nothing: the ref must not exist.
    Absent,
    /// Exactly this id.
    Id(ObjectId),
}

/// One ref to move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    /// The full name (`refs/...`).
    pub name: String,
    /// What the ref must hold now.
    pub expected: Expected,
    /// Its new value; `None` deletes it.
    pub new: Option<ObjectId>,
    /// The reflog entry to append (identity line, message), when the ref keeps a log.
    pub log: Option<(String, String)>,
}

/// Why a transaction changed nothing. The messages are git's.
#[derive(Debug, thiserror::Error)]
pub enum TransactionError {
    /// Inside a push's quarantine (`GIT_QUARANTINE_PATH`), as git refuses.
    #[error("ref updates forbidden inside quarantine environment")]
    Quarantined,
    /// Another writer holds the ref's lock.
    #[error("cannot lock ref '{name}': Unable to create '{}': File exists.", lock.display())]
    Locked {
        /// The ref.
        name: String,
        /// Its lock file.
        lock: PathBuf,
    },
    /// The ref moved since the caller saw it.
    #[error("cannot lock ref '{name}': is at {actual} but expected {expected}")]
    Stale {
        /// The ref.
        name: String,
        /// What it holds.
        actual: ObjectId,
        /// What the caller expected.
        expected: ObjectId,
    },
    /// The ref was expected not to exist.
    #[error("cannot lock ref '{name}': reference already exists")]
    Exists {
        /// The ref.
        name: String,
    },
    /// The ref was expected to hold an id and does not exist.
    #[error("cannot lock ref '{name}': unable to resolve reference '{name}'")]
    Missing {
        /// The ref.
        name: String,
    },
    /// The ref is symbolic; transactions move refs that hold ids.
    #[error("cannot lock ref '{name}': it is a symbolic ref to '{target}'")]
    Symbolic {
        /// The ref.
        name: String,
        /// What it points to.
        target: String,
    },
    /// The same ref twice in one transaction.
    #[error("multiple updates for ref '{0}' not allowed")]
    Duplicate(String),
    /// The observer (git's reference-transaction hook) refused the prepared transaction.
    #[error("in 'prepared' phase, update aborted by the reference-transaction hook")]
    Refused,
    /// Reading, naming or writing a ref failed.
    #[error(transparent)]
    Ref(#[from] RefError),
}

/// A ref locked for this transaction: the lock file is removed when dropped, unless it was
/// renamed into place.
struct Held {
    name: String,
    path: PathBuf,
    lock: PathBuf,
    /// The value found under the lock.
    current: Option<ObjectId>,
    committed: bool,
}

impl Drop for Held {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.lock);
        }
    }
}

/// Told of a transaction's phases, as git's `reference-transaction` hook is: once every ref
/// is locked and holds what was expected (`prepared`, which may refuse), then when the refs
/// moved (`committed`) or a prepared transaction did not (`aborted`).
pub trait TransactionObserver {
    /// Whether the prepared transaction may go on.
    fn prepared(&self, updates: &[RefUpdate]) -> bool;
    /// The refs moved.
    fn committed(&self, updates: &[RefUpdate]);
    /// The prepared transaction was abandoned.
    fn aborted(&self, updates: &[RefUpdate]);
}

/// No one watches.
struct Unobserved;

impl TransactionObserver for Unobserved {
    fn prepared(&self, _: &[RefUpdate]) -> bool {
        true
    }
    fn committed(&self, _: &[RefUpdate]) {}
    fn aborted(&self, _: &[RefUpdate]) {}
}

/// Refs to move together.
#[derive(Debug, Default)]
pub struct Transaction {
    updates: Vec<RefUpdate>,
}

impl Transaction {
    /// An empty transaction.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an update.
    pub fn update(&mut self, update: RefUpdate) -> &mut Self {
        self.updates.push(update);
        self
    }

    /// Moves every ref, or none: returns the first reason (in name order) why one cannot move.
    pub fn commit(self, refs: &Refs) -> Result<(), TransactionError> {
        self.commit_observed(refs, &Unobserved)
    }

    /// [`Self::commit`], telling `observer` of each phase.
    pub fn commit_observed(
        self,
        refs: &Refs,
        observer: &dyn TransactionObserver,
    ) -> Result<(), TransactionError> {
        self.prepare(refs, observer)?.commit()
    }

    /// Locks every ref and checks that each holds what is expected, then asks `observer`
    /// (`prepared`): the refs are held until the [`Prepared`] transaction is committed or
    /// dropped (which aborts it). A push prepares its refs before it moves its objects in, so
    /// that a push whose every ref is refused leaves no object behind.
    pub fn prepare<'a>(
        mut self,
        refs: &'a Refs,
        observer: &'a dyn TransactionObserver,
    ) -> Result<Prepared<'a>, TransactionError> {
        super::refuse_in_quarantine().map_err(|_| TransactionError::Quarantined)?;
        self.updates.sort_by(|a, b| a.name.cmp(&b.name));
        if let Some(pair) = self.updates.windows(2).find(|p| p[0].name == p[1].name) {
            return Err(TransactionError::Duplicate(pair[0].name.clone()));
        }
        let mut held = Vec::with_capacity(self.updates.len());
        for update in &self.updates {
            held.push(lock(refs, update)?);
        }
        for (update, held) in self.updates.iter().zip(&held) {
            check(update, held.current)?;
        }
        // As git's files backend: deletions are also a transaction of packed-refs (null to
        // null), prepared when one of the refs is packed and abandoned at once otherwise, and
        // the observer sees that one too, first.
        let packed: Vec<RefUpdate> = (self.updates.iter())
            .filter(|u| u.new.is_none())
            .map(|u| RefUpdate {
                name: u.name.clone(),
                expected: Expected::Any,
                new: None,
                log: None,
            })
            .collect();
        let packed_needed = !packed.is_empty() && {
            let listed = refs.packed()?;
            packed
                .iter()
                .any(|u| listed.iter().any(|(name, ..)| *name == u.name))
        };
        if !packed.is_empty() && !packed_needed {
            observer.aborted(&packed);
        }
        if packed_needed && !observer.prepared(&packed) {
            observer.aborted(&packed);
            observer.aborted(&self.updates);
            return Err(TransactionError::Refused);
        }
        if !observer.prepared(&self.updates) {
            if packed_needed {
                observer.aborted(&packed);
            }
            observer.aborted(&self.updates);
            return Err(TransactionError::Refused);
        }
        Ok(Prepared {
            updates: self.updates,
            held,
            packed: packed_needed.then_some(packed),
            refs,
            observer,
            done: false,
        })
    }
}

/// A transaction whose refs are locked and checked: [`Prepared::commit`] moves them; dropping
/// it releases the locks and tells the observer the transaction was aborted.
pub struct Prepared<'a> {
    updates: Vec<RefUpdate>,
    held: Vec<Held>,
    /// The packed-refs transaction of the deletions, when one of them is packed.
    packed: Option<Vec<RefUpdate>>,
    refs: &'a Refs,
    observer: &'a dyn TransactionObserver,
    done: bool,
}

impl Prepared<'_> {
    /// The updates, in name order.
    pub fn updates(&self) -> &[RefUpdate] {
        &self.updates
    }

    /// Moves every ref.
    pub fn commit(mut self) -> Result<(), TransactionError> {
        self.done = true;
        let written = write_all(&self.updates, self.refs, &mut self.held);
        match &written {
            Ok(()) => {
                if let Some(packed) = &self.packed {
                    self.observer.committed(packed);
                }
                self.observer.committed(&self.updates);
            }
            Err(_) => self.observer.aborted(&self.updates),
        }
        written
    }
}

impl Drop for Prepared<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let Some(packed) = &self.packed {
                self.observer.aborted(packed);
            }
            self.observer.aborted(&self.updates);
        }
    }
}

/// Writes the new values of the locked refs and renames them into place.
fn write_all(
    updates: &[RefUpdate],
    refs: &Refs,
    held: &mut [Held],
) -> Result<(), TransactionError> {
    for (update, held) in updates.iter().zip(held.iter_mut()) {
        if let Some(new) = update.new {
            write_lock(held, &new)?;
        }
    }
    // Deleted refs leave packed-refs first (under its own lock), then their loose files.
    let deleted: Vec<&str> = (updates.iter())
        .filter(|u| u.new.is_none())
        .map(|u| u.name.as_str())
        .collect();
    if !deleted.is_empty() {
        refs.remove_packed(&deleted)?;
    }
    for (update, held) in updates.iter().zip(held.iter_mut()) {
        finish(refs, update, held)?;
    }
    Ok(())
}

/// Locks `update`'s ref and reads what it holds.
fn lock(refs: &Refs, update: &RefUpdate) -> Result<Held, TransactionError> {
    let name = &update.name;
    if !is_valid_ref_name(name) || !name.starts_with("refs/") {
        return Err(RefError::BadName(name.clone()).into());
    }
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| RefError::Io { path, source }
    };
    let path = refs.file(name);
    if update.new.is_some() {
        if let Some(existing) = refs.conflict(name)? {
            return Err(RefError::NameConflict {
                name: name.clone(),
                existing,
            }
            .into());
        }
        if !clear_empty_directory(&path).map_err(io(&path))? {
            return Err(RefError::Blocked {
                name: name.clone(),
                dir: path,
            }
            .into());
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
    }
    let (lock, file) = create_lock_waiting(&path, refs.lock_timeout);
    match file {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(TransactionError::Locked {
                name: name.clone(),
                lock,
            })
        }
        // Deleting a ref whose directory does not exist: there is nothing to lock on disk.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && update.new.is_none() => {}
        Err(source) => return Err(RefError::Io { path: lock, source }.into()),
    }
    let mut held = Held {
        name: name.clone(),
        path,
        lock,
        current: None,
        committed: false,
    };
    held.current = match refs.read(name)? {
        None => None,
        Some(RefTarget::Id(id)) => Some(id),
        Some(RefTarget::Symbolic(target)) => {
            return Err(TransactionError::Symbolic {
                name: held.name.clone(),
                target,
            })
        }
    };
    Ok(held)
}

/// Whether `current` is what `update` expects.
fn check(update: &RefUpdate, current: Option<ObjectId>) -> Result<(), TransactionError> {
    let name = || update.name.clone();
    match (update.expected, current) {
        (Expected::Any, _) | (Expected::Absent, None) => Ok(()),
        (Expected::Absent, Some(_)) => Err(TransactionError::Exists { name: name() }),
        (Expected::Id(expected), Some(actual)) if actual == expected => Ok(()),
        (Expected::Id(expected), Some(actual)) => Err(TransactionError::Stale {
            name: name(),
            actual,
            expected,
        }),
        (Expected::Id(_), None) => Err(TransactionError::Missing { name: name() }),
    }
}

fn write_lock(held: &Held, new: &ObjectId) -> Result<(), TransactionError> {
    let io = |source| RefError::Io {
        path: held.lock.clone(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&held.lock)
        .map_err(io)?;
    writeln!(file, "{new}").map_err(io)?;
    Ok(())
}

/// Renames the lock into place (or removes the loose file of a deleted ref), then logs.
fn finish(refs: &Refs, update: &RefUpdate, held: &mut Held) -> Result<(), TransactionError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| RefError::Io { path, source }
    };
    match update.new {
        Some(new) => {
            std::fs::rename(&held.lock, &held.path).map_err(io(&held.path))?;
            held.committed = true;
            if let Some((who, message)) = &update.log {
                let old = held.current.unwrap_or_else(|| new.kind().null_id());
                refs.append_log(&update.name, &old, &new, who, message)?;
            }
        }
        None => {
            match std::fs::remove_file(&held.path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(&held.path)(e).into()),
            }
            refs.remove_log(&update.name);
            // The lock goes with the Held; the empty directories after it.
            let _ = std::fs::remove_file(&held.lock);
            held.committed = true;
            remove_empty_parents(refs.common_dir(), &update.name);
        }
    }
    Ok(())
}
