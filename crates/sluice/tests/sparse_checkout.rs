//! A sparse checkout (`git sparse-checkout set`, cone mode) kept as git keeps it when a
//! checkout switches commits: files outside the cone stay out of the work tree and are marked
//! skip-worktree in the index, those inside are written, removed or kept as without one.
//! `git sparse-checkout` keeps its settings in `config.worktree`, which is read with the
//! repository's `config`. Patterns of git's non-cone mode are refused, changing nothing.

use crate::util::{copy_tree, file_names, gits, stderr, Env, FastImport};
use std::path::{Path, PathBuf};

/// A repository with files at the top, in `a/x`, `a/y` and `b`, on `main`, and a branch
/// `other` that changes, adds and deletes files inside and outside the cone `a/x`.
fn sparse_repository(env: &Env) -> PathBuf {
    let repo = env.init("sparse", false);
    let mut stream = FastImport::new();
    let main: &[(&str, &str, &[u8])] = &[
        ("top", "100644", b"top\n"),
        ("a/own", "100644", b"a's own\n"),
        ("a/x/f", "100644", b"x one\n"),
        ("a/x/deep/g", "100755", b"deep\n"),
        ("a/y/f", "100644", b"y one\n"),
        ("b/g", "100644", b"b one\n"),
        ("b/gone", "100644", b"gone\n"),
    ];
    stream.commit("main", "main", main);
    env.fast_import(&repo, stream.finish());
    env.git(&repo, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    env.git(&repo, &["reset", "-q", "--hard"]);
    env.git(&repo, &["checkout", "-q", "-b", "other"]);
    for (path, text) in [
        ("top", "top two\n"),
        ("a/x/f", "x two\n"),
        ("a/x/new", "new in x\n"),
        ("a/y/f", "y two\n"),
        ("b/g", "b two\n"),
        ("b/new", "new in b\n"),
    ] {
        std::fs::write(repo.join(path), text).unwrap();
    }
    env.git(&repo, &["rm", "-q", "b/gone", "a/x/deep/g"]);
    env.git(&repo, &["add", "-A"]);
    env.git(&repo, &["commit", "-q", "-m", "other"]);
    env.git(&repo, &["checkout", "-q", "main"]);
    repo
}

/// What git sees of a repository: status, the index with each entry's skip-worktree tag
/// (`S` outside, `H` inside), and the files the work tree holds.
fn view(env: &Env, repo: &Path) -> (String, String, Vec<String>) {
    let status = String::from_utf8(env.git(repo, &["status", "--porcelain"])).unwrap();
    let index = String::from_utf8(env.git(repo, &["ls-files", "-s", "-t"])).unwrap();
    let mut files = Vec::new();
    let mut dirs = vec![repo.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for name in file_names(&dir).into_iter().filter(|n| n != ".git") {
            let path = dir.join(&name);
            match path.is_dir() {
                true => dirs.push(path),
                false => files.push(path.strip_prefix(repo).unwrap().display().to_string()),
            }
        }
    }
    files.sort();
    (status, index, files)
}

/// Twins of a sparse checkout of `a/x` switch back and forth, with and without `-f`: the
/// same exit codes, messages, index (with its skip-worktree bits), status and work tree.
#[test]
fn switches_keep_a_sparse_checkout_as_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let repo = sparse_repository(&env);
        env.git(&repo, &["sparse-checkout", "set", "a/x"]);
        let theirs = env.path().join("theirs");
        copy_tree(&repo, &theirs);
        for step in [
            &["checkout", "other"][..],
            &["checkout", "main"],
            &["checkout", "-f", "other"],
            &["checkout", "-b", "topic", "main"],
            &["checkout", "other"],
        ] {
            let said = env.git_command(&theirs, step).output().unwrap();
            let out = env.sluice(&repo, step, b"");
            let what = format!("{step:?} with {git:?}");
            assert_eq!(out.status.code(), said.status.code(), "{what}");
            assert_eq!(
                stderr(&out),
                String::from_utf8_lossy(&said.stderr),
                "{what}"
            );
            assert_eq!(view(&env, &repo), view(&env, &theirs), "{what}");
        }
        env.git(&repo, &["fsck", "--strict", "--no-progress"]);
    }
}

/// Patterns of git's non-cone mode (gitignore-like) refuse a switch with a message that
/// names them; HEAD, the index and the work tree stay as they were. A restore of paths, which
/// needs no patterns, still works.
#[test]
fn non_cone_patterns_are_refused_and_change_nothing() {
    let env = Env::new();
    let repo = sparse_repository(&env);
    env.git(
        &repo,
        &["sparse-checkout", "set", "--no-cone", "/*", "!/b/"],
    );
    let before = (view(&env, &repo), env.git(&repo, &["rev-parse", "HEAD"]));
    let out = env.sluice(&repo, &["checkout", "other"], b"");
    assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
    assert!(stderr(&out).contains("non-cone mode"), "{}", stderr(&out));
    let now = || (view(&env, &repo), env.git(&repo, &["rev-parse", "HEAD"]));
    assert_eq!(now(), before);
    // A restore of paths needs no cone (the index's skip-worktree bits say what is out).
    std::fs::write(repo.join("top"), "changed\n").unwrap();
    let out = env.sluice(&repo, &["checkout", "--", "top"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(now(), before);
}

/// `clone --sparse` (and with `--filter=blob:none`, the monorepo's clone) makes what git's
/// makes: the worktree's settings and patterns' file byte for byte, the shared configuration
/// (byte for byte against git 2.47, which writes `extensions` after the branch), the index
/// with the files below the top marked skip-worktree, only the top's files in the work tree,
/// and in a partial clone only their blobs fetched. git's own `sparse-checkout set` then
/// widens Sluice's clone as it widens its own.
#[test]
fn sparse_clones_are_what_git_makes() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let source = sparse_repository(&env);
        env.git(&source, &["config", "uploadpack.allowFilter", "true"]);
        let url = format!("file://{}", source.display());
        for filter in [None, Some("--filter=blob:none")] {
            let mut views = Vec::new();
            for (sluice, name) in [(false, "git-clone"), (true, "sluice-clone")] {
                let mut args = vec!["clone", "-q", "--sparse", &url, name];
                args.extend(filter);
                let out = env.sluice_or_git(sluice, env.path(), &args);
                assert!(out.status.success(), "{}", stderr(&out));
                let clone = env.path().join(name);
                let read = |path: &str| std::fs::read(clone.join(path)).unwrap();
                let missing = env.git(
                    &clone,
                    &["rev-list", "--objects", "--all", "--missing=print"],
                );
                let missing = String::from_utf8(missing).unwrap();
                let missing = missing.lines().filter(|l| l.starts_with('?')).count();
                // git 2.39 writes `extensions` before the branch: compared as settings.
                let config = match env.git_version() >= (2, 47) {
                    true => read(".git/config"),
                    false => {
                        let listed = env.git(&clone, &["config", "--local", "-l"]);
                        let mut lines: Vec<&[u8]> = listed.split(|&b| b == b'\n').collect();
                        lines.sort();
                        lines.concat()
                    }
                };
                let files = [".git/config.worktree", ".git/info/sparse-checkout"].map(read);
                views.push((view(&env, &clone), files, config, missing));
                env.git(&clone, &["sparse-checkout", "set", "a/x"]);
                views.push((view(&env, &clone), files_after(&clone), Vec::new(), 0));
            }
            let what = format!("{filter:?} with {git:?}");
            assert_eq!(views[2], views[0], "{what}");
            assert_eq!(views[3], views[1], "{what}");
            env.git(
                &env.path().join("sluice-clone"),
                &["fsck", "--strict", "--no-progress"],
            );
            for name in ["git-clone", "sluice-clone"] {
                std::fs::remove_dir_all(env.path().join(name)).unwrap();
            }
        }
    }
}

/// The patterns' file after `sparse-checkout set`, beside an empty second file (the views
/// compare two).
fn files_after(clone: &Path) -> [Vec<u8>; 2] {
    [
        std::fs::read(clone.join(".git/info/sparse-checkout")).unwrap(),
        Vec::new(),
    ]
}

/// `clone --bare --sparse` fails as git's does once the objects are in (its sparse-checkout
/// needs a work tree): the same words (git 2.47's) and exit code, and no directory left
/// behind.
#[test]
fn bare_sparse_clones_fail_as_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let source = sparse_repository(&env);
        let path = source.display().to_string();
        let mut seen = Vec::new();
        for (sluice, name) in [(false, "git.git"), (true, "sluice.git")] {
            let args = ["clone", "--bare", "--sparse", &path, name];
            let out = env.sluice_or_git(sluice, env.path(), &args);
            let mut words = stderr(&out).replace(name, "<name>");
            // git 2.39 says nothing when the objects are linked before this failure; 2.47
            // says "done.", as Sluice does.
            if env.git_version() < (2, 47) {
                words = words.replace("done.\n", "");
            }
            seen.push((out.status.code(), words, env.path().join(name).exists()));
        }
        assert_eq!(seen[1], seen[0], "{git:?}");
    }
}
