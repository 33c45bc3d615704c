//! The repository's view of its object database, renewed when this process has written.
//!
//! A view lists the packs it opened; a pack installed later is not in it. Each view records
//! [`sluice_odb::written::writes`] when it was opened; asking for the objects after a write
//! (a fetch's pack, a repack's replacement, loose objects unpacked) opens the next view, so a
//! caller never reopens the database by hand. Views are chained and kept until the handle
//! goes: a `&ObjectDb` handed out stays valid, with the numbering of its packs, for as long as
//! the handle lives, which is what a walk or a pack being written needs. Another process's
//! packs are found on a miss (the view's rescan), never by renumbering a view under a reader.

use sluice_object::HashKind;
use sluice_odb::ranged::PackSource;
use sluice_odb::{ObjectDb, OdbError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// One view, and the one opened after it, if any.
#[derive(Debug)]
struct View {
    objects: ObjectDb,
    /// The process's write count when the view was opened.
    writes: u64,
    next: OnceLock<Box<View>>,
}

impl View {
    fn new(objects: ObjectDb, writes: u64) -> View {
        View {
            objects,
            writes,
            next: OnceLock::new(),
        }
    }
}

/// The views of one repository's objects, newest last.
#[derive(Debug)]
pub(crate) struct ObjectViews {
    /// The alternate directories given besides `info/alternates`, opened with every view.
    extra: Vec<PathBuf>,
    first: View,
}

impl ObjectViews {
    /// Opens the first view of `dir`, with `extra` alternate directories, and `source` for the
    /// bytes its ranged packs lack (every later view keeps it).
    pub(crate) fn open(
        dir: &Path,
        hash: HashKind,
        extra: Vec<PathBuf>,
        source: Option<Arc<dyn PackSource>>,
    ) -> Result<ObjectViews, OdbError> {
        let writes = sluice_odb::written::writes();
        let objects = match source {
            Some(source) => ObjectDb::open_with_source(dir, hash, &extra, source)?,
            None => ObjectDb::open_with_alternates(dir, hash, &extra)?,
        };
        let first = View::new(objects, writes);
        Ok(ObjectViews { extra, first })
    }

    /// The newest view, opening a new one first when this process has written since.
    pub(crate) fn current(&self) -> &ObjectDb {
        let mut view = &self.first;
        while let Some(next) = view.next.get() {
            view = next;
        }
        let writes = sluice_odb::written::writes();
        if view.writes == writes {
            return &view.objects;
        }
        match view.objects.reopened(&self.extra) {
            // Another thread may have opened one first: either is as new as the writes seen.
            Ok(fresh) => {
                let next = view.next.get_or_init(|| Box::new(View::new(fresh, writes)));
                &next.objects
            }
            // The directory could not be read again: the last view still answers, with a
            // rescan on a miss, as before.
            Err(_) => &view.objects,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::receive::{receive_into, Receiving};
    use crate::Repository;
    use sluice_object::{HashKind, ObjectId};
    use sluice_odb::testing::git;
    use std::process::{Command, Stdio};

    /// A pack of `src`'s history made by git, to be stored by the handle under test.
    fn pack_of(src: &std::path::Path) -> Vec<u8> {
        let mut child = Command::new("git")
            .current_dir(src)
            .args(["pack-objects", "--revs", "--stdout", "-q"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(child.stdin.as_mut().unwrap(), b"HEAD\n").unwrap();
        child.wait_with_output().unwrap().stdout
    }

    #[test]
    fn the_handle_sees_what_it_stored_and_keeps_the_views_it_gave_out() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        let dest = dir.path().join("dest");
        for repo in [&src, &dest] {
            git(dir.path(), &["init", "-q", repo.to_str().unwrap()]);
        }
        git(&src, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let hex = git(&src, &["rev-parse", "HEAD"]);
        let head = ObjectId::from_hex(HashKind::Sha1, hex.trim().as_bytes()).unwrap();
        let repo = Repository::discover(&dest).unwrap();
        let before = repo.objects();
        assert!(!before.contains(&head));
        receive_into(&mut &pack_of(&src)[..], &repo, Receiving::default()).unwrap();
        let after = repo.objects();
        assert!(after.contains(&head), "the stored pack is in the next view");
        assert_eq!(after.packs().len(), before.packs().len() + 1);
        assert_eq!(before.packs().len(), 0, "a view given out keeps its packs");
        assert!(
            std::ptr::eq(after, repo.objects()),
            "no write since: the same view"
        );
    }
}
