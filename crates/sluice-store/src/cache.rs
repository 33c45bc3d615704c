//! Keeping a node's cache under its size bound (`--cache-size`): when the packs it holds add
//! up to more, the packs that no repository's newest generation names go first, the oldest
//! downloaded first, then the older generations' directories (whose hard links would keep
//! the files' space). What a newest generation names stays: it is what requests read now.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One cached pack: its files, their size, when it was downloaded.
struct Cached {
    files: Vec<PathBuf>,
    bytes: u64,
    when: SystemTime,
}

/// Trims the cache at `root` to `limit` bytes of packs, as far as the newest generations
/// (and those requests of any process hold) allow.
pub(crate) fn trim(root: &Path, limit: u64) {
    let repositories = repository_folders(root);
    let mut live = HashSet::new();
    let mut evictable = Vec::new();
    let mut total = 0;
    for folder in &repositories {
        if let Some(newest) = newest_generation(folder) {
            for name in list(&newest.join("objects/pack")) {
                live.insert(folder.join("packs").join(&name));
                live.insert(folder.join("ranged").join(name));
            }
        }
        let ranged = packs(&folder.join("ranged"));
        for cached in packs(&folder.join("packs")).into_iter().chain(ranged) {
            total += cached.bytes;
            if !cached.files.iter().any(|f| live.contains(f)) {
                evictable.push(cached);
            }
        }
    }
    evictable.sort_by_key(|c| c.when);
    for cached in evictable {
        if total <= limit {
            return;
        }
        cached
            .files
            .iter()
            .for_each(|f| drop(std::fs::remove_file(f)));
        total = total.saturating_sub(cached.bytes);
    }
    if total > limit {
        // The older generations hold links to evicted packs: their space comes back with them.
        for folder in &repositories {
            let newest = newest_generation(folder);
            for dir in list(&folder.join("gen")) {
                let dir = folder.join("gen").join(dir);
                if Some(&dir) != newest.as_ref() {
                    crate::held::remove_unless_held(&dir);
                }
            }
        }
    }
}

/// The names in a directory (none if it cannot be read).
fn list(dir: &Path) -> Vec<String> {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    (listing.filter_map(Result::ok))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Every repository folder under the cache: those with a `packs/` directory, at any depth
/// (a repository's name may have slashes).
fn repository_folders(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        if dir.join("packs").is_dir() {
            found.push(dir);
            continue;
        }
        for name in list(&dir) {
            let path = dir.join(name);
            if path.is_dir() {
                pending.push(path);
            }
        }
    }
    found
}

/// The newest generation directory of a repository folder.
fn newest_generation(folder: &Path) -> Option<PathBuf> {
    let newest = list(&folder.join("gen")).into_iter().max_by_key(|name| {
        name.split('-')
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0)
    });
    newest.map(|name| folder.join("gen").join(name))
}

/// The packs of a `packs/` (or `ranged/`) directory, each with all its files.
fn packs(dir: &Path) -> Vec<Cached> {
    let mut by_pack: std::collections::BTreeMap<String, Cached> = Default::default();
    for name in list(dir) {
        let path = dir.join(&name);
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        let pack = name.split('.').next().unwrap_or(&name).to_owned();
        let entry = by_pack.entry(pack).or_insert(Cached {
            files: Vec::new(),
            bytes: 0,
            when: SystemTime::now(),
        });
        // What it takes on disk: a ranged pack is sparse until read.
        entry.bytes += meta.len().min(meta.blocks() * 512);
        entry.when = entry.when.min(meta.modified().unwrap_or(SystemTime::now()));
        entry.files.push(path);
    }
    by_pack.into_values().collect()
}
