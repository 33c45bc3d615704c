//! The branches checkout makes, as git's makes them: `-b <name> [<start>]`, `-B` (made or
//! reset, the branch checked out included), `--orphan`, `--detach`, `--track` alone, with
//! `--track`/`--no-track` and each `branch.autoSetupMerge`, and the refusals (a branch that
//! exists, a name that is no branch name, a start that is no commit). Twins from one clone:
//! the exit code, both outputs, every ref, `HEAD`, the branches' configuration, every reflog's
//! messages and the work tree's status must be git's.

use crate::util::{gits, stderr, Env};
use std::path::Path;

/// A source with `main` (two commits), `side` (one more on the first) and a tag.
fn source(env: &Env) -> std::path::PathBuf {
    let src = env.init("src", false);
    env.git(&src, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    for (file, text) in [("f", "one\n"), ("g", "two\n")] {
        std::fs::write(src.join(file), text).unwrap();
        env.git(&src, &["add", file]);
        env.git(&src, &["commit", "-q", "-m", file]);
    }
    env.git(&src, &["checkout", "-q", "-b", "side", "HEAD~1"]);
    std::fs::write(src.join("f"), "side\n").unwrap();
    env.git(&src, &["commit", "-q", "-a", "-m", "side"]);
    env.git(&src, &["checkout", "-q", "main"]);
    env.git(&src, &["tag", "v1", "HEAD~1"]);
    src
}

/// Everything a checkout may change, as git reads it.
fn state(env: &Env, repo: &Path) -> String {
    let text = |args: &[&str]| {
        let out = env.git_with_input(repo, args, b"");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut state = text(&["for-each-ref", "--format=%(refname) %(objectname)"]);
    state += &std::fs::read_to_string(repo.join(".git/HEAD")).unwrap();
    state += &text(&["config", "--get-regexp", "^branch\\."]);
    state += &text(&["status", "--porcelain"]);
    let logs = repo.join(".git/logs");
    for file in log_files(&logs, "") {
        let log = std::fs::read_to_string(logs.join(&file)).unwrap();
        let messages: Vec<&str> = log.lines().filter_map(|l| l.split('\t').nth(1)).collect();
        state += &format!("{file}: {messages:?}\n");
    }
    state
}

/// The files under `dir` (a reflog each), by their path below it, sorted.
fn log_files(dir: &Path, prefix: &str) -> Vec<String> {
    let mut files = Vec::new();
    for name in crate::util::list_dir(dir) {
        let path = format!("{prefix}{name}");
        match dir.join(&name).is_dir() {
            true => files.extend(log_files(&dir.join(&name), &format!("{path}/"))),
            false => files.push(path),
        }
    }
    files.sort();
    files
}

/// git 2.47 follows a bad branch name with hints git 2.39 does not give.
fn without_hints(text: &str) -> String {
    text.lines()
        .filter(|line| !line.starts_with("hint:"))
        .map(|line| format!("{line}\n"))
        .collect()
}

#[test]
fn branches_are_made_as_git_makes_them() {
    // Each a command line, its words split at spaces.
    let cases = [
        "checkout -b new",
        "checkout -b new origin/side",
        "checkout -b new v1",
        "checkout -b main",
        "checkout -b a..b",
        "checkout -b HEAD",
        "checkout -b new nosuch",
        "checkout -B main HEAD~1",
        "checkout -B main",
        "checkout -B local origin/side",
        "checkout -B local",
        "checkout --detach",
        "checkout --detach local",
        "checkout --detach nosuch",
        "checkout --orphan fresh",
        "checkout --orphan fresh origin/side",
        "checkout --orphan main",
        "checkout --track origin/side",
        "checkout -t local",
        "checkout -t -b new local",
        "checkout -b new --no-track origin/side",
        "checkout -q -b new origin/side",
        "checkout",
        "-c branch.autoSetupMerge=false checkout -b new origin/side",
        "-c branch.autoSetupMerge=false checkout side",
        "-c branch.autoSetupMerge=always checkout -b new local",
        "-c branch.autoSetupMerge=simple checkout -b side origin/side",
        "-c branch.autoSetupMerge=simple checkout -b new origin/side",
        "-c branch.autoSetupMerge=inherit checkout -b new local",
        "-c branch.autoSetupMerge=inherit checkout -b new main",
        "-c branch.autoSetupMerge=inherit checkout side",
        // From HEAD, said or not: the branch checked out is the start.
        "-c branch.autoSetupMerge=inherit checkout -b new",
        "-c branch.autoSetupMerge=inherit checkout -b new HEAD",
        "-c branch.autoSetupMerge=always checkout -b new",
        "checkout --track -b new HEAD",
        "checkout -b new origin/HEAD",
        "-c branch.autoSetupRebase=always checkout -b new origin/side",
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        let repo = env.path().join("twin");
        for line in cases {
            let args: Vec<&str> = line.split(' ').collect();
            let [ours, theirs] = [true, false].map(|sluice| {
                let _ = std::fs::remove_dir_all(&repo);
                let (from, to) = (src.to_str().unwrap(), repo.to_str().unwrap());
                env.git(env.path(), &["clone", "-q", from, to]);
                env.git(
                    &repo,
                    &["branch", "-q", "--no-track", "local", "origin/main"],
                );
                let out = env.sluice_or_git(sluice, &repo, &args);
                let said = without_hints(&stderr(&out));
                let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
                (out.status.code(), stdout, said, state(&env, &repo))
            });
            assert_eq!(ours, theirs, "{line} with {git:?}");
        }
    }
}

/// `-B` of the branch checked out, to where it is and elsewhere: `HEAD`'s reflog has the reset
/// too, as git's (the branch's own only where it moved).
#[test]
fn resetting_the_branch_checked_out_is_logged_as_git_logs_it() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        let repo = env.path().join("twin");
        for start in ["HEAD", "HEAD~1", "v1"] {
            let [ours, theirs] = [true, false].map(|sluice| {
                let _ = std::fs::remove_dir_all(&repo);
                let (from, to) = (src.to_str().unwrap(), repo.to_str().unwrap());
                env.git(env.path(), &["clone", "-q", from, to]);
                let out = env.sluice_or_git(sluice, &repo, &["checkout", "-B", "main", start]);
                (out.status.code(), stderr(&out), state(&env, &repo))
            });
            assert_eq!(ours, theirs, "-B main {start} with {git:?}");
        }
    }
}

/// `checkout [<commit>] [--] <pathspec>…` restores the index's (or a commit's) version of
/// files and directories, from the top or from a directory below it, as git's does: the same
/// outputs (the count said only without `--`), exit codes (a pathspec that matches nothing:
/// 1, and nothing written; one that leaves the work tree: 128), index and work tree.
#[test]
fn files_are_restored_from_the_index_as_git_restores_them() {
    let cases = [
        ("", "checkout -- f"),
        ("", "checkout f"),
        ("", "checkout d"),
        ("", "checkout -- d f"),
        ("", "checkout f d/g"),
        ("", "checkout ."),
        ("", "checkout -q f"),
        ("", "checkout -- f nosuch"),
        ("", "checkout -- ../outside"),
        ("d", "checkout -- g"),
        ("d", "checkout g ../f"),
        ("d", "checkout .."),
        ("", "checkout HEAD -- f"),
        ("", "checkout HEAD~1 f d"),
        ("", "checkout HEAD~2 -- d"),
        ("d", "checkout HEAD~1 -- ."),
        ("", "checkout HEAD nosuch"),
        ("", "checkout nosuch -- f"),
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        std::fs::create_dir(src.join("d")).unwrap();
        for file in ["d/g", "d/h"] {
            std::fs::write(src.join(file), format!("{file}\n")).unwrap();
        }
        env.git(&src, &["add", "d"]);
        env.git(&src, &["commit", "-q", "-m", "d"]);
        let repo = env.path().join("twin");
        for (below, line) in cases {
            let args: Vec<&str> = line.split(' ').collect();
            let [ours, theirs] = [true, false].map(|sluice| {
                let _ = std::fs::remove_dir_all(&repo);
                let (from, to) = (src.to_str().unwrap(), repo.to_str().unwrap());
                env.git(env.path(), &["clone", "-q", from, to]);
                for file in ["f", "d/g", "d/h"] {
                    std::fs::write(repo.join(file), "changed\n").unwrap();
                }
                // One change staged too, which a commit's version undoes.
                env.git(&repo, &["add", "d/h"]);
                let out = env.sluice_or_git(sluice, &repo.join(below), &args);
                let files: Vec<String> = ["f", "d/g", "d/h"]
                    .map(|f| std::fs::read_to_string(repo.join(f)).unwrap())
                    .into();
                let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
                let index = String::from_utf8(env.git(&repo, &["ls-files", "-s"])).unwrap();
                let state = state(&env, &repo) + &index;
                (out.status.code(), stdout, stderr(&out), state, files)
            });
            assert_eq!(ours, theirs, "{line} in '{below}' with {git:?}");
        }
    }
}
