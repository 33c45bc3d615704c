//! Switching the work tree and index from one commit to another, as git's two-way merge of
//! the index, the current commit and the target: only what differs between the commits is
//! touched, changes staged or made in the work tree are carried over where the commits agree,
//! and the switch is refused (without -f) where one would be lost.

use crate::at_dir::AtDir;
use crate::checkout::{
    build_index, jobs_for, load_attributes, read_index_or_empty, write_index_file, CheckoutOptions,
};
use crate::convert::Conversion;
use crate::filter::Filters;
use crate::tree::{flatten_reusing, TreeFile, TreeLookup};
use crate::writer::write_all;
use crate::CheckoutError;
use rayon::prelude::*;
use rustix::fs::FileType;
use sluice_index::{Index, IndexEntry, Stat};
use sluice_object::progress::Progress;
use sluice_object::{hash_object, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use sluice_repo::Repository;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What a switch does with one entry of the target tree.
enum Decision {
    /// Unchanged: keep the file and its index entry (with its stat data).
    Keep,
    /// Write it.
    Write,
    /// Write it, though that loses a local change (refused without -f).
    WriteOverLocalChange,
    /// Write it, though an untracked file is in the way (refused without -f).
    WriteOverUntracked(String),
    /// Write it, though a directory holding untracked files is in the way (refused without
    /// -f).
    WriteOverUntrackedDir(String),
    /// Keep the index entry and the file as they are, though they differ from the target:
    /// the commits agree there, so the difference is a change staged in the index.
    Carry,
    /// Leave the path out of the index and the work tree alone: a deletion staged where the
    /// commits agree.
    Omit,
    /// The index holds neither commit's version: switching would lose it (refused; never
    /// decided under -f, which discards it).
    Refuse,
    /// Outside the sparse checkout: in the index, marked skip-worktree, and not in the work
    /// tree (a file the old index had there, unchanged, is removed).
    Outside {
        /// The work tree holds the old entry's file, which goes.
        remove: bool,
    },
}

/// What a switch did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SwitchOutcome {
    /// Files written.
    pub written: usize,
    /// Files removed.
    pub removed: usize,
}

/// What the work tree holds at an index entry's path, found with one `lstat` (and a read only
/// when the stat data changed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WorktreeState {
    /// Deleted: a checkout writing it again loses nothing.
    Missing,
    /// What the entry says.
    Clean,
    /// Something else: a local change.
    Dirty,
}

fn worktree_state(
    at: &mut AtDir<'_>,
    entry: &IndexEntry,
    (conversion, file_mode): (&Conversion, bool),
    odb: &ObjectDb,
) -> Result<WorktreeState, CheckoutError> {
    // Outside a sparse checkout, git takes the entry as it is, whatever the path holds.
    if entry.skip_worktree() {
        return Ok(WorktreeState::Clean);
    }
    let found = at.lstat(&entry.path).map_err(|source| CheckoutError::Io {
        path: at.path_of(&entry.path),
        source,
    })?;
    let Some(found) = found else {
        return Ok(WorktreeState::Missing);
    };
    // Where the executable bit is trusted (`core.fileMode`), a file that gained or lost it is
    // changed, as git's diff sees it: a switch that rewrites it would lose the change.
    let regular = entry.mode & 0o170000 == 0o100000 && found.kind == FileType::RegularFile;
    if file_mode && regular && found.executable != (entry.mode & 0o100 != 0) {
        return Ok(WorktreeState::Dirty);
    }
    if found.stat == entry.stat && entry.stat != Stat::default() {
        return Ok(WorktreeState::Clean);
    }
    let clean = is_clean(&at.path_of(&entry.path), found.kind, entry, conversion, odb)?;
    Ok(if clean {
        WorktreeState::Clean
    } else {
        WorktreeState::Dirty
    })
}

/// Whether the file at `path` (of type `kind`), whose stat data differs from the index
/// entry's, still holds what the entry says.
fn is_clean(
    path: &Path,
    kind: FileType,
    entry: &IndexEntry,
    conversion: &Conversion,
    odb: &ObjectDb,
) -> Result<bool, CheckoutError> {
    let path = path.to_owned();
    if entry.mode == 0o160000 {
        return Ok(kind == FileType::Directory);
    }
    let content = if kind == FileType::Symlink {
        std::fs::read_link(&path)
            .map(|t| t.into_os_string().into_encoded_bytes())
            .map_err(|source| CheckoutError::Io {
                path: path.clone(),
                source,
            })?
    } else if kind == FileType::RegularFile {
        std::fs::read(&path).map_err(|source| CheckoutError::Io {
            path: path.clone(),
            source,
        })?
    } else {
        return Ok(false);
    };
    if conversion.is_identity() || entry.mode == 0o120000 {
        return Ok(hash_object(odb.hash(), ObjectKind::Blob, &content).ok() == Some(entry.id));
    }
    // With conversion, compare with what a checkout of the entry would write.
    let Some((_, blob)) = odb.read(&entry.id)? else {
        return Ok(false);
    };
    let mut expected = conversion.apply(blob, &entry.id).unwrap_or_default();
    if conversion.filter.is_some() {
        // A filtered file cannot be compared without running the filter's clean side.
        expected.clear();
        return Ok(false);
    }
    Ok(expected == content)
}

/// Stage-0 index entries, sorted by path.
struct Tracked<'a>(Vec<&'a IndexEntry>);

impl<'a> Tracked<'a> {
    fn new(entries: &'a [IndexEntry]) -> Self {
        let mut tracked: Vec<&IndexEntry> = entries.iter().filter(|e| e.stage() == 0).collect();
        // git writes indexes sorted; one that is not is sorted here rather than trusted.
        if !tracked.is_sorted_by(|a, b| a.path <= b.path) {
            tracked.sort_by(|a, b| a.path.cmp(&b.path));
        }
        Tracked(tracked)
    }

    /// Pairs each of `files` (sorted by path) with the entry at its path, and lists the
    /// entries no file has.
    fn pair_with(&self, files: &[TreeFile]) -> (Vec<Option<&'a IndexEntry>>, Vec<&'a IndexEntry>) {
        let mut matched = Vec::with_capacity(files.len());
        let mut unmatched = Vec::new();
        let mut entries = self.0.iter().copied().peekable();
        for file in files {
            while let Some(entry) = entries.next_if(|e| e.path < file.path) {
                unmatched.push(entry);
            }
            matched.push(entries.next_if(|e| e.path == file.path));
        }
        unmatched.extend(entries);
        (matched, unmatched)
    }

    fn contains_key(&self, path: &[u8]) -> bool {
        self.0
            .binary_search_by(|e| e.path.as_slice().cmp(path))
            .is_ok()
    }
}

/// Files below the directory `dir` that the index does not track.
fn untracked_below(root: &Path, dir: &[u8], tracked: &Tracked<'_>) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_vec()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(OsStr::from_bytes(&current))) else {
            continue;
        };
        for entry in entries.flatten() {
            let mut path = current.clone();
            path.push(b'/');
            path.extend_from_slice(entry.file_name().as_bytes());
            if entry.file_type().is_ok_and(|t| t.is_dir()) && !tracked.contains_key(path.as_slice())
            {
                stack.push(path);
            } else if !tracked.contains_key(path.as_slice()) {
                found.push(String::from_utf8_lossy(&path).into_owned());
            }
        }
    }
    found
}

/// The current commit's file at each path where the index differs from the target (the
/// third side of git's two-way merge).
struct Current {
    /// (position among the target's files, the current commit's file there), for the files
    /// whose index entry is not the target's, in order.
    files: Vec<(usize, Option<(u32, ObjectId)>)>,
    /// For each index entry the target drops, in order.
    removed: Vec<Option<(u32, ObjectId)>>,
}

impl Current {
    fn look_up(
        repo: &Repository,
        files: &[TreeFile],
        matched: &[Option<&IndexEntry>],
        removed: &[&IndexEntry],
    ) -> Result<Current, CheckoutError> {
        let head = match repo.refs().resolve("HEAD")? {
            (_, Some(commit)) => Some(crate::commit_tree(repo.objects(), &commit)?),
            (_, None) => None,
        };
        let mut lookup = TreeLookup::new(repo.objects(), head);
        let mut current = Current {
            files: Vec::new(),
            removed: Vec::with_capacity(removed.len()),
        };
        for (i, (file, entry)) in files.iter().zip(matched).enumerate() {
            if !entry.is_some_and(|e| same_file(e, file.mode, &file.id)) {
                current.files.push((i, lookup.file(&file.path)?));
            }
        }
        for entry in removed {
            current.removed.push(lookup.file(&entry.path)?);
        }
        Ok(current)
    }

    /// The current commit's file for the target's file at `position`, if it was looked up.
    fn file(&self, position: usize) -> Option<Option<(u32, ObjectId)>> {
        let found = self.files.binary_search_by_key(&position, |&(i, _)| i);
        found.ok().map(|k| self.files[k].1)
    }
}

/// Whether the index entry records this file (an entry only intended to be added records
/// none).
fn same_file(entry: &IndexEntry, mode: u32, id: &ObjectId) -> bool {
    entry.mode == mode && entry.id == *id && !entry.intent_to_add()
}

/// Moves the work tree and index from the current commit and index to `tree`, as git's
/// checkout: where the two commits agree, the index entry and the file stay as they are
/// (staged and unstaged changes carried over); elsewhere the file is replaced when the index
/// and work tree hold the current commit's version, and without `force` the switch is refused
/// when a local change or an untracked file would be lost. With `force`, the index and work
/// tree become the target's (as git's `checkout -f`, rewriting modified files even where the
/// trees agree).
pub fn switch(
    repo: &Repository,
    tree: &ObjectId,
    force: bool,
    options: &CheckoutOptions,
    progress: &dyn Progress,
) -> Result<SwitchOutcome, CheckoutError> {
    let root = repo.work_tree().ok_or(CheckoutError::Bare)?.to_owned();
    let odb = repo.objects();
    // Without an index file, the checkout is the first (a clone made with --no-checkout):
    // nothing was staged, so the current commit has no say.
    let initial = !repo.index_path().exists();
    let old = read_index_or_empty(repo)?;
    // No index and nothing in the work tree but .git: there is nothing to protect or replace,
    // so files are created without looking first.
    let fresh = old.entries.is_empty()
        && std::fs::read_dir(&root)
            .is_ok_and(|mut entries| entries.all(|e| e.is_ok_and(|e| e.file_name() == ".git")));
    // A sparse index (`index.sparse`) holds whole directories as entries.
    if let Some(dir) = old.entries.iter().find(|e| e.mode == 0o040000) {
        let dir = String::from_utf8_lossy(&dir.path).into_owned();
        return Err(CheckoutError::SparseIndex(dir));
    }
    let flat = flatten_reusing(odb, tree, Some(&old))?;
    let attributes = load_attributes(repo, odb, &flat.files)?;
    let old_entries = Tracked::new(&old.entries);
    // Both lists are sorted by path: one merge pairs each file with its old entry and finds
    // the entries the new tree drops (a binary search per file was a fifth of a switch's CPU).
    let (matched, removed) = old_entries.pair_with(&flat.files);
    let current = match force || initial {
        true => None,
        false => Some(Current::look_up(repo, &flat.files, &matched, &removed)?),
    };

    // Classify every entry of the target tree; with -f this looks at every file, so it runs
    // on all cores, as git's preload-index does.
    let planner = Conversion::planner(&attributes, options.convert);
    let judge = Judge {
        root: &root,
        odb,
        force,
        fresh,
        tracked: &old_entries,
        planner: &planner,
        file_mode: options.file_mode,
        sparse: options.sparse.as_ref(),
    };
    type Item<'f, 'e> = (usize, (&'f TreeFile, &'f Option<&'e IndexEntry>));
    let decide = |at: &mut AtDir<'_>, (i, (file, old_entry)): Item<'_, '_>| {
        let current = current.as_ref().and_then(|c| c.file(i));
        judge.decide(at, file, *old_entry, current)
    };
    let decisions: Vec<Decision> = if force || !fresh {
        // Collected in place (a collect into `Result` gathers pieces and copies them: a
        // megabyte more of fresh memory for 100,000 files); the first error found is kept.
        let failed = std::sync::Mutex::new(None);
        let mut decisions = Vec::new();
        (flat.files.par_iter().zip(&matched))
            .enumerate()
            .map_init(
                || AtDir::new(&root),
                |at, item| {
                    decide(at, item).unwrap_or_else(|e| {
                        failed.lock().expect("not poisoned").get_or_insert(e);
                        Decision::Refuse
                    })
                },
            )
            .collect_into_vec(&mut decisions);
        if let Some(e) = failed.into_inner().expect("not poisoned") {
            return Err(e);
        }
        decisions
    } else {
        let mut at = AtDir::new(&root);
        (flat.files.iter().zip(&matched))
            .enumerate()
            .map(|item| decide(&mut at, item))
            .collect::<Result<_, _>>()?
    };
    let mut sorted = Sorted::from(decisions, &flat.files, &matched);
    let mut dropped = Vec::new();
    let mut at = AtDir::new(&root);
    for (k, entry) in removed.iter().enumerate() {
        match current.as_ref().map(|c| c.removed[k]) {
            // Not in the current commit either: an addition staged in the index, kept.
            Some(None) => sorted.carried.push((*entry).clone()),
            Some(Some((mode, id))) if !same_file(entry, mode, &id) => sorted
                .dirty
                .push(String::from_utf8_lossy(&entry.path).into_owned()),
            // Outside the sparse checkout: nothing in the work tree to compare or remove.
            _ if entry.skip_worktree() => {}
            _ => {
                let conversion = planner.for_path(&entry.path);
                if !force
                    && worktree_state(&mut at, entry, (&conversion, options.file_mode), odb)?
                        == WorktreeState::Dirty
                {
                    sorted
                        .dirty
                        .push(String::from_utf8_lossy(&entry.path).into_owned());
                }
                dropped.push(*entry);
            }
        }
    }
    if let Some(refusal) = sorted.refusal() {
        return Err(refusal);
    }
    let leaving = sorted
        .leaving
        .iter()
        .map(|&i| matched[i].expect("left files had an entry"));
    dropped.extend(leaving);
    remove_from_work_tree(&root, &dropped)?;
    let jobs = jobs_for(
        sorted.to_write.iter().map(|&i| &flat.files[i]),
        &attributes,
        options.convert,
    );
    let mut filters = Filters::new(options.filters.clone(), &root);
    let mut write = options.write.clone();
    write.fresh = fresh;
    // Delayed, as git's: a quick checkout says nothing.
    progress.delayed_phase("Updating files", Some(jobs.len() as u64));
    let written = write_all(odb, &root, &jobs, &write, &mut filters, progress)?;
    progress.finish();
    let written_count = jobs.len();
    drop(jobs);
    let mut stats = std::mem::take(&mut sorted.stats);
    for (&i, stat) in sorted.to_write.iter().zip(written) {
        stats[i] = stat;
    }
    let removed = dropped.len();
    drop((matched, dropped, old_entries));
    // The old index is done with: not holding two indexes of 100,000 entries at once, and its
    // entries' allocation holds the new ones.
    let Index { entries, .. } = old;
    let mut index = build_index(repo, flat, &stats, entries);
    for &i in &sorted.outside {
        index.entries[i].set_skip_worktree(true);
    }
    let index = sorted.carry_over(index);
    write_index_file(repo, &index)?;
    Ok(SwitchOutcome {
        written: written_count,
        removed,
    })
}

/// What a switch needs to decide about each file.
struct Judge<'a> {
    root: &'a Path,
    odb: &'a ObjectDb,
    force: bool,
    fresh: bool,
    tracked: &'a Tracked<'a>,
    planner: &'a crate::convert::Planner<'a>,
    file_mode: bool,
    sparse: Option<&'a sluice_repo::sparse::SparseCone>,
}

impl Judge<'_> {
    /// What to do with `file` of the target, given its index entry and (where the index does
    /// not hold the target's version and the switch is not forced) the current commit's file.
    fn decide(
        &self,
        at: &mut AtDir<'_>,
        file: &TreeFile,
        old_entry: Option<&IndexEntry>,
        current: Option<Option<(u32, ObjectId)>>,
    ) -> Result<Decision, CheckoutError> {
        let (root, odb) = (self.root, self.odb);
        // Only a file with an old entry is compared with the work tree, through its
        // conversion; the rest (all of a fresh checkout) need none.
        let conversion = || self.planner.for_path(&file.path);
        if self.sparse.is_some_and(|cone| !cone.includes(&file.path)) {
            return Ok(match old_entry {
                Some(entry) if !entry.skip_worktree() => {
                    let state = worktree_state(at, entry, (&conversion(), self.file_mode), odb)?;
                    match state {
                        WorktreeState::Dirty if !self.force => Decision::Refuse,
                        WorktreeState::Missing => Decision::Outside { remove: false },
                        _ => Decision::Outside { remove: true },
                    }
                }
                _ => Decision::Outside { remove: false },
            });
        }
        let target = Some((file.mode, file.id));
        Ok(match old_entry {
            // Back inside the sparse checkout: the work tree lacks the file.
            Some(entry) if entry.skip_worktree() => match at.lstat(&file.path) {
                Ok(Some(_)) if !self.force => {
                    Decision::WriteOverUntracked(String::from_utf8_lossy(&file.path).into_owned())
                }
                _ => Decision::Write,
            },
            Some(entry) if same_file(entry, file.mode, &file.id) => {
                // With -f, a file that is missing or modified is written again, as git's
                // `checkout -f` does; otherwise local changes to it are kept.
                if self.force
                    && worktree_state(at, entry, (&conversion(), self.file_mode), odb)?
                        != WorktreeState::Clean
                {
                    Decision::Write
                } else {
                    Decision::Keep
                }
            }
            // The commits agree: what the index holds (a staged change) stays.
            Some(_) if current == Some(target) => Decision::Carry,
            // The index holds neither commit's version: switching would lose it.
            Some(entry)
                if current.is_some_and(|c| !c.is_some_and(|(m, id)| same_file(entry, m, &id))) =>
            {
                Decision::Refuse
            }
            Some(entry) => {
                if !self.force
                    && worktree_state(at, entry, (&conversion(), self.file_mode), odb)?
                        == WorktreeState::Dirty
                {
                    Decision::WriteOverLocalChange
                } else {
                    Decision::Write
                }
            }
            None if self.force || self.fresh => Decision::Write,
            // A deletion staged in the index, where the commits agree: it stays deleted.
            None if current == Some(target) => Decision::Omit,
            None if current.is_some_and(|c| c.is_some()) => Decision::Refuse,
            None => match at.lstat(&file.path) {
                // A directory in the way is fine if the switch removes all it holds.
                Ok(Some(found)) if found.is_dir() && file.mode != 0o160000 => {
                    match untracked_below(root, &file.path, self.tracked).is_empty() {
                        true => Decision::Write,
                        false => Decision::WriteOverUntrackedDir(
                            String::from_utf8_lossy(&file.path).into_owned(),
                        ),
                    }
                }
                Ok(Some(found)) if found.is_dir() => Decision::Write,
                Ok(Some(_)) => {
                    Decision::WriteOverUntracked(String::from_utf8_lossy(&file.path).into_owned())
                }
                Ok(None) | Err(_) => Decision::Write,
            },
        })
    }
}

/// A switch's decisions sorted by what they do, with the paths that refuse it without -f.
struct Sorted {
    /// Entries of the target tree to write.
    to_write: Vec<usize>,
    /// Stat data for every entry of the target: the index's for those kept (the others'
    /// are filled in once written).
    stats: Vec<Stat>,
    /// Entries of the target whose path the index keeps as it is (or keeps out).
    replaced: Vec<usize>,
    /// Index entries carried over in place of the target's.
    carried: Vec<IndexEntry>,
    /// Files whose local changes the switch would lose.
    dirty: Vec<String>,
    /// Untracked files in the way.
    untracked: Vec<String>,
    /// Directories in the way that hold untracked files.
    untracked_dirs: Vec<String>,
    /// Entries of the target outside the sparse checkout.
    outside: Vec<usize>,
    /// Entries of the target whose old file leaves the work tree, now outside the sparse
    /// checkout.
    leaving: Vec<usize>,
}

impl Sorted {
    fn from(
        decisions: Vec<Decision>,
        files: &[TreeFile],
        matched: &[Option<&IndexEntry>],
    ) -> Sorted {
        let mut sorted = Sorted {
            to_write: Vec::new(),
            stats: vec![Stat::default(); files.len()],
            replaced: Vec::new(),
            carried: Vec::new(),
            dirty: Vec::new(),
            untracked: Vec::new(),
            untracked_dirs: Vec::new(),
            outside: Vec::new(),
            leaving: Vec::new(),
        };
        for (i, decision) in decisions.into_iter().enumerate() {
            match decision {
                Decision::Keep => {
                    sorted.stats[i] = matched[i].expect("kept files have an entry").stat
                }
                Decision::Write => sorted.to_write.push(i),
                Decision::Carry => {
                    sorted.replaced.push(i);
                    sorted.carried.extend(matched[i].cloned());
                }
                Decision::Omit => sorted.replaced.push(i),
                Decision::Refuse => {
                    sorted
                        .dirty
                        .push(String::from_utf8_lossy(&files[i].path).into_owned());
                }
                Decision::WriteOverLocalChange => {
                    let path = String::from_utf8_lossy(&files[i].path).into_owned();
                    sorted.dirty.push(path);
                    sorted.to_write.push(i);
                }
                Decision::WriteOverUntracked(path) => {
                    sorted.untracked.push(path);
                    sorted.to_write.push(i);
                }
                Decision::WriteOverUntrackedDir(dir) => {
                    sorted.untracked_dirs.push(dir);
                    sorted.to_write.push(i);
                }
                Decision::Outside { remove } => {
                    sorted.outside.push(i);
                    if remove {
                        sorted.leaving.push(i);
                    }
                }
            }
        }
        sorted
    }

    /// Why the switch is refused, if it is: the local changes it would lose, else the
    /// untracked files in its way.
    fn refusal(&mut self) -> Option<CheckoutError> {
        if !self.dirty.is_empty() {
            self.dirty.sort();
            return Some(CheckoutError::LocalChanges(std::mem::take(&mut self.dirty)));
        }
        if self.untracked.is_empty() && self.untracked_dirs.is_empty() {
            return None;
        }
        self.untracked.sort();
        self.untracked_dirs.sort();
        Some(CheckoutError::Untracked {
            files: std::mem::take(&mut self.untracked),
            dirs: std::mem::take(&mut self.untracked_dirs),
        })
    }

    /// The target's index (`index`, built from its files in order) with the entries the
    /// switch carries over in place of the target's, and the cache tree of every directory
    /// they change marked invalid.
    fn carry_over(self, mut index: Index) -> Index {
        if self.replaced.is_empty() && self.carried.is_empty() {
            return index;
        }
        let mut replaced = self.replaced.iter().peekable();
        let mut position = 0;
        let mut changed: Vec<Vec<u8>> = Vec::new();
        index.entries.retain(|entry| {
            let here = position;
            position += 1;
            if replaced.next_if(|&&i| i == here).is_some() {
                changed.push(entry.path.clone());
                return false;
            }
            true
        });
        changed.extend(self.carried.iter().map(|e| e.path.clone()));
        index.entries.extend(self.carried);
        index.sort();
        if let Some(tree) = &mut index.tree {
            for path in &changed {
                tree.invalidate(path);
            }
        }
        index
    }
}

/// Removes the files of the entries a switch drops, deepest paths first, then the directories
/// they leave empty: a file may become a directory and the other way round.
fn remove_from_work_tree(root: &Path, removed: &[&IndexEntry]) -> Result<(), CheckoutError> {
    let mut paths: Vec<&[u8]> = removed.iter().map(|e| e.path.as_slice()).collect();
    paths.sort_by(|a, b| b.cmp(a));
    for path in &paths {
        let full = root.join(OsStr::from_bytes(path));
        match std::fs::symlink_metadata(&full) {
            Ok(meta) if meta.is_dir() => {
                let _ = std::fs::remove_dir(&full);
            }
            Ok(_) => std::fs::remove_file(&full).map_err(|source| CheckoutError::Io {
                path: full.clone(),
                source,
            })?,
            Err(_) => {}
        }
        let mut dir = full.parent();
        while let Some(d) = dir {
            if d == root || std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
    Ok(())
}

/// Whether the work tree and index hold exactly the current commit, as git's push-to-deploy
/// asks before `receive.denyCurrentBranch=updateInstead` moves them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CleanState {
    /// Nothing changed: a switch loses nothing.
    Clean,
    /// A file differs from the index, or is gone (git's `diff-files`).
    UnstagedChanges,
    /// The index differs from the current commit (git's `diff-index --cached HEAD`).
    StagedChanges,
}

/// Compares the work tree with the index, then the index with `head_tree` (the current
/// commit's tree; `None` for an unborn branch, whose tree is empty).
pub fn clean_state(
    repo: &Repository,
    head_tree: Option<&ObjectId>,
    options: &CheckoutOptions,
) -> Result<CleanState, CheckoutError> {
    let root = repo.work_tree().ok_or(CheckoutError::Bare)?.to_owned();
    let odb = repo.objects();
    let index = read_index_or_empty(repo)?;
    let head = match head_tree {
        Some(tree) => flatten_reusing(odb, tree, Some(&index))?.files,
        None => Vec::new(),
    };
    let attributes = load_attributes(repo, odb, &head)?;
    let planner = Conversion::planner(&attributes, options.convert);
    let mut at = AtDir::new(&root);
    for entry in &index.entries {
        let conversion = planner.for_path(&entry.path);
        if worktree_state(&mut at, entry, (&conversion, options.file_mode), odb)?
            != WorktreeState::Clean
        {
            return Ok(CleanState::UnstagedChanges);
        }
    }
    let same = index.entries.len() == head.len()
        && (index.entries.iter().zip(&head))
            .all(|(entry, file)| entry.path == file.path && same_file(entry, file.mode, &file.id));
    Ok(match same {
        true => CleanState::Clean,
        false => CleanState::StagedChanges,
    })
}

/// What git's checkout lists once it switched (`M b`, `A c`, `D l`): the index and the work
/// tree against the tree `tree` of the commit switched to, as `git diff-index --name-status`
/// gives them, by path: `M` where the content (or the executable bit) differs, `T` where the
/// kind of file does, `D` where the tree has a file that the index lacks or the work tree
/// lost, `A` where the index has a file the tree lacks (while the work tree has it too).
pub fn local_changes(
    repo: &Repository,
    tree: &ObjectId,
    options: &CheckoutOptions,
) -> Result<Vec<(char, String)>, CheckoutError> {
    let root = repo.work_tree().ok_or(CheckoutError::Bare)?.to_owned();
    let odb = repo.objects();
    let index = read_index_or_empty(repo)?;
    let files = flatten_reusing(odb, tree, Some(&index))?.files;
    let attributes = load_attributes(repo, odb, &files)?;
    let planner = Conversion::planner(&attributes, options.convert);
    let mut at = AtDir::new(&root);
    let mut state = |entry: &IndexEntry| {
        worktree_state(
            &mut at,
            entry,
            (&planner.for_path(&entry.path), options.file_mode),
            odb,
        )
    };
    let tracked = Tracked::new(&index.entries);
    let (matched, added) = tracked.pair_with(&files);
    let mut changes = Vec::new();
    for (file, entry) in files.iter().zip(matched) {
        let status = match entry {
            None => Some('D'),
            Some(entry) => match state(entry)? {
                WorktreeState::Missing => Some('D'),
                _ if entry.mode & 0o170000 != file.mode & 0o170000 => Some('T'),
                // A file become a symbolic link (or the other way) is a change of type.
                WorktreeState::Dirty if kind_changed(&root, &file.path, file.mode) => Some('T'),
                WorktreeState::Dirty => Some('M'),
                WorktreeState::Clean => (!same_file(entry, file.mode, &file.id)).then_some('M'),
            },
        };
        changes.extend(status.map(|status| (status, file.path.as_slice())));
    }
    for entry in added {
        if state(entry)? != WorktreeState::Missing {
            changes.push(('A', entry.path.as_slice()));
        }
    }
    changes.sort_by(|a, b| a.1.cmp(b.1));
    let named = changes.into_iter();
    Ok(named
        .map(|(status, path)| (status, String::from_utf8_lossy(path).into_owned()))
        .collect())
}

/// Whether the work tree's file at `path` is of another kind (file, symbolic link) than the
/// tree's `mode` says.
fn kind_changed(root: &Path, path: &[u8], mode: u32) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(root.join(OsStr::from_bytes(path))) else {
        return false;
    };
    match mode & 0o170000 {
        0o120000 => !meta.file_type().is_symlink(),
        0o100000 => !meta.file_type().is_file(),
        _ => false,
    }
}
