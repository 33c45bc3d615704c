//! Object enumeration for pack generation: every object reachable from the wanted tips and not
//! from the ones the other side has, as `git rev-list --objects <wants> --not <haves>` lists
//! them, with the objects the other side is known to have (the trees of the boundary commits)
//! kept apart so that thin packs may delta against them.
//!
//! The commit walk follows git's limited walk: commits come out of a queue newest first;
//! uninteresting ones pass their flag to their parents (and on through parents already seen),
//! and the walk stops once everything queued is uninteresting for a few more steps, which
//! tolerates small clock skew the way git does. Commits that were emitted and only later found
//! uninteresting are dropped at the end.

use sluice_object::cancel::{Cancel, Cancelled};
use sluice_object::parse::{parse_commit, parse_tag, tree_entries, ParseError};
use sluice_object::progress::Progress;
use sluice_object::tree_diff::for_each_changed;
use sluice_object::{IdMap, IdSet, ObjectId, ObjectKind};
use sluice_odb::{ObjectDb, OdbError};

mod filter;
mod limit;
mod preferred;
mod tree_cache;
mod trees;
pub use filter::ObjectFilter;
use tree_cache::{below, changed_blob, old_subtree, TreeCache};
use trees::TreeJob;
pub(crate) use trees::TreeListing;

/// Why objects could not be enumerated.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    /// The object database failed.
    #[error(transparent)]
    Odb(#[from] OdbError),
    /// A reachable object is missing.
    #[error("missing {kind} {id}")]
    Missing {
        /// What was expected.
        kind: &'static str,
        /// The object.
        id: ObjectId,
    },
    /// An object is not what the object pointing at it says.
    #[error("object {id} is a {found}, expected a {expected}")]
    WrongKind {
        /// The object.
        id: ObjectId,
        /// Its actual kind.
        found: ObjectKind,
        /// The kind it should have.
        expected: ObjectKind,
    },
    /// An object is malformed.
    #[error("object {id}: {source}")]
    Malformed {
        /// The object.
        id: ObjectId,
        /// What is wrong.
        source: ParseError,
    },
    /// The caller asked the walk to stop.
    #[error("interrupted")]
    Cancelled(#[from] Cancelled),
}

/// What to walk.
#[derive(Debug)]
pub struct WalkRequest<'a> {
    /// Tips whose objects are wanted: commits, tags, trees or blobs.
    pub wants: &'a [ObjectId],
    /// Tips the other side has: everything reachable from them is left out.
    pub haves: &'a [ObjectId],
    /// Commits whose parents are not walked (shallow boundaries).
    pub shallow: &'a IdSet,
    /// Objects left out by a partial clone's filter.
    pub filter: ObjectFilter,
    /// Where what sets of tips reach is remembered between walks (a server's, shared by its
    /// requests), when counting with a bitmap.
    pub reach_memo: Option<&'a crate::bitmap::ReachMemo>,
    /// The cores a walk without a bitmap may read trees on.
    pub cores: WalkCores,
    /// What a reachable tree or blob the repository lacks does to the walk.
    pub missing: Missing,
    /// Stops the walk between two objects read.
    pub cancel: Cancel,
}

/// What a walk does with a reachable tree or blob the repository lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Missing {
    /// A missing tree fails the walk; a missing blob (never read by the walk) is listed, for
    /// whoever reads it next to find.
    #[default]
    Fail,
    /// Trees and blobs missing go to [`Walked::missing`] rather than into the objects, a
    /// missing tree read as empty: a partial clone's objects, missing by design, for the
    /// caller to judge (git's `--missing=allow-*`, `--exclude-promisor-objects`). Every
    /// object listed is then looked up once more, and no bitmap is used.
    SetAside,
}

impl<'a> WalkRequest<'a> {
    /// Everything `wants` reach that `haves` do not, as a repack or a push lists it: no
    /// shallow boundary, no filter, no memo between walks, every core; stopped by `cancel`.
    pub fn reachable(wants: &'a [ObjectId], haves: &'a [ObjectId], cancel: Cancel) -> Self {
        static NOT_SHALLOW: std::sync::OnceLock<IdSet> = std::sync::OnceLock::new();
        WalkRequest {
            wants,
            haves,
            shallow: NOT_SHALLOW.get_or_init(IdSet::default),
            filter: ObjectFilter::None,
            reach_memo: None,
            cores: WalkCores::All,
            missing: Missing::Fail,
            cancel,
        }
    }
}

/// The cores a walk without a bitmap may read trees on. Listing on every core takes a tenth
/// more CPU in all (git/git's whole history: 3.2 s against 3.5 s for `pack-objects --revs`)
/// for a third less wall time: what one waiting user wants, not a server whose cores serve
/// other requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkCores {
    /// Every core: a push, a repack, one job someone waits on.
    All,
    /// The calling thread: a server's request.
    One,
}

/// One object to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkedObject {
    /// The object.
    pub id: ObjectId,
    /// Its kind.
    pub kind: ObjectKind,
    /// git's hash of the path it was found at, which groups similar files for delta search.
    pub name_hash: u32,
    /// The object at the same path in the parent commit's tree when that differs: the old
    /// version of a file, the best first guess for a delta base.
    pub previous: Option<ObjectId>,
}

/// The result of a walk.
#[derive(Debug, Default)]
pub struct Walked {
    /// Objects to send, commits first (newest first), then tags, then trees and blobs in the
    /// order a depth-first walk of each commit's tree meets them.
    pub objects: Vec<WalkedObject>,
    /// Commits, trees and blobs the other side has for certain: the boundary commits and their
    /// trees, or with a bitmap everything reachable from the haves. Thin packs may send deltas
    /// against these.
    pub known_to_other_side: KnownObjects,
    /// The trees and blobs of `known_to_other_side` with the hash of their path: the other
    /// side's versions of the files sent, the delta bases git calls "preferred".
    pub known_by_path: Vec<WalkedObject>,
    /// Where the objects are stored, when the walk knows it (a bitmap's answer): the pack and
    /// the index position of each of the first objects, in the order of `objects`; those after
    /// them are stored elsewhere.
    pub located: Option<Located>,
    /// With [`Missing::SetAside`]: the reachable trees and blobs the repository lacks, left
    /// out of `objects`.
    pub missing: Vec<WalkedObject>,
    /// How many distinct objects of the other side's git's pack-objects would count beside
    /// `objects` as preferred delta bases (its "Counting objects" includes them).
    pub preferred_bases: u32,
}

/// Where a walk's objects are stored.
#[derive(Debug)]
pub struct Located {
    /// For each of the first of `objects`: which of the odb's packs holds it, and its
    /// position in that pack's index.
    pub at: Vec<(u32, u32)>,
}

/// Objects the other side has: a set of ids, and with a bitmap the pack objects reachable from
/// the haves (far too many to list one by one for a small fetch).
#[derive(Debug, Default)]
pub struct KnownObjects {
    ids: IdSet,
    in_pack: Option<KnownInPack>,
}

/// Stored objects by bit, as a bitmap answer gives them.
#[derive(Debug)]
pub(crate) struct KnownInPack {
    /// How the bits number the objects: a pack's order or a multi-pack-index's.
    pub(crate) numbering: crate::bitmap::KnownNumbering,
    pub(crate) bits: crate::bitmap::Bitset,
}

impl KnownObjects {
    /// Whether the other side has nothing (a clone).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
            && self
                .in_pack
                .as_ref()
                .is_none_or(|known| known.bits.count() == 0)
    }

    /// Whether the other side has `id`; `odb` is the one the walk ran on.
    pub fn contains(&self, odb: &ObjectDb, id: &ObjectId) -> bool {
        self.ids.contains(id)
            || self.in_pack.as_ref().is_some_and(|known| {
                (known.numbering.bit_of(odb, id)).is_some_and(|bit| known.bits.get(bit))
            })
    }

    pub(crate) fn insert(&mut self, id: ObjectId) {
        self.ids.insert(id);
    }

    /// Whether this is everything the haves reach (a bitmap's answer), rather than the
    /// edge commits' trees.
    pub fn is_everything_reachable(&self) -> bool {
        self.in_pack.is_some()
    }

    pub(crate) fn with_pack(in_pack: KnownInPack) -> Self {
        KnownObjects {
            ids: IdSet::default(),
            in_pack: Some(in_pack),
        }
    }
}

/// The trees and blobs of `commits`' trees with their path hashes: the other side's versions
/// of files, for the delta search.
pub(crate) fn known_paths(
    odb: &ObjectDb,
    commits: &[ObjectId],
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Vec<WalkedObject>, WalkError> {
    let mut walker = Walker::new(odb, progress, cancel, Missing::Fail);
    let mut ids = IdSet::default();
    let mut named = Vec::new();
    let mut path = Vec::new();
    for id in commits {
        let Some((ObjectKind::Commit, data)) = odb.read(id)? else {
            continue;
        };
        let commit = parse_commit(odb.hash(), &data)
            .map_err(|source| WalkError::Malformed { id: *id, source })?;
        let mut known = Known {
            ids: &mut ids,
            named: &mut named,
        };
        walker.mark_tree_known(&commit.tree, &mut path, &mut known, 0)?;
    }
    Ok(named)
}

/// Where [`Walker::mark_tree_known`] records what the other side has.
struct Known<'a> {
    ids: &'a mut IdSet,
    named: &'a mut Vec<WalkedObject>,
}

impl Known<'_> {
    fn add(&mut self, id: ObjectId, kind: ObjectKind, path: &[u8]) {
        self.ids.insert(id);
        self.named.push(WalkedObject {
            id,
            kind,
            name_hash: name_hash(path),
            previous: None,
        });
    }
}

const UNINTERESTING: u8 = 1;
const QUEUED: u8 = 2;
const POPPED: u8 = 4;
/// Queue steps taken after everything queued became uninteresting (git's `SLOP`).
const SLOP: u32 = 5;

/// A commit's parsed fields.
struct CommitNode {
    tree: ObjectId,
    parents: Vec<ObjectId>,
    time: i64,
    flags: u8,
}

/// git's `pack_name_hash`: a sortable number dominated by the path's last characters, so that
/// files with the same ending sort together.
pub fn name_hash(path: &[u8]) -> u32 {
    path.iter()
        .filter(|b| !b.is_ascii_whitespace())
        .fold(0u32, |hash, &c| {
            (hash >> 2).wrapping_add(u32::from(c) << 24)
        })
}

struct Walker<'a> {
    odb: &'a ObjectDb,
    cancel: &'a Cancel,
    commits: IdMap<CommitNode>,
    /// Trees and blobs already listed or known to the other side.
    seen: IdSet,
    /// Trees lately read, which the next commits compare with.
    trees: TreeCache,
    /// The commit-graph, when the repository has a usable one.
    graph: Option<crate::commit_graph::GraphReader>,
    progress: &'a dyn Progress,
}

/// Lists the objects `request` asks for.
pub fn walk_objects(
    odb: &ObjectDb,
    request: &WalkRequest<'_>,
    progress: &dyn Progress,
) -> Result<Walked, WalkError> {
    let plain = request.shallow.is_empty()
        && request.filter == ObjectFilter::None
        && request.missing == Missing::Fail;
    if plain {
        if let Some(walked) = crate::bitmap::walk_with_bitmap(odb, request, progress)? {
            return Ok(walked);
        }
    }
    traverse_objects(odb, request, progress)
}

/// [`walk_objects`] without a bitmap: objects in the order history's traversal meets them,
/// which a full delta search wants (a bitmap's pack order made git/git's pack 1.5% larger);
/// git's pack-objects does not count with a bitmap when it writes one either.
pub fn traverse_objects(
    odb: &ObjectDb,
    request: &WalkRequest<'_>,
    progress: &dyn Progress,
) -> Result<Walked, WalkError> {
    traverse_objects_listing(odb, request, progress, TreeListing::Auto)
}

/// The commits `haves` name, each through a chain of tags (up to 64); what names no commit is
/// passed over.
fn have_commits(odb: &ObjectDb, haves: &[ObjectId]) -> Result<Vec<ObjectId>, WalkError> {
    let mut commits = Vec::new();
    for have in haves {
        let mut id = *have;
        for _ in 0..64 {
            match odb.read(&id)? {
                Some((ObjectKind::Tag, data)) => match parse_tag(odb.hash(), &data) {
                    Ok(tag) => id = tag.object,
                    Err(_) => break,
                },
                Some((ObjectKind::Commit, _)) => {
                    commits.push(id);
                    break;
                }
                _ => break,
            }
        }
    }
    Ok(commits)
}

/// [`traverse_objects`], its trees listed as `listing` says.
pub(crate) fn traverse_objects_listing(
    odb: &ObjectDb,
    request: &WalkRequest<'_>,
    progress: &dyn Progress,
    listing: TreeListing,
) -> Result<Walked, WalkError> {
    let mut walker = Walker::new(odb, progress, &request.cancel, request.missing);
    let mut out = Walked::default();
    let Wants {
        tags,
        commits: want_commits,
        others: pending_objects,
    } = walker.peel_wants(request.wants)?;
    let have_commits = have_commits(odb, request.haves)?;
    progress.phase("Enumerating objects", None);
    let commits = walker.limit(&want_commits, &have_commits, request.shallow)?;
    // The edge: uninteresting parents of the commits to send. The other side has their trees,
    // and those are what the sent trees are compared with. (Marking the trees of every
    // uninteresting commit the walk popped costs far more: 16,000 of them against 934 sent
    // commits for a month of git/git.)
    let mut boundary: Vec<ObjectId> = Vec::new();
    for id in &commits {
        for parent in &walker.commits[id].parents {
            if walker
                .commits
                .get(parent)
                .is_some_and(|p| p.flags & UNINTERESTING != 0)
            {
                boundary.push(*parent);
            }
        }
    }
    boundary.sort_unstable();
    boundary.dedup();
    let mut path = Vec::new();
    for id in &boundary {
        let tree = walker.commits[id].tree;
        out.known_to_other_side.insert(*id);
        let mut known = Known {
            ids: &mut out.known_to_other_side.ids,
            named: &mut out.known_by_path,
        };
        walker.mark_tree_known(&tree, &mut path, &mut known, 0)?;
    }
    // Each commit was counted as the walk met it (`limit`), as git counts it.
    for id in &commits {
        out.objects.push(WalkedObject {
            id: *id,
            kind: ObjectKind::Commit,
            name_hash: 0,
            previous: None,
        });
    }
    out.objects.extend(tags.iter().copied());
    progress.add(tags.len() as u64);
    // Oldest first, so that a parent's tree is listed before its child's is compared with it:
    // an entry the child shares with a listed (or uninteresting) parent needs no listing.
    let mut listed = IdSet::default();
    let jobs: Vec<TreeJob> = (commits.iter().rev())
        .map(|id| {
            let node = &walker.commits[id];
            let old = match node.parents.first() {
                Some(parent) if !request.shallow.contains(id) => walker
                    .commits
                    .get(parent)
                    .filter(|p| p.flags & UNINTERESTING != 0 || listed.contains(parent))
                    .map(|p| p.tree),
                _ => None,
            };
            listed.insert(*id);
            TreeJob {
                tree: node.tree,
                old,
            }
        })
        .collect();
    let listing = match (listing, request.cores) {
        (TreeListing::Auto, WalkCores::One) => TreeListing::OneThread,
        (listing, _) => listing,
    };
    match trees::parallelism(listing, request.filter, jobs.len()) {
        Some((threads, run)) => {
            let (seen, out) = (&mut walker.seen, &mut out.objects);
            let cancel = &request.cancel;
            let reading = (odb, request.missing);
            trees::list_in_parallel(
                reading,
                &jobs,
                (threads, run),
                (seen, out),
                progress,
                cancel,
            )?;
        }
        None => {
            for job in &jobs {
                let (filter, out) = (request.filter, &mut out.objects);
                walker.list_tree(&job.tree, job.old, &mut path, 0, filter, out)?;
            }
        }
    }
    for (id, kind) in pending_objects {
        if kind == ObjectKind::Tree {
            walker.list_tree(&id, None, &mut path, 0, request.filter, &mut out.objects)?;
        } else if walker.seen.insert(id) {
            out.objects.push(WalkedObject {
                id,
                kind,
                name_hash: 0,
                previous: None,
            });
            progress.add(1);
        }
    }
    if let ObjectFilter::ObjectType(kind) = request.filter {
        // As git: the wanted objects themselves always go; of the rest, one type. A delta base
        // named for what is left out is no base.
        let mut provided = IdSet::default();
        for want in request.wants {
            // A wanted tag's target (through a chain of tags) is wanted too.
            let mut id = *want;
            while provided.insert(id) {
                match walker.read(&id, "object")? {
                    (ObjectKind::Tag, data) => {
                        let tag = parse_tag(odb.hash(), &data)
                            .map_err(|source| WalkError::Malformed { id, source })?;
                        id = tag.object;
                    }
                    _ => break,
                }
            }
        }
        out.objects
            .retain(|o| o.kind == kind || provided.contains(&o.id));
        out.objects.iter_mut().for_each(|o| o.previous = None);
    }
    if request.missing == Missing::SetAside {
        let (present, missing) = std::mem::take(&mut out.objects)
            .into_iter()
            .partition(|o| o.kind == ObjectKind::Commit || odb.contains(&o.id));
        (out.objects, out.missing) = (present, missing);
    }
    let edges: Vec<ObjectId> = boundary.iter().map(|id| walker.commits[id].tree).collect();
    preferred::count_into(odb, request, (&mut out, &edges), progress)?;
    progress.finish();
    Ok(out)
}

/// The wants, tags peeled: the tag objects (each once), the commits, and the trees and blobs
/// named directly.
struct Wants {
    tags: Vec<WalkedObject>,
    commits: Vec<ObjectId>,
    others: Vec<(ObjectId, ObjectKind)>,
}

impl<'a> Walker<'a> {
    fn new(
        odb: &'a ObjectDb,
        progress: &'a dyn Progress,
        cancel: &'a Cancel,
        missing: Missing,
    ) -> Self {
        Walker {
            odb,
            cancel,
            commits: IdMap::default(),
            seen: IdSet::default(),
            trees: TreeCache::new(TREE_CACHE_ENTRIES, missing),
            graph: crate::commit_graph::GraphReader::open(odb.dir(), odb.hash()),
            progress,
        }
    }

    fn read(&self, id: &ObjectId, kind: &'static str) -> Result<(ObjectKind, Vec<u8>), WalkError> {
        self.cancel.check()?;
        self.odb
            .read(id)?
            .ok_or(WalkError::Missing { kind, id: *id })
    }

    /// Peels each want's tags, listing each tag object once.
    fn peel_wants(&self, wants: &[ObjectId]) -> Result<Wants, WalkError> {
        let mut peeled = Wants {
            tags: Vec::new(),
            commits: Vec::new(),
            others: Vec::new(),
        };
        let mut tag_seen = IdSet::default();
        for want in wants {
            let mut id = *want;
            loop {
                let (kind, data) = self.read(&id, "object")?;
                match kind {
                    ObjectKind::Tag => {
                        if tag_seen.insert(id) {
                            let (name_hash, previous) = (0, None);
                            peeled.tags.push(WalkedObject {
                                id,
                                kind,
                                name_hash,
                                previous,
                            });
                        }
                        let tag = parse_tag(self.odb.hash(), &data)
                            .map_err(|source| WalkError::Malformed { id, source })?;
                        id = tag.object;
                    }
                    ObjectKind::Commit => break peeled.commits.push(id),
                    kind => break peeled.others.push((id, kind)),
                }
            }
        }
        Ok(peeled)
    }

    fn load_commit(&mut self, id: &ObjectId) -> Result<&mut CommitNode, WalkError> {
        self.cancel.check()?;
        // The commit-graph answers without inflating the commit.
        let known = (!self.commits.contains_key(id))
            .then(|| self.graph.as_ref().and_then(|g| g.commit(id)))
            .flatten();
        if let Some(c) = known {
            let (tree, parents, time, flags) = (c.tree, c.parents, c.time, 0);
            self.commits.insert(
                *id,
                CommitNode {
                    tree,
                    parents,
                    time,
                    flags,
                },
            );
        }
        if !self.commits.contains_key(id) {
            let (kind, data) = self.read(id, "commit")?;
            if kind != ObjectKind::Commit {
                return Err(WalkError::WrongKind {
                    id: *id,
                    found: kind,
                    expected: ObjectKind::Commit,
                });
            }
            let commit = parse_commit(self.odb.hash(), &data)
                .map_err(|source| WalkError::Malformed { id: *id, source })?;
            self.commits.insert(
                *id,
                CommitNode {
                    tree: commit.tree,
                    parents: commit.parents,
                    time: commit.time,
                    flags: 0,
                },
            );
        }
        Ok(self.commits.get_mut(id).expect("just inserted"))
    }

    /// Adds a tree and everything below it to `known` and to the seen set, and to `named` with
    /// the hash of its path (`path`).
    fn mark_tree_known(
        &mut self,
        id: &ObjectId,
        path: &mut Vec<u8>,
        known: &mut Known<'_>,
        depth: usize,
    ) -> Result<(), WalkError> {
        if !self.seen.insert(*id) {
            return Ok(());
        }
        known.add(*id, ObjectKind::Tree, path);
        // The other side's trees need not all be here (a shallow boundary, a filtered clone):
        // what is missing is simply not known.
        let Some((ObjectKind::Tree, data)) = self.odb.read(id)? else {
            return Ok(());
        };
        let base = path.len();
        for entry in tree_entries(self.odb.hash(), &data) {
            let Ok(entry) = entry else { break };
            if entry.is_gitlink() || (entry.is_tree() && depth >= MAX_TREE_DEPTH) {
                continue;
            }
            if !entry.is_tree() && self.seen.contains(&entry.id) {
                continue;
            }
            if base > 0 {
                path.push(b'/');
            }
            path.extend_from_slice(entry.name);
            if entry.is_tree() {
                self.mark_tree_known(&entry.id, path, known, depth + 1)?;
            } else {
                self.seen.insert(entry.id);
                known.add(entry.id, ObjectKind::Blob, path);
            }
            path.truncate(base);
        }
        Ok(())
    }

    /// Lists a tree not yet seen and everything below it, depth first.
    fn list_tree(
        &mut self,
        id: &ObjectId,
        old: Option<ObjectId>,
        path: &mut Vec<u8>,
        depth: u64,
        filter: ObjectFilter,
        out: &mut Vec<WalkedObject>,
    ) -> Result<(), WalkError> {
        if let ObjectFilter::TreeDepth(limit) = filter {
            if depth >= limit {
                return Ok(());
            }
        }
        if depth as usize > MAX_TREE_DEPTH {
            return Err(WalkError::Malformed {
                id: *id,
                source: ParseError::TreeEntry(0),
            });
        }
        if !self.seen.insert(*id) {
            return Ok(());
        }
        let data = self.trees.read_tree(self.odb, id)?;
        // The same path in the parent's tree: entries identical there are listed through the
        // parent (or the client has them), so only what changed needs a lookup. This turns
        // tens of millions of set lookups (every entry of every root tree) into a byte-wise
        // merge of two sorted lists.
        let old_data = match old {
            Some(old) if old != *id => self.trees.read_old_tree(self.odb, &old)?,
            _ => None,
        };
        out.push(WalkedObject {
            id: *id,
            kind: ObjectKind::Tree,
            name_hash: name_hash(path),
            previous: old.filter(|old| old != id),
        });
        self.progress.add(1);
        let old_data = old_data.as_deref().map_or(&[][..], |d| &d[..]);
        for_each_changed(
            self.odb.hash(),
            &data,
            old_data,
            |entry, counterpart| {
                below(path, entry.name, |path| {
                    if entry.is_tree() {
                        let old = old_subtree(counterpart);
                        self.list_tree(&entry.id, old, path, depth + 1, filter, out)?;
                    } else if self.wants_blob(&entry.id, depth + 1, filter)?
                        && self.seen.insert(entry.id)
                    {
                        out.push(changed_blob(&entry, counterpart, path));
                        self.progress.add(1);
                    }
                    Ok(())
                })
            },
            |offset| WalkError::Malformed {
                id: *id,
                source: ParseError::TreeEntry(offset),
            },
        )
    }

    fn wants_blob(
        &self,
        id: &ObjectId,
        depth: u64,
        filter: ObjectFilter,
    ) -> Result<bool, WalkError> {
        Ok(match filter {
            ObjectFilter::None | ObjectFilter::ObjectType(_) => true,
            ObjectFilter::BlobNone => false,
            ObjectFilter::TreeDepth(limit) => depth < limit,
            ObjectFilter::BlobLimit(limit) => {
                if self.seen.contains(id) {
                    return Ok(false);
                }
                let (_, data) = self.read(id, "blob")?;
                // git omits blobs of `limit` bytes or more.
                (data.len() as u64) < limit
            }
        })
    }
}

/// Trees kept for comparison before the cache starts over.
const TREE_CACHE_ENTRIES: usize = 4096;

/// git's order of tree entries: by name, a tree's name compared as if it ended in `/`.
/// Trees nest at most this deep; deeper is a hostile object graph.
const MAX_TREE_DEPTH: usize = 4096;
