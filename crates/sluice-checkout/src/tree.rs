//! Flattening a tree object into the sorted list of files a checkout writes, refusing every
//! tree git's checkout refuses, and building the cache tree (`TREE` extension) on the way.

use crate::index::CacheTree;
use crate::path_check::verify_path;
use crate::CheckoutError;
use crate::Objects;
use sluice_object::parse::{tree_entries, TreeEntry};
use sluice_object::{ObjectId, ObjectKind};

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

/// Reads the tree `root` and everything below it.
pub fn flatten(odb: &dyn Objects, root: &ObjectId) -> Result<FlatTree, CheckoutError> {
    let mut files = Vec::new();
    let mut prefix = Vec::new();
    let mut slashed = false;
    let cache_tree = walk(odb, root, &mut prefix, &mut files, 0, &mut slashed)?;
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

fn walk(
    odb: &dyn Objects,
    id: &ObjectId,
    prefix: &mut Vec<u8>,
    files: &mut Vec<TreeFile>,
    depth: usize,
    slashed: &mut bool,
) -> Result<CacheTree, CheckoutError> {
    if depth > MAX_DEPTH {
        return Err(CheckoutError::BadTree {
            id: *id,
            why: "trees nest too deep".into(),
        });
    }
    let (kind, data) = odb.read(id)?.ok_or_else(|| CheckoutError::MissingObject {
        id: *id,
        path: display(prefix),
    })?;
    if kind != ObjectKind::Tree {
        return Err(CheckoutError::BadTree {
            id: *id,
            why: format!("is a {kind}, not a tree"),
        });
    }
    let hash = odb.hash();
    let name = prefix
        .iter()
        .rposition(|&b| b == b'/')
        .map_or_else(|| prefix.clone(), |i| prefix[i + 1..].to_vec());
    let start = files.len();
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
        *slashed |= name.contains(&b'/');
        let mode = match mode {
            0o40000 => {
                let saved = prefix.len();
                if saved > 0 {
                    prefix.push(b'/');
                }
                prefix.extend_from_slice(name);
                let child = walk(odb, &entry_id, prefix, files, depth + 1, slashed)?;
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
        files.push(TreeFile {
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
        entry_count: (files.len() - start) as i64,
        id: Some(*id),
        children,
    })
}
