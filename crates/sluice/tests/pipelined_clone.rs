//! A clone checks out while the pack's deltas are resolved: files whose blobs (and a tree) are
//! deltas, two deep, must come out as the tree says, with an index git reads as clean; through
//! the command line and through the library's clone engine.

use crate::upload_pack::fsck;
use crate::util::pack_builder::{append_delta, PackBuilder};
use crate::util::{gits, python, stderr, text, Env, FastImport};
use sluice_client::clone::{
    clone_into, CloneMessages, CloneNotice, CloneOptions, CloneShape, Origin,
};
use sluice_object::progress::Discard;
use sluice_object::{hash_object, HashKind, ObjectId, ObjectKind};
use sluice_remote::{ConnectOptions, Deepen, Remote};
use sluice_repo::Repository;
use std::path::Path;
use std::sync::Mutex;

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

/// The pipelined clone through the library, without the command line (`clone_into`): plan from
/// the advertisement, receive with the checkout running as the deltas resolve, write the refs
/// and the configuration. The
/// result must be what `git clone` makes of the same repository (refs, index, files), complete
/// for `git fsck --strict` and clean for `git status`; with every installed git serving.
#[test]
fn the_library_clones_with_checkout_during_resolution() {
    for git in gits() {
        let env = Env::with_git(git);
        let source = env.init("source", false);
        let mut history = FastImport::new();
        for version in 1..=4 {
            let (a, b) = (text(version, 300), text(version + 10, 120));
            let files: [(&str, &str, &[u8]); 3] = [
                ("a.txt", "100644", &a),
                ("dir/b.txt", "100644", &b),
                ("dir/run.sh", "100755", b"#!/bin/sh\necho run\n"),
            ];
            let mark = history.commit("main", "a version", &files);
            if version == 2 {
                history.tag("v2", mark);
            }
        }
        history.commit(
            "side",
            "a side branch",
            &[("side.txt", "100644", b"side\n")],
        );
        env.fast_import(&source, history.finish());
        env.git(&source, &["symbolic-ref", "HEAD", "refs/heads/main"]);
        let url = format!("file://{}", source.display());
        let theirs = env.path().join("theirs");
        env.git(env.path(), &["clone", "-q", &url, theirs.to_str().unwrap()]);

        let ours = env.init("ours", false);
        let warnings = clone_with_the_library(&env, &source, &ours);
        assert_eq!(warnings, Vec::<String>::new());
        fsck(&env, &ours);
        assert!(env.git(&ours, &["status", "--porcelain"]).is_empty());
        for args in [
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname) %(symref)",
            ][..],
            &["symbolic-ref", "HEAD"],
            &["ls-files", "-s"],
            &["ls-files", "--stage", "--", "dir"],
            &["config", "--get-regexp", "^(remote|branch)[.]"],
        ] {
            assert_eq!(env.git(&ours, args), env.git(&theirs, args), "{args:?}");
        }
        for file in ["a.txt", "dir/b.txt", "dir/run.sh"] {
            let read = |repo: &Path| std::fs::read(repo.join(file)).unwrap();
            assert_eq!(read(&ours), read(&theirs), "{file}");
        }
    }
}

/// Clones `source` into the empty repository `into` with sluice-client's `clone_into`; returns
/// the warnings it gave, after checking that the checkout ran during resolution.
fn clone_with_the_library(env: &Env, source: &Path, into: &Path) -> Vec<String> {
    let repo = Repository::open_git_dir(into.join(".git"), Some(into.to_owned())).unwrap();
    let mut connect = ConnectOptions::from_config(repo.config(), None).unwrap();
    connect.upload_pack = format!("'{}' upload-pack", env.git.display());
    let remote = Remote::resolve(env.path(), &format!("file://{}", source.display())).unwrap();
    let origin = Origin {
        name: "origin".into(),
        extra: Vec::new(),
    };
    let options = CloneOptions {
        shape: CloneShape::default(),
        deepen: Deepen::default(),
        filter: None,
        tags: true,
        check_out: true,
        reject_shallow: false,
        connect,
        local: None,
        bundle_uri: true,
        bundle_from: None,
        remote_progress: false,
        receive_progress: &Discard,
        early_checkout_progress: &Discard,
        checkout_progress: &Discard,
    };
    let told = Collected::default();
    let initial = "refs/heads/master";
    let cloned = clone_into(&remote, &origin, &repo, initial, &options, &told).unwrap();
    assert!(
        cloned.checked_out_early,
        "the checkout ran while the pack was resolved"
    );
    let head = env.git(source, &["rev-parse", "HEAD"]);
    assert_eq!(
        cloned.head.map(|id| format!("{id}\n").into_bytes()),
        Some(head)
    );
    told.0.into_inner().unwrap()
}

/// The warnings a clone gave.
#[derive(Default)]
struct Collected(Mutex<Vec<String>>);

impl CloneMessages for Collected {
    fn tell(&self, told: CloneNotice<'_>) {
        if let CloneNotice::Warning(warning) = told {
            self.0.lock().unwrap().push(warning.to_owned());
        }
    }

    fn remote_progress(&self, _: &[u8]) {}
}
