//! A push landing through a node whose cache is wiped under it: the push's private copy loses
//! the pack it received between the receive and the commit. The refs must not be committed
//! naming objects the store never got (what a wipe 50 ms into a push once did). Repositories
//! made with real git; the store in memory.

use crate::node::Node;
use crate::{Bucket, StoredRepo};
use sluice_object::{HashKind, ObjectId};
use sluice_repo::storage::RefChange;
use std::path::Path;

fn git(dir: &Path, args: &[&str]) -> String {
    sluice_odb::testing::git(dir, args).trim().to_owned()
}

fn id(hex: &str) -> ObjectId {
    ObjectId::from_hex(HashKind::Sha1, hex.as_bytes()).unwrap()
}

/// A node on a stored repository of one commit, the work repository it came from, and that
/// commit.
fn stored(dir: &Path) -> (Node, String) {
    let work = dir.join("work");
    std::fs::create_dir(&work).unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["commit", "-q", "--allow-empty", "-m", "one"]);
    git(dir, &["clone", "-q", "--bare", "work", "src.git"]);
    let bucket = Bucket::open(&"memory://b/p".parse().unwrap()).unwrap();
    let source = sluice_repo::Repository::open_served(&dir.join("src.git"), true).unwrap();
    let target = StoredRepo::new(&bucket, "p.git").unwrap();
    let discard = sluice_object::progress::Discard;
    crate::import::import(&source, &target, dir, &discard).unwrap();
    let first = git(&work, &["rev-parse", "HEAD"]);
    (Node::new(bucket, dir.join("cache")), first)
}

/// A new commit pushed by git into the private copy `workspace` (as receive-pack would leave
/// it: one pack, kept); its id.
fn received(dir: &Path, workspace: &Path) -> String {
    let work = dir.join("work");
    git(&work, &["commit", "-q", "--allow-empty", "-m", "two"]);
    let target = workspace.to_str().unwrap();
    git(&work, &["push", "-q", target, "HEAD:refs/heads/pushed"]);
    git(&work, &["rev-parse", "HEAD"])
}

fn change(name: &str, old: Option<&str>, new: &str) -> RefChange {
    RefChange {
        name: name.to_owned(),
        old: old.map(id),
        new: Some(id(new)),
    }
}

#[test]
fn a_push_whose_pack_was_wiped_before_it_landed_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (node, first) = stored(dir.path());
    let pinned = node.pin("p.git").unwrap().unwrap();
    let workspace = node.workspace(&pinned).unwrap();
    let second = received(dir.path(), workspace.dir());
    // The wipe: the files only this push's copy holds (the others are links into the cache).
    let pack_dir = workspace.dir().join("objects/pack");
    for entry in std::fs::read_dir(&pack_dir).unwrap() {
        let path = entry.unwrap().path();
        let pinned_pack = (pinned.manifest.packs.iter())
            .any(|p| path.file_stem().is_some_and(|s| s == p.name.as_str()));
        if !pinned_pack {
            std::fs::remove_file(path).unwrap();
        }
    }
    let changes = [change("refs/heads/main", Some(&first), &second)];
    let refused = node.commit_push(&pinned, &workspace, &changes);
    assert!(refused.is_err(), "{refused:?}");
    let now = pinned.repo.read().unwrap().unwrap().manifest;
    assert_eq!(now.refs, pinned.manifest.refs);
    assert_eq!(now.generation, pinned.manifest.generation);
}

#[test]
fn a_push_lands_with_its_pack_and_a_ref_may_name_an_object_already_stored() {
    let dir = tempfile::tempdir().unwrap();
    let (node, first) = stored(dir.path());
    let pinned = node.pin("p.git").unwrap().unwrap();
    let workspace = node.workspace(&pinned).unwrap();
    let second = received(dir.path(), workspace.dir());
    let changes = [
        change("refs/heads/main", Some(&first), &second),
        change("refs/heads/old", None, &first),
    ];
    let manifest = node.commit_push(&pinned, &workspace, &changes).unwrap();
    assert_eq!(manifest.refs.get("refs/heads/main"), Some(&id(&second)));
    assert_eq!(manifest.refs.get("refs/heads/old"), Some(&id(&first)));
    assert_eq!(manifest.packs.len(), pinned.manifest.packs.len() + 1);
}

#[test]
fn a_node_stopping_ends_its_maintenance_and_gives_the_lease_back() {
    let dir = tempfile::tempdir().unwrap();
    let (node, first) = stored(dir.path());
    // Maintenance after every push.
    let node = node.with_maintenance_after(0);
    let pinned = node.pin("p.git").unwrap().unwrap();
    let workspace = node.workspace(&pinned).unwrap();
    let second = received(dir.path(), workspace.dir());
    let changes = [change("refs/heads/main", Some(&first), &second)];
    node.commit_push(&pinned, &workspace, &changes).unwrap();
    node.stop_background();
    // Whether it was cut short or had ended, the lease is free and the push is there.
    let lease = crate::Lease::acquire(&pinned.repo, std::time::Duration::from_secs(60));
    lease.unwrap().release().unwrap();
    let now = pinned.repo.read().unwrap().unwrap().manifest;
    assert_eq!(now.refs.get("refs/heads/main"), Some(&id(&second)));
}
