//! `git pack-refs`: loose refs moved into `packed-refs` (the tags; every ref with `--all`; those
//! `--include` names less those `--exclude` names), each with what it peels to, then the loose
//! files removed, each only under its lock and only if it still holds what was packed (a ref
//! that moved meanwhile stays loose, and wins over its packed line, as git's). As git's, a
//! loose ref is packed only when selected (one already in `packed-refs` too stays loose
//! otherwise), and per-worktree refs never are.

use super::directories::remove_empty_parents;
use super::{Peeled, RefError, RefTarget, Refs};
use sluice_index::wildmatch::wildmatch_anywhere;
use sluice_object::ObjectId;
use sluice_odb::lockfile::create_lock;
use sluice_odb::ObjectDb;
use std::collections::BTreeMap;

/// What `pack` packs and whether it removes the loose files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackRefsOptions {
    /// Patterns of the loose refs packed, matched as git's `wildmatch` without `WM_PATHNAME`
    /// (`*` crosses `/`): `--include`'s, with `*` for `--all`. None packs the tags
    /// (`refs/tags/*`), as git's `pack-refs` without options.
    pub includes: Vec<String>,
    /// Patterns of refs left loose whatever includes them (`--exclude`).
    pub excludes: Vec<String>,
    /// Remove the loose files of the refs packed (not under `--no-prune`).
    pub prune: bool,
}

impl PackRefsOptions {
    /// Every ref, the loose files removed (`--all`: what gc and maintenance pack).
    pub fn every_ref() -> Self {
        PackRefsOptions {
            includes: vec!["*".to_owned()],
            excludes: Vec::new(),
            prune: true,
        }
    }

    /// Whether the loose ref `name` is packed.
    fn selects(&self, name: &str) -> bool {
        let matching = |pattern: &String| wildmatch_anywhere(pattern.as_bytes(), name.as_bytes());
        // A worktree's own refs stay with it.
        let per_worktree = ["refs/bisect/", "refs/worktree/", "refs/rewritten/"];
        let included = match self.includes.is_empty() {
            true => name.starts_with("refs/tags/"),
            false => self.includes.iter().any(matching),
        };
        !per_worktree.iter().any(|prefix| name.starts_with(prefix))
            && !self.excludes.iter().any(matching)
            && included
    }
}

impl Refs {
    /// Packs the loose refs `options` selects; `objects` tells what each peels to. A ref whose
    /// object is missing is left loose, as git leaves a broken ref.
    pub fn pack(&self, options: &PackRefsOptions, objects: &ObjectDb) -> Result<(), RefError> {
        let mut packed_now = Vec::new();
        // Merged into packed-refs as read under its lock, so that a ref deleted from it
        // meanwhile (a push) does not come back.
        self.update_packed(|current| {
            let mut entries: BTreeMap<String, ObjectId> = (current.iter())
                .map(|(name, id, _)| (name.clone(), *id))
                .collect();
            for name in self.loose_names_in(&self.common_dir.join("refs")) {
                let Ok(Some(RefTarget::Id(id))) = self.read(&name) else {
                    continue;
                };
                if !options.selects(&name) || !objects.contains(&id) {
                    continue;
                }
                entries.insert(name.clone(), id);
                packed_now.push((name, id));
            }
            let peeled = |(name, id)| (name, id, Peeled::Known(objects.peel_tags(id)));
            Some(entries.into_iter().map(peeled).collect())
        })?;
        if options.prune {
            for (name, id) in packed_now {
                self.prune_loose(&name, &id)?;
            }
        }
        Ok(())
    }

    /// Removes the loose file of `name` if, under its lock, it still holds `id`.
    fn prune_loose(&self, name: &str, id: &ObjectId) -> Result<(), RefError> {
        let path = self.file(name);
        let (lock, file) = create_lock(&path);
        match file {
            Ok(_) => {}
            // Someone else is writing it: it stays loose, as git leaves it.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
            Err(source) => return Err(RefError::Io { path: lock, source }),
        }
        let still = matches!(self.read(name), Ok(Some(RefTarget::Id(now))) if now == *id);
        let removed = match still {
            true => std::fs::remove_file(&path),
            false => Ok(()),
        };
        let _ = std::fs::remove_file(&lock);
        removed.map_err(|source| RefError::Io { path, source })?;
        if still {
            remove_empty_parents(&self.common_dir, name);
        }
        Ok(())
    }
}
