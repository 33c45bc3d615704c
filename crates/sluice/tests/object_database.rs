//! `sluice-odb` reads every object git stores (loose, packed with deltas, behind an index of
//! version 1, through alternates) exactly as `git cat-file` shows it, and writes loose objects
//! git accepts.

use crate::util::{text, Env, FastImport};
use sluice_object::{HashKind, ObjectId, ObjectKind};
use sluice_repo::Repository;
use std::path::Path;

/// Every object of the repository, as `git cat-file --batch-all-objects --batch` reports it.
fn git_objects(env: &Env, repo: &Path) -> Vec<(ObjectId, ObjectKind, Vec<u8>)> {
    let out = env.git(repo, &["cat-file", "--batch-all-objects", "--batch"]);
    let mut objects = Vec::new();
    let mut rest = &out[..];
    while !rest.is_empty() {
        let newline = rest.iter().position(|&b| b == b'\n').unwrap();
        let header = std::str::from_utf8(&rest[..newline]).unwrap();
        let mut parts = header.split(' ');
        let id = ObjectId::from_hex(HashKind::Sha1, parts.next().unwrap().as_bytes()).unwrap();
        let kind = ObjectKind::from_name(parts.next().unwrap().as_bytes()).unwrap();
        let size: usize = parts.next().unwrap().parse().unwrap();
        let data = rest[newline + 1..newline + 1 + size].to_vec();
        rest = &rest[newline + 2 + size..];
        objects.push((id, kind, data));
    }
    objects
}

fn history(env: &Env, repo: &Path, commits: usize, branch: &str) {
    let mut fi = FastImport::new();
    for i in 0..commits {
        let a = text(i, 80);
        fi.commit(
            branch,
            "c",
            &[
                ("a", "100644", &a),
                ("b", "100644", format!("{branch} {i}\n").as_bytes()),
            ],
        );
    }
    env.fast_import(repo, fi.finish());
}

fn assert_reads_all(env: &Env, repo: &Path) {
    let expected = git_objects(env, repo);
    assert!(!expected.is_empty());
    let opened = Repository::discover(repo).unwrap();
    for (id, kind, data) in expected {
        assert!(opened.objects().contains(&id), "{id} not found");
        let (k, d) = opened
            .objects()
            .read(&id)
            .unwrap()
            .unwrap_or_else(|| panic!("{id} unreadable"));
        assert_eq!((k, &d), (kind, &data), "{id}");
    }
    let missing =
        ObjectId::from_hex(HashKind::Sha1, b"0123456789012345678901234567890123456789").unwrap();
    assert!(!opened.objects().contains(&missing));
    assert!(opened.objects().read(&missing).unwrap().is_none());
}

#[test]
fn reads_loose_packed_and_v1_indexed_objects() {
    let env = Env::new();
    let repo = env.init("r", false);
    history(&env, &repo, 30, "main");
    env.git(&repo, &["repack", "-adq", "--depth=20"]);
    // Loose objects on top of the pack, from ordinary commits.
    env.git(&repo, &["checkout", "-q", "main"]);
    for i in 0..3 {
        std::fs::write(repo.join("loose.txt"), text(100 + i, 40)).unwrap();
        env.git(&repo, &["add", "loose.txt"]);
        env.git(&repo, &["commit", "-q", "-m", "loose"]);
    }
    assert!(
        repo.join(".git/objects").read_dir().unwrap().count() > 3,
        "loose objects exist"
    );
    assert_reads_all(&env, &repo);

    // The same pack behind a version 1 index.
    let pack_dir = repo.join(".git/objects/pack");
    let pack = crate::util::list_dir(&pack_dir)
        .into_iter()
        .find(|n| n.ends_with(".pack"))
        .unwrap();
    let pack = pack_dir.join(pack);
    let idx = pack.with_extension("idx");
    std::fs::remove_file(&idx).unwrap();
    env.git(
        &repo,
        &["index-pack", "--index-version=1", pack.to_str().unwrap()],
    );
    assert_reads_all(&env, &repo);
}

#[test]
fn reads_through_alternates_and_discovers_from_subdirectories() {
    let env = Env::new();
    let shared = env.init("shared", true);
    history(&env, &shared, 10, "main");
    env.git(&shared, &["repack", "-adq"]);
    let repo = env.init("borrower", false);
    std::fs::write(
        repo.join(".git/objects/info/alternates"),
        format!("{}\n", shared.join("objects").display()),
    )
    .unwrap();
    history(&env, &repo, 2, "own");
    std::fs::create_dir_all(repo.join("sub/dir")).unwrap();
    let opened = Repository::discover(&repo.join("sub/dir")).unwrap();
    assert_eq!(opened.work_tree(), Some(repo.as_path()));
    for (id, kind, data) in git_objects(&env, &shared) {
        assert_eq!(opened.objects().read(&id).unwrap(), Some((kind, data)));
    }
}

#[test]
fn written_loose_objects_satisfy_git() {
    let env = Env::new();
    let repo = env.init("w", true);
    let opened = Repository::discover(&repo).unwrap();
    assert!(opened.work_tree().is_none());
    let id = opened
        .objects()
        .loose()
        .write(ObjectKind::Blob, b"written by sluice\n", 1)
        .unwrap();
    let shown = env.git(&repo, &["cat-file", "-p", &id.to_string()]);
    assert_eq!(shown, b"written by sluice\n");
    let typed = env.git(&repo, &["cat-file", "-t", &id.to_string()]);
    assert_eq!(typed, b"blob\n");
    env.git(&repo, &["fsck", "--strict"]);
    // Writing it again is a no-op.
    assert_eq!(
        opened
            .objects()
            .loose()
            .write(ObjectKind::Blob, b"written by sluice\n", 1)
            .unwrap(),
        id
    );
}
