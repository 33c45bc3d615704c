//! `clone --reference`, `--reference-if-able` and `--dissociate` borrow and copy objects as git
//! does, and a fetch offers what the alternates' refs reach as haves: each judged beside what
//! git makes from the same repositories.

use crate::upload_pack::{add_loose_commit, fsck, refs, source};
use crate::util::{gits, stderr, Env};
use std::path::Path;

/// The objects the repository stores itself, not counting what it borrows: the ids in its
/// packs, and its loose objects.
fn own_objects(env: &Env, git_dir: &Path) -> (Vec<String>, usize) {
    let mut ids = Vec::new();
    for entry in std::fs::read_dir(git_dir.join("objects/pack"))
        .unwrap()
        .flatten()
    {
        if entry.path().extension().is_some_and(|x| x == "idx") {
            let index = std::fs::read(entry.path()).unwrap();
            let out = env.git_with_input(git_dir, &["show-index"], &index);
            let listing = String::from_utf8(out.stdout).unwrap();
            ids.extend(
                listing
                    .lines()
                    .map(|l| l.split(' ').nth(1).unwrap().to_owned()),
            );
        }
    }
    ids.sort();
    let report = String::from_utf8(env.git(git_dir, &["count-objects", "-v"])).unwrap();
    let loose = report
        .lines()
        .find_map(|line| line.strip_prefix("count:"))
        .map(|value| value.trim().parse().unwrap())
        .unwrap();
    (ids, loose)
}

/// What `objects/info` holds: the alternates and the pack listing, by name and content.
fn objects_info(git_dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(git_dir.join("objects/info"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let text = std::fs::read_to_string(e.path()).unwrap();
                    // The listing names the pack, whose bytes differ between pack writers.
                    let text = match e.file_name() == "packs" {
                        true => text.lines().map(|l| &l[..2.min(l.len())]).collect(),
                        false => text,
                    };
                    (e.file_name().to_string_lossy().into_owned(), text)
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn references_borrow_and_dissociate_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        let path = src.to_str().unwrap().to_owned();
        let url = format!("file://{path}");
        // A reference with all of the source's history so far, one made of everything, and
        // two that cannot be borrowed from.
        env.git(env.path(), &["clone", "-q", "--bare", &path, "ref.git"]);
        // Objects no ref reaches, one packed and one loose: `--dissociate` copies neither.
        let reference = env.path().join("ref.git");
        let hash = |input: &[u8]| {
            let out = env.git_with_input(&reference, &["hash-object", "-w", "--stdin"], input);
            String::from_utf8(out.stdout).unwrap()
        };
        let packed = hash(b"packed, unreachable\n");
        hash(b"loose, unreachable\n");
        let out = env.git_with_input(
            &reference,
            &["pack-objects", "objects/pack/pack"],
            packed.as_bytes(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        add_loose_commit(&env, &src, 1);
        env.git(env.path(), &["clone", "-q", "--bare", &path, "all.git"]);
        env.git(env.path(), &["clone", "-q", "--depth=1", &url, "shallow"]);
        std::fs::create_dir(env.path().join("plain")).unwrap();
        for (name, args) in [
            ("reference", &["--reference", "ref.git", &url][..]),
            // The clone that pushed the new commit: a repository with a work tree.
            ("working-tree", &["--reference", "work1", &url][..]),
            ("all-borrowed", &["--reference", "all.git", &url][..]),
            (
                "two",
                &["--reference", "all.git", "--reference", "ref.git", &url][..],
            ),
            ("local", &["--reference", "ref.git", &path][..]),
            (
                "dissociate",
                &["--dissociate", "--reference", "ref.git", &url][..],
            ),
            (
                "dissociate-shared",
                &["--dissociate", "--shared", &path][..],
            ),
            ("dissociate-alone", &["--dissociate", &url][..]),
            ("if-able", &["--reference-if-able", "plain", &url][..]),
            (
                "if-able-shallow",
                &["--reference-if-able", "shallow", &url][..],
            ),
            ("not-a-repository", &["--reference", "plain", &url][..]),
            ("missing", &["--reference", "nowhere", &url][..]),
            ("shallow", &["--reference", "shallow", &url][..]),
        ] {
            let mut outputs = Vec::new();
            for (who, sluice) in [("ours", true), ("theirs", false)] {
                let dest = format!("{who}-{name}");
                let mut all = vec!["clone"];
                all.extend(args);
                all.push(&dest);
                let out = env.sluice_or_git(sluice, env.path(), &all);
                let text = stderr(&out).replace(&dest, "DEST");
                outputs.push((out.status.code(), text));
            }
            assert_eq!(outputs[0], outputs[1], "{name}");
            let ours = env.path().join(format!("ours-{name}"));
            let theirs = env.path().join(format!("theirs-{name}"));
            if outputs[1].0 != Some(0) {
                assert!(!ours.exists(), "{name}: a failed clone leaves nothing");
                continue;
            }
            assert_eq!(refs(&env, &ours), refs(&env, &theirs), "{name}");
            fsck(&env, &ours);
            assert!(
                env.git(&ours, &["status", "--porcelain"]).is_empty(),
                "{name}"
            );
            let (ours_git, theirs_git) = (ours.join(".git"), theirs.join(".git"));
            assert_eq!(objects_info(&ours_git), objects_info(&theirs_git), "{name}");
            assert_eq!(
                own_objects(&env, &ours_git),
                own_objects(&env, &theirs_git),
                "{name}"
            );
        }

        // A fetch offers the alternates' refs as haves: what the reference has since fetched
        // is not fetched again, only what came after it.
        add_loose_commit(&env, &src, 2);
        env.git(
            &env.path().join("ref.git"),
            &["fetch", "-q", &path, "+refs/*:refs/*"],
        );
        add_loose_commit(&env, &src, 3);
        for (who, sluice) in [("ours", true), ("theirs", false)] {
            let repo = env.path().join(format!("{who}-reference"));
            // The pack is kept whatever its size, to show what the server sent.
            let args = ["-c", "transfer.unpackLimit=1", "fetch", "-q", "origin"];
            let out = env.sluice_or_git(sluice, &repo, &args);
            assert!(out.status.success(), "{who}: {}", stderr(&out));
            fsck(&env, &repo);
        }
        let ours = env.path().join("ours-reference/.git");
        let theirs = env.path().join("theirs-reference/.git");
        assert_eq!(own_objects(&env, &ours), own_objects(&env, &theirs));
        assert_eq!(
            refs(&env, &env.path().join("ours-reference")),
            refs(&env, &env.path().join("theirs-reference"))
        );
    }
}
