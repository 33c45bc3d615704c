//! A serving node's view of the store: the manifest read once per request (conditionally),
//! the packs it names downloaded once into the node's cache, and each generation materialised
//! as an ordinary bare repository (hard links to the cached packs, `packed-refs`, HEAD) that
//! the upload-pack and receive-pack of a repository on disk serve unchanged.
//!
//! Cache layout, under `<cache>/<name>.git/`: `packs/` (the downloaded packs, immutable),
//! `gen/<generation>-<transaction>/` (one directory per generation served, the newest few
//! kept), and `push/` (a push's private copy while it runs). Every file is written under a
//! temporary name and renamed, so the cache can be wiped at any moment and refilled.

use crate::bucket::Fetched;
use crate::held::{hold, remove_unless_held, Held};
use crate::import::upload_packs;
use crate::manifest::{Manifest, PackEntry};
use crate::scratch::Scratch;
use crate::stored::{Read, StoredRepo};
use crate::{Bucket, StoreError, Version};
use sluice_object::cancel::Cancel;
use sluice_object::ObjectId;
use sluice_odb::config::{ConfigFile, ConfigKey};
use sluice_odb::ranged::{marks_path, PackSource};
use sluice_repo::storage::{GateRefused, RefChange};
use sluice_repo::Repository;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// How many generations of one repository stay materialised: requests pinned to an older one
/// may still be running.
const GENERATIONS_KEPT: usize = 4;

/// One node's access to a store, with its cache.
#[derive(Debug)]
pub struct Node {
    bucket: Bucket,
    cache: PathBuf,
    /// The hooks every repository's pushes run (`core.hooksPath` of each generation).
    hooks: Option<PathBuf>,
    /// Per repository: the generation last pinned.
    pinned: Mutex<HashMap<String, Arc<Slot>>>,
    /// Maintain a repository after a push once it has more packs than this.
    maintain_after: Option<usize>,
    /// Whether this node's background maintenance is running.
    maintaining: Arc<AtomicBool>,
    /// The most bytes of packs the cache keeps (as far as the newest generations allow).
    cache_limit: Option<u64>,
    /// Packs at least this large are read in ranges on demand, not downloaded whole.
    ranged_above: Option<u64>,
    /// Where the bytes of ranged packs come from: the store.
    source: Arc<dyn PackSource>,
    /// What stops this node's maintenance (a signal, a server stopping): the work ends early
    /// and gives the repository's lease back, rather than leaving it to expire.
    cancel: Cancel,
    /// The maintenance running in the background after a push, if any.
    background: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// The generation of one repository last pinned; its lock also serialises materialising it.
type Slot = Mutex<Option<Arc<Pinned>>>;

/// One generation of a repository, materialised on this node's disk.
#[derive(Debug)]
pub struct Pinned {
    /// The repository in the store.
    pub repo: StoredRepo,
    /// Its manifest at this generation.
    pub manifest: Manifest,
    version: Version,
    /// The bare repository that serves it.
    pub dir: PathBuf,
    /// The manifest's former tips, listed once for every request this generation serves.
    pub earlier_tips: Arc<[ObjectId]>,
    /// Keeps the directory from the cache's trimming in every process, while a request holds
    /// this.
    _held: Held,
}

/// Whether what `pinned` names is all still on disk: its generation's directory, and each of
/// its packs both there and in the repository's cache `folder` a push's private copy links
/// from (the cache may be wiped at any moment, even while a request fills it again).
fn whole(pinned: &Pinned, folder: &Path) -> bool {
    generation_whole(&pinned.dir, &pinned.manifest)
        && (pinned.manifest.packs.iter())
            .all(|pack| pack.files().all(|e| cached_file(folder, pack, e).is_some()))
}

/// Where the cache in the repository folder `folder` holds `pack`'s file of `extension`: in
/// `packs/`, or for a `.pack` read in ranges, in `ranged/` (with its marks). `None`: nowhere.
fn cached_file(folder: &Path, pack: &PackEntry, extension: &str) -> Option<PathBuf> {
    let file = folder
        .join("packs")
        .join(format!("{}.{extension}", pack.name));
    if file.exists() {
        return Some(file);
    }
    let ranged = crate::ranged::ranged_pack(folder, pack);
    let marks = sluice_odb::ranged::marks_path(&ranged);
    (extension == "pack" && ranged.exists() && marks.exists()).then_some(ranged)
}

/// Whether the generation's directory `dir` holds its `HEAD` and every pack file of `manifest`.
fn generation_whole(dir: &Path, manifest: &Manifest) -> bool {
    dir.join("HEAD").exists() && has_packs(&sluice_odb::pack_dir(&dir.join("objects")), manifest)
}

/// Whether `dir` holds every file of every pack `manifest` names.
fn has_packs(dir: &Path, manifest: &Manifest) -> bool {
    (manifest.packs.iter()).all(|pack| {
        pack.files()
            .all(|e| dir.join(format!("{}.{e}", pack.name)).exists())
    })
}

/// A push's private copy of a generation, removed when dropped.
#[derive(Debug)]
pub struct Workspace {
    scratch: Scratch,
}

impl Workspace {
    /// The bare repository to receive the push into.
    pub fn dir(&self) -> &Path {
        self.scratch.path()
    }
}

impl Node {
    /// A node on `bucket` with its cache in `cache`.
    pub fn new(bucket: Bucket, cache: PathBuf) -> Node {
        let source = crate::ranged::source(&bucket);
        Node {
            bucket,
            cache,
            hooks: None,
            pinned: Mutex::default(),
            maintain_after: None,
            maintaining: Arc::default(),
            cache_limit: None,
            ranged_above: None,
            source,
            cancel: Cancel::default(),
            background: Mutex::default(),
        }
    }

    /// Stops this node's maintenance when `cancel` is set.
    pub fn with_cancel(mut self, cancel: Cancel) -> Node {
        self.cancel = cancel;
        self
    }

    /// What stops this node's maintenance.
    pub(crate) fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    /// Stops the maintenance running in the background, if any, and waits for it to end (it
    /// gives its lease back): a server stopping calls this once its requests are done.
    pub fn stop_background(&self) {
        self.cancel.cancel();
        let running = self
            .background
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(running) = running {
            let _ = running.join();
        }
    }

    /// Keeps the cache's packs under `bytes`, evicting the oldest that no repository's newest
    /// generation names (they are downloaded again if asked for).
    pub fn with_cache_limit(mut self, bytes: u64) -> Node {
        self.cache_limit = Some(bytes);
        self
    }

    /// Maintains a repository in the background after a push that leaves it with more than
    /// `packs` packs (`sluice store maintain` on this node's cache).
    pub fn with_maintenance_after(mut self, packs: usize) -> Node {
        self.maintain_after = Some(packs);
        self
    }

    /// Reads packs of at least `above` bytes in ranges, as requests need their bytes, rather
    /// than downloading them whole (see `sluice_odb::ranged`).
    pub fn with_ranged_reads(mut self, above: u64) -> Node {
        self.ranged_above = Some(above);
        self
    }

    /// Whether this node reads large packs in ranges.
    pub fn reads_ranges(&self) -> bool {
        self.ranged_above.is_some()
    }

    /// Opens a repository of this node's cache (a generation, a push's copy), its ranged
    /// packs read from the store.
    pub(crate) fn open_dir(&self, dir: &Path) -> Result<Repository, StoreError> {
        Ok(Repository::open_served_from(dir, Arc::clone(&self.source))?)
    }

    /// What ranged packs read their bytes from.
    pub(crate) fn source(&self) -> &Arc<dyn PackSource> {
        &self.source
    }

    /// Runs the hooks in `dir` (pre-receive, update, post-receive, …) for every push, as a
    /// repository's own hooks run on disk.
    pub fn with_hooks(mut self, dir: PathBuf) -> Node {
        self.hooks = Some(dir);
        self
    }

    /// The bucket.
    pub fn bucket(&self) -> &Bucket {
        &self.bucket
    }

    /// Pins the current generation of `name` for one request: `None` when there is no such
    /// repository. Costs the store one conditional GET when this node is up to date.
    pub fn pin(&self, name: &str) -> Result<Option<Arc<Pinned>>, StoreError> {
        let repo = StoredRepo::new(&self.bucket, name)?;
        let slot = {
            let mut all = self.pinned.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(all.entry(repo.folder().to_owned()).or_default())
        };
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        let folder = self.folder(&repo);
        let known = slot.as_ref().filter(|p| whole(p, &folder));
        let previous = known.and_then(|p| p.manifest.snapshot.as_ref());
        let read = match repo.read_if_changed(known.map(|p| &p.version), previous)? {
            Fetched::Unchanged => return Ok(known.cloned()),
            Fetched::Missing => {
                *slot = None;
                return Ok(None);
            }
            Fetched::Changed(read) => read,
        };
        let pinned = Arc::new(self.materialise(repo, read)?);
        *slot = Some(Arc::clone(&pinned));
        Ok(Some(pinned))
    }

    /// The repository's folder in the cache.
    fn folder(&self, repo: &StoredRepo) -> PathBuf {
        self.cache.join(repo.folder())
    }

    /// Downloads the packs `read` names that the cache lacks, and makes (or finds) the
    /// generation's directory.
    fn materialise(&self, repo: StoredRepo, read: Read) -> Result<Pinned, StoreError> {
        let folder = self.folder(&repo);
        let packs = folder.join("packs");
        std::fs::create_dir_all(&packs).map_err(StoreError::file(&packs))?;
        for pack in &read.manifest.packs {
            let downloaded = packs.join(format!("{}.pack", pack.name)).exists();
            let ranged = self.ranged_above.is_some_and(|above| pack.size >= above);
            for extension in pack.files() {
                let file = packs.join(format!("{}.{extension}", pack.name));
                if extension == "pack" && ranged && !downloaded {
                    crate::ranged::place(&folder, &repo, pack)?;
                } else if !file.exists() {
                    let key = repo.pack_key(&pack.name, extension);
                    self.bucket.download(&key, &file)?;
                }
            }
        }
        crate::midx::download(&repo, &read.manifest, &packs);
        let generations = folder.join("gen");
        let manifest = read.manifest;
        let dir = generations.join(format!("{}-{}", manifest.generation, manifest.transaction));
        // Another process sharing the cache may remove the directory between its making and
        // its holding (it was not held yet): then it is made again.
        for _ in 0..3 {
            // Left incomplete by a cache wiped while it was made: made again.
            if dir.exists() && !generation_whole(&dir, &manifest) {
                let _ = std::fs::remove_dir_all(&dir);
            }
            let made = !dir.join("HEAD").exists();
            if made {
                self.make_generation(&generations, &dir, &manifest, &folder)?;
            }
            let whole = || generation_whole(&dir, &manifest);
            let Some(held) = hold(&dir, whole).map_err(StoreError::file(&dir))? else {
                continue;
            };
            if made {
                forget_old_generations(&generations);
                if let Some(limit) = self.cache_limit {
                    crate::cache::trim(&self.cache, limit);
                }
            }
            let earlier_tips = manifest.former.iter().map(|(id, _)| *id).collect();
            return Ok(Pinned {
                repo,
                manifest,
                version: read.version,
                dir,
                earlier_tips,
                _held: held,
            });
        }
        let removed = "removed by another process each of three times it was made";
        Err(StoreError::file(&dir)(std::io::Error::other(removed)))
    }

    /// Writes the generation of `manifest` as `dir`, linking the packs cached in `folder`.
    fn make_generation(
        &self,
        generations: &Path,
        dir: &Path,
        manifest: &Manifest,
        folder: &Path,
    ) -> Result<(), StoreError> {
        let scratch = Scratch::new(generations, "gen").map_err(StoreError::file(generations))?;
        let node = (self.hooks.as_deref(), &self.source);
        write_generation(scratch.path(), manifest, folder, node)?;
        match scratch.keep_as(dir) {
            Ok(()) => Ok(()),
            // Another request made it first.
            Err(_) if dir.join("HEAD").exists() => Ok(()),
            Err(e) => Err(StoreError::file(dir)(e)),
        }
    }

    /// A private copy of `pinned` to receive a push into.
    pub fn workspace(&self, pinned: &Pinned) -> Result<Workspace, StoreError> {
        let pushes = self.folder(&pinned.repo).join("push");
        let scratch = Scratch::new(&pushes, "push").map_err(StoreError::file(&pushes))?;
        let folder = self.folder(&pinned.repo);
        write_generation(
            scratch.path(),
            &pinned.manifest,
            &folder,
            (self.hooks.as_deref(), &self.source),
        )?;
        Ok(Workspace { scratch })
    }

    /// Lands a push received into `workspace`: uploads the packs it brought (its loose
    /// objects packed first), then commits the manifest with the refs moved, conditionally on
    /// each ref still being what the client saw. Only then may the client be told `ok`.
    pub fn commit_push(
        &self,
        pinned: &Pinned,
        workspace: &Workspace,
        changes: &[RefChange],
    ) -> Result<Manifest, GateRefused> {
        let received = self.open_dir(workspace.dir())?;
        let no_progress = sluice_object::progress::Discard;
        // Not the node's cancel: a push the server waits for lands whole.
        let cancel = Cancel::default();
        sluice_generate::pack_loose_objects(&received, usize::MAX, &no_progress, &cancel)
            .map_err(StoreError::from)?;
        let pack_dir = workspace.dir().join("objects/pack");
        let new = upload_packs(&pinned.repo, &pack_dir, |n| !pinned.manifest.has_pack(n))?;
        // The cache (this copy with it) may be wiped at any moment: a pack gone before it was
        // listed is not uploaded, and the refs must not name what the store never got.
        let next = new.iter().chain(&pinned.manifest.packs);
        let tips: Vec<ObjectId> = changes.iter().filter_map(|c| c.new).collect();
        let source = Some(&self.source);
        crate::coverage::tips_held(&pack_dir, next, &tips, received.hash(), source)?;
        self.keep_packs(&pinned.repo, &pack_dir, &new);
        let committed = pinned.repo.commit(|current| {
            if let Some(refused) = moved(current, changes) {
                return Err(refused);
            }
            let mut next = current.clone();
            for change in changes {
                match change.new {
                    Some(id) => next.refs.insert(change.name.clone(), id),
                    None => next.refs.remove(&change.name),
                };
            }
            let fresh = new.iter().filter(|p| !next.has_pack(&p.name));
            next.packs.extend(fresh.cloned().collect::<Vec<_>>());
            Ok(next)
        })?;
        if let Ok(manifest) = &committed {
            self.maintain_if_due(&pinned.repo, manifest);
        }
        committed
    }

    /// Keeps in the cache the packs this node uploaded from `dir`: the next generation
    /// needs no download. (A link that fails only means a download later.)
    pub(crate) fn keep_packs(&self, repo: &StoredRepo, dir: &Path, packs: &[PackEntry]) {
        let cached = self.folder(repo).join("packs");
        for pack in packs {
            for extension in pack.files() {
                let name = format!("{}.{extension}", pack.name);
                let _ = std::fs::hard_link(dir.join(&name), cached.join(&name));
            }
        }
    }

    /// After a push, in the background, on this node's cache (as a push on disk runs `gc
    /// --auto`): maintenance once the repository has more packs than
    /// [`Node::with_maintenance_after`] allows, else, where it has bundles, the increment the
    /// push made. Another node holding the lease, or any failure, only means it waits for the
    /// next push; a failure other than the lease is logged (the server's log), as nobody
    /// waits for this work to say it.
    fn maintain_if_due(&self, repo: &StoredRepo, manifest: &Manifest) {
        let Some(limit) = self.maintain_after else {
            return;
        };
        let compact = manifest.packs.len() > limit;
        if !compact && manifest.bundles.is_empty() {
            return;
        }
        let running = Arc::clone(&self.maintaining);
        if running.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut node =
            Node::new(self.bucket.clone(), self.cache.clone()).with_cancel(self.cancel.clone());
        // A bundle increment reads what the pushes brought, in ranges where this node reads so;
        // a compaction reads every object (and opens packs by their files), so its packs are
        // downloaded whole.
        node.ranged_above = self.ranged_above.filter(|_| !compact);
        let repo = repo.clone();
        let mut background = self.background.lock().unwrap_or_else(|e| e.into_inner());
        *background = Some(std::thread::spawn(move || {
            let progress = sluice_object::progress::Discard;
            let done = match compact {
                true => {
                    let geometric = crate::maintain::Compaction::Geometric;
                    crate::maintain::maintain_on(&node, &repo, geometric, &progress).map(|_| ())
                }
                false => crate::increment::bundle_increment(&node, &repo, &progress).map(|_| ()),
            };
            match done {
                // Another node's turn, or a server stopping: the next push tries again.
                Ok(()) | Err(StoreError::Leased(..)) => {}
                Err(e) if sluice_object::cancel::Cancelled::is_cause_of(&e) => {}
                Err(e) => tracing::warn!(
                    target: "sluice::store",
                    repository = repo.folder(),
                    error = %e,
                    "maintenance after a push failed"
                ),
            }
            running.store(false, Ordering::SeqCst);
        }));
    }
}

/// The first change whose ref is not what its client saw.
fn moved(current: &Manifest, changes: &[RefChange]) -> Option<GateRefused> {
    changes.iter().find_map(|change| {
        let now = current.refs.get(&change.name).copied();
        (now != change.old).then(|| {
            let null = sluice_object::HashKind::Sha1.null_id();
            GateRefused::Moved {
                name: change.name.clone(),
                current: now.unwrap_or(null),
                expected: change.old.unwrap_or(null),
            }
        })
    })
}

/// Writes a bare repository for `manifest` at `dir`: HEAD, a configuration fit for serving
/// from the store (with the node's hooks), hard links to the packs cached in the repository
/// folder `folder` (a ranged pack's marks with it, its bytes from `source`), `packed-refs`.
fn write_generation(
    dir: &Path,
    manifest: &Manifest,
    folder: &Path,
    (hooks, source): (Option<&Path>, &Arc<dyn PackSource>),
) -> Result<(), StoreError> {
    crate::local::make(dir, manifest)?;
    let mut config = ConfigFile::of_repository(dir)?;
    // A push keeps its pack (never loose objects), and no maintenance runs on a copy: the
    // store's maintenance is its own.
    for (section, name, value) in [
        ("receive", "unpackLimit", "1"),
        ("receive", "autogc", "false"),
        ("gc", "auto", "0"),
    ] {
        config.add(&ConfigKey::new(section, None, name), value);
    }
    if let Some(hooks) = hooks {
        let hooks = hooks.to_string_lossy();
        config.add(&ConfigKey::new("core", None, "hooksPath"), &hooks);
    }
    config.write()?;
    let pack_dir = dir.join("objects/pack");
    let packs = folder.join("packs");
    for pack in &manifest.packs {
        for extension in pack.files() {
            let name = format!("{}.{extension}", pack.name);
            let to = pack_dir.join(&name);
            let from = cached_file(folder, pack, extension).unwrap_or(packs.join(&name));
            link_or_copy(&from, &to).map_err(StoreError::file(&to))?;
            if !from.starts_with(&packs) {
                let (from, to) = (marks_path(&from), marks_path(&to));
                link_or_copy(&from, &to).map_err(StoreError::file(&to))?;
            }
        }
    }
    crate::midx::place(manifest, &packs, &pack_dir);
    crate::local::write_refs(dir, manifest, Some(source))
}

/// Makes `to` a hard link to `from`, or a copy where the file system cannot link.
pub(crate) fn link_or_copy(from: &Path, to: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(from, to) {
        Ok(()) => Ok(()),
        Err(_) => std::fs::copy(from, to).map(drop),
    }
}

/// Removes all but the newest [`GENERATIONS_KEPT`] generation directories, and those a
/// request (of any process) still holds.
fn forget_old_generations(generations: &Path) {
    let Ok(listing) = std::fs::read_dir(generations) else {
        return;
    };
    let mut numbered: Vec<(u64, PathBuf)> = listing
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let number = name.split('-').next()?.parse().ok()?;
            Some((number, e.path()))
        })
        .collect();
    numbered.sort();
    let old = numbered.len().saturating_sub(GENERATIONS_KEPT);
    for (_, dir) in numbered.into_iter().take(old) {
        remove_unless_held(&dir);
    }
}
