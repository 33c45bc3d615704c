//! The reach memo gives the answer the walk gives: built with git in a temporary repository
//! (a bitmapped pack, then commits and an annotated tag it does not cover), counted with and
//! without the memo, before and after a repack that changes the bitmap.

use super::{walk_with_bitmap, ReachMemo};
use crate::walk::{ObjectFilter, WalkRequest};
use sluice_object::progress::Discard;
use sluice_object::{HashKind, IdSet, ObjectId};
use sluice_odb::testing::git;
use sluice_odb::ObjectDb;
use std::path::Path;

fn commit(dir: &Path, i: usize) -> ObjectId {
    std::fs::create_dir_all(dir.join("d")).unwrap();
    std::fs::write(dir.join(format!("d/f{i}")), format!("{i}\n")).unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", &format!("c{i}")]);
    let head = git(dir, &["rev-parse", "HEAD"]);
    ObjectId::from_hex(HashKind::Sha1, head.trim().as_bytes()).unwrap()
}

/// The ids a bitmap count of `wants` gives, sorted.
fn counted(odb: &ObjectDb, wants: &[ObjectId], memo: Option<&ReachMemo>) -> Vec<ObjectId> {
    let request = WalkRequest {
        wants,
        haves: &[],
        shallow: &IdSet::default(),
        filter: ObjectFilter::None,
        reach_memo: memo,
        cores: crate::walk::WalkCores::All,
        missing: Default::default(),
        cancel: Default::default(),
    };
    let walked = walk_with_bitmap(odb, &request, &Discard).unwrap().unwrap();
    let mut ids: Vec<ObjectId> = walked.objects.iter().map(|o| o.id).collect();
    ids.sort();
    ids
}

#[test]
fn a_remembered_reach_is_the_walked_one_and_a_new_bitmap_is_not_answered_from_it() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "."]);
    for i in 0..3 {
        commit(dir.path(), i);
    }
    git(dir.path(), &["repack", "-q", "-a", "-d", "-b"]);
    // Not in the bitmap: two commits and an annotated tag on the older one.
    let middle = commit(dir.path(), 3);
    git(
        dir.path(),
        &["tag", "-a", "-m", "t", "t", &middle.to_string()],
    );
    let tip = commit(dir.path(), 4);
    let tag = git(dir.path(), &["rev-parse", "t"]);
    let tag = ObjectId::from_hex(HashKind::Sha1, tag.trim().as_bytes()).unwrap();
    let wants = [tip, tag];
    let objects = dir.path().join(".git/objects");
    let memo = ReachMemo::new();

    let odb = ObjectDb::open(&objects, HashKind::Sha1).unwrap();
    let walked = counted(&odb, &wants, None);
    assert_eq!(counted(&odb, &wants, Some(&memo)), walked);
    // The same tips in another order: the remembered answer.
    assert_eq!(memo.kept.lock().unwrap().entries.len(), 1);
    assert_eq!(counted(&odb, &[tag, tip, tip], Some(&memo)), walked);
    assert_eq!(memo.kept.lock().unwrap().entries.len(), 1);

    // A repack writes a bitmap numbering the objects otherwise: the same tips are not
    // answered from the old one (its bits would name other objects).
    commit(dir.path(), 5);
    git(dir.path(), &["repack", "-q", "-a", "-d", "-b"]);
    let odb = ObjectDb::open(&objects, HashKind::Sha1).unwrap();
    assert_eq!(counted(&odb, &wants, None), walked);
    assert_eq!(counted(&odb, &wants, Some(&memo)), walked);
    assert_eq!(memo.kept.lock().unwrap().entries.len(), 2);
    assert_eq!(counted(&odb, &wants, Some(&memo)), walked);
}

#[test]
fn the_memo_keeps_at_most_its_bound() {
    let memo = ReachMemo::new();
    let reached = super::Reached {
        bits: super::Bitset::new(64),
        outside: Default::default(),
    };
    for i in 0..(super::reach_memo::MAX_ENTRIES + 5) {
        let tip = ObjectId::from_hex(HashKind::Sha1, format!("{i:040x}").as_bytes()).unwrap();
        memo.remember(super::reach_memo::Key::new(b"bitmap", &[tip]), &reached);
    }
    let kept = memo.kept.lock().unwrap();
    assert_eq!(kept.entries.len(), super::reach_memo::MAX_ENTRIES);
    let first = ObjectId::from_hex(HashKind::Sha1, format!("{:040x}", 5).as_bytes()).unwrap();
    assert_eq!(kept.entries[0].0.tips, [first]);
}
