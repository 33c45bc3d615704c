//! A clone checks out while the pack's deltas are resolved: files whose blobs (and a tree) are
//! deltas, two deep, must come out as the tree says, with an index git reads as clean.

use crate::upload_pack::fsck;
use crate::util::pack_builder::{append_delta, PackBuilder};
use crate::util::{python, stderr, Env};
use sluice_object::{hash_object, HashKind, ObjectId, ObjectKind};
use std::path::Path;

fn tree_entry(mode: &str, name: &str, id: &ObjectId) -> Vec<u8> {
    let mut out = format!("{mode} {name}\0").into_bytes();
    out.extend_from_slice(id.as_bytes());
    out
}

fn id_of(kind: ObjectKind, data: &[u8]) -> ObjectId {
    hash_object(HashKind::Sha1, kind, data).unwrap()
}

#[test]
fn files_stored_as_deltas_are_checked_out_while_resolving() {
    let env = Env::new();
    let mut pack = PackBuilder::new();
    let base = b"line one\nline two\n".repeat(50);
    let (base_at, base_id) = pack.object(ObjectKind::Blob, &base);
    let once_suffix = b"a line added\n";
    let once: Vec<u8> = [&base[..], once_suffix].concat();
    let once_at = pack.ofs_delta(base_at, &append_delta(&base, once_suffix));
    let twice_suffix = b"and another\n";
    let twice: Vec<u8> = [&once[..], twice_suffix].concat();
    pack.ofs_delta(once_at, &append_delta(&once, twice_suffix));
    // dir/ as a delta of an older dir/ that had only c.txt.
    let old_dir = tree_entry("100644", "c.txt", &base_id);
    let (old_dir_at, _) = pack.object(ObjectKind::Tree, &old_dir);
    let added = tree_entry("100644", "d.txt", &id_of(ObjectKind::Blob, &twice));
    let dir: Vec<u8> = [&old_dir[..], &added[..]].concat();
    pack.ofs_delta(old_dir_at, &append_delta(&old_dir, &added));
    let root: Vec<u8> = [
        tree_entry("100644", "a.txt", &id_of(ObjectKind::Blob, &once)),
        tree_entry("100644", "b.txt", &base_id),
        tree_entry("40000", "dir", &id_of(ObjectKind::Tree, &dir)),
    ]
    .concat();
    let (_, root_id) = pack.object(ObjectKind::Tree, &root);
    let commit = format!(
        "tree {root_id}\nauthor A <a@example.com> 1700000000 +0000\n\
         committer C <c@example.com> 1700000000 +0000\n\nsnapshot\n"
    );
    let (_, commit_id) = pack.object(ObjectKind::Commit, commit.as_bytes());
    let pack_path = env.path().join("served.pack");
    std::fs::write(&pack_path, pack.build()).unwrap();

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/bad_upload_pack.py");
    let upload = format!(
        "--upload-pack={} {} good {} {commit_id}",
        python(),
        script.display(),
        pack_path.display()
    );
    // Any repository serves as the address: the stand-in ignores it. A URL, since from a path
    // a clone would link the (empty) repository's objects instead of reading the pack.
    let address = env.init("address.git", true);
    let remote = format!("file://{}", address.display());
    let ours = env.path().join("ours");
    let out = env.sluice(
        env.path(),
        &["clone", "-q", &upload, &remote, ours.to_str().unwrap()],
        b"",
    );
    assert!(out.status.success(), "sluice clone: {}", stderr(&out));
    fsck(&env, &ours);
    // Every file as the tree has it, and the index as git reads the tree.
    for (file, content) in [
        ("a.txt", &once),
        ("b.txt", &base),
        ("dir/c.txt", &base),
        ("dir/d.txt", &twice),
    ] {
        assert_eq!(&std::fs::read(ours.join(file)).unwrap(), content, "{file}");
    }
    let listed = env.git(
        &ours,
        &[
            "ls-tree",
            "-r",
            "--format=%(objectmode) %(objectname) 0\t%(path)",
            "HEAD",
        ],
    );
    assert_eq!(env.git(&ours, &["ls-files", "-s"]), listed);
    assert!(env.git(&ours, &["status", "--porcelain"]).is_empty());
}
