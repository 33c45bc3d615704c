//! `sluice push --recurse-submodules` beside `git push`: twin copies of a superproject whose
//! submodule has a commit no remote has yet, pushed with `check`, `on-demand` and `only` by
//! git on one side and Sluice on the other (git's receive-pack behind both). Exit codes, what
//! each prints and the refs of both servers must be the same.

use crate::util::{gits, Env};
use std::path::{Path, PathBuf};

/// Builds `seed/` (bare `sub.git` and `super.git`, and `work`, a clone of `super.git` with
/// `sub.git` checked out at `sub`, its remotes given as relative paths) and copies it to
/// `git/` and `sluice/`.
fn twins(env: &Env) -> [PathBuf; 2] {
    let seed = env.path().join("seed");
    std::fs::create_dir(&seed).unwrap();
    for bare in ["sub.git", "super.git"] {
        env.git(&seed, &["init", "-q", "--bare", "-b", "main", bare]);
    }
    env.git(&seed, &["clone", "-q", "sub.git", "subwork"]);
    let subwork = seed.join("subwork");
    env.git(&subwork, &["commit", "-q", "--allow-empty", "-m", "s1"]);
    env.git(&subwork, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
    env.git(&seed, &["clone", "-q", "super.git", "work"]);
    let work = seed.join("work");
    env.git(&work, &["remote", "set-url", "origin", "../super.git"]);
    let add = ["-c", "protocol.file.allow=always", "submodule", "add", "-q"];
    env.git(&work, &[&add[..], &["../sub.git", "sub"]].concat());
    env.git(
        &work.join("sub"),
        &["remote", "set-url", "origin", "../../sub.git"],
    );
    env.git(&work, &["commit", "-q", "-m", "add sub"]);
    env.git(&work, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
    ["git", "sluice"].map(|side| {
        let dir = env.path().join(side);
        crate::util::copy_tree(&seed, &dir);
        dir
    })
}

/// Commits in the submodule (not pushed) and records it in the superproject, on one side.
fn bump(env: &Env, side: &Path, name: &str) {
    let work = side.join("work");
    env.git(
        &work.join("sub"),
        &["commit", "-q", "--allow-empty", "-m", name],
    );
    env.git(&work, &["add", "sub"]);
    env.git(&work, &["commit", "-q", "-m", name]);
}

/// Exit code, stdout and stderr of a push on one side, without the line git's transport adds
/// when it abandons the connection ("the remote end hung up unexpectedly").
fn push(env: &Env, side: &Path, sluice: bool, mode: &str) -> (Option<i32>, String, String) {
    let option = format!("--recurse-submodules={mode}");
    let args = ["push", &option, "origin", "HEAD:refs/heads/main"];
    crate::util::said_by_push(&env.sluice_or_git(sluice, &side.join("work"), &args))
}

/// The refs of both servers of a side.
fn servers(env: &Env, side: &Path) -> Vec<u8> {
    let format = "--format=%(refname) %(objectname)";
    let mut refs = env.git(&side.join("sub.git"), &["for-each-ref", format]);
    refs.extend(env.git(&side.join("super.git"), &["for-each-ref", format]));
    refs
}

#[test]
fn submodule_commits_are_checked_or_pushed_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        let step = |mode: &str, code: i32, says: &str| {
            let theirs = push(&env, &sides[0], false, mode);
            assert_eq!(theirs.0, Some(code), "git's push {mode}: {theirs:?}");
            assert!(theirs.2.contains(says), "git's push {mode}: {theirs:?}");
            let ours = push(&env, &sides[1], true, mode);
            assert_eq!(ours, theirs, "{mode} with {git:?}");
            assert_eq!(servers(&env, &sides[1]), servers(&env, &sides[0]), "{mode}");
        };
        for side in &sides {
            bump(&env, side, "s2");
        }
        // Refused while the submodule's commit is on no remote, then pushed first.
        step("check", 128, "fatal: Aborting.");
        step("on-demand", 0, "Pushing submodule 'sub'");
        step("check", 0, "Everything up-to-date");
        for side in &sides {
            bump(&env, side, "s3");
        }
        // The submodule alone; the superproject says it is up to date.
        step("only", 0, "Everything up-to-date");
        step("no", 0, "HEAD -> main");
        env.git(&sides[1].join("sub.git"), &["fsck", "--strict"]);
        env.git(&sides[1].join("super.git"), &["fsck", "--strict"]);
    }
}
