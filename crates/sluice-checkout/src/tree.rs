//! Flattening a tree object into the sorted list of files a checkout writes, refusing every
//! tree git's checkout refuses, and building the cache tree (`TREE` extension) on the way.

use crate::path_check::verify_path;
use crate::CheckoutError;
use crate::Objects;
use sluice_index::{CacheTree, Index, IndexEntry};
use sluice_object::parse::{tree_entries, TreeEntry};
use sluice_object::{ObjectId, ObjectKind};
use std::collections::HashMap;

/// A file, symlink or gitlink of a tree, with its full path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    /// Full path with `/` separators.
    pub path: Vec<u8>,
    /// 0o100644, 0o100755, 0o120000 or 0o160000.
    pub mode: u32,
    /// The blob (or commit, for a gitlink).
    pub id: ObjectId,
}

/// A tree, flattened.
#[derive(Debug, Clone)]
pub struct FlatTree {
    /// Files in index order.
    pub files: Vec<TreeFile>,
    /// The cache tree for these files.
    pub cache_tree: CacheTree,
}

/// Paths nest at most this deep (git's own limit on path length makes deeper trees useless).
const MAX_DEPTH: usize = 2048;

fn display(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}

/// The content of tree `id`, found at `path`; refused when it is missing or no tree.
fn read_tree(odb: &dyn Objects, id: &ObjectId, path: &[u8]) -> Result<Vec<u8>, CheckoutError> {
    let (kind, data) = odb.read(id)?.ok_or_else(|| CheckoutError::MissingObject {
        id: *id,
        path: display(path),
    })?;
    if kind != ObjectKind::Tree {
        return Err(CheckoutError::BadTree {
            id: *id,
            why: format!("is a {kind}, not a tree"),
        });
    }
    Ok(data)
}

/// Reads the tree `root` and everything below it.
pub fn flatten(odb: &dyn Objects, root: &ObjectId) -> Result<FlatTree, CheckoutError> {
    flatten_reusing(odb, root, None)
}

/// Reads the tree `root`, taking each subtree that `index`'s cache tree records with the same
/// id from the index's entries instead of reading it, as git's checkout does: a switch
/// between two commits then reads only the trees that differ (reading every tree of both
/// touched most of the pack on a wide tree).
pub fn flatten_reusing(
    odb: &dyn Objects,
    root: &ObjectId,
    index: Option<&Index>,
) -> Result<FlatTree, CheckoutError> {
    // Sized for the index the target most likely resembles: growing by doubling held up to
    // twice the list (and both copies while moving it).
    let mut files = Vec::with_capacity(index.map_or(0, |index| index.entries.len()));
    let mut prefix = Vec::new();
    let mut slashed = false;
    let known = index.and_then(|index| Some((index.tree.as_ref()?, index.entries.as_slice())));
    if let Some(reused) = known.and_then(|(tree, entries)| reuse(tree, entries, &[], root)) {
        return Ok(reused);
    }
    let mut walker = Walker {
        odb,
        entries: known.map_or(&[][..], |(_, entries)| entries),
        files: &mut files,
        slashed: &mut slashed,
    };
    let cache_tree = walker.walk(root, &mut prefix, known.map(|(tree, _)| tree), 0)?;
    // Trees sort a directory as if its name ended in '/', so walking sorted trees yields full
    // paths in index order already; only a tree stored out of order needs the sort.
    if !files.is_sorted_by(|a, b| a.path <= b.path) {
        files.sort_by(|a: &TreeFile, b: &TreeFile| a.path.cmp(&b.path));
    }
    // Each tree's names are checked unique as it is read, which rules out a path used twice
    // and a path that is both a file and a directory, unless a name itself holds a '/'
    // (`b/c` beside a tree `b` holding `c`): then check the whole list. It is sorted, so a
    // duplicate is a neighbour, and the paths below `a/` start at the first one not before it.
    if slashed {
        for pair in files.windows(2) {
            if pair[0].path == pair[1].path {
                return Err(CheckoutError::Conflict(display(&pair[1].path)));
            }
        }
        let mut dir = Vec::new();
        for file in &files {
            dir.clear();
            dir.extend_from_slice(&file.path);
            dir.push(b'/');
            let below = files.partition_point(|f| f.path.as_slice() < dir.as_slice());
            if files.get(below).is_some_and(|f| f.path.starts_with(&dir)) {
                return Err(CheckoutError::Conflict(display(&files[below].path)));
            }
        }
    }
    Ok(FlatTree { files, cache_tree })
}

/// The entries below `dir` (a directory path, empty for the root) that `node` covers, when
/// `node` is valid, records the tree `id`, and the index agrees with it: exactly that many
/// stage-0 entries under `dir/`, none only intended to be added.
fn reuse(node: &CacheTree, entries: &[IndexEntry], dir: &[u8], id: &ObjectId) -> Option<FlatTree> {
    if node.id.as_ref() != Some(id) || node.entry_count < 0 {
        return None;
    }
    let mut slashed = dir.to_vec();
    if !slashed.is_empty() {
        slashed.push(b'/');
    }
    let start = entries.partition_point(|e| e.path.as_slice() < slashed.as_slice());
    let count = node.entry_count as usize;
    let covered = entries.get(start..start.checked_add(count)?)?;
    let after = entries.get(start + count);
    if after.is_some_and(|e| e.path.starts_with(&slashed))
        || covered
            .iter()
            .any(|e| !e.path.starts_with(&slashed) || e.stage() != 0 || e.intent_to_add())
    {
        return None;
    }
    let files = covered
        .iter()
        .map(|e| TreeFile {
            path: e.path.clone(),
            mode: e.mode,
            id: e.id,
        })
        .collect();
    Some(FlatTree {
        files,
        cache_tree: node.clone(),
    })
}

/// One walk of a tree into a file list.
struct Walker<'a, 'b> {
    odb: &'a dyn Objects,
    /// The old index's entries, which cache-tree nodes point into.
    entries: &'a [IndexEntry],
    files: &'b mut Vec<TreeFile>,
    slashed: &'b mut bool,
}

impl Walker<'_, '_> {
    fn walk(
        &mut self,
        id: &ObjectId,
        prefix: &mut Vec<u8>,
        known: Option<&CacheTree>,
        depth: usize,
    ) -> Result<CacheTree, CheckoutError> {
        let odb = self.odb;
        if depth > MAX_DEPTH {
            return Err(CheckoutError::BadTree {
                id: *id,
                why: "trees nest too deep".into(),
            });
        }
        let data = read_tree(odb, id, prefix)?;
        let hash = odb.hash();
        let name = prefix
            .iter()
            .rposition(|&b| b == b'/')
            .map_or_else(|| prefix.clone(), |i| prefix[i + 1..].to_vec());
        let start = self.files.len();
        let mut children = Vec::new();
        // Names of this tree, to find one used twice (a tree and a file of the same name would
        // otherwise merge silently).
        let mut names: Vec<&[u8]> = Vec::new();
        // `prefix/name`, spelled out only when needed: a file's own path, or an error.
        let full = |prefix: &[u8], name: &[u8]| {
            let mut path = Vec::with_capacity(prefix.len() + 1 + name.len());
            path.extend_from_slice(prefix);
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(name);
            path
        };
        for entry in tree_entries(hash, &data) {
            let TreeEntry {
                mode,
                name,
                id: entry_id,
            } = entry.map_err(|e| CheckoutError::BadTree {
                id: *id,
                why: e.to_string(),
            })?;
            // Every directory above was checked as a name of its own parent, so checking this
            // name checks the whole path (a name holding '/' has each of its parts checked).
            verify_path(name, mode).map_err(|source| CheckoutError::UnsafePath {
                path: display(&full(prefix, name)),
                source,
            })?;
            names.push(name);
            *self.slashed |= name.contains(&b'/');
            let mode = match mode {
                0o40000 => {
                    let saved = prefix.len();
                    if saved > 0 {
                        prefix.push(b'/');
                    }
                    prefix.extend_from_slice(name);
                    let node = known.and_then(|k| k.children.iter().find(|c| c.name == name));
                    let reused = node.and_then(|n| reuse(n, self.entries, prefix, &entry_id));
                    let child = match reused {
                        Some(reused) => {
                            self.files.extend(reused.files);
                            reused.cache_tree
                        }
                        None => self.walk(&entry_id, prefix, node, depth + 1)?,
                    };
                    prefix.truncate(saved);
                    children.push(child);
                    continue;
                }
                0o100644 | 0o100664 | 0o100640 => 0o100644,
                0o100755 => 0o100755,
                0o120000 => 0o120000,
                0o160000 => 0o160000,
                other => {
                    return Err(CheckoutError::BadTree {
                        id: *id,
                        why: format!(
                            "entry '{}' has invalid mode {other:o}",
                            display(&full(prefix, name))
                        ),
                    })
                }
            };
            self.files.push(TreeFile {
                path: full(prefix, name),
                mode,
                id: entry_id,
            });
        }
        // Names in strictly rising byte order (most trees) cannot repeat; others are sorted first.
        if !names.windows(2).all(|pair| pair[0] < pair[1]) {
            names.sort_unstable();
            if let Some(pair) = names.windows(2).find(|pair| pair[0] == pair[1]) {
                return Err(CheckoutError::Conflict(display(&full(prefix, pair[0]))));
            }
        }
        // git keeps cache-tree children ordered by name length, then bytes.
        children.sort_by(|a: &CacheTree, b: &CacheTree| {
            a.name.len().cmp(&b.name.len()).then(a.name.cmp(&b.name))
        });
        Ok(CacheTree {
            name,
            entry_count: (self.files.len() - start) as i64,
            id: Some(*id),
            children,
        })
    }
}

/// A directory's entries as [`TreeLookup`] keeps them: (name, mode, id), sorted by name.
type DirEntries = Vec<(Vec<u8>, u32, ObjectId)>;

/// Finds the files of one tree by path, reading each directory's tree object once: a switch
/// asks the current commit about the few paths where the index differs from the target.
pub struct TreeLookup<'a> {
    odb: &'a dyn Objects,
    root: Option<ObjectId>,
    /// Directory path → its entries, `None` where the tree has no such directory.
    dirs: HashMap<Vec<u8>, Option<DirEntries>>,
}

impl<'a> TreeLookup<'a> {
    /// Looks up paths in `root` (none for an unborn branch: the tree is empty).
    pub fn new(odb: &'a dyn Objects, root: Option<ObjectId>) -> Self {
        TreeLookup {
            odb,
            root,
            dirs: HashMap::new(),
        }
    }

    /// The mode (as a checkout writes it) and id of the file, link or gitlink at `path`;
    /// `None` when the tree has none there (or a directory).
    pub fn file(&mut self, path: &[u8]) -> Result<Option<(u32, ObjectId)>, CheckoutError> {
        let (dir, name) = match path.iter().rposition(|&b| b == b'/') {
            Some(slash) => (&path[..slash], &path[slash + 1..]),
            None => (&path[..0], path),
        };
        self.load(dir)?;
        let Some(Some(entries)) = self.dirs.get(dir) else {
            return Ok(None);
        };
        Ok(entries
            .binary_search_by(|(n, _, _)| n.as_slice().cmp(name))
            .ok()
            .map(|i| (entries[i].1, entries[i].2))
            .filter(|&(mode, _)| mode != 0o40000))
    }

    /// Reads the tree of directory `dir` (and those above it) unless it was read already.
    fn load(&mut self, dir: &[u8]) -> Result<(), CheckoutError> {
        if self.dirs.contains_key(dir) {
            return Ok(());
        }
        let id = if dir.is_empty() {
            self.root
        } else {
            let (parent, name) = match dir.iter().rposition(|&b| b == b'/') {
                Some(slash) => (&dir[..slash], &dir[slash + 1..]),
                None => (&dir[..0], dir),
            };
            self.load(parent)?;
            self.dirs
                .get(parent)
                .and_then(Option::as_ref)
                .and_then(|entries| {
                    let i = entries
                        .binary_search_by(|(n, _, _)| n.as_slice().cmp(name))
                        .ok()?;
                    (entries[i].1 == 0o40000).then_some(entries[i].2)
                })
        };
        let entries = match id {
            Some(id) => Some(self.read(&id, dir)?),
            None => None,
        };
        self.dirs.insert(dir.to_vec(), entries);
        Ok(())
    }

    fn read(&self, id: &ObjectId, dir: &[u8]) -> Result<DirEntries, CheckoutError> {
        let data = read_tree(self.odb, id, dir)?;
        let mut entries = Vec::new();
        for entry in tree_entries(self.odb.hash(), &data) {
            let entry = entry.map_err(|e| CheckoutError::BadTree {
                id: *id,
                why: e.to_string(),
            })?;
            let mode = match entry.mode {
                0o100664 | 0o100640 => 0o100644,
                mode => mode,
            };
            entries.push((entry.name.to_vec(), mode, entry.id));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(entries)
    }
}
