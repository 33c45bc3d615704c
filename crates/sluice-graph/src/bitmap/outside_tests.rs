//! Counting from a bitmap with commits outside it (pushed since the bitmapped pack was
//! written): what they reach must be all of what git's `rev-list --objects` lists, also when
//! a tree comes back (a revert) and the walk meets the commits out of their order, as a merge
//! whose second parent is an old commit makes it.

use super::walk_with_bitmap;
use crate::walk::WalkRequest;
use sluice_object::progress::Discard;
use sluice_object::{HashKind, ObjectId};
use sluice_odb::testing::git;
use sluice_odb::ObjectDb;
use std::path::Path;

/// A commit of `tree` with `parents`, dated `when` seconds into a fixed day: its id.
fn commit(dir: &Path, tree: &str, parents: &[&str], when: u64) -> String {
    let mut args = vec!["commit-tree", tree, "-m", "c"];
    for parent in parents {
        args.extend(["-p", parent]);
    }
    let date = format!("{} +0000", 1_700_000_000 + when);
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=T", "-c", "user.email=t@t"])
        .args(&args)
        .env("GIT_COMMITTER_DATE", &date)
        .env("GIT_AUTHOR_DATE", &date)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// The tree of the index once `files` are written (and `gone` removed).
fn tree(dir: &Path, files: &[(&str, &str)], gone: &[&str]) -> String {
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    for path in gone {
        std::fs::remove_file(dir.join(path)).unwrap();
    }
    git(dir, &["add", "-A"]);
    git(dir, &["write-tree"]).trim().to_owned()
}

fn id(hex: &str) -> ObjectId {
    ObjectId::from_hex(HashKind::Sha1, hex.trim().as_bytes()).unwrap()
}

#[test]
fn a_tree_that_comes_back_is_counted_whole() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    git(dir, &["init", "-q", "."]);
    // The base, bitmapped.
    let base = tree(dir, &[("g", "0\n")], &[]);
    let p = commit(dir, &base, &[], 1000);
    git(dir, &["update-ref", "refs/heads/main", &p]);
    git(dir, &["repack", "-q", "-a", "-d", "-b"]);
    // After it, loose: `a` adds d/f (tree T), `b` changes g (tree X, d/ still there), `c`
    // reverts `b` (tree T again), `d1` adds h; the tip merges `d1` with `a`, which makes the
    // walk meet `a` before `c` and `b`.
    let t = tree(dir, &[("d/f", "new\n")], &[]);
    let a = commit(dir, &t, &[&p], 1200);
    let x = tree(dir, &[("g", "1\n")], &[]);
    let b = commit(dir, &x, &[&a], 1300);
    let back = tree(dir, &[("g", "0\n")], &[]);
    assert_eq!(back, t);
    let c = commit(dir, &t, &[&b], 1400);
    let with_h = tree(dir, &[("h", "h\n")], &[]);
    let d1 = commit(dir, &with_h, &[&c], 1500);
    let tip = commit(dir, &with_h, &[&d1, &a], 9000);
    git(dir, &["update-ref", "refs/heads/main", &tip]);
    let listed = git(dir, &["rev-list", "--objects", &tip]);
    let mut expected: Vec<ObjectId> = listed.lines().map(|l| id(&l[..40])).collect();
    expected.sort();
    let odb = ObjectDb::open(&dir.join(".git/objects"), HashKind::Sha1).unwrap();
    let wants = [id(&tip)];
    let request = WalkRequest::reachable(&wants, &[], Default::default());
    let counted = walk_with_bitmap(&odb, &request, &Discard).unwrap();
    let counted = counted.expect("the bitmap answers");
    let mut ours: Vec<ObjectId> = counted.objects.iter().map(|o| o.id).collect();
    ours.sort();
    assert_eq!(ours, expected);
}
