//! A branch switch takes the directories that both commits share from the index (through its
//! cache tree) instead of reading their trees, as git does: the result must still be git's
//! when the index differs from the commit in those directories (a staged change, an
//! unstaged one, an entry only intended to be added), and the cache tree it writes must name
//! the trees git names.

use crate::checkout::{assert_refused_as_git, assert_same_trees, clone_both, git_view};
use crate::util::{stderr, Env};
use std::path::Path;

/// A repository whose branches `one` and `two` differ in one deep directory only.
fn shared_directories(env: &Env) -> std::path::PathBuf {
    let src = env.init("shared-src", false);
    let files = [
        ("shared/a/1", "a one\n"),
        ("shared/a/2", "a two\n"),
        ("shared/b/1", "b one\n"),
        ("other/c/1", "c one\n"),
        ("deep/x/y/f", "first\n"),
        ("top", "top\n"),
    ];
    for (path, text) in files {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    env.git(&src, &["add", "."]);
    env.git(&src, &["commit", "-q", "-m", "one"]);
    env.git(&src, &["branch", "-M", "one"]);
    env.git(&src, &["checkout", "-q", "-b", "two"]);
    std::fs::write(src.join("deep/x/y/f"), "second\n").unwrap();
    std::fs::write(src.join("deep/x/new"), "new\n").unwrap();
    env.git(&src, &["add", "."]);
    env.git(&src, &["commit", "-q", "-m", "two"]);
    env.git(&src, &["checkout", "-q", "one"]);
    src
}

fn view(env: &Env, repo: &Path) -> (String, String, String) {
    let (status, staged) = git_view(env, repo);
    // write-tree trusts every valid node of the cache tree: a wrong node shows as a wrong id.
    let tree = String::from_utf8(env.git(repo, &["write-tree"])).unwrap();
    (status, staged, tree)
}

#[test]
fn switch_reusing_shared_directories_matches_git() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let src = shared_directories(&env);
        let (ours, theirs) = clone_both(&env, &src, &[], "one");
        for repo in [&ours, &theirs] {
            // Staged: git drops the cache tree of shared/ and shared/a.
            std::fs::write(repo.join("shared/a/1"), "staged edit\n").unwrap();
            env.git(repo, &["add", "shared/a/1"]);
            // Unstaged, in a directory whose cache tree stays valid.
            std::fs::write(repo.join("other/c/1"), "unstaged edit\n").unwrap();
            // Intended to be added.
            std::fs::write(repo.join("shared/b/new"), "intent\n").unwrap();
            env.git(repo, &["add", "-N", "shared/b/new"]);
        }
        for (target, force) in [("two", false), ("one", false), ("two", true)] {
            let args: &[&str] = if force {
                &["checkout", "-q", "-f", target]
            } else {
                &["checkout", "-q", target]
            };
            env.git(&theirs, args);
            let out = env.sluice(&ours, args, b"");
            assert!(out.status.success(), "{target}: {}", stderr(&out));
            assert_same_trees(&ours, &theirs);
            assert_eq!(view(&env, &ours), view(&env, &theirs), "after {args:?}");
        }
    }
}

/// Staged additions and deletions where the commits agree are carried over; an index entry
/// that matches neither commit where they differ refuses the switch, with git's message.
#[test]
fn staged_additions_deletions_and_conflicts_match_git() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let src = shared_directories(&env);
        let (ours, theirs) = clone_both(&env, &src, &[], "one");
        for repo in [&ours, &theirs] {
            std::fs::write(repo.join("added"), "staged addition\n").unwrap();
            env.git(repo, &["add", "added"]);
            env.git(repo, &["rm", "-q", "--cached", "top"]);
            env.git(repo, &["rm", "-q", "other/c/1"]);
            // The commits differ here, and the index holds neither version.
            env.git(repo, &["rm", "-q", "--cached", "deep/x/y/f"]);
        }
        assert_refused_as_git(&env, &ours, &theirs, "two");
        assert_eq!(view(&env, &ours), view(&env, &theirs));
        // Once the conflicting entry is back, the switch carries the rest over.
        for repo in [&ours, &theirs] {
            env.git(repo, &["add", "deep/x/y/f"]);
        }
        env.git(&theirs, &["checkout", "-q", "two"]);
        let out = env.sluice(&ours, &["checkout", "-q", "two"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_same_trees(&ours, &theirs);
        assert_eq!(view(&env, &ours), view(&env, &theirs));
    }
}

/// A work repository on `main` (commits `one`, `two`; branch `side` at `one`, where `a`
/// differs), carrying changes of every kind: `b` modified, `c` and a file with a space and a
/// non-ASCII letter in its name added, the symbolic link `l` deleted, an untracked file, and
/// `a` made executable.
fn carrying(env: &Env, name: &str) -> std::path::PathBuf {
    let repo = env.init(name, false);
    std::fs::write(repo.join("a"), "a\n").unwrap();
    std::fs::write(repo.join("b"), "b\n").unwrap();
    std::os::unix::fs::symlink("a", repo.join("l")).unwrap();
    env.git(&repo, &["add", "."]);
    env.git(&repo, &["commit", "-q", "-m", "one"]);
    env.git(&repo, &["branch", "-M", "main"]);
    env.git(&repo, &["branch", "side"]);
    std::fs::write(repo.join("a"), "a2\n").unwrap();
    env.git(&repo, &["commit", "-q", "-a", "-m", "two"]);
    std::fs::write(repo.join("b"), "dirty\n").unwrap();
    std::fs::write(repo.join("c"), "new\n").unwrap();
    std::fs::create_dir(repo.join("d")).unwrap();
    std::fs::write(repo.join("d/t\u{e4} b"), "q\n").unwrap();
    env.git(&repo, &["add", "c", "d"]);
    std::fs::remove_file(repo.join("l")).unwrap();
    std::fs::write(repo.join("untracked"), "x\n").unwrap();
    let a = repo.join("a");
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&a, mode).unwrap();
    repo
}

/// After a switch git lists on standard output what the index and work tree carry over (as
/// `diff-index --name-status` against the new commit, paths quoted as `core.quotePath` says),
/// but not under -q or -f,
/// nor for `-b` with no start point, which skips the switch. A file whose executable bit
/// changed is a local change (`core.fileMode`): a switch that would rewrite it is refused.
#[test]
fn carried_changes_are_listed_and_kept_as_git_does() {
    let cases: [&[&str]; 14] = [
        &["checkout", "main"],
        &["-c", "core.quotePath=false", "checkout", "main"],
        &["checkout", "-b", "new"],
        &["checkout", "-b", "new", "HEAD"],
        &["checkout", "-B", "main"],
        &["checkout", "--detach"],
        &["checkout", "--orphan", "o"],
        // A start that is no commit, in the words git has for a new branch's.
        &["checkout", "--orphan", "o", "no-such-start"],
        &["checkout", "side"],
        &["checkout", "HEAD~1"],
        &["checkout", "-q", "main"],
        &["-c", "core.fileMode=false", "checkout", "side"],
        &["-c", "core.fileMode=false", "checkout", "-q", "side"],
        &["checkout", "-f", "side"],
    ];
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        for (n, args) in cases.iter().enumerate() {
            let [ours, theirs] =
                ["ours", "theirs"].map(|side| carrying(&env, &format!("{side}{n}")));
            let said = [(&ours, true), (&theirs, false)].map(|(repo, sluice)| {
                let out = env.sluice_or_git(sluice, repo, args);
                let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
                (out.status.code(), text(&out.stdout), text(&out.stderr))
            });
            assert_eq!(said[0], said[1], "{args:?} with {}", git.display());
            assert_eq!(git_view(&env, &ours), git_view(&env, &theirs), "{args:?}");
            let mode = |repo: &Path| {
                let meta = std::fs::metadata(repo.join("a")).unwrap();
                std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111
            };
            assert_eq!(
                mode(&ours),
                mode(&theirs),
                "{args:?}: the executable bit of a"
            );
        }
    }
}

/// A work repository on `side` (at `one`: `a`, `b`, the link `l`, `dir/f`), whose `main`
/// replaces the directory `dir` with a file and adds `n`.
fn file_for_directory(env: &Env, name: &str) -> std::path::PathBuf {
    let repo = env.init(name, false);
    for (path, text) in [("a", "a\n"), ("b", "b\n"), ("dir/f", "f\n")] {
        let path = repo.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::os::unix::fs::symlink("a", repo.join("l")).unwrap();
    env.git(&repo, &["add", "."]);
    env.git(&repo, &["commit", "-q", "-m", "one"]);
    env.git(&repo, &["branch", "-M", "main"]);
    env.git(&repo, &["branch", "side"]);
    env.git(&repo, &["rm", "-q", "-r", "dir"]);
    std::fs::write(repo.join("dir"), "notdir\n").unwrap();
    std::fs::write(repo.join("n"), "new\n").unwrap();
    env.git(&repo, &["add", "dir", "n"]);
    env.git(&repo, &["commit", "-q", "-m", "two"]);
    env.git(&repo, &["checkout", "-q", "side"]);
    repo
}

/// Untracked files in a directory the target makes a file, and untracked files where it has
/// files, refuse the switch in git's two errors; a file turned into a symbolic link (or the
/// other way) is listed as a change of type.
#[test]
fn untracked_files_and_changes_of_type_are_said_as_git_says_them() {
    type Change = fn(&Path);
    let changes: [(&str, Change); 5] = [
        ("untracked below dir", |r| {
            std::fs::write(r.join("dir/g"), "x\n").unwrap()
        }),
        ("untracked n", |r| {
            std::fs::write(r.join("n"), "y\n").unwrap()
        }),
        ("both", |r| {
            std::fs::write(r.join("dir/g"), "x\n").unwrap();
            std::fs::write(r.join("n"), "y\n").unwrap();
        }),
        ("b a link", |r| {
            std::fs::remove_file(r.join("b")).unwrap();
            std::os::unix::fs::symlink("a", r.join("b")).unwrap();
        }),
        ("l a file", |r| {
            std::fs::remove_file(r.join("l")).unwrap();
            std::fs::write(r.join("l"), "x\n").unwrap();
        }),
    ];
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        for (n, (what, change)) in changes.iter().enumerate() {
            let [ours, theirs] = ["ours", "theirs"].map(|side| {
                let repo = file_for_directory(&env, &format!("{side}{n}"));
                change(&repo);
                repo
            });
            let said = [(&ours, true), (&theirs, false)].map(|(repo, sluice)| {
                let out = env.sluice_or_git(sluice, repo, &["checkout", "main"]);
                let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
                (out.status.code(), text(&out.stdout), text(&out.stderr))
            });
            assert_eq!(said[0], said[1], "{what} with {}", git.display());
            assert_eq!(git_view(&env, &ours), git_view(&env, &theirs), "{what}");
        }
    }
}

/// A branch another worktree has checked out is refused as git 2.47 refuses it (plain and
/// `-B`, from the main worktree and from a linked one; `--ignore-other-worktrees` and
/// `--detach` go on); a bare repository's linked worktree has a work tree of its own. Compared:
/// exit code, stderr, and each worktree's `HEAD`.
#[test]
fn branches_of_other_worktrees_are_refused_as_git_refuses_them() {
    let git = crate::util::git_bin();
    let env = Env::with_git(git);
    let cases: [(&str, &[&str]); 7] = [
        ("main", &["checkout", "b"]),
        ("main", &["checkout", "-B", "b"]),
        ("main", &["checkout", "--ignore-other-worktrees", "b"]),
        ("main", &["checkout", "--detach", "b"]),
        ("wt", &["checkout", "master"]),
        ("bare-wt", &["checkout", "master"]),
        ("bare-wt", &["checkout", "b"]),
    ];
    for (at, args) in cases {
        let [theirs, ours] = [false, true].map(|sluice| {
            let top = env.path().join(format!("worktrees-{sluice}"));
            let _ = std::fs::remove_dir_all(&top);
            std::fs::create_dir_all(&top).unwrap();
            let main = env.init(&format!("worktrees-{sluice}/main"), false);
            env.git(&main, &["branch", "-M", "master"]);
            env.git(&main, &["commit", "-q", "--allow-empty", "-m", "one"]);
            env.git(&main, &["branch", "b"]);
            env.git(&main, &["worktree", "add", "-q", "../wt", "b"]);
            let bare = top.join("bare.git");
            env.git(&top, &["clone", "-q", "--bare", "main", "bare.git"]);
            env.git(&bare, &["worktree", "add", "-q", "--detach", "../bare-wt"]);
            let out = env.sluice_or_git(sluice, &top.join(at), args);
            let head = |dir: &str| {
                let out = env.git_with_input(
                    &top.join(dir),
                    &["rev-parse", "--symbolic-full-name", "HEAD"],
                    b"",
                );
                String::from_utf8_lossy(&out.stdout).into_owned()
            };
            let said = stderr(&out).replace(top.to_str().unwrap(), "<top>");
            (
                out.status.code(),
                said,
                head("main"),
                head("wt"),
                head("bare-wt"),
            )
        });
        assert_eq!(ours, theirs, "{at} {args:?}");
    }
}
