//! `repack -a -d` in a partial clone, twinned with git's: the promisor packs (the clone's and
//! each lazy fetch's) become one promisor pack, the repository's own objects a pack of their
//! own, whatever is missing by design stays missing, and `fsck` finds nothing wrong.
//! Compared: exit code, and every pack's objects and markers (names aside).

use crate::repack_filter::packs_in;
use crate::util::{copy_tree, gits, stderr, stdout, Env};
use std::path::{Path, PathBuf};
use std::process::Output;

#[test]
fn a_partial_clones_promisor_packs_become_one_as_in_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let up = env.init("up", false);
        for i in 0..4 {
            std::fs::write(up.join(format!("f{i}")), format!("{i}\n").repeat(30)).unwrap();
            env.git(&up, &["add", "."]);
            env.git(&up, &["commit", "-q", "-m", &format!("c{i}")]);
        }
        env.git(&up, &["config", "uploadpack.allowFilter", "true"]);
        let url = format!("file://{}", up.display());
        let mut said = Vec::new();
        for (twin, sluice) in [("theirs", false), ("ours", true)] {
            let args = [
                "clone",
                "-q",
                "--no-local",
                "--filter=blob:none",
                &url,
                twin,
            ];
            env.git(env.path(), &args);
            let repo = env.path().join(twin);
            let mut text = String::new();
            // Right after the clone (its pack and the checkout's lazy fetch), then after a
            // commit of the repository's own.
            for round in 0..2 {
                if round == 1 {
                    std::fs::write(repo.join("mine"), "mine\n").unwrap();
                    env.git(&repo, &["add", "mine"]);
                    env.git(&repo, &["commit", "-q", "-m", "mine"]);
                }
                let out = env.sluice_or_git(sluice, &repo, &["repack", "-a", "-d", "-q"]);
                env.git(&repo, &["fsck", "--strict"]);
                let packs = packs_in(&env, &repo.join(".git/objects/pack"));
                text.push_str(&format!("{:?}\n{packs:?}\n", out.status.code()));
            }
            said.push(text);
        }
        assert_eq!(said[1], said[0], "{}", git.display());
    }
}

/// A partial clone of a history whose files changed (so that old versions are missing), with a
/// commit of its own, filtered by `filter`, its promisor packs `kept` by `.keep` files or not:
/// each tool's `repack -a -d` and `gc` must see that what is missing is the promisor remote's,
/// and leave it so.
fn partial_clone_lacking_history(env: &Env, filter: &str, kept: bool) -> PathBuf {
    let up = env.path().join("up");
    if !up.exists() {
        changing_upstream(env);
    }
    let name = format!("clone-{}-{kept}", filter.replace(':', "-"));
    let url = format!("file://{}", up.display());
    let args = ["clone", "-q", "--no-local", "--filter", filter, &url, &name];
    env.git(env.path(), &args);
    let repo = env.path().join(&name);
    if kept {
        let packs = repo.join(".git/objects/pack");
        for name in crate::util::list_dir(&packs) {
            if let Some(stem) = name.strip_suffix(".promisor") {
                std::fs::write(packs.join(format!("{stem}.keep")), "").unwrap();
            }
        }
    }
    std::fs::write(repo.join("d0/mine"), "mine\n").unwrap();
    env.git(&repo, &["add", "."]);
    env.git(&repo, &["commit", "-q", "-m", "mine"]);
    repo
}

/// `<env>/up`: four commits that change one file and add a directory each, filters allowed:
/// a partial clone of it lacks the old versions.
pub(crate) fn changing_upstream(env: &Env) -> PathBuf {
    let up = env.init("up", false);
    for i in 0..4 {
        std::fs::create_dir_all(up.join(format!("d{i}"))).unwrap();
        std::fs::write(up.join(format!("d{i}/x")), format!("{i}\n")).unwrap();
        std::fs::write(up.join("f"), format!("{i}\n").repeat(40 + i)).unwrap();
        env.git(&up, &["add", "."]);
        env.git(&up, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    env.git(&up, &["config", "uploadpack.allowFilter", "true"]);
    up
}

/// Exit code, every pack's objects and markers, and git's fsck of `repo` after `run`.
fn packs_after(env: &Env, repo: &Path, out: Output) -> String {
    let fsck = env.git_with_input(repo, &["fsck", "--strict"], b"");
    let packs = packs_in(env, &repo.join(".git/objects/pack"));
    format!(
        "{:?} fsck {:?}\n{}\n{packs:?}",
        out.status.code(),
        fsck.status.code(),
        stderr(&out)
    )
}

#[test]
fn partial_clones_lacking_old_blobs_and_trees_repack_as_in_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let exec = crate::util::stand_in(&env, &["pack-objects"]);
        for (filter, kept) in [("blob:none", false), ("tree:0", false), ("tree:0", true)] {
            let clone = partial_clone_lacking_history(&env, filter, kept);
            for command in [&["repack", "-a", "-d", "-q"][..], &["gc", "-q"]] {
                let twin = |name: &str| {
                    let repo = env
                        .path()
                        .join(format!("{name}-{}-{kept}", filter.replace(':', "-")));
                    let _ = std::fs::remove_dir_all(&repo);
                    copy_tree(&clone, &repo);
                    repo
                };
                let theirs = twin("theirs");
                let theirs = packs_after(&env, &theirs, env.sluice_or_git(false, &theirs, command));
                let ours = twin("ours");
                let ours = packs_after(&env, &ours, env.sluice_or_git(true, &ours, command));
                let what = format!("{} {filter} kept {kept} {command:?}", git.display());
                assert_eq!(ours, theirs, "{what}");
                assert!(
                    theirs.starts_with("Some(0) fsck Some(0)"),
                    "{what}: {theirs}"
                );
                // git's own repack, Sluice its pack-objects (`--exclude-promisor-objects`).
                let stood = twin("stood");
                let mut run = env.git_command(&stood, command);
                let out = run.env("GIT_EXEC_PATH", &exec).output().unwrap();
                assert_eq!(packs_after(&env, &stood, out), theirs, "{what}, stood in");
            }
        }
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(calls.contains("--exclude-promisor-objects"), "{calls}");
    }
}

/// `pack-objects --missing=<action>` and `--exclude-promisor-objects` in a partial clone whose
/// promisor remote is gone (git would fetch what is missing from it otherwise), and with a
/// ref to a tree whose blob nothing promised: exit code, and the objects packed.
#[test]
fn pack_objects_missing_actions_as_in_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let repo = partial_clone_lacking_history(&env, "blob:none", false);
        env.git(&repo, &["config", "remote.origin.url", "file:///nowhere"]);
        let cases: [&[&str]; 5] = [
            &["--missing=allow-any"],
            &["--missing=allow-promisor"],
            &["--exclude-promisor-objects"],
            &["--missing=allow-promisor", "--exclude-promisor-objects"],
            &["--missing=bogus"],
        ];
        for broken in [false, true] {
            if broken {
                let entry = format!("100644 blob {}\tghost\n", "12".repeat(20));
                let tree = env.git_with_input(&repo, &["mktree", "--missing"], entry.as_bytes());
                let tree = stdout(&tree);
                let commit = stdout(&env.git_with_input(
                    &repo,
                    &["commit-tree", "-m", "g", tree.trim()],
                    b"",
                ));
                env.git(&repo, &["update-ref", "refs/heads/ghost", commit.trim()]);
            }
            for case in cases {
                let mut said = Vec::new();
                for sluice in [false, true] {
                    let out_dir = env.path().join(format!("out-{sluice}"));
                    let _ = std::fs::remove_dir_all(&out_dir);
                    std::fs::create_dir(&out_dir).unwrap();
                    let base = out_dir.join("p");
                    let mut args = vec!["pack-objects", "--revs", "--all"];
                    args.extend(case);
                    args.push(base.to_str().unwrap());
                    let out = env.sluice_or_git(sluice, &repo, &args);
                    let refused = case[0] == "--missing=bogus";
                    let text = match refused {
                        true => stderr(&out),
                        false => String::new(),
                    };
                    let packs = packs_in(&env, &out_dir);
                    said.push(format!("{:?} {text} {packs:?}", out.status.code()));
                }
                let what = format!("{} broken {broken} {case:?}", git.display());
                assert_eq!(said[1], said[0], "{what}");
            }
        }
    }
}

/// A commit of the clone's own that, once pushed, built on upstream and fetched back, only a
/// promisor commit leads to (the branch reset to the fetched one, reflogs expired). git's
/// `pack-objects --exclude-promisor-objects` leaves it out and git's repack then deletes the
/// pack that held it (the remote has it; the clone no longer does); Sluice's `repack -a -d`,
/// and git's repack with Sluice's pack-objects, keep it in a pack of the clone's own.
#[test]
fn a_local_commit_only_a_promisor_commit_reaches_survives_repack() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let up = env.init("up.git", true);
        env.git(&up, &["config", "uploadpack.allowFilter", "true"]);
        let work = env.init("work", false);
        let commit = |repo: &Path, name: &str| {
            std::fs::write(repo.join(name), format!("{name}\n")).unwrap();
            env.git(repo, &["add", name]);
            env.git(repo, &["commit", "-q", "-m", name]);
        };
        commit(&work, "base");
        env.git(
            &work,
            &["push", "-q", up.to_str().unwrap(), "HEAD:refs/heads/main"],
        );
        let url = format!("file://{}", up.display());
        env.git(
            env.path(),
            &[
                "clone",
                "-q",
                "--filter=blob:none",
                "-b",
                "main",
                &url,
                "lazy",
            ],
        );
        let lazy = env.path().join("lazy");
        commit(&lazy, "local");
        env.git(&lazy, &["repack", "-q", "-d"]);
        env.git(&lazy, &["push", "-q", "origin", "HEAD:main"]);
        let local = stdout(&env.git_with_input(&lazy, &["rev-parse", "HEAD"], b""));
        env.git(
            &work,
            &["pull", "-q", "--no-rebase", up.to_str().unwrap(), "main"],
        );
        commit(&work, "upstream");
        env.git(
            &work,
            &["push", "-q", up.to_str().unwrap(), "HEAD:refs/heads/main"],
        );
        env.git(&lazy, &["fetch", "-q"]);
        env.git(&lazy, &["reset", "-q", "--hard", "origin/main"]);
        env.git(&lazy, &["reflog", "expire", "--expire=now", "--all"]);
        let exec = crate::util::stand_in(&env, &["pack-objects"]);
        for stood in [false, true] {
            let repo = env.path().join(format!("lazy-{stood}"));
            copy_tree(&lazy, &repo);
            let out = match stood {
                false => env.sluice(&repo, &["repack", "-a", "-d", "-q"], b""),
                true => (env.git_command(&repo, &["repack", "-a", "-d", "-q"]))
                    .env("GIT_EXEC_PATH", &exec)
                    .output()
                    .unwrap(),
            };
            let what = format!("{} stood in: {stood}", git.display());
            assert!(out.status.success(), "{what}: {}", stderr(&out));
            env.git(&repo, &["fsck", "--strict"]);
            let packs = packs_in(&env, &repo.join(".git/objects/pack"));
            let own = packs
                .iter()
                .find(|p| p.starts_with("cruft: false promisor: false"));
            let kept = format!("{} commit", local.trim());
            assert!(own.is_some_and(|p| p.contains(&kept)), "{what}: {packs:?}");
        }
    }
}
