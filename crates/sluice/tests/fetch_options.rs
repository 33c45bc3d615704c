//! Fetch options that change how objects are stored, against git's: `-k`/`--keep` keeps a
//! small pack as a pack (no loose objects), `--no-keep` undoes it; the zlib level of the loose
//! objects a small fetch stores.

use crate::util::{gits, stderr, Env};
use std::path::{Path, PathBuf};

/// A repository with one commit to fetch from.
fn source(env: &Env) -> PathBuf {
    let src = env.init("src", false);
    env.git(&src, &["commit", "-q", "--allow-empty", "-m", "one"]);
    src
}

/// A fresh clone of `src` at `repo` (whatever was there removed), through the transport so
/// that it starts with a pack, not links to `src`'s loose objects.
fn clone_anew(env: &Env, src: &Path, repo: &Path) {
    let _ = std::fs::remove_dir_all(repo);
    let (from, to) = (src.to_str().unwrap(), repo.to_str().unwrap());
    env.git(env.path(), &["clone", "-q", "--no-local", from, to]);
}

#[test]
fn keep_keeps_a_small_pack_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        for args in [&["-k"][..], &["--keep"], &["-k", "--no-keep"], &[]] {
            let mut stored = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("repo-{sluice}"));
                clone_anew(&env, &src, &repo);
                env.git(&src, &["commit", "-q", "--allow-empty", "-m", "more"]);
                let mut fetch = vec!["fetch", "-q"];
                fetch.extend(args);
                let out = env.sluice_or_git(sluice, &repo, &fetch);
                assert!(out.status.success(), "{}", stderr(&out));
                // Loose objects and packs, as git counts them (sizes left out).
                let counted = String::from_utf8(env.git(&repo, &["count-objects", "-v"])).unwrap();
                let counts: Vec<&str> = (counted.lines())
                    .filter(|l| l.starts_with("count:") || l.starts_with("packs:"))
                    .collect();
                stored.push((counts.join(" "), env.git(&repo, &["fsck", "--strict"])));
                env.git(&src, &["reset", "-q", "--hard", "HEAD~1"]);
            }
            assert_eq!(stored[1], stored[0], "{} {args:?}", git.display());
        }
    }
}

/// The zlib level of each loose object's stream, from its header's level field (0 fastest, 1
/// fast, 2 default, 3 best), by object: what git's zlib and Sluice's both write for one level.
fn loose_levels(repo: &Path) -> Vec<(String, u8)> {
    let objects = repo.join(".git/objects");
    let mut levels = Vec::new();
    for dir in crate::util::list_dir(&objects) {
        if dir.len() != 2 {
            continue;
        }
        for file in crate::util::list_dir(&objects.join(&dir)) {
            let bytes = std::fs::read(objects.join(&dir).join(&file)).unwrap();
            levels.push((format!("{dir}{file}"), bytes[1] >> 6));
        }
    }
    levels.sort();
    levels
}

/// A small fetch stores its objects loose at git's level: `core.looseCompression`, else
/// `core.compression`, else 1; -1 is zlib's default.
#[test]
fn a_small_fetch_stores_loose_objects_at_gits_level() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        for settings in [
            &[][..],
            &["core.compression=9"],
            &["core.compression=9", "core.looseCompression=4"],
            &["core.looseCompression=-1"],
            &["core.compression=0"],
        ] {
            let mut stored = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("repo-{sluice}"));
                clone_anew(&env, &src, &repo);
                for setting in settings {
                    let (key, value) = setting.split_once('=').unwrap();
                    env.git(&repo, &["config", key, value]);
                }
                std::fs::write(src.join("file"), "some text to compress, ".repeat(40)).unwrap();
                env.git(&src, &["add", "file"]);
                env.git(&src, &["commit", "-q", "-m", "more"]);
                let out = env.sluice_or_git(sluice, &repo, &["fetch", "-q"]);
                assert!(out.status.success(), "{}", stderr(&out));
                stored.push(loose_levels(&repo));
                env.git(&src, &["reset", "-q", "--hard", "HEAD~1"]);
            }
            assert!(!stored[0].is_empty());
            assert_eq!(stored[1], stored[0], "{} {settings:?}", git.display());
        }
    }
}

/// `fetch.writeCommitGraph` and `--[no-]write-commit-graph`: after the fetch, a layer of the
/// split commit-graph, the files byte for byte as git writes them.
#[test]
fn fetch_writes_the_commit_graph_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        let runs: [&[&str]; 4] = [
            &["-c", "fetch.writeCommitGraph=true", "fetch", "-q"],
            &["fetch", "-q", "--write-commit-graph"],
            &[
                "-c",
                "fetch.writeCommitGraph=true",
                "fetch",
                "-q",
                "--no-write-commit-graph",
            ],
            &["fetch", "-q", "--all", "--write-commit-graph"],
        ];
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let repo = env.path().join(format!("repo-{sluice}"));
            clone_anew(&env, &src, &repo);
            let mut graphs = Vec::new();
            for (n, args) in runs.iter().enumerate() {
                let message = format!("more {n}");
                env.git(&src, &["commit", "-q", "--allow-empty", "-m", &message]);
                let out = env.sluice_or_git(sluice, &repo, args);
                assert!(out.status.success(), "{}", stderr(&out));
                let dir = repo.join(".git/objects/info/commit-graphs");
                let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| {
                        (
                            e.file_name().to_string_lossy().into_owned(),
                            std::fs::read(e.path()).unwrap(),
                        )
                    })
                    .collect();
                files.sort();
                graphs.push(files);
            }
            env.git(&src, &["reset", "-q", "--hard", "HEAD~4"]);
            seen.push(graphs);
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}

/// `fetch --prune` that cannot delete a ref (`packed-refs` held by another process) says so in
/// git's words, goes on, and fails, as git's does.
#[test]
fn a_prune_that_cannot_delete_goes_on_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        let mut seen = Vec::new();
        for sluice in [false, true] {
            env.git(&src, &["branch", "-f", "gone", "HEAD"]);
            let repo = env.path().join("repo");
            clone_anew(&env, &src, &repo);
            env.git(&src, &["branch", "-q", "-D", "gone"]);
            env.git(&repo, &["pack-refs", "--all"]);
            let lock = repo.join(".git/packed-refs.lock");
            std::fs::write(&lock, "").unwrap();
            let out = env.sluice_or_git(sluice, &repo, &["fetch", "--prune"]);
            std::fs::remove_file(&lock).unwrap();
            let refs = String::from_utf8(env.git(&repo, &["for-each-ref"])).unwrap();
            seen.push((out.status.code(), stderr(&out), refs));
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}

/// The progress of a fetched pack, off a terminal with `--progress`: a pack git's fetch unpacks
/// (fewer objects than `fetch.unpackLimit`) shows nothing of its own, as git's unpack-objects,
/// run without `--progress`, shows nothing there; a kept pack shows index-pack's phases. (On
/// a terminal, "Unpacking objects" with its throughput, as git's: checked by hand, a test has
/// no terminal.)
#[test]
fn a_fetched_packs_progress_shows_what_gits_shows() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        for settings in [&[][..], &["-c", "fetch.unpackLimit=1"]] {
            let shown = [false, true].map(|sluice| {
                let repo = env.path().join(format!("repo-{sluice}"));
                clone_anew(&env, &src, &repo);
                env.git(&src, &["commit", "-q", "--allow-empty", "-m", "more"]);
                let fetch = [settings, &["fetch", "--progress"]].concat();
                let out = env.sluice_or_git(sluice, &repo, &fetch);
                assert!(out.status.success(), "{}", stderr(&out));
                env.git(&src, &["reset", "-q", "--hard", "HEAD~1"]);
                // Each phase of this side (not the server's).
                let said = stderr(&out);
                let mut phases: Vec<String> = (said.split(['\r', '\n']))
                    .filter(|line| line.ends_with(", done.") && !line.starts_with("remote:"))
                    .filter_map(|line| line.split_once(": "))
                    .map(|(title, _)| title.to_owned())
                    .collect();
                phases.dedup();
                phases
            });
            assert_eq!(shown[1], shown[0], "{} {settings:?}", git.display());
        }
    }
}
