//! Split commit-graphs (`git commit-graph write --split`): a chain of graph files
//! (`objects/info/commit-graphs/graph-<checksum>.graph`, listed bottom first in
//! `commit-graph-chain`), each new layer holding only the commits the layers below lack, so a
//! repository that takes pushes does not rewrite its whole graph for a few new commits. As
//! git does it: the top layers are merged into the new one while a layer holds no more than
//! `size-multiple` times the commits on its way in (so layers stay few), a whole
//! `objects/info/commit-graph` becomes the bottom layer, and files no chain names are removed.

use super::files::GraphFiles;
use super::write::{encode, generations, node_of, read_commits, write_graph_file, Node};
use super::{CommitGraphError, Written, OID_LOOKUP};
use sluice_object::progress::Progress;
use sluice_object::{HashKind, IdMap, IdSet, ObjectId, ObjectKind};
use sluice_odb::lockfile::LockError;
use sluice_repo::Repository;
use std::path::{Path, PathBuf};

/// How layers are merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SplitStrategy {
    /// git's default: merge the top layers while they are small beside the new commits.
    #[default]
    Merge,
    /// Never merge: always a new layer (`--split=no-merge`).
    NoMerge,
    /// One layer of everything (`--split=replace`).
    Replace,
}

impl SplitStrategy {
    /// `--split[=<strategy>]`'s value (empty: `--split` alone); `None` for one git does not
    /// know.
    pub fn named(given: &str) -> Option<SplitStrategy> {
        match given {
            "" => Some(SplitStrategy::Merge),
            "no-merge" => Some(SplitStrategy::NoMerge),
            "replace" => Some(SplitStrategy::Replace),
            _ => None,
        }
    }
}

/// `--split`'s settings.
#[derive(Debug, Clone, Copy)]
pub struct SplitOptions {
    /// How layers are merged.
    pub strategy: SplitStrategy,
    /// A layer is merged while it holds at most this many times the commits coming in
    /// (`--size-multiple`, 2).
    pub size_multiple: usize,
    /// A new layer of more commits than this merges the layer below too (`--max-commits`).
    pub max_commits: Option<usize>,
    /// Whether the new layer carries changed-path Bloom filters.
    pub changed_paths: super::ChangedPaths,
    /// At most this many filters computed anew (`--max-new-filters`).
    pub max_new_filters: Option<usize>,
    /// Layers the new chain no longer names are removed only where older than this
    /// (`--expire-time`; `None`: now, every one).
    pub expire_time: Option<std::time::SystemTime>,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            strategy: SplitStrategy::Merge,
            size_multiple: 2,
            max_commits: None,
            changed_paths: super::ChangedPaths::default(),
            max_new_filters: None,
            expire_time: None,
        }
    }
}

/// A graph file of the chain.
struct Layer {
    checksum: ObjectId,
    ids: Vec<ObjectId>,
    path: PathBuf,
}

/// Writes a new layer for the commits `commits` names and reaches that the chain lacks,
/// merging layers as `options` say; returns the new layer, or `None` where `core.commitGraph`
/// is off and nothing is written (git warns: [`super::DISABLED`]).
pub fn write_split(
    repo: &Repository,
    commits: &super::GraphCommits,
    options: &SplitOptions,
    progress: &dyn Progress,
) -> Result<Option<Written>, CommitGraphError> {
    if !super::enabled(repo.config())? {
        return Ok(None);
    }
    let hash = repo.hash();
    let files = GraphFiles::of(repo.objects().dir());
    let dir = files.chain_dir();
    let bloom = super::bloom::settings_for(
        repo.objects().dir(),
        hash,
        repo.config(),
        (options.changed_paths, options.max_new_filters),
    )?;
    let mut layers = read_chain(&files, hash);
    let before: Vec<(ObjectId, std::path::PathBuf)> = (layers.iter())
        .map(|l| (l.checksum, l.path.clone()))
        .collect();
    let held: IdSet = layers.iter().flat_map(|l| l.ids.iter().copied()).collect();
    let tips = super::sources::starting_commits(repo, commits, false)?;
    // Nothing new: the graph stays as it is (a whole one too), as git leaves it. A graph holds
    // every parent of what it holds, so tips all in it mean nothing new, found without reading
    // history. (No tips at all: nothing is written, as git writes nothing.)
    if options.strategy != SplitStrategy::Replace && tips.iter().all(|t| held.contains(t)) {
        let path = layers.last().map_or(files.chain(), |top| top.path.clone());
        if tips.is_empty() || !layers.is_empty() {
            return Ok(Some(Written { commits: 0, path }));
        }
    }
    let mut nodes = read_commits(repo, tips, progress)?;
    let mut new_ids: Vec<ObjectId> = nodes
        .keys()
        .filter(|id| options.strategy == SplitStrategy::Replace || !held.contains(id))
        .copied()
        .collect();
    // `replace` drops every layer and keeps none of their commits but those the sources
    // reach, as git does; the other strategies keep a merged layer's commits.
    if options.strategy == SplitStrategy::Replace {
        layers.clear();
    }
    while let Some(top) = layers.last() {
        let merge = match options.strategy {
            SplitStrategy::Replace => unreachable!("no layers are left"),
            SplitStrategy::NoMerge => false,
            SplitStrategy::Merge => {
                top.ids.len() <= options.size_multiple.saturating_mul(new_ids.len())
                    || options.max_commits.is_some_and(|max| new_ids.len() > max)
            }
        };
        if !merge {
            break;
        }
        let top = layers.pop().expect("a top layer");
        new_ids.extend(top.ids);
    }
    new_ids.sort_unstable();
    new_ids.dedup();
    // Commits of merged layers no ref reaches any more are kept, as git keeps them.
    for id in &new_ids {
        if !nodes.contains_key(id) {
            let node = match repo.objects().read(id)? {
                Some((ObjectKind::Commit, data)) => node_of(hash, *id, &data)?,
                _ => return Err(CommitGraphError::Missing(*id)),
            };
            nodes.insert(*id, node);
        }
    }
    let bloom = bloom.map(|settings| (repo.objects(), settings, progress));
    let bytes = encode_layer(hash, &layers, &new_ids, &nodes, bloom)?;
    let checksum = ObjectId::from_bytes(hash, &bytes[bytes.len() - hash.len_in_bytes()..])
        .expect("a checksum is an id's length");
    create_dir(&dir)?;
    let path = files.layer(checksum);
    write_graph_file(&path, &bytes)?;
    // A whole graph kept as the bottom layer moves into the chain's directory.
    for layer in &mut layers {
        if layer.path.parent() != Some(dir.as_path()) {
            let moved = files.layer(layer.checksum);
            std::fs::rename(&layer.path, &moved).map_err(|source| LockError::Io {
                path: layer.path.clone(),
                source,
            })?;
            layer.path = moved;
        }
    }
    let mut chain: Vec<ObjectId> = layers.iter().map(|l| l.checksum).collect();
    chain.push(checksum);
    let listed: String = chain.iter().map(|c| format!("{c}\n")).collect();
    write_graph_file(&files.chain(), listed.as_bytes())?;
    remove_file(&files.whole())?;
    date_dropped(&before, &chain);
    remove_layers(&files, &chain, options.expire_time)?;
    Ok(Some(Written {
        commits: new_ids.len(),
        path,
    }))
}

/// The layer of `ids` over `layers`: positions count the layers' commits first, and each
/// commit's level and corrected date are computed from the whole history (they are
/// properties of the commit, whichever layer holds it).
fn encode_layer(
    hash: HashKind,
    layers: &[Layer],
    ids: &[ObjectId],
    nodes: &IdMap<Node>,
    bloom: Option<(
        &sluice_odb::ObjectDb,
        super::bloom::BloomSettings,
        &dyn Progress,
    )>,
) -> Result<Vec<u8>, CommitGraphError> {
    let mut global: IdMap<u32> = IdMap::default();
    for id in layers.iter().flat_map(|l| l.ids.iter()).chain(ids) {
        let next = global.len() as u32;
        global.entry(*id).or_insert(next);
    }
    let mut all: Vec<ObjectId> = nodes.keys().copied().collect();
    all.sort_unstable();
    let local: IdMap<u32> = (all.iter().enumerate())
        .map(|(i, id)| (*id, i as u32))
        .collect();
    let ordered: Vec<&Node> = all.iter().map(|id| &nodes[id]).collect();
    let mut parents_local = Vec::with_capacity(all.len());
    for node in &ordered {
        let positions: Option<Vec<u32>> =
            node.parents.iter().map(|p| local.get(p).copied()).collect();
        parents_local.push(positions.unwrap_or_default());
    }
    let (levels, corrected) = generations(&ordered, &parents_local);
    let layer: Vec<&Node> = ids.iter().map(|id| &nodes[id]).collect();
    let mut parents = Vec::with_capacity(ids.len());
    for node in &layer {
        let mut positions = Vec::with_capacity(node.parents.len());
        for parent in &node.parents {
            positions.push(
                *global
                    .get(parent)
                    .ok_or(CommitGraphError::Missing(*parent))?,
            );
        }
        parents.push(positions);
    }
    let at = |id: &ObjectId| local[id] as usize;
    let layer_levels: Vec<u32> = ids.iter().map(|id| levels[at(id)]).collect();
    let layer_corrected: Vec<u64> = ids.iter().map(|id| corrected[at(id)]).collect();
    let bases: Vec<ObjectId> = layers.iter().map(|l| l.checksum).collect();
    let filters = (bloom.map(|(objects, settings, progress)| {
        super::bloom::filters(objects, ids, nodes, &layer_corrected, settings, progress)
    }))
    .transpose()?;
    let graph = super::write::GraphBody {
        ids,
        nodes: &layer,
        parents: &parents,
        generations: (&layer_levels, &layer_corrected),
        filters: filters.as_ref(),
    };
    Ok(encode(hash, &graph, &bases))
}

/// The chain's layers, bottom first; or a whole `commit-graph` as the one layer; or none.
/// A chain naming a file that is gone or damaged is rebuilt from there up.
fn read_chain(files: &GraphFiles, hash: HashKind) -> Vec<Layer> {
    let layers = files
        .to_read()
        .into_iter()
        .map(|path| layer_at(&path, hash));
    layers.map_while(|layer| layer).collect()
}

/// The graph file at `path`: its checksum and commit ids; `None` if it is not a sound one.
fn layer_at(path: &Path, hash: HashKind) -> Option<Layer> {
    let bytes = std::fs::read(path).ok()?;
    if bytes.len() < 8
        || &bytes[..4] != b"CGPH"
        || !sluice_odb::chunk_file::checksum_matches(&bytes, hash)
    {
        return None;
    }
    let table = sluice_odb::chunk_file::read_table(&bytes, 8, usize::from(bytes[6]), hash)?;
    let (start, len) = sluice_odb::chunk_file::find(&table, OID_LOOKUP)?;
    let id_len = hash.len_in_bytes();
    let ids = (bytes[start..start + len].chunks_exact(id_len))
        .map(|raw| ObjectId::from_bytes(hash, raw).ok())
        .collect::<Option<Vec<_>>>()?;
    let checksum = ObjectId::from_bytes(hash, &bytes[bytes.len() - id_len..]).ok()?;
    Some(Layer {
        checksum,
        ids,
        path: path.to_owned(),
    })
}

fn create_dir(dir: &Path) -> Result<(), LockError> {
    std::fs::create_dir_all(dir).map_err(|source| LockError::Io {
        path: dir.to_owned(),
        source,
    })
}

/// Dates now the layers of the chain `before` that the new `chain` drops, as git's writer
/// does, so that an expiry date in the past (`--expire-time`) keeps them for the readers that
/// opened the old chain; the later writes expire them. A layer that cannot be dated is
/// judged by its date as it stands.
fn date_dropped(before: &[(ObjectId, std::path::PathBuf)], chain: &[ObjectId]) {
    let now = std::time::SystemTime::now();
    for (_, path) in before.iter().filter(|(sum, _)| !chain.contains(sum)) {
        if let Ok(file) = std::fs::File::open(path) {
            let _ = file.set_modified(now);
        }
    }
}

/// Removes the layers (`graph-<hash>.graph`) that `keep` does not name, but those modified
/// after `expire` (none with `None`: now), as git's writer expires them: a reader that opened
/// the old chain a moment ago may still read its layers. When `keep` is empty (a whole graph
/// was written) the chain file goes too. Other files are left as they are, as git leaves them.
pub(super) fn remove_layers(
    files: &GraphFiles,
    keep: &[ObjectId],
    expire: Option<std::time::SystemTime>,
) -> Result<(), LockError> {
    if keep.is_empty() {
        remove_file(&files.chain())?;
    }
    let Ok(entries) = std::fs::read_dir(files.chain_dir()) else {
        return Ok(());
    };
    // Whole seconds, as git compares a file's st_mtime with the expiry.
    let seconds = |time: std::time::SystemTime| {
        (time.duration_since(std::time::UNIX_EPOCH)).map_or(0, |since| since.as_secs())
    };
    let expire = seconds(expire.unwrap_or_else(std::time::SystemTime::now));
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(layer) = name.strip_suffix(".graph") else {
            continue;
        };
        let kept = (layer.strip_prefix("graph-"))
            .is_some_and(|hex| keep.iter().any(|k| k.to_string() == hex));
        let modified = entry.metadata().and_then(|m| m.modified()).map(seconds);
        if kept || modified.is_ok_and(|at| at > expire) {
            continue;
        }
        remove_file(&entry.path())?;
    }
    Ok(())
}

fn remove_file(path: &Path) -> Result<(), LockError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(LockError::Io {
            path: path.to_owned(),
            source: e,
        }),
        _ => Ok(()),
    }
}
