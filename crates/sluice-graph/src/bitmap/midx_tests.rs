//! A multi-pack-index bitmap is what counting uses: built with git in a temporary repository,
//! the bitmap answers (rather than the walk) and places every object where its pack has it.

use super::walk_with_bitmap;
use crate::walk::{walk_objects, ObjectFilter, WalkRequest};
use sluice_object::progress::Discard;
use sluice_object::{HashKind, IdSet, ObjectId};
use sluice_odb::midx::{write_midx_with, MidxOptions};
use sluice_odb::testing::git;
use sluice_odb::ObjectDb;

#[test]
fn counting_uses_the_multi_pack_index_bitmap() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "."]);
    for i in 0..3 {
        std::fs::write(dir.path().join(format!("f{i}")), format!("{i}\n")).unwrap();
        git(dir.path(), &["add", "."]);
        git(dir.path(), &["commit", "-q", "-m", &format!("c{i}")]);
        git(dir.path(), &["repack", "-q", "-d"]);
    }
    git(dir.path(), &["multi-pack-index", "write", "--bitmap"]);
    let objects = dir.path().join(".git/objects");
    let odb = ObjectDb::open(&objects, HashKind::Sha1).unwrap();
    let head = git(dir.path(), &["rev-parse", "HEAD"]);
    let head = ObjectId::from_hex(HashKind::Sha1, head.trim().as_bytes()).unwrap();
    let request = WalkRequest {
        wants: &[head],
        haves: &[],
        shallow: &IdSet::default(),
        filter: ObjectFilter::None,
        reach_memo: None,
        cores: crate::walk::WalkCores::All,
        missing: Default::default(),
        cancel: Default::default(),
    };
    let counted = walk_with_bitmap(&odb, &request, &Discard).unwrap().unwrap();
    let located = counted.located.as_ref().unwrap();
    assert_eq!(located.at.len(), counted.objects.len());
    for (object, &(pack, position)) in counted.objects.iter().zip(&located.at) {
        let index = odb.packs()[pack as usize].index();
        assert_eq!(index.id(position as usize), object.id);
    }
    let mut walked: Vec<ObjectId> = (walk_objects(&odb, &request, &Discard).unwrap().objects)
        .iter()
        .map(|o| o.id)
        .collect();
    let mut bitmapped: Vec<ObjectId> = counted.objects.iter().map(|o| o.id).collect();
    walked.sort();
    bitmapped.sort();
    assert_eq!(walked, bitmapped);
    // Rewritten by Sluice without a bitmap: git's is gone, the walk answers; with Sluice's
    // bitmap, the bitmap answers the same.
    let pack_dir = sluice_odb::pack_dir(&objects);
    write_midx_with(&pack_dir, HashKind::Sha1, &MidxOptions::default()).unwrap();
    assert!(walk_with_bitmap(&odb, &request, &Discard)
        .unwrap()
        .is_none());
    let options = MidxOptions {
        bitmap: true,
        ..MidxOptions::default()
    };
    let (_, layout) = write_midx_with(&pack_dir, HashKind::Sha1, &options).unwrap();
    let (tips, cancel) = (&[head][..], Default::default());
    super::write_midx_bitmap(
        (&pack_dir, &layout),
        &odb,
        (tips, tips, &Default::default()),
        (None, Default::default()),
        &Discard,
        &cancel,
    )
    .unwrap();
    let counted = walk_with_bitmap(&odb, &request, &Discard).unwrap().unwrap();
    let mut ours: Vec<ObjectId> = counted.objects.iter().map(|o| o.id).collect();
    ours.sort();
    assert_eq!(ours, walked);
}
