//! `sluice prune` keeps what git's prune keeps: objects the refs, every reflog entry, the index
//! and the HEAD and index of a linked worktree reach, and (with `--expire`) loose objects
//! younger than the grace period with everything they reach; loose copies of packed objects
//! go. Twins made by copying one repository, pruned by git and by Sluice, must hold the same
//! objects afterwards.

use crate::util::{gits, stderr, stdout, Env};
use std::path::Path;

fn loose(repo: &Path) -> Vec<String> {
    let out = std::process::Command::new("find")
        .args([".git/objects", "-type", "f", "-path", "*/objects/??/*"])
        .current_dir(repo)
        .output()
        .unwrap();
    let mut files: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    files.sort();
    files
}

/// Twins `theirs` and `ours`: copies of `seed`, dates of files kept (`cp -a`).
fn copies(env: &Env, seed: &Path) -> [std::path::PathBuf; 2] {
    ["theirs", "ours"].map(|name| {
        let to = env.path().join(name);
        crate::util::copy_tree(seed, &to);
        to
    })
}

fn hash_object(env: &Env, repo: &Path, text: &str) -> String {
    let out = env.git_with_input(repo, &["hash-object", "-w", "--stdin"], text.as_bytes());
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Sets the modification time of a loose object.
fn age(repo: &Path, id: &str, when: &str) {
    let path = repo.join(".git/objects").join(&id[..2]).join(&id[2..]);
    let status = std::process::Command::new("touch")
        .args(["-d", when])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn seed(env: &Env) -> std::path::PathBuf {
    let repo = env.init("seed", false);
    for name in ["one", "two"] {
        std::fs::write(repo.join(name), name).unwrap();
        env.git(&repo, &["add", name]);
        env.git(&repo, &["commit", "-q", "-m", name]);
    }
    // A commit only a reflog remembers.
    env.git(&repo, &["branch", "gone"]);
    env.git(&repo, &["checkout", "-q", "gone"]);
    env.git(
        &repo,
        &["commit", "-q", "--allow-empty", "-m", "only in reflogs"],
    );
    env.git(&repo, &["checkout", "-q", "master"]);
    env.git(&repo, &["branch", "-D", "gone"]);
    // Loose copies of packed objects.
    let revs = env.git(&repo, &["rev-list", "--objects", "HEAD"]);
    let ids: String = String::from_utf8(revs)
        .unwrap()
        .lines()
        .map(|l| format!("{}\n", &l[..40]))
        .collect();
    let packed = env.git_with_input(
        &repo,
        &["pack-objects", ".git/objects/pack/pack"],
        ids.as_bytes(),
    );
    assert!(packed.status.success(), "{}", stderr(&packed));
    // Staged only, in the index and in a linked worktree's index.
    std::fs::write(repo.join("staged"), "staged only").unwrap();
    env.git(&repo, &["add", "staged"]);
    env.git(&repo, &["worktree", "add", "-q", "wt", "-b", "wt"]);
    std::fs::write(repo.join("wt/wt-staged"), "staged in the worktree").unwrap();
    env.git(&repo.join("wt"), &["add", "wt-staged"]);
    // Dangling objects, old and young; an old tree only a young commit reaches.
    for (text, when) in [("old blob", "2020-01-01"), ("young blob", "now")] {
        let id = hash_object(env, &repo, text);
        age(&repo, &id, when);
    }
    let tree_input = format!(
        "100644 blob {}\tf\n",
        hash_object(env, &repo, "under an old tree")
    );
    let tree = env.git_with_input(&repo, &["mktree"], tree_input.as_bytes());
    let tree = String::from_utf8(tree.stdout).unwrap().trim().to_owned();
    let commit = String::from_utf8(env.git(&repo, &["commit-tree", &tree, "-m", "young"])).unwrap();
    for id in [&tree, &hash_object(env, &repo, "under an old tree")] {
        age(&repo, id, "2020-01-01");
    }
    age(&repo, commit.trim(), "now");
    let old = String::from_utf8(env.git(&repo, &["commit-tree", &tree, "-m", "old"])).unwrap();
    age(&repo, old.trim(), "2020-01-01");
    repo
}

#[test]
fn prune_keeps_what_git_keeps() {
    for git in gits() {
        let env = Env::with_git(git);
        let seed = seed(&env);
        let sides = copies(&env, &seed);
        let cases: [&[&str]; 5] = [
            &["prune", "--expire=never"],
            &["prune", "--expire=false"],
            &["prune", "--expire=1.day.ago"],
            &["prune"],
            &["prune", "--expire=all"],
        ];
        for args in cases {
            env.git(&sides[0], args);
            let out = env.sluice(&sides[1], args, b"");
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(loose(&sides[1]), loose(&sides[0]), "{args:?}");
            let all =
                |repo: &Path| env.git(repo, &["cat-file", "--batch-all-objects", "--batch-check"]);
            assert_eq!(all(&sides[1]), all(&sides[0]), "{args:?}");
        }
        env.git(&sides[1], &["fsck", "--no-dangling"]);
    }
}

/// `sluice reflog expire --all` drops the entries git's drops: older than 90 days, and older
/// than 30 days where the ref (for `HEAD`: any ref) no longer reaches the entry's commits.
#[test]
fn reflog_expire_drops_what_git_drops() {
    for git in gits() {
        let env = Env::with_git(git);
        let repo = env.init("seed", false);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let at = |days: u64| format!("@{} +0000", now - days * 86_400);
        let run = |days: u64, args: &[&str]| {
            let out = env
                .git_command(&repo, args)
                .env("GIT_COMMITTER_DATE", at(days))
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        };
        run(100, &["commit", "-q", "--allow-empty", "-m", "c1"]);
        run(60, &["commit", "-q", "--allow-empty", "-m", "c2"]);
        run(60, &["reset", "-q", "--hard", "HEAD~1"]);
        run(40, &["checkout", "-q", "-b", "topic"]);
        run(40, &["commit", "-q", "--allow-empty", "-m", "c3"]);
        run(40, &["checkout", "-q", "master"]);
        run(10, &["commit", "-q", "--allow-empty", "-m", "c4"]);
        run(10, &["reset", "-q", "--hard", "HEAD~1"]);
        let sides = copies(&env, &repo);
        let logs = |repo: &Path| {
            ["HEAD", "refs/heads/master", "refs/heads/topic"].map(|log| {
                std::fs::read_to_string(repo.join(".git/logs").join(log)).unwrap_or_default()
            })
        };
        for args in [
            &["reflog", "expire", "--all"][..],
            &["reflog", "expire", "--all", "--expire-unreachable=now"],
            &["reflog", "expire", "--all", "--expire=now"],
        ] {
            env.git(&sides[0], args);
            let out = env.sluice(&sides[1], args, b"");
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(logs(&sides[1]), logs(&sides[0]), "{args:?}");
        }
    }
}

/// A pack of `ids` only, dated `when`, their loose copies removed.
fn dangling_pack(env: &Env, repo: &Path, ids: &[String], when: &str) {
    let list: String = ids.iter().map(|id| format!("{id}\n")).collect();
    let out = env.git_with_input(
        repo,
        &["pack-objects", ".git/objects/pack/pack"],
        list.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let name = String::from_utf8(out.stdout).unwrap();
    let pack = repo.join(format!(".git/objects/pack/pack-{}.pack", name.trim()));
    let status = std::process::Command::new("touch")
        .args(["-d", when])
        .arg(pack)
        .status()
        .unwrap();
    assert!(status.success());
    env.git(repo, &["prune-packed"]);
}

/// `sluice gc` keeps the objects git's gc keeps: everything reachable (refs, reflogs, index,
/// worktrees) and what is younger than the prune date, loose or in a pack; with `--prune=now`
/// only the reachable. Refs end packed as git packs them.
#[test]
fn gc_keeps_what_git_keeps() {
    for git in gits() {
        let env = Env::with_git(git);
        let seed = seed(&env);
        let young: Vec<String> = ["packed young 1", "packed young 2"]
            .iter()
            .map(|t| hash_object(&env, &seed, t))
            .collect();
        dangling_pack(&env, &seed, &young, "now");
        let old: Vec<String> = ["packed old 1"]
            .iter()
            .map(|t| hash_object(&env, &seed, t))
            .collect();
        dangling_pack(&env, &seed, &old, "2020-01-01");
        let sides = copies(&env, &seed);
        let state = |repo: &Path| {
            (
                env.git(repo, &["cat-file", "--batch-all-objects", "--batch-check"]),
                env.git(repo, &["for-each-ref"]),
                std::fs::read_to_string(repo.join(".git/packed-refs")).unwrap_or_default(),
            )
        };
        for args in [&["gc", "-q"][..], &["gc", "-q", "--prune=now"]] {
            env.git(&sides[0], args);
            let out = env.sluice(&sides[1], args, b"");
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(state(&sides[1]), state(&sides[0]), "{args:?}");
        }
        env.git(&sides[1], &["fsck", "--strict", "--no-dangling"]);
    }
}

/// `prune <head>…` keeps what the heads reach (a name that is no revision refused in git's
/// words); stale temporary files and directories (`tmp_*` in the object and pack directories)
/// go once older than the grace period, and `-n`/`-v` name them as git does.
#[test]
fn prune_takes_heads_and_removes_stale_temporary_files_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = env.init("seed", false);
        env.git(&seed, &["commit", "-q", "--allow-empty", "-m", "kept"]);
        env.git(&seed, &["commit", "-q", "--allow-empty", "-m", "orphan"]);
        let orphan = String::from_utf8(env.git(&seed, &["rev-parse", "HEAD"])).unwrap();
        let orphan = orphan.trim().to_owned();
        env.git(&seed, &["reset", "-q", "--hard", "HEAD~1"]);
        env.git(&seed, &["reflog", "expire", "--expire=now", "--all"]);
        // What is reachable is packed and stays loose too: `-n` says it would go.
        env.git(&seed, &["repack", "-q"]);
        let objects = seed.join(".git/objects");
        std::fs::create_dir_all(objects.join("pack/tmp_dir_z")).unwrap();
        for file in ["tmp_obj_x", "pack/tmp_pack_y", "tmp_recent"] {
            std::fs::write(objects.join(file), "partial").unwrap();
        }
        for old in ["tmp_obj_x", "pack/tmp_pack_y", "pack/tmp_dir_z"] {
            let status = std::process::Command::new("touch")
                .args(["-d", "2020-01-01"])
                .arg(objects.join(old))
                .status()
                .unwrap();
            assert!(status.success());
        }
        let runs: [&[&str]; 6] = [
            &["prune", "-n"],
            &["prune", "-n", &orphan],
            &["prune", "-n", "no-such-head"],
            &["prune", "-v", "--expire=1.year.ago"],
            &["prune", &orphan],
            &["prune"],
        ];
        let mut seen = Vec::new();
        for (sluice, repo) in [false, true].into_iter().zip(copies(&env, &seed)) {
            let mut said = Vec::new();
            for args in runs {
                let out = env.sluice_or_git(sluice, &repo, args);
                let stdout = String::from_utf8(out.stdout.clone()).unwrap();
                said.push((out.status.code(), stdout, stderr(&out), loose(&repo)));
            }
            let mut left: Vec<String> = ["", "pack"]
                .iter()
                .flat_map(|dir| std::fs::read_dir(repo.join(".git/objects").join(dir)).unwrap())
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            left.sort();
            seen.push((said, left));
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}

/// In a bare repository (no index to read, no work tree), prune keeps and removes what git's
/// does and says the same: `-n -v` names each object it would remove (and each loose file a
/// pack holds too), a plain prune nothing.
#[test]
fn prune_in_a_bare_repository_says_and_keeps_what_gits_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let seed = seed(&env);
        let bare = env.path().join("bare.git");
        let (seed_str, bare_str) = (seed.to_str().unwrap(), bare.to_str().unwrap());
        env.git(
            env.path(),
            &["clone", "-q", "--bare", "--no-local", seed_str, bare_str],
        );
        for text in ["one\n", "two\n", "tagged\n"] {
            let args = ["hash-object", "-w", "--stdin"];
            let out = env.git_with_input(&bare, &args, text.as_bytes());
            assert!(out.status.success());
            if text == "tagged\n" {
                let id = String::from_utf8(out.stdout).unwrap();
                env.git(&bare, &["tag", "tagged", id.trim()]);
            }
        }
        // The tagged blob is packed and stays loose too: `-n` says it would go.
        env.git(&bare, &["repack", "-q"]);
        let sides = copies(&env, &bare);
        for args in [
            &["prune", "-n", "-v", "--expire=now"][..],
            &["prune", "--progress"],
            &["prune", "--expire=now"],
        ] {
            let said = [false, true].map(|sluice| {
                let out = env.sluice_or_git(sluice, &sides[usize::from(sluice)], args);
                let all = ["cat-file", "--batch-all-objects", "--batch-check"];
                let objects = env.git(&sides[usize::from(sluice)], &all);
                (out.status.code(), stdout(&out), stderr(&out), objects)
            });
            assert_eq!(said[1], said[0], "{args:?}");
        }
    }
}
