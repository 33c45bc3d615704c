//! The `packed-refs` file, parsed once per version of it: a fetch that updates thousands of
//! refs asks about each of them (its old value, names in its way) and would otherwise parse
//! the whole file every time.

use super::{Peeled, RefError};
use sluice_object::{HashKind, ObjectId};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// One entry of `packed-refs`: the name, the id and what it peels to as far as the file says.
pub(super) type PackedRef = (String, ObjectId, Peeled);

/// The entries of one version of `packed-refs`, sorted by name (as git writes them; sorted
/// again here, since nothing forces another writer to).
#[derive(Debug, Default)]
pub(super) struct PackedRefs {
    entries: Vec<PackedRef>,
}

impl PackedRefs {
    pub(super) fn entries(&self) -> &[PackedRef] {
        &self.entries
    }

    /// The entry named `name`.
    pub(super) fn find(&self, name: &str) -> Option<&PackedRef> {
        let at = self
            .entries
            .binary_search_by(|(n, _, _)| n.as_str().cmp(name))
            .ok()?;
        Some(&self.entries[at])
    }

    /// The first name at or after `prefix` in order that starts with it.
    pub(super) fn first_under(&self, prefix: &str) -> Option<&str> {
        let at = self
            .entries
            .partition_point(|(n, _, _)| n.as_str() < prefix);
        self.entries
            .get(at)
            .map(|(n, _, _)| n.as_str())
            .filter(|n| n.starts_with(prefix))
    }
}

/// What identifies one version of the file: a rewrite renames a new file into place, which
/// changes the inode even when the size and the time stamp come out the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Stamp {
    fn of(metadata: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            inode: metadata.ino(),
            len: metadata.len(),
            modified: metadata.modified().ok(),
        }
    }
}

/// One version of the file, parsed.
type Snapshot = (Stamp, Arc<PackedRefs>);

/// The last version of `packed-refs` read, shared by the clones of a [`super::Refs`].
#[derive(Debug, Default, Clone)]
pub(super) struct PackedCache {
    last: Arc<Mutex<Option<Snapshot>>>,
}

impl PackedCache {
    /// The file's entries as it is now: the last ones read, if it has not changed since.
    pub(super) fn load(&self, path: &Path, hash: HashKind) -> Result<Arc<PackedRefs>, RefError> {
        let metadata = match std::fs::metadata(path) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Arc::default());
            }
            Err(source) => {
                return Err(RefError::Io {
                    path: path.to_owned(),
                    source,
                })
            }
        };
        let stamp = Stamp::of(&metadata);
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((seen, packed)) = last.as_ref() {
            if *seen == stamp {
                return Ok(Arc::clone(packed));
            }
        }
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Arc::default()),
            Err(source) => {
                return Err(RefError::Io {
                    path: path.to_owned(),
                    source,
                })
            }
        };
        let packed = Arc::new(parse(&text, hash)?);
        *last = Some((stamp, Arc::clone(&packed)));
        Ok(packed)
    }
}

fn parse(text: &str, hash: HashKind) -> Result<PackedRefs, RefError> {
    let corrupt = || RefError::Corrupt("packed-refs".into());
    // "fully-peeled": every entry that peels has its `^` line, so one without peels to
    // nothing. "peeled": the same, but only for refs/tags/.
    let traits = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# pack-refs with:"))
        .unwrap_or_default();
    let has_trait = |t: &str| traits.split_whitespace().any(|x| x == t);
    let (fully, tags) = (has_trait("fully-peeled"), has_trait("peeled"));
    let mut entries: Vec<PackedRef> = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if let Some(peeled) = line.strip_prefix('^') {
            let id = ObjectId::from_hex(hash, peeled.as_bytes()).map_err(|_| corrupt())?;
            if let Some(last) = entries.last_mut() {
                last.2 = Peeled::Known(Some(id));
            }
            continue;
        }
        let (hex, name) = line.split_once(' ').ok_or_else(corrupt)?;
        let id = ObjectId::from_hex(hash, hex.as_bytes()).map_err(|_| corrupt())?;
        let peeled = if fully || (tags && name.starts_with("refs/tags/")) {
            Peeled::Known(None)
        } else {
            Peeled::Unknown
        };
        entries.push((name.to_owned(), id, peeled));
    }
    if !entries.is_sorted_by(|a, b| a.0 <= b.0) {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
    }
    Ok(PackedRefs { entries })
}

/// The whole `packed-refs` file for `entries`, as git writes it: sorted by name, each entry
/// that peels followed by its `^` line, under a header that promises only what the entries
/// know ("fully-peeled" when every entry's peel is known, "peeled" when every tag's is).
fn render(entries: &mut [PackedRef]) -> String {
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let known = |(_, _, peeled): &PackedRef| matches!(peeled, Peeled::Known(_));
    let fully = entries.iter().all(known);
    let tags = entries
        .iter()
        .filter(|(name, _, _)| name.starts_with("refs/tags/"))
        .all(known);
    let mut text = String::from("# pack-refs with:");
    for (has, word) in [
        (tags, " peeled"),
        (fully, " fully-peeled"),
        (true, " sorted"),
    ] {
        if has {
            text.push_str(word);
        }
    }
    text.push_str(" \n");
    for (name, id, peeled) in entries.iter() {
        text.push_str(&format!("{id} {name}\n"));
        if let Peeled::Known(Some(to)) = peeled {
            text.push_str(&format!("^{to}\n"));
        }
    }
    text
}

/// Rewrites the file at `path` with what `change` makes of its entries as read under its lock
/// (taken waiting up to `timeout`), as git rewrites it: no other writer's change made
/// meanwhile is lost. `None` leaves the file as it was.
pub(super) fn update(
    path: &Path,
    hash: HashKind,
    timeout: std::time::Duration,
    change: impl FnOnce(&[PackedRef]) -> Option<Vec<PackedRef>>,
) -> Result<(), RefError> {
    let held = sluice_odb::lockfile::HeldLock::take(path, timeout)?;
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            let path = path.to_owned();
            return Err(RefError::Io { path, source });
        }
    };
    let current = parse(&text, hash)?;
    match change(current.entries()) {
        None => Ok(()),
        Some(mut entries) => Ok(held.commit(render(&mut entries).as_bytes())?),
    }
}

/// Replaces the file at `path` with `entries`, through its lock.
pub(super) fn write(path: &Path, mut entries: Vec<PackedRef>) -> Result<(), RefError> {
    let text = render(&mut entries);
    sluice_odb::lockfile::write_locked(path, text.as_bytes(), false).map_err(RefError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(byte: u8) -> ObjectId {
        ObjectId::from_hex(HashKind::Sha1, &[byte; 40]).unwrap()
    }

    #[test]
    fn what_is_written_parses_back() {
        let entries = vec![
            (
                "refs/tags/v1".to_owned(),
                id(b'a'),
                Peeled::Known(Some(id(b'b'))),
            ),
            ("refs/heads/main".to_owned(), id(b'c'), Peeled::Known(None)),
        ];
        let text = render(&mut entries.clone());
        assert!(text.starts_with("# pack-refs with: peeled fully-peeled sorted \n"));
        let parsed = parse(&text, HashKind::Sha1).unwrap();
        let mut sorted = entries;
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(parsed.entries(), &sorted[..]);
    }

    #[test]
    fn unknown_peels_are_not_promised() {
        let mut entries = vec![
            ("refs/heads/main".to_owned(), id(b'c'), Peeled::Unknown),
            ("refs/tags/v1".to_owned(), id(b'a'), Peeled::Known(None)),
        ];
        assert!(render(&mut entries).starts_with("# pack-refs with: peeled sorted \n"));
    }
}
