//! The object database: packs, loose objects and alternates, searched in that order.

use crate::loose::LooseObjects;
use crate::pack::Pack;
use crate::ranged::PackSource;
use sluice_object::parse::{parse_commit, parse_tag};
use sluice_object::{HashKind, ObjectId, ObjectKind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why an object could not be read.
#[derive(Debug, thiserror::Error)]
pub enum OdbError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A loose object is corrupt.
    #[error("object {id} is corrupt: {why}")]
    Corrupt {
        /// The object.
        id: ObjectId,
        /// Why.
        why: String,
    },
    /// A pack is corrupt.
    #[error("pack {path} is corrupt: {why}")]
    BadPack {
        /// The pack.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// An index is corrupt.
    #[error("index {path} is corrupt: {why}")]
    BadIndex {
        /// The index.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

/// An object's content: whole in memory, or a large object as a stream.
pub enum ObjectContent<'a> {
    /// The object's kind and content.
    Whole(ObjectKind, Vec<u8>),
    /// The object's kind, size, and a reader of its content.
    Stream(ObjectKind, u64, Box<dyn std::io::Read + 'a>),
}

impl std::fmt::Debug for ObjectContent<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ObjectContent::Whole(kind, data) => write!(f, "Whole({kind:?}, {} bytes)", data.len()),
            ObjectContent::Stream(kind, size, _) => write!(f, "Stream({kind:?}, {size} bytes)"),
        }
    }
}

/// Alternates may name alternates; git stops at this depth.
const MAX_ALTERNATE_DEPTH: usize = 5;

/// The objects of a repository.
#[derive(Debug)]
pub struct ObjectDb {
    dir: PathBuf,
    hash: HashKind,
    packs: Vec<Arc<Pack>>,
    loose: LooseObjects,
    alternates: Vec<ObjectDb>,
    /// Packs found after opening, when an object was not where this view looked: a repack
    /// may have moved it into a new pack and removed the one it was in (git's
    /// `reprepare_packed_git`). Kept apart so that the numbers of [`Self::packs`] stay.
    late: std::sync::Mutex<Vec<Arc<Pack>>>,
    /// Where ranged packs' bytes come from (a store), if this directory may hold any.
    source: Option<Arc<dyn PackSource>>,
}

/// Another view of the same directory: the same open packs, a loose-object cache of its own.
impl Clone for ObjectDb {
    fn clone(&self) -> ObjectDb {
        ObjectDb {
            dir: self.dir.clone(),
            hash: self.hash,
            packs: self.packs.clone(),
            loose: LooseObjects::new(&self.dir, self.hash),
            alternates: self.alternates.clone(),
            late: std::sync::Mutex::new(self.late_packs()),
            source: self.source.clone(),
        }
    }
}

/// The pack directory of the object directory `objects` (gitrepository-layout's
/// `objects/pack`): packs, their indexes and the multi-pack-index.
pub fn pack_dir(objects: &Path) -> PathBuf {
    objects.join("pack")
}

impl ObjectDb {
    /// Opens the object directory `dir` with its packs and alternates.
    pub fn open(dir: &Path, hash: HashKind) -> Result<ObjectDb, OdbError> {
        Self::open_at_depth(dir, hash, &[], 0, &[], None)
    }

    /// Opens `dir`, adding `extra` alternate directories (`GIT_ALTERNATE_OBJECT_DIRECTORIES`).
    pub fn open_with_alternates(
        dir: &Path,
        hash: HashKind,
        extra: &[PathBuf],
    ) -> Result<ObjectDb, OdbError> {
        Self::open_at_depth(dir, hash, extra, 0, &[], None)
    }

    /// Opens `dir` as [`Self::open_with_alternates`], reading the bytes its ranged packs lack
    /// from `source` (a store's node serving one generation).
    pub fn open_with_source(
        dir: &Path,
        hash: HashKind,
        extra: &[PathBuf],
        source: Arc<dyn PackSource>,
    ) -> Result<ObjectDb, OdbError> {
        Self::open_at_depth(dir, hash, extra, 0, &[], Some(&source))
    }

    /// Opens `dir` with `extra` alternate directories, reading ranged packs' bytes from where
    /// this database reads them (a push's quarantine beside its repository).
    pub fn open_beside(&self, dir: &Path, extra: &[PathBuf]) -> Result<ObjectDb, OdbError> {
        Self::open_at_depth(dir, self.hash, extra, 0, &[], self.source.as_ref())
    }

    /// Opens this view's directory again, as [`Self::open_with_alternates`] with `extra`, to
    /// see the packs written since: the packs still there are shared with this view rather
    /// than mapped again (a pack file never changes under its name).
    pub fn reopened(&self, extra: &[PathBuf]) -> Result<ObjectDb, OdbError> {
        let open = self.packs.iter().cloned().chain(self.late_packs());
        let open = open.collect::<Vec<_>>();
        Self::open_at_depth(&self.dir, self.hash, extra, 0, &open, self.source.as_ref())
    }

    fn open_at_depth(
        dir: &Path,
        hash: HashKind,
        extra: &[PathBuf],
        depth: usize,
        open: &[Arc<Pack>],
        source: Option<&Arc<dyn PackSource>>,
    ) -> Result<ObjectDb, OdbError> {
        let mut packs = Vec::new();
        if let Ok(entries) = std::fs::read_dir(pack_dir(dir)) {
            let mut names: Vec<PathBuf> = entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "idx"))
                .filter(|p| p.with_extension("pack").exists())
                .collect();
            names.sort();
            for name in names {
                let data = name.with_extension("pack");
                if let Some(pack) = open.iter().find(|p| p.path() == data) {
                    packs.push(pack.clone());
                    continue;
                }
                match Pack::open_shared(&name, hash, source) {
                    Ok(pack) => packs.push(pack),
                    // Removed since it was listed (a repack installed its replacement first;
                    // a miss finds that one, see `late`).
                    Err(OdbError::Io { source, .. })
                        if source.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
        }
        let mut alternates = Vec::new();
        if depth < MAX_ALTERNATE_DEPTH {
            let mut dirs: Vec<PathBuf> = extra.to_vec();
            // As git: an alternates file that cannot be read lends nothing.
            let listed = crate::alternates::read(dir).unwrap_or_default();
            dirs.extend(listed.iter().map(|line| dir.join(line)));
            for alternate in dirs {
                if alternate.is_dir() {
                    // An alternate of a ranged pack's repository (a push's quarantine, whose
                    // alternate is the repository) reads from the same source.
                    let depth = depth + 1;
                    let opened = Self::open_at_depth(&alternate, hash, &[], depth, &[], source)?;
                    alternates.push(opened);
                }
            }
        }
        Ok(ObjectDb {
            dir: dir.to_owned(),
            hash,
            packs,
            loose: LooseObjects::new(dir, hash),
            alternates,
            late: std::sync::Mutex::new(Vec::new()),
            source: source.cloned(),
        })
    }

    /// This database with the packs of its alternates, however deep, listed among its own
    /// (after them): [`Self::locate`] then finds stored entries there too, so that a pack
    /// written from here can copy their deltas as they are. The alternates stay, for their
    /// loose objects.
    pub fn with_alternate_packs(&self) -> ObjectDb {
        let mut view = self.clone();
        let mut pending: Vec<&ObjectDb> = self.alternates.iter().collect();
        while let Some(alternate) = pending.pop() {
            view.packs.extend(alternate.packs.iter().cloned());
            pending.extend(alternate.alternates.iter());
        }
        view
    }

    /// This view without the pack at `pack` (its `.pack` file): what the directory holds
    /// besides a pack just stored.
    pub fn without_pack(&self, pack: &Path) -> ObjectDb {
        let mut view = self.clone();
        view.packs.retain(|p| p.path() != pack);
        view.late
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p| p.path() != pack);
        view
    }

    /// The object directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Its pack directory, `pack` in the object directory.
    pub fn pack_dir(&self) -> PathBuf {
        pack_dir(&self.dir)
    }

    /// The hash function of the ids.
    pub fn hash(&self) -> HashKind {
        self.hash
    }

    /// The packs of this directory (not of alternates).
    pub fn packs(&self) -> &[Arc<Pack>] {
        &self.packs
    }

    /// The object directories this one borrows from (its `info/alternates`), each with its own.
    pub fn alternates(&self) -> &[ObjectDb] {
        &self.alternates
    }

    /// This object database or the alternate whose directory is `dir` (compared as real
    /// paths), as git's `--object-dir` options require one of them.
    pub fn self_or_alternate_at(&self, dir: &Path) -> Option<&ObjectDb> {
        let wanted = std::fs::canonicalize(dir).ok()?;
        let candidates = std::iter::once(self).chain(self.alternates());
        candidates
            .into_iter()
            .find(|candidate| std::fs::canonicalize(candidate.dir()).ok().as_ref() == Some(&wanted))
    }

    /// The loose objects of this directory.
    pub fn loose(&self) -> &LooseObjects {
        &self.loose
    }

    /// Where a pack of this directory (not an alternate) stores the object: the pack's number
    /// in [`Self::packs`] and the object's position in its index.
    pub fn locate(&self, id: &ObjectId) -> Option<(usize, usize)> {
        self.packs
            .iter()
            .enumerate()
            .find_map(|(n, pack)| pack.index().lookup(id).map(|position| (n, position)))
    }

    /// Whether the object exists anywhere: packs (here and in alternates), then loose (through
    /// the lazy cache).
    pub fn contains(&self, id: &ObjectId) -> bool {
        self.packed_contains(id) || self.loose_contains(id)
    }

    /// [`Self::contains`], and on a miss a look past what this view opened: a repack since may
    /// have moved the object into a pack it has not seen (git's `reprepare_packed_git`). For
    /// the few ids of a request, where a miss is an error: a rescan per miss would cost a
    /// directory listing each in bulk lookups.
    pub fn contains_or_rescan(&self, id: &ObjectId) -> bool {
        self.contains(id) || matches!(self.read_after_rescan(id), Ok(Some(_)))
    }

    fn packed_contains(&self, id: &ObjectId) -> bool {
        self.packs.iter().any(|p| p.contains(id))
            || self.alternates.iter().any(|a| a.packed_contains(id))
    }

    fn loose_contains(&self, id: &ObjectId) -> bool {
        self.loose.contains(id) || self.alternates.iter().any(|a| a.loose_contains(id))
    }

    /// Reads a loose object of this directory or of an alternate.
    fn read_loose(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, OdbError> {
        // The lazy cache answers "not here" without one failed open() per object.
        if self.loose.contains(id) {
            if let Some(found) = self.loose.read(id)? {
                return Ok(Some(found));
            }
        }
        for alternate in &self.alternates {
            if let Some(found) = alternate.read_loose(id)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// Reads an object, or, when it is stored whole in a pack and larger than `stream_above`
    /// bytes, opens it as a stream instead of holding it in memory. One index lookup serves
    /// both (a checkout reads every blob this way). `buffer` is an allocation to reuse for the
    /// content.
    pub fn read_or_stream(
        &self,
        id: &ObjectId,
        stream_above: u64,
        buffer: &mut Vec<u8>,
    ) -> Result<Option<ObjectContent<'_>>, OdbError> {
        if let Some(found) = self.packed_read_or_stream(id, stream_above, buffer)? {
            return Ok(Some(found));
        }
        let found = match self.read_loose(id)? {
            Some(found) => Some(found),
            None => self.read_after_rescan(id)?,
        };
        Ok(found.map(|(kind, data)| ObjectContent::Whole(kind, data)))
    }

    fn packed_read_or_stream(
        &self,
        id: &ObjectId,
        stream_above: u64,
        buffer: &mut Vec<u8>,
    ) -> Result<Option<ObjectContent<'_>>, OdbError> {
        for pack in &self.packs {
            if let Some(found) = pack.read_or_stream(id, stream_above, buffer)? {
                return Ok(Some(found));
            }
        }
        for alternate in &self.alternates {
            if let Some(found) = alternate.packed_read_or_stream(id, stream_above, buffer)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// The commit a ref value names, through annotated tags; `None` for anything else, or when
    /// an object on the way is missing or unreadable (callers walking history skip such tips).
    pub fn peel_to_commit(&self, id: ObjectId) -> Option<ObjectId> {
        self.peel_to(id, Some(ObjectKind::Commit))
    }

    /// What `id` names once annotated tags are followed to an object of the kind `wanted` (to
    /// a commit's tree for a tree, as `<rev>^{tree}`); with `None`, the first object that is
    /// no tag (`<rev>^{}`). `None` when the object reached is of another kind, or one on the
    /// way is missing or unreadable.
    pub fn peel_to(&self, mut id: ObjectId, wanted: Option<ObjectKind>) -> Option<ObjectId> {
        // A chain of tags longer than this is not one a ref would name.
        for _ in 0..16 {
            let (kind, data) = self.read(&id).ok()??;
            if Some(kind) == wanted {
                return Some(id);
            }
            match kind {
                ObjectKind::Tag => id = parse_tag(id.kind(), &data).ok()?.object,
                ObjectKind::Commit if wanted == Some(ObjectKind::Tree) => {
                    return Some(parse_commit(id.kind(), &data).ok()?.tree)
                }
                _ if wanted.is_none() => return Some(id),
                _ => return None,
            }
        }
        None
    }

    /// The parents of the commit `id`; `None` when it is missing, unreadable or no commit.
    pub fn commit_parents(&self, id: &ObjectId) -> Option<Vec<ObjectId>> {
        match self.read(id).ok()?? {
            (ObjectKind::Commit, data) => Some(parse_commit(id.kind(), &data).ok()?.parents),
            _ => None,
        }
    }

    /// What an annotated tag (or a chain of them) finally names; `None` when `id` is no tag,
    /// or an object on the way is missing or unreadable.
    pub fn peel_tags(&self, mut id: ObjectId) -> Option<ObjectId> {
        let mut peeled = None;
        for _ in 0..16 {
            match self.read(&id).ok()?? {
                (ObjectKind::Tag, data) => {
                    id = parse_tag(id.kind(), &data).ok()?.object;
                    peeled = Some(id);
                }
                _ => return peeled,
            }
        }
        peeled
    }

    /// Reads an object: from the packs here and in alternates first, then loose, as git
    /// looks (a clone made with `--shared` has its objects in the alternate's packs, and
    /// looking at its own loose objects first listed every fan-out directory for nothing).
    pub fn read(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, OdbError> {
        if let Some(found) = self.read_packed(id)? {
            return Ok(Some(found));
        }
        match self.read_loose(id)? {
            Some(found) => Ok(Some(found)),
            None => self.read_after_rescan(id),
        }
    }

    /// An object not found where this view looked: written loose after its directory was
    /// listed, or moved by a repack into a pack this view has not opened (the pack or loose
    /// file it was in removed since). The loose file is tried past the cache, and the pack
    /// directories are listed again for packs not yet open, here and in the alternates.
    fn read_after_rescan(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, OdbError> {
        if let Some(found) = self.loose.read(id)? {
            return Ok(Some(found));
        }
        for pack in self.rescanned_packs() {
            if let Some(found) = pack.read(id)? {
                return Ok(Some(found));
            }
        }
        for alternate in &self.alternates {
            if let Some(found) = alternate.read_after_rescan(id)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// The packs found by rescans so far.
    fn late_packs(&self) -> Vec<Arc<Pack>> {
        self.late.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The packs of the pack directory not open when this view was made, opened now.
    fn rescanned_packs(&self) -> Vec<Arc<Pack>> {
        let mut late = self.late.lock().unwrap_or_else(|e| e.into_inner());
        let Ok(entries) = std::fs::read_dir(self.pack_dir()) else {
            return late.clone();
        };
        let known = |path: &Path| {
            let pack = path.with_extension("pack");
            (self.packs.iter().chain(late.iter())).any(|p| p.path() == pack)
        };
        let fresh: Vec<PathBuf> = (entries.filter_map(|e| e.ok()))
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "idx"))
            .filter(|p| !known(p))
            .collect();
        for idx in fresh {
            // One that cannot be opened (half written, or gone again) is passed over.
            if let Ok(pack) = Pack::open_shared(&idx, self.hash, self.source.as_ref()) {
                late.push(pack);
            }
        }
        late.clone()
    }

    fn read_packed(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, OdbError> {
        for pack in &self.packs {
            if let Some(found) = pack.read(id)? {
                return Ok(Some(found));
            }
        }
        for alternate in &self.alternates {
            if let Some(found) = alternate.read_packed(id)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }
}

impl sluice_pack::ObjectLookup for ObjectDb {
    fn contains(&self, id: &ObjectId) -> bool {
        ObjectDb::contains(self, id)
    }

    fn read(
        &self,
        id: &ObjectId,
    ) -> Result<Option<(ObjectKind, Vec<u8>)>, sluice_pack::LookupError> {
        ObjectDb::read(self, id).map_err(sluice_pack::LookupError::new)
    }
}
