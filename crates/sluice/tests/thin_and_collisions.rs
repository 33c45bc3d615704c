//! Thin packs completed with --fix-thin, and SHA-1 collisions with objects the repository has.

use crate::util::pack_builder::{append_delta, PackBuilder};
use crate::util::{list_dir, stderr, stdout, text, Env, FastImport};
use sluice_object::{hash_object, HashKind, ObjectKind};
use std::path::Path;

fn source_with_tag(env: &Env) -> std::path::PathBuf {
    let repo = env.init("src", true);
    let mut fi = FastImport::new();
    for i in 0..30 {
        let a = text(i, 150);
        let b = text(i / 2, 90);
        let mark = fi.commit(
            "main",
            &format!("c{i}"),
            &[("a", "100644", &a), ("d/b", "100644", &b)],
        );
        if i == 14 {
            fi.tag("old", mark);
        }
    }
    env.fast_import(&repo, fi.finish());
    repo
}

fn pack_of(env: &Env, repo: &Path, revs: &str, thin: bool) -> Vec<u8> {
    let mut args = vec![
        "pack-objects",
        "--revs",
        "--stdout",
        "-q",
        "--delta-base-offset",
    ];
    if thin {
        args.push("--thin");
    }
    let out = env.git_with_input(repo, &args, revs.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    out.stdout
}

/// A repository holding the history up to tag `old`.
fn receiver(env: &Env, src: &Path, name: &str) -> std::path::PathBuf {
    let dst = env.init(name, true);
    let base = pack_of(env, src, "old\n", false);
    let out = env.git_with_input(&dst, &["index-pack", "--stdin"], &base);
    assert!(out.status.success());
    let old = String::from_utf8(env.git(src, &["rev-parse", "old"])).unwrap();
    env.git(&dst, &["update-ref", "refs/heads/main", old.trim()]);
    dst
}

#[test]
fn fix_thin_completes_the_pack_for_git() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let src = source_with_tag(&env);
        let dst = receiver(&env, &src, "dst");
        let thin = pack_of(&env, &src, "main\n^old\n", true);
        let before = list_dir(&dst.join("objects/pack"));
        let out = env.sluice(&dst, &["index-pack", "--stdin", "--fix-thin"], &thin);
        assert!(out.status.success(), "{}", stderr(&out));
        let hash = stdout(&out)
            .strip_prefix("pack\t")
            .unwrap()
            .trim()
            .to_owned();
        let after = list_dir(&dst.join("objects/pack"));
        assert_eq!(after.len(), before.len() + 3, "{after:?}");
        let pack = dst.join(format!("objects/pack/pack-{hash}.pack"));
        assert!(
            std::fs::metadata(&pack).unwrap().len() > thin.len() as u64,
            "bases were appended"
        );
        env.git(
            &dst,
            &["verify-pack", pack.with_extension("idx").to_str().unwrap()],
        );
        let main = String::from_utf8(env.git(&src, &["rev-parse", "main"])).unwrap();
        env.git(&dst, &["update-ref", "refs/heads/main", main.trim()]);
        env.git(&dst, &["fsck", "--strict", "--no-dangling"]);
        // git agrees about which objects the completed pack holds.
        let theirs = dst.join("theirs.pack");
        let out = env.git_with_input(
            &dst,
            &[
                "index-pack",
                "--stdin",
                "--fix-thin",
                theirs.to_str().unwrap(),
            ],
            &thin,
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let list = |idx: &Path| {
            let out = env.git_with_input(&dst, &["show-index"], &std::fs::read(idx).unwrap());
            let mut ids: Vec<String> = String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(|l| l.split(' ').nth(1).unwrap().to_owned())
                .collect();
            ids.sort();
            ids
        };
        assert_eq!(
            list(&pack.with_extension("idx")),
            list(&theirs.with_extension("idx"))
        );
    }
}

/// The zlib header of the first object appended after a thin pack's own data.
fn first_appended_zlib_header(pack: &[u8], thin: &[u8]) -> [u8; 2] {
    let mut at = thin.len() - 20;
    while pack[at] & 0x80 != 0 {
        at += 1;
    }
    [pack[at + 1], pack[at + 2]]
}

/// Appended bases are compressed at git's level for them (its loose-object level: 1 by
/// default, `core.compression` or `core.looseCompression` when set), which the zlib header
/// of each records.
#[test]
fn fix_thin_compresses_appended_bases_at_gits_level() {
    let env = Env::new();
    let src = source_with_tag(&env);
    let thin = pack_of(&env, &src, "main\n^old\n", true);
    for config in [
        &[][..],
        &["-c", "core.compression=9"],
        &["-c", "core.loosecompression=0"],
    ] {
        let mut headers = Vec::new();
        for tool in ["git", "sluice"] {
            let dst = receiver(
                &env,
                &src,
                &format!("level-{tool}-{}", config.len() + headers.len()),
            );
            let mut args: Vec<&str> = config.to_vec();
            args.extend(["index-pack", "--stdin", "--fix-thin"]);
            let out = match tool {
                "git" => env.git_with_input(&dst, &args, &thin),
                _ => env.sluice(&dst, &args, &thin),
            };
            assert!(out.status.success(), "{tool}: {}", stderr(&out));
            let name = stdout(&out)
                .trim()
                .strip_prefix("pack\t")
                .unwrap()
                .to_owned();
            let pack = std::fs::read(dst.join(format!("objects/pack/pack-{name}.pack"))).unwrap();
            headers.push(first_appended_zlib_header(&pack, &thin));
        }
        assert_eq!(headers[0], headers[1], "{config:?}");
    }
}

#[test]
fn thin_pack_without_fix_thin_is_refused_and_leaves_nothing() {
    let env = Env::new();
    let src = source_with_tag(&env);
    let dst = receiver(&env, &src, "dst");
    let thin = pack_of(&env, &src, "main\n^old\n", true);
    let before = list_dir(&dst.join("objects/pack"));
    let out = env.sluice(&dst, &["index-pack", "--stdin"], &thin);
    assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unresolved delta"),
        "{}",
        stderr(&out)
    );
    assert_eq!(list_dir(&dst.join("objects/pack")), before);

    // --fix-thin in a repository that lacks the bases fails the same way.
    let empty = env.init("empty", true);
    let out = env.sluice(&empty, &["index-pack", "--stdin", "--fix-thin"], &thin);
    assert_eq!(out.status.code(), Some(128));
    assert!(
        stderr(&out).contains("unresolved delta"),
        "{}",
        stderr(&out)
    );
    assert!(list_dir(&empty.join("objects/pack")).is_empty());
}

fn plant_loose(repo: &Path, id: &str, kind: &str, content: &[u8]) {
    let mut raw = format!("{kind} {}\0", content.len()).into_bytes();
    raw.extend_from_slice(content);
    let dir = repo.join("objects").join(&id[..2]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(&id[2..]), sluice_pack::inflate::deflate(&raw, 1)).unwrap();
}

#[test]
fn collisions_with_stored_objects_are_fatal() {
    let env = Env::new();
    let hello = b"hello\n".to_vec();
    let hello_id = hash_object(HashKind::Sha1, ObjectKind::Blob, &hello)
        .unwrap()
        .to_string();
    let base = text(3, 20);
    let child = {
        let mut c = base.clone();
        c.extend_from_slice(b"child\n");
        c
    };
    let child_id = hash_object(HashKind::Sha1, ObjectKind::Blob, &child)
        .unwrap()
        .to_string();

    let mut builder = PackBuilder::new();
    builder.object(ObjectKind::Blob, &hello);
    let (b, _) = builder.object(ObjectKind::Blob, &base);
    builder.ofs_delta(b, &append_delta(&base, b"child\n"));
    let pack = builder.build();

    for (id, name) in [(&hello_id, "whole"), (&child_id, "delta")] {
        let repo = env.init(name, true);
        // A stored object under the same id with other content.
        plant_loose(&repo, id, "blob", b"something else\n");
        let out = env.sluice(&repo, &["index-pack", "--stdin"], &pack);
        assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("SHA-1 collision found with {id}")),
            "{}",
            stderr(&out)
        );
        assert!(list_dir(&repo.join("objects/pack")).is_empty());
    }

    // The same object stored with the same content is no collision.
    let repo = env.init("same", true);
    plant_loose(&repo, &hello_id, "blob", &hello);
    plant_loose(&repo, &child_id, "blob", &child);
    let out = env.sluice(&repo, &["index-pack", "--stdin"], &pack);
    assert!(out.status.success(), "{}", stderr(&out));
}
