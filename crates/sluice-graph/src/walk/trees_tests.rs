//! The parallel listing of trees gives the one-threaded walk's list, object for object: on a
//! history built with git that has what makes the seen set matter (merges that bring back
//! trees a side branch listed, a revert to an earlier tree, a directory copied and moved, an
//! empty commit), for a clone and for a fetch with haves, with runs of one commit and more.

use super::TreeListing;
use crate::walk::ObjectFilter;
use crate::walk::{traverse_objects_listing, WalkRequest, Walked};
use sluice_object::progress::Discard;
use sluice_object::{HashKind, IdSet, ObjectId};
use sluice_odb::testing::git;
use sluice_odb::ObjectDb;
use std::path::Path;

fn write(dir: &Path, path: &str, text: &str) {
    let path = dir.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A", "."]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", message]);
}

fn id(dir: &Path, rev: &str) -> ObjectId {
    let hex = git(dir, &["rev-parse", rev]);
    ObjectId::from_hex(HashKind::Sha1, hex.trim().as_bytes()).unwrap()
}

/// A history whose walk meets the same trees from several commits.
fn history(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main", "."]);
    for i in 0..6 {
        write(dir, &format!("a/b/c/f{}", i % 3), &format!("{i}\n"));
        write(dir, "top", &format!("top {i}\n"));
        commit(dir, &format!("main {i}"));
    }
    git(dir, &["checkout", "-q", "-b", "side", "main~3"]);
    for i in 0..5 {
        write(dir, &format!("s/d{}/g", i % 2), &format!("side {i}\n"));
        write(dir, "a/b/c/f0", &format!("side {i}\n"));
        commit(dir, &format!("side {i}"));
    }
    git(dir, &["checkout", "-q", "main"]);
    git(dir, &["merge", "-q", "--no-edit", "-X", "theirs", "side"]);
    // A copy of a directory, then a move of the copy, then a revert of both.
    let copy = std::fs::read_to_string(dir.join("a/b/c/f1")).unwrap();
    write(dir, "copy/b/c/f1", &copy);
    commit(dir, "copy");
    git(dir, &["mv", "copy", "moved"]);
    commit(dir, "move");
    git(dir, &["revert", "--no-edit", "HEAD"]);
    git(dir, &["revert", "--no-edit", "HEAD~2"]);
    commit(dir, "empty");
    git(dir, &["checkout", "-q", "-b", "late", "side~2"]);
    write(dir, "a/b/c/f2", "late\n");
    commit(dir, "late");
    git(dir, &["checkout", "-q", "main"]);
}

fn walk(odb: &ObjectDb, wants: &[ObjectId], haves: &[ObjectId], listing: TreeListing) -> Walked {
    let request = WalkRequest {
        wants,
        haves,
        shallow: &IdSet::default(),
        filter: ObjectFilter::None,
        reach_memo: None,
        cores: crate::walk::WalkCores::All,
        missing: Default::default(),
        cancel: Default::default(),
    };
    traverse_objects_listing(odb, &request, &Discard, listing).unwrap()
}

#[test]
fn parallel_listing_is_the_one_threaded_walks_list() {
    let dir = tempfile::tempdir().unwrap();
    history(dir.path());
    let odb = ObjectDb::open(&dir.path().join(".git/objects"), HashKind::Sha1).unwrap();
    let tips = [id(dir.path(), "main"), id(dir.path(), "late")];
    let cases: [(&[ObjectId], &[ObjectId]); 3] = [
        (&tips, &[]),
        (&tips[..1], &[]),
        (&tips, &[id(dir.path(), "side~3"), id(dir.path(), "main~6")]),
    ];
    for (wants, haves) in cases {
        let one = walk(&odb, wants, haves, TreeListing::OneThread);
        assert!(one.objects.len() > 20);
        for (threads, run) in [(1, 1), (3, 1), (2, 3), (2, 64)] {
            let parallel = walk(&odb, wants, haves, TreeListing::Parallel { threads, run });
            assert_eq!(
                parallel.objects, one.objects,
                "{threads} threads, runs of {run}"
            );
            assert_eq!(parallel.known_by_path, one.known_by_path);
        }
    }
}

/// A tree missing from the repository is an error either way, and the same one.
#[test]
fn a_missing_tree_fails_both_walks_alike() {
    let dir = tempfile::tempdir().unwrap();
    history(dir.path());
    let missing = id(dir.path(), "main~4:a/b");
    let hex = missing.to_string();
    std::fs::remove_file(
        dir.path()
            .join(".git/objects")
            .join(&hex[..2])
            .join(&hex[2..]),
    )
    .unwrap();
    let odb = ObjectDb::open(&dir.path().join(".git/objects"), HashKind::Sha1).unwrap();
    let request = WalkRequest {
        wants: &[id(dir.path(), "main")],
        haves: &[],
        shallow: &IdSet::default(),
        filter: ObjectFilter::None,
        reach_memo: None,
        cores: crate::walk::WalkCores::All,
        missing: Default::default(),
        cancel: Default::default(),
    };
    let error = |listing| {
        let walked = traverse_objects_listing(&odb, &request, &Discard, listing);
        walked.map(drop).unwrap_err().to_string()
    };
    let one = error(TreeListing::OneThread);
    assert!(one.contains(&hex), "{one}");
    let parallel = TreeListing::Parallel { threads: 2, run: 2 };
    assert_eq!(error(parallel), one);
}
