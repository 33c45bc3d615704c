//! `push` from a partial clone to a repository that lacks what the clone lacks too: git's
//! pack-objects fetches the missing trees and blobs from the promisor remote first, and so must
//! Sluice, twin-wise with git 2.39 and 2.47: exit code, the objects the receiving repository
//! ends with (fsck clean), the clone still whole for git. With lazy fetching off
//! (`GIT_NO_LAZY_FETCH`, which git 2.39 does not read) both fail and the receiving repository
//! gets nothing (git's send-pack after its pack-objects died mid-pack, exit code 1; Sluice's
//! before it sends anything, 128).

use crate::util::{copy_tree, gits, stderr, Env};

#[test]
fn a_push_from_a_partial_clone_fetches_what_it_lacks_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let up = crate::repack_promisor::changing_upstream(&env);
        let url = format!("file://{}", up.display());
        let lazy_off = match git.starts_with("/usr/local") {
            true => &[false, true][..],
            false => &[false],
        };
        for filter in ["blob:none", "tree:0"] {
            let name = format!("clone-{}", filter.replace(':', "-"));
            env.git(
                env.path(),
                &["clone", "-q", "--no-local", "--filter", filter, &url, &name],
            );
            let clone = env.path().join(&name);
            std::fs::write(clone.join("d0/mine"), "mine\n").unwrap();
            env.git(&clone, &["add", "."]);
            env.git(&clone, &["commit", "-q", "-m", "mine"]);
            for &off in lazy_off {
                let mut seen = Vec::new();
                for sluice in [false, true] {
                    let side = env.path().join(format!("{name}-{off}-{sluice}"));
                    std::fs::create_dir(&side).unwrap();
                    copy_tree(&clone, &side.join("work"));
                    let target = side.join("target.git");
                    env.git(
                        env.path(),
                        &["init", "-q", "--bare", target.to_str().unwrap()],
                    );
                    let args = ["push", "-q", "../target.git", "HEAD:refs/heads/main"];
                    let mut push = env.sluice_or_git_command(sluice, &side.join("work"), &args);
                    if off {
                        push.env("GIT_NO_LAZY_FETCH", "1");
                    }
                    let out = crate::util::run_with_input(push, b"");
                    let what = format!("{} {filter} lazy off {off} sluice {sluice}", git.display());
                    if out.status.success() {
                        env.git(&target, &["fsck", "--strict"]);
                        env.git(&side.join("work"), &["fsck", "--strict"]);
                    } else {
                        assert!(off, "{what}: {}", stderr(&out));
                    }
                    let objects =
                        env.git_with_input(&target, &["rev-list", "--objects", "--all"], b"");
                    let mut objects: Vec<String> = (crate::util::stdout(&objects).lines())
                        .map(str::to_owned)
                        .collect();
                    objects.sort();
                    seen.push((out.status.success(), objects));
                }
                assert_eq!(
                    seen[1],
                    seen[0],
                    "{} {filter} lazy off {off}",
                    git.display()
                );
                assert!(off || seen[0].1.len() > 20, "{:?}", seen[0]);
            }
        }
    }
}

/// `pack-objects --revs` in a partial clone fetches what the revisions reach and the clone
/// lacks, as git's does by default, and so git's own push with Sluice standing in for its
/// pack-objects works from a partial clone: exit code, the objects packed or received, fsck.
#[test]
fn pack_objects_fetches_what_it_lacks_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let up = crate::repack_promisor::changing_upstream(&env);
        let url = format!("file://{}", up.display());
        let exec = crate::util::stand_in(&env, &["pack-objects"]);
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let (side, work) = partial_side(&env, &url, sluice);
            let base = side.join("out/p");
            let args = [
                "pack-objects",
                "-q",
                "--revs",
                "--all",
                base.to_str().unwrap(),
            ];
            let out = env.sluice_or_git(sluice, &work, &args);
            assert!(out.status.success(), "sluice {sluice}: {}", stderr(&out));
            env.git(&work, &["fsck", "--strict"]);
            let packed = crate::repack_filter::packs_in(&env, &side.join("out"));
            // git's push, its pack-objects Sluice's or git's, from a fresh partial clone.
            env.git(
                &side,
                &[
                    "clone",
                    "-q",
                    "--no-local",
                    "--filter=blob:none",
                    &url,
                    "pusher",
                ],
            );
            env.git(&side, &["init", "-q", "--bare", "target.git"]);
            let mut push = env.git_command(
                &side.join("pusher"),
                &["push", "-q", "../target.git", "HEAD:refs/heads/main"],
            );
            if sluice {
                push.env("GIT_EXEC_PATH", &exec);
            }
            let pushed = crate::util::run_with_input(push, b"");
            assert!(
                pushed.status.success(),
                "sluice {sluice}: {}",
                stderr(&pushed)
            );
            env.git(&side.join("target.git"), &["fsck", "--strict"]);
            let received = env.git(
                &side.join("target.git"),
                &["rev-list", "--objects", "--all"],
            );
            seen.push((packed, String::from_utf8(received).unwrap()));
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(calls.contains("--stdout"), "{calls}");
    }
}

/// pack-objects given object ids (not revisions) in a partial clone fetches those the clone
/// lacks from the promisor remote, as git's does: exit code, the objects packed, fsck.
#[test]
fn pack_objects_fetches_listed_objects_it_lacks_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let up = crate::repack_promisor::changing_upstream(&env);
        let url = format!("file://{}", up.display());
        // An old version of `f`, which a blob:none clone lacks, and HEAD, which it has.
        let old = env.git(&up, &["rev-parse", "HEAD~2:f"]);
        let head = env.git(&up, &["rev-parse", "HEAD"]);
        let input = [old, head].concat();
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let (side, work) = partial_side(&env, &url, sluice);
            let base = side.join("out/p");
            let args = ["pack-objects", "-q", base.to_str().unwrap()];
            let command = env.sluice_or_git_command(sluice, &work, &args);
            let out = crate::util::run_with_input(command, &input);
            assert!(out.status.success(), "sluice {sluice}: {}", stderr(&out));
            env.git(&work, &["fsck", "--strict"]);
            seen.push(crate::repack_filter::packs_in(&env, &side.join("out")));
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}

/// A directory for one side of a twin (`side-<sluice>`), with an empty `out/` and a blob:none
/// clone of `url` at `work`: the directory and the clone.
fn partial_side(env: &Env, url: &str, sluice: bool) -> (std::path::PathBuf, std::path::PathBuf) {
    let side = env.path().join(format!("side-{sluice}"));
    std::fs::create_dir_all(side.join("out")).unwrap();
    let args = [
        "clone",
        "-q",
        "--no-local",
        "--filter=blob:none",
        url,
        "work",
    ];
    env.git(&side, &args);
    let work = side.join("work");
    (side, work)
}
