//! What gc removes beside objects, as git's gc: linked worktrees gone from disk
//! (`gc.worktreePruneExpire`; locked ones kept, broken administrative directories removed)
//! and rerere's old records (`gc.rerereResolved`, `gc.rerereUnresolved`, `rerere.enabled`).
//! Twinned with git 2.39 and 2.47: exit code, stderr, and what is left.

use crate::util::{gits, list_dir, stderr, Env};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A repository under `<name>/repo` with four linked worktrees: `kept` on disk, `gone` and
/// `locked` removed from disk (the second locked), `stale` removed with an index four months
/// old; and an administrative directory `broken` with no `gitdir` file.
fn with_worktrees(env: &Env, name: &str) -> PathBuf {
    let top = env.path().join(name);
    std::fs::create_dir(&top).unwrap();
    let repo = top.join("repo");
    env.git(&top, &["init", "-q", "repo"]);
    env.commit_versions(&repo, "f", 2);
    for tree in ["kept", "gone", "locked", "stale"] {
        let at = top.join(tree);
        env.git(
            &repo,
            &["worktree", "add", "-q", "-b", tree, at.to_str().unwrap()],
        );
    }
    env.git(
        &repo,
        &["worktree", "lock", top.join("locked").to_str().unwrap()],
    );
    for tree in ["gone", "locked", "stale"] {
        std::fs::remove_dir_all(top.join(tree)).unwrap();
    }
    let old = SystemTime::now() - Duration::from_secs(120 * 86_400);
    set_time(&repo.join(".git/worktrees/stale/index"), old);
    std::fs::create_dir(repo.join(".git/worktrees/broken")).unwrap();
    repo
}

fn set_time(path: &Path, time: SystemTime) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(time).unwrap();
}

/// `gc` prunes the worktrees git's prunes: with the default 3 months, the broken one and the
/// one removed four months ago; with `gc.worktreePruneExpire=now` every one gone from disk but
/// the locked one; with `never`, only the broken one.
#[test]
fn gc_prunes_worktrees_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let cases: [&[&str]; 3] = [
            &["gc", "-q"],
            &["-c", "gc.worktreePruneExpire=now", "gc", "-q"],
            &["-c", "gc.worktreePruneExpire=never", "gc", "-q"],
        ];
        for (n, args) in cases.into_iter().enumerate() {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = with_worktrees(&env, &format!("case{n}-{sluice}"));
                let out = env.sluice_or_git(sluice, &repo, args);
                env.git(&repo, &["fsck", "--strict", "--no-progress"]);
                let left = list_dir(&repo.join(".git/worktrees"));
                seen.push((out.status.code(), stderr(&out), left));
            }
            assert_eq!(seen[1], seen[0], "{} {args:?}", git.display());
        }
    }
}

/// `gc` forgets rerere's records as git's does: a resolution last used over 60 days ago, an
/// unresolved conflict recorded over 15 days ago (numbered variants alike), and the conflict
/// directories left empty; `gc.rerereResolved`/`gc.rerereUnresolved` in days; nothing with
/// `rerere.enabled=false`; an `rr-cache` made where it is on but missing.
#[test]
fn gc_forgets_old_rerere_records_as_git_does() {
    let day = |n: u64| SystemTime::now() - Duration::from_secs(n * 86_400);
    // Each record: its directory (a conflict's hash), file and age in days.
    let records = [
        ("1".repeat(40), "postimage", 70),
        ("1".repeat(40), "preimage", 70),
        ("2".repeat(40), "postimage", 30),
        ("2".repeat(40), "preimage", 30),
        ("3".repeat(40), "preimage", 20),
        ("4".repeat(40), "preimage", 10),
        ("4".repeat(40), "preimage.1", 20),
        ("4".repeat(40), "postimage.2", 90),
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let cases: [(&[&str], bool); 4] = [
            (&["gc", "-q"], true),
            (&["-c", "gc.rerereResolved=20", "gc", "-q"], true),
            (&["-c", "rerere.enabled=false", "gc", "-q"], true),
            (&["-c", "rerere.enabled=true", "gc", "-q"], false),
        ];
        for (n, (args, recorded)) in cases.into_iter().enumerate() {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("rerere{n}-{sluice}"));
                env.git(env.path(), &["init", "-q", repo.to_str().unwrap()]);
                env.commit_versions(&repo, "f", 2);
                let cache = repo.join(".git/rr-cache");
                for (dir, file, age) in records.iter().filter(|_| recorded) {
                    std::fs::create_dir_all(cache.join(dir)).unwrap();
                    let path = cache.join(dir).join(file);
                    std::fs::write(&path, "conflict\n").unwrap();
                    set_time(&path, day(*age));
                }
                let out = env.sluice_or_git(sluice, &repo, args);
                let left: Vec<String> = (list_dir(&cache).into_iter())
                    .map(|dir| format!("{dir}: {:?}", list_dir(&cache.join(&dir))))
                    .collect();
                seen.push((out.status.code(), stderr(&out), cache.exists(), left));
            }
            assert_eq!(seen[1], seen[0], "{} {args:?}", git.display());
        }
    }
}
