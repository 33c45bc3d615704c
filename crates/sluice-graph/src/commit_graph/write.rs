//! Writing the commit-graph of every commit the refs reach (`git commit-graph write
//! --reachable`), or that other commits reach (see [`super::GraphCommits`]), byte for byte as
//! git writes it: the commits are read once, their levels and
//! corrected commit dates computed parents first, and the file written to a lock beside its
//! place and renamed there.

use super::*;
use sluice_object::parse::{parse_commit, parse_tag, ParseError};
use sluice_object::progress::Progress;
use sluice_object::{HashKind, IdMap, ObjectId, ObjectKind};
use sluice_odb::lockfile::LockError;
use sluice_odb::OdbError;
use sluice_pack::entry::EntryKind;
use sluice_repo::refs::RefError;
use sluice_repo::Repository;
use std::path::PathBuf;

/// Why no commit-graph was written (an existing one is left as it was).
#[derive(Debug, thiserror::Error)]
pub enum CommitGraphError {
    /// The refs could not be read.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// An object could not be read.
    #[error(transparent)]
    Odb(#[from] OdbError),
    /// A commit the refs reach is not in the repository.
    #[error("missing commit {0}")]
    Missing(ObjectId),
    /// A commit or tag cannot be parsed.
    #[error("malformed object {id}: {source}")]
    Malformed {
        /// The object.
        id: ObjectId,
        /// What is wrong with it.
        #[source]
        source: ParseError,
    },
    /// The file could not be written.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// A commit or pack the caller named is not there.
    #[error(transparent)]
    Source(#[from] super::SourceError),
    /// A setting could not be read.
    #[error(transparent)]
    Config(#[from] sluice_odb::ConfigError),
    /// A tree has an entry that cannot be parsed.
    #[error("malformed tree {}: bad entry at offset {offset}", .tree.map_or("(none)".to_owned(), |t| t.to_string()))]
    BadTree {
        /// The tree.
        tree: Option<ObjectId>,
        /// Where its bad entry starts.
        offset: usize,
    },
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Commits in the graph.
    pub commits: usize,
    /// The file.
    pub path: PathBuf,
}

/// One commit, as the graph records it.
pub(super) struct Node {
    pub(super) tree: ObjectId,
    pub(super) parents: Vec<ObjectId>,
    pub(super) time: u64,
}

/// What git says where a commit-graph is to be written but `core.commitGraph` is off.
pub const DISABLED: &str = "attempting to write a commit-graph, but 'core.commitGraph' is disabled";

/// Whether commit-graphs are written (and read): `core.commitGraph`, on unless set off.
pub fn enabled(config: &sluice_odb::Config) -> Result<bool, sluice_odb::ConfigError> {
    Ok(config.get_bool("core.commitgraph")?.unwrap_or(true))
}

/// Writes `objects/info/commit-graph` for every commit the refs reach; `None` where
/// `core.commitGraph` is off and nothing is written (git warns: [`DISABLED`]).
pub fn write_reachable(
    repo: &Repository,
    progress: &dyn Progress,
) -> Result<Option<Written>, CommitGraphError> {
    let options = GraphOptions::default();
    write_graph(repo, &super::GraphCommits::Reachable, &options, progress)
}

/// How a whole graph is written, beside which commits it holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct GraphOptions {
    /// Keep the commits of the graph there now too (`--append`).
    pub append: bool,
    /// Whether it carries changed-path Bloom filters.
    pub changed_paths: super::ChangedPaths,
    /// At most this many filters computed anew (`--max-new-filters`).
    pub max_new_filters: Option<usize>,
    /// The layers of a split graph it replaces are removed only where older than this
    /// (`--expire-time`; `None`: now, every one).
    pub expire_time: Option<std::time::SystemTime>,
}

/// Writes `objects/info/commit-graph` for `commits` (and, with `append`, those of the graph
/// there now), with every commit they reach; `None` where `core.commitGraph` is off.
pub fn write_graph(
    repo: &Repository,
    commits: &super::GraphCommits,
    options: &GraphOptions,
    progress: &dyn Progress,
) -> Result<Option<Written>, CommitGraphError> {
    if !enabled(repo.config())? {
        return Ok(None);
    }
    let objects_dir = repo.objects().dir().to_owned();
    let bloom = super::bloom::settings_for(
        &objects_dir,
        repo.hash(),
        repo.config(),
        (options.changed_paths, options.max_new_filters),
    )?;
    let tips = super::sources::starting_commits(repo, commits, options.append)?;
    let nodes = read_commits(repo, tips, progress)?;
    let path = super::files::GraphFiles::of(&objects_dir).whole();
    if nodes.is_empty() {
        // As git: no commits, no file; a graph there stays as it is.
        return Ok(Some(Written { commits: 0, path }));
    }
    let mut ids: Vec<ObjectId> = nodes.keys().copied().collect();
    ids.sort_unstable();
    let position: IdMap<u32> = (ids.iter().enumerate())
        .map(|(i, id)| (*id, i as u32))
        .collect();
    let ordered: Vec<&Node> = ids.iter().map(|id| &nodes[id]).collect();
    let parents: Vec<Vec<u32>> = (ordered.iter())
        .map(|node| node.parents.iter().map(|p| position[p]).collect())
        .collect();
    let generations = generations(&ordered, &parents);
    let filters = (bloom.map(|settings| {
        let corrected = &generations.1;
        super::bloom::filters(repo.objects(), &ids, &nodes, corrected, settings, progress)
    }))
    .transpose()?;
    let graph = GraphBody {
        ids: &ids,
        nodes: &ordered,
        parents: &parents,
        generations: (&generations.0, &generations.1),
        filters: filters.as_ref(),
    };
    let bytes = encode(repo.hash(), &graph, &[]);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| LockError::Io {
            path: dir.to_owned(),
            source,
        })?;
    }
    write_graph_file(&path, &bytes)?;
    // A whole graph replaces a split one, as git's write does.
    let files = super::files::GraphFiles::of(&objects_dir);
    super::split::remove_layers(&files, &[], options.expire_time)?;
    Ok(Some(Written {
        commits: ids.len(),
        path,
    }))
}

/// Writes a graph file through a lock, read-only as git leaves it.
pub(super) fn write_graph_file(path: &std::path::Path, bytes: &[u8]) -> Result<(), LockError> {
    sluice_odb::lockfile::write_locked(path, bytes, false)?;
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o444));
    Ok(())
}

/// A commit the refs reach, with what a walk of history needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReachableCommit {
    /// The commit.
    pub id: ObjectId,
    /// Its tree.
    pub tree: ObjectId,
    /// Its parents.
    pub parents: Vec<ObjectId>,
}

/// Every commit the refs reach, newest first (by committer date, ties by id): the order in
/// which a bitmap's commits are spaced.
pub fn commits_newest_first(repo: &Repository) -> Result<Vec<ReachableCommit>, CommitGraphError> {
    let nodes = read_commits(repo, commit_tips(repo)?, &sluice_object::progress::Discard)?;
    let mut commits: Vec<(u64, ObjectId, Node)> =
        nodes.into_iter().map(|(id, n)| (n.time, id, n)).collect();
    commits.sort_unstable_by_key(|c| std::cmp::Reverse((c.0, c.1)));
    Ok(commits
        .into_iter()
        .map(|(_, id, node)| ReachableCommit {
            id,
            tree: node.tree,
            parents: node.parents,
        })
        .collect())
}

/// The commits the refs name, tags peeled (refs to trees or blobs, or to objects not here,
/// count for nothing).
pub(super) fn commit_tips(repo: &Repository) -> Result<Vec<ObjectId>, CommitGraphError> {
    let mut tips = Vec::new();
    for (_, id) in repo.refs().list()? {
        if let Peeled::Commit(commit) = peel_to_commit(repo, id)? {
            tips.push(commit);
        }
    }
    Ok(tips)
}

/// What an object is once its tags are peeled.
pub(super) enum Peeled {
    /// A commit: its id.
    Commit(ObjectId),
    /// Another kind of object (or tags nested past 64).
    Other,
    /// An object on the way is not in the repository.
    Missing,
}

/// `id` with its tags peeled, as far as a commit.
pub(super) fn peel_to_commit(
    repo: &Repository,
    mut id: ObjectId,
) -> Result<Peeled, CommitGraphError> {
    for _ in 0..64 {
        match repo.objects().read(&id)? {
            Some((ObjectKind::Commit, _)) => return Ok(Peeled::Commit(id)),
            Some((ObjectKind::Tag, data)) => {
                id = parse_tag(repo.hash(), &data)
                    .map_err(|source| CommitGraphError::Malformed { id, source })?
                    .object;
            }
            Some(_) => return Ok(Peeled::Other),
            None => return Ok(Peeled::Missing),
        }
    }
    Ok(Peeled::Other)
}

/// Every commit reachable from `tips`, read once. The walk itself is sequential (a commit's
/// parents are known only once it is read), so the commits stored whole in packs are first
/// read on every core, whether reachable or not: inflating them was most of the work. The
/// walk then takes them from there, and reads the others (loose, or stored as deltas) itself.
pub(super) fn read_commits(
    repo: &Repository,
    tips: Vec<ObjectId>,
    progress: &dyn Progress,
) -> Result<IdMap<Node>, CommitGraphError> {
    // Delayed, as git's commit-graph phases: a quick write says nothing.
    progress.delayed_phase("Expanding reachable commits in commit graph", None);
    let objects = repo.objects().with_alternate_packs();
    let mut packed = read_packed_commits(&objects)?;
    let mut nodes: IdMap<Node> = IdMap::default();
    let mut pending = tips;
    while let Some(id) = pending.pop() {
        if nodes.contains_key(&id) {
            continue;
        }
        let node = match packed.remove(&id) {
            Some(node) => node,
            None => match objects.read(&id)? {
                Some((ObjectKind::Commit, data)) => node_of(repo.hash(), id, &data)?,
                _ => return Err(CommitGraphError::Missing(id)),
            },
        };
        pending.extend(node.parents.iter().filter(|p| !nodes.contains_key(p)));
        nodes.insert(id, node);
        progress.add(1);
    }
    progress.finish();
    Ok(nodes)
}

/// The index positions of the commits at the start of `pack`, in pack order: git writes a
/// pack's commits first, so reading entry headers from the start finds them without touching
/// the rest. The scan stops after a long run of other entries; a commit stored later is still
/// read by the walk, only not ahead of it.
fn leading_commits(pack: &sluice_odb::Pack) -> Result<Vec<usize>, CommitGraphError> {
    const GIVE_UP_AFTER: usize = 4096;
    let mut found = Vec::new();
    let mut since_last = 0;
    for rank in 0..pack.index().len() {
        let Some(position) = pack.at_rank(rank) else {
            break;
        };
        if pack.entry_header(position)?.kind == EntryKind::Base(ObjectKind::Commit) {
            found.push(position);
            since_last = 0;
        } else {
            since_last += 1;
            if since_last > GIVE_UP_AFTER {
                break;
            }
        }
    }
    Ok(found)
}

pub(super) fn node_of(hash: HashKind, id: ObjectId, data: &[u8]) -> Result<Node, CommitGraphError> {
    let commit =
        parse_commit(hash, data).map_err(|source| CommitGraphError::Malformed { id, source })?;
    Ok(Node {
        tree: commit.tree,
        parents: commit.parents,
        // As git: a time before the epoch is stored as 0.
        time: u64::try_from(commit.time).unwrap_or(0),
    })
}

/// The commits of `objects`' packs, read on every core: where a pack has a bitmap, those its
/// type index lists; otherwise those at its start (see [`leading_commits`]). Commits stored as
/// deltas or elsewhere are left to the walk.
fn read_packed_commits(objects: &sluice_odb::ObjectDb) -> Result<IdMap<Node>, CommitGraphError> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let hash = objects.hash();
    let mut all = IdMap::default();
    for pack in objects.packs() {
        let positions = match crate::bitmap::commit_positions(pack) {
            Some(positions) => positions,
            None => leading_commits(pack)?,
        };
        let per_thread = positions.len().div_ceil(threads).max(1);
        let parts: Vec<Result<Vec<(ObjectId, Node)>, CommitGraphError>> =
            std::thread::scope(|scope| {
                let running: Vec<_> = (positions.chunks(per_thread))
                    .map(|chunk| {
                        scope.spawn(move || {
                            let mut found = Vec::with_capacity(chunk.len());
                            for &position in chunk {
                                let header = pack.entry_header(position)?;
                                if header.kind != EntryKind::Base(ObjectKind::Commit) {
                                    continue;
                                }
                                let id = pack.index().id(position);
                                let (_, data) = pack.read_position(position)?;
                                found.push((id, node_of(hash, id, &data)?));
                            }
                            Ok(found)
                        })
                    })
                    .collect();
                running
                    .into_iter()
                    .map(|t| t.join().unwrap_or_else(|_| Ok(Vec::new())))
                    .collect()
            });
        for part in parts {
            all.extend(part?);
        }
    }
    Ok(all)
}

/// Each commit's topological level (1 for a root, else one more than its highest parent, at
/// most `LEVEL_MAX`) and corrected commit date ([`corrected_date`]), computed parents first
/// without recursion.
pub(super) fn generations(nodes: &[&Node], parents: &[Vec<u32>]) -> (Vec<u32>, Vec<u64>) {
    let n = nodes.len();
    let (mut level, mut corrected) = (vec![0u32; n], vec![0u64; n]);
    let mut stack = Vec::new();
    for start in 0..n {
        if level[start] != 0 {
            continue;
        }
        stack.push(start);
        while let Some(&at) = stack.last() {
            if level[at] != 0 {
                stack.pop();
                continue;
            }
            let waiting = parents[at].iter().filter(|&&p| level[p as usize] == 0);
            let before = stack.len();
            stack.extend(waiting.map(|&p| p as usize));
            if stack.len() > before {
                continue;
            }
            stack.pop();
            let highest = parents[at]
                .iter()
                .map(|&p| level[p as usize])
                .max()
                .unwrap_or(0);
            level[at] = (highest + 1).min(LEVEL_MAX);
            corrected[at] = corrected_date(nodes[at].time, &parents[at], &corrected);
        }
    }
    (level, corrected)
}

/// A commit's corrected commit date from its time and its parents' corrected dates, as git
/// computes it: one more than the latest parent's, or the commit's own time if later (a time
/// of 0 does not count). (git 2.47 keeps the parents' latest in 32 bits, so for parents dated
/// after 2106 its files differ from 2.39's; this follows the format, and 2.39.)
fn corrected_date(time: u64, parents: &[u32], corrected: &[u64]) -> u64 {
    let mut latest = (parents.iter())
        .map(|&p| corrected[p as usize])
        .max()
        .unwrap_or(0);
    if time != 0 && time > latest {
        latest = time - 1;
    }
    latest + 1
}

/// What one graph file holds, each slice in the order of `ids`.
pub(super) struct GraphBody<'a> {
    /// The commits, sorted.
    pub(super) ids: &'a [ObjectId],
    pub(super) nodes: &'a [&'a Node],
    /// Each commit's parents, as positions (counting the layers below first).
    pub(super) parents: &'a [Vec<u32>],
    /// Each commit's topological level and corrected commit date.
    pub(super) generations: (&'a [u32], &'a [u64]),
    /// The changed-path filters, when written.
    pub(super) filters: Option<&'a super::bloom::Filters>,
}

/// The file's bytes, checksum included: a layer over the graphs `bases` (bottom first) when
/// there are any, whose commits' positions `parents` counts after theirs.
pub(super) fn encode(hash: HashKind, graph: &GraphBody<'_>, bases: &[ObjectId]) -> Vec<u8> {
    let GraphBody {
        ids,
        nodes,
        parents,
        generations: (levels, corrected),
        filters,
    } = *graph;
    let fanout = sluice_odb::chunk_file::fanout(ids);
    let lookup: Vec<u8> = ids.iter().flat_map(|id| id.as_bytes().to_vec()).collect();
    let (mut data, mut edges) = (Vec::new(), Vec::new());
    for (i, node) in nodes.iter().enumerate() {
        data.extend_from_slice(node.tree.as_bytes());
        let first = parents[i].first().copied().unwrap_or(NO_PARENT);
        let second = match parents[i].len() {
            0 | 1 => NO_PARENT,
            2 => parents[i][1],
            _ => {
                let at = (edges.len() / 4) as u32;
                let rest = &parents[i][1..];
                for (k, &p) in rest.iter().enumerate() {
                    let last = k + 1 == rest.len();
                    let value = if last { p | EDGE_BIT } else { p };
                    edges.extend_from_slice(&value.to_be_bytes());
                }
                at | EDGE_BIT
            }
        };
        data.extend_from_slice(&first.to_be_bytes());
        data.extend_from_slice(&second.to_be_bytes());
        let high = (levels[i] << 2) | ((node.time >> 32) as u32 & 0x3);
        data.extend_from_slice(&high.to_be_bytes());
        data.extend_from_slice(&(node.time as u32).to_be_bytes());
    }
    let (mut generation, mut overflow) = (Vec::new(), Vec::new());
    for (i, node) in nodes.iter().enumerate() {
        let offset = corrected[i] - node.time;
        let value = if offset > OFFSET_MAX {
            let at = (overflow.len() / 8) as u32;
            overflow.extend_from_slice(&offset.to_be_bytes());
            at | EDGE_BIT
        } else {
            offset as u32
        };
        generation.extend_from_slice(&value.to_be_bytes());
    }
    let mut chunks: Vec<([u8; 4], Vec<u8>)> = vec![
        (OID_FANOUT, fanout),
        (OID_LOOKUP, lookup),
        (COMMIT_DATA, data),
        (GENERATION_DATA, generation),
    ];
    if !overflow.is_empty() {
        chunks.push((GENERATION_OVERFLOW, overflow));
    }
    if !edges.is_empty() {
        chunks.push((EXTRA_EDGES, edges));
    }
    if let Some(filters) = filters {
        chunks.extend(filters.chunks());
    }
    let hash_version = match hash {
        HashKind::Sha1 => 1u8,
    };
    if !bases.is_empty() {
        let listed = bases.iter().flat_map(|b| b.as_bytes().to_vec()).collect();
        chunks.push((BASE_GRAPHS, listed));
    }
    let base_count = bases.len() as u8;
    let header = *b"CGPH";
    let header = [
        header.as_slice(),
        &[1, hash_version, chunks.len() as u8, base_count],
    ]
    .concat();
    sluice_odb::chunk_file::write_chunked(&header, &chunks, hash)
}
