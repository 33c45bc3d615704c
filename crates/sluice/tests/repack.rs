//! `sluice repack -a -d [-b]`: one pack of everything reachable, the old packs and loose
//! copies gone, and a reachability bitmap git accepts (`git rev-list --test-bitmap` for every
//! branch and tag) and Sluice's server counts with.

use crate::util::{gits, pack_files, stderr, Env};
use std::path::Path;

#[test]
fn repack_writes_one_pack_and_a_bitmap_git_accepts() {
    for git in gits() {
        let env = Env::with_git(git);
        let work = env.init("work", false);
        for i in 0..40 {
            std::fs::create_dir_all(work.join(format!("d{}", i % 4))).unwrap();
            std::fs::write(
                work.join(format!("d{}/f{}", i % 4, i % 7)),
                format!("{i}\n"),
            )
            .unwrap();
            env.git(&work, &["add", "."]);
            env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
            if i % 10 == 5 {
                env.git(&work, &["branch", &format!("b{i}")]);
                env.git(&work, &["tag", "-a", "-m", "t", &format!("v{i}")]);
            }
            if i == 20 {
                env.git(&work, &["checkout", "-q", "-b", "side", "HEAD~3"]);
            }
            if i == 30 {
                env.git(&work, &["checkout", "-q", "master"]);
                env.git(&work, &["merge", "-q", "--no-edit", "side"]);
            }
        }
        let bare = env.path().join("bare.git");
        env.git(env.path(), &["clone", "-q", "--bare", "work", "bare.git"]);
        // Loose objects and a second pack beside the first.
        env.git(&work, &["commit", "-q", "--allow-empty", "-m", "loose"]);
        env.git(
            &work,
            &[
                "push",
                "-q",
                bare.to_str().unwrap(),
                "HEAD:refs/heads/loose",
            ],
        );
        let out = env.sluice(&bare, &["repack", "-a", "-d"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(pack_files(&bare, "pack"), 1);
        assert_eq!(pack_files(&bare, "bitmap"), 1, "bare: a bitmap by default");
        let counted = String::from_utf8(env.git(&bare, &["count-objects", "-v"])).unwrap();
        assert!(counted.contains("count: 0\n"), "{counted}");
        // Tags peeled: --test-bitmap takes a commit.
        let peeled = "--format=%(if)%(*objectname)%(then)%(*objectname)%(else)%(objectname)%(end)";
        let tips = String::from_utf8(env.git(&bare, &["for-each-ref", peeled])).unwrap();
        for tip in tips.lines() {
            let out = env
                .git_command(&bare, &["rev-list", "--test-bitmap", tip])
                .output()
                .unwrap();
            assert!(out.status.success(), "{tip}: {}", stderr(&out));
            assert!(
                String::from_utf8_lossy(&out.stdout).contains("OK!")
                    || stderr(&out).contains("OK!")
            );
        }
        env.git(&bare, &["fsck", "--strict"]);
        // A clone through Sluice's server (which counts with the bitmap) is complete.
        crate::util::sluice_clone_checked(&env, &bare, "clone");
        // Not bare: no bitmap unless asked.
        let out = env.sluice(&work, &["repack", "-a", "-d"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(pack_files(&work.join(".git"), "bitmap"), 0);
    }
}

/// `sluice pack-refs` leaves `packed-refs` and the loose refs as `git pack-refs` does: by
/// default the tags (a branch already packed and moved since stays loose), with `--all` every
/// ref (symbolic refs and per-worktree refs stay loose), `--no-prune` keeping the loose files,
/// `--include` and `--exclude` (git 2.42 on); annotated tags with their peeled line.
#[test]
fn pack_refs_packs_as_git_does() {
    for git in gits() {
        let newest = git.starts_with("/usr/local");
        let env = Env::with_git(git);
        let mut sides = Vec::new();
        for name in ["theirs", "ours"] {
            let repo = env.init(name, false);
            env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "one"]);
            env.git(&repo, &["branch", "topic/nested/deep"]);
            env.git(&repo, &["tag", "light"]);
            env.git(&repo, &["tag", "-a", "-m", "annotated", "v1"]);
            env.git(&repo, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
            env.git(
                &repo,
                &[
                    "symbolic-ref",
                    "refs/remotes/origin/HEAD",
                    "refs/remotes/origin/main",
                ],
            );
            env.git(&repo, &["update-ref", "refs/custom/x", "HEAD"]);
            sides.push(repo);
        }
        let state = |repo: &Path| {
            let packed = std::fs::read_to_string(repo.join(".git/packed-refs")).unwrap_or_default();
            let out = std::process::Command::new("find")
                .arg(".git/refs")
                .current_dir(repo)
                .output()
                .unwrap();
            let mut files: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_owned)
                .collect();
            files.sort();
            (packed, files)
        };
        let mut steps: Vec<&[&str]> = vec![
            &["pack-refs"][..],
            &["pack-refs", "--all", "--no-prune"],
            &["pack-refs", "--all"],
            // (git's commands, run alike on both sides, begin with "!")
            &["!", "commit", "-q", "--allow-empty", "-m", "two"],
            &["!", "update-ref", "refs/bisect/bad", "HEAD"],
            &["!", "tag", "later"],
            &["pack-refs"],
        ];
        if newest {
            steps.extend([
                &["!", "update-ref", "refs/custom/y", "HEAD"][..],
                &["!", "update-ref", "refs/notes/n", "HEAD"],
                &[
                    "pack-refs",
                    "--include",
                    "refs/custom/*",
                    "--exclude",
                    "refs/custom/x",
                ],
                &[
                    "pack-refs",
                    "--include",
                    "refs/*",
                    "--exclude",
                    "refs/notes/*",
                ],
            ]);
        }
        steps.push(&["pack-refs", "--all"]);
        for args in steps {
            if args[0] == "!" {
                for side in &sides {
                    env.git(side, &args[1..]);
                }
                continue;
            }
            env.git(&sides[0], args);
            let out = env.sluice(&sides[1], args, b"");
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(state(&sides[1]), state(&sides[0]), "{args:?}");
        }
        env.git(&sides[1], &["fsck", "--strict"]);
    }
}

/// `sluice update-server-info` writes `info/refs` and `objects/info/packs` as git's does, and
/// `sluice repack` leaves them as git's repack does.
#[test]
fn server_info_is_gits() {
    let env = Env::new();
    let mut sides = Vec::new();
    for name in ["theirs.git", "ours.git"] {
        let repo = env.init(name, true);
        let work = env.init(&format!("{name}-work"), false);
        env.git(&work, &["commit", "-q", "--allow-empty", "-m", "one"]);
        env.git(&work, &["tag", "-a", "-m", "annotated", "v1"]);
        env.git(&work, &["tag", "light"]);
        env.git(
            &work,
            &[
                "push",
                "-q",
                repo.to_str().unwrap(),
                "HEAD:refs/heads/main",
                "--tags",
            ],
        );
        sides.push(repo);
    }
    let files = |repo: &Path| {
        let read = |f: &str| std::fs::read(repo.join(f)).unwrap_or_default();
        (read("info/refs"), read("objects/info/packs"))
    };
    env.git(&sides[0], &["update-server-info"]);
    let out = env.sluice(&sides[1], &["update-server-info"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(files(&sides[1]), files(&sides[0]));
    env.git(&sides[0], &["repack", "-a", "-d", "-q"]);
    let out = env.sluice(&sides[1], &["repack", "-a", "-d"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(files(&sides[1]).0, files(&sides[0]).0);
    assert_eq!(pack_files(&sides[1], "pack"), 1);
}

/// A repack killed at any moment (SIGKILL during counting, writing, indexing, installing,
/// removing the old packs, writing the bitmap) leaves a repository that `git fsck` finds
/// complete, with every ref's history.
#[test]
fn a_killed_repack_loses_nothing() {
    let env = Env::new();
    let work = env.init("work", false);
    for i in 0..60 {
        let body: String = (0..200)
            .map(|k| format!("line {k} of version {i}\n"))
            .collect();
        std::fs::write(work.join(format!("f{}", i % 9)), body).unwrap();
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    for delay_ms in [0u64, 5, 10, 20, 40, 80, 160] {
        let bare = env.path().join(format!("bare-{delay_ms}.git"));
        env.git(
            env.path(),
            &["clone", "-q", "--bare", "work", bare.to_str().unwrap()],
        );
        // Loose objects and a second pack, so that there is something to remove.
        env.git(&work, &["commit", "-q", "--allow-empty", "-m", "extra"]);
        env.git(
            &work,
            &[
                "push",
                "-q",
                bare.to_str().unwrap(),
                "HEAD:refs/heads/extra",
            ],
        );
        crate::util::kill_and_recover(&env, &bare, &["repack", "-a", "-d", "-b"], delay_ms);
    }
}

/// Runs `git rev-list --test-bitmap` on every branch of `repo`; each has a bitmap of its own.
fn assert_branch_bitmaps(env: &Env, repo: &Path) {
    let tips = String::from_utf8(env.git(
        repo,
        &["for-each-ref", "--format=%(objectname)", "refs/heads"],
    ))
    .unwrap();
    for tip in tips.lines() {
        let out = env
            .git_command(repo, &["rev-list", "--test-bitmap", tip])
            .output()
            .unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(
            out.status.success() && said.contains("OK!"),
            "{tip}: {said}"
        );
    }
}

/// A long history (past the hundred newest commits, where bitmaps thin out), first bitmapped
/// by git, then grown, with a branch deleted (its objects leave, so the old bitmaps' positions
/// have holes): the bitmaps carried over and the ones built anew all pass git's test, twice.
#[test]
fn bitmaps_carry_over_across_repacks() {
    for git in gits() {
        let env = Env::with_git(git);
        let bare = env.init("bare.git", true);
        let mut fi = crate::util::FastImport::new();
        for i in 0..300 {
            let path = format!("d{}/f{}", i % 5, i % 11);
            fi.commit(
                "master",
                &format!("c{i}"),
                &[(&path, "100644", format!("{i}\n").as_bytes())],
            );
        }
        for i in 0..20 {
            fi.commit(
                "doomed",
                &format!("d{i}"),
                &[("gone", "100644", format!("doomed {i}\n").as_bytes())],
            );
        }
        env.fast_import(&bare, fi.finish());
        for back in (0..300).step_by(37) {
            let at = format!("master~{back}");
            env.git(&bare, &["branch", &format!("b{back}"), &at]);
        }
        env.git(&bare, &["repack", "-a", "-d", "-b", "-q"]);
        assert_eq!(pack_files(&bare, "bitmap"), 1);
        let doomed = String::from_utf8(env.git(&bare, &["rev-parse", "doomed"])).unwrap();
        env.git(&bare, &["update-ref", "-d", "refs/heads/doomed"]);
        // Written long enough ago that what no ref reaches goes (a recent pack's would be kept
        // loose, in case a push's refs were not updated yet).
        let old = std::time::SystemTime::now() - 2 * sluice_generate::RECENT_PACK;
        for entry in std::fs::read_dir(bare.join("objects/pack")).unwrap() {
            let path = entry.unwrap().path();
            std::fs::File::open(&path)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        let mut more = crate::util::FastImport::new();
        for i in 0..30 {
            let path = format!("new/f{}", i % 3);
            more.commit(
                "master",
                &format!("n{i}"),
                &[(&path, "100644", format!("{i}\n").as_bytes())],
            );
        }
        // fast-import starts "master" afresh unless told where it is.
        let head = String::from_utf8(env.git(&bare, &["rev-parse", "master"])).unwrap();
        let stream = [
            format!("reset refs/heads/master\nfrom {}\n", head.trim()).as_bytes(),
            more.finish(),
        ]
        .concat();
        env.fast_import(&bare, &stream);
        for round in 0..2 {
            let out = env.sluice(&bare, &["repack", "-a", "-d", "-q"], b"");
            assert!(out.status.success(), "round {round}: {}", stderr(&out));
            assert_eq!(pack_files(&bare, "pack"), 1);
            assert_eq!(pack_files(&bare, "bitmap"), 1);
            let gone = env
                .git_command(&bare, &["cat-file", "-e", doomed.trim()])
                .output()
                .unwrap();
            assert!(
                !gone.status.success(),
                "the deleted branch's objects are dropped"
            );
            assert_branch_bitmaps(&env, &bare);
            env.git(&bare, &["fsck", "--strict"]);
        }
        crate::util::sluice_clone_checked(&env, &bare, "clone");
    }
}

/// A damaged entry in the pack being replaced (its CRC32 no longer matches): the repack stops
/// with an error naming it, exits non-zero, and the repository is as it was, byte for byte,
/// with no temporary file left.
#[test]
fn a_corrupt_object_stops_the_repack_and_nothing_is_deleted() {
    let env = Env::new();
    let work = env.init("work", false);
    for i in 0..30 {
        let body: String = (0..100).map(|k| format!("line {k} of {i}\n")).collect();
        std::fs::write(work.join(format!("f{}", i % 5)), body).unwrap();
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    let bare = env.path().join("bare.git");
    env.git(env.path(), &["clone", "-q", "--bare", "work", "bare.git"]);
    env.git(&bare, &["repack", "-q", "-a", "-d"]);
    // Something beside the pack, so that the repack has more than one source.
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "loose"]);
    env.git(
        &work,
        &[
            "push",
            "-q",
            bare.to_str().unwrap(),
            "HEAD:refs/heads/loose",
        ],
    );
    // Flip a byte in the middle of the largest blob's zlib stream.
    let pack = std::fs::read_dir(bare.join("objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "pack"))
        .unwrap();
    let idx = pack.with_extension("idx");
    let listing =
        String::from_utf8(env.git(&bare, &["verify-pack", "-v", idx.to_str().unwrap()])).unwrap();
    let (id, offset, size) = listing
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 5 && f[1] == "blob").then(|| {
                (
                    f[0].to_string(),
                    f[4].parse::<usize>().unwrap(),
                    f[3].parse::<usize>().unwrap(),
                )
            })
        })
        .max_by_key(|&(_, _, size)| size)
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pack, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut data = std::fs::read(&pack).unwrap();
    data[offset + size / 2] ^= 0x55;
    std::fs::write(&pack, data).unwrap();
    let before = crate::upload_pack::snapshot(&bare);
    for flags in [&["repack", "-a", "-d"][..], &["repack", "-a", "-d", "-b"]] {
        let out = env.sluice(&bare, flags, b"");
        assert!(!out.status.success(), "a damaged pack is not repacked");
        let said = stderr(&out);
        assert!(
            said.contains(&id) || said.contains(&offset.to_string()),
            "names the object: {said}"
        );
        assert!(
            crate::upload_pack::snapshot(&bare) == before,
            "the repository is unchanged: {said}"
        );
    }
}

/// Every object id of `repo`, sorted.
fn all_objects(env: &Env, repo: &Path) -> String {
    let listed = env.git(
        repo,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname)",
        ],
    );
    String::from_utf8(listed).unwrap()
}

/// `repack --geometric=2 -d` twinned with git's: a big pack, small packs from pushes and loose
/// objects become the same number of packs as git leaves, with the same objects, no loose
/// ones, and fsck clean; run again, nothing changes.
#[test]
fn geometric_repack_rolls_up_small_packs_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let work = env.init("work", false);
        let bare = env.path().join("bare.git");
        env.git(env.path(), &["init", "-q", "--bare", "bare.git"]);
        env.git(&bare, &["config", "receive.unpackLimit", "1"]);
        let push = |round: usize, files: usize| {
            for f in 0..files {
                std::fs::write(work.join(format!("r{round}-{f}")), format!("{round} {f}\n"))
                    .unwrap();
            }
            env.git(&work, &["add", "."]);
            env.git(&work, &["commit", "-q", "-m", &format!("round {round}")]);
            env.git(
                &work,
                &["push", "-q", bare.to_str().unwrap(), "HEAD:refs/heads/main"],
            );
        };
        push(0, 200);
        for round in 1..6 {
            push(round, round);
        }
        // Loose objects too: below the unpack limit.
        env.git(&bare, &["config", "receive.unpackLimit", "1000"]);
        push(6, 2);
        let twin = env.path().join("twin.git");
        copy_dir(&bare, &twin);
        let before = all_objects(&env, &bare);
        assert_eq!(pack_files(&bare, "pack"), 6);
        let out = env.sluice(&bare, &["repack", "--geometric=2", "-d"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        env.git(&twin, &["repack", "-q", "--geometric=2", "-d"]);
        assert_eq!(
            pack_files(&bare, "pack"),
            pack_files(&twin, "pack"),
            "as many packs as git"
        );
        assert_eq!(all_objects(&env, &bare), before, "every object kept");
        let counted = String::from_utf8(env.git(&bare, &["count-objects", "-v"])).unwrap();
        assert!(counted.contains("count: 0\n"), "{counted}");
        env.git(&bare, &["fsck", "--strict"]);
        let packs: Vec<_> = std::fs::read_dir(bare.join("objects/pack"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let out = env.sluice(&bare, &["repack", "--geometric=2", "-d"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        let again: Vec<_> = std::fs::read_dir(bare.join("objects/pack"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(
            packs.len(),
            again.len(),
            "a geometric progression is left alone"
        );
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// Clones and pushes while repacks run, over and over: every clone is complete, every push
/// lands, and the repository is whole at the end (a reader that listed the packs before a
/// repack removed some finds its objects in the new pack).
#[test]
fn pushes_and_clones_during_repacks_all_succeed() {
    /// Sets its flag when dropped, also by a panic unwinding.
    struct SetOnDrop<'a>(&'a std::sync::atomic::AtomicBool);
    impl Drop for SetOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    let env = Env::new();
    let bare = env.init("bare.git", true);
    let mut fi = crate::util::FastImport::new();
    for i in 0..400 {
        let path = format!("d{}/f{}", i % 7, i % 13);
        let body = format!("{i}\n").repeat(50);
        fi.commit(
            "master",
            &format!("c{i}"),
            &[(&path, "100644", body.as_bytes())],
        );
    }
    env.fast_import(&bare, fi.finish());
    env.git(&bare, &["config", "receive.unpackLimit", "1"]);
    env.git(&bare, &["config", "receive.autogc", "false"]);
    let work = env.path().join("work");
    env.git(env.path(), &["clone", "-q", bare.to_str().unwrap(), "work"]);
    let done = std::sync::atomic::AtomicBool::new(false);
    let receive = format!(
        "--receive-pack={} receive-pack",
        env!("CARGO_BIN_EXE_sluice")
    );
    std::thread::scope(|scope| {
        let repacks = scope.spawn(|| {
            // Set however the repacks end: a failed one ends the pushes and clones too, and
            // the test fails with its words rather than running on.
            let _done = SetOnDrop(&done);
            for round in 0..40 {
                let flags: &[&str] = match round % 2 {
                    0 => &["repack", "-a", "-d", "-b", "-q"],
                    _ => &["repack", "--geometric=2", "-d", "-q"],
                };
                let out = env.sluice(&bare, flags, b"");
                assert!(out.status.success(), "repack {round}: {}", stderr(&out));
            }
        });
        let clones = scope.spawn(|| {
            let mut n = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) || n < 2 {
                let target = env.path().join(format!("clone{n}.git"));
                let url = format!("file://{}", bare.display());
                // Sluice's client and git's server, then git's client and Sluice's server.
                let server = format!("--upload-pack={} upload-pack", env!("CARGO_BIN_EXE_sluice"));
                let target_str = target.to_str().unwrap();
                let out = match n % 2 {
                    0 => env.sluice(
                        env.path(),
                        &["clone", "-q", "--bare", &url, target_str],
                        b"",
                    ),
                    _ => (env.git_command(
                        env.path(),
                        &["clone", "-q", "--bare", &server, &url, target_str],
                    ))
                    .output()
                    .unwrap(),
                };
                assert!(out.status.success(), "clone {n}: {}", stderr(&out));
                env.git(&target, &["fsck", "--connectivity-only", "--no-progress"]);
                std::fs::remove_dir_all(&target).unwrap();
                n += 1;
            }
        });
        let mut n = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) || n < 2 {
            std::fs::write(work.join(format!("pushed{n}")), format!("{n}\n")).unwrap();
            env.git(&work, &["add", "."]);
            env.git(&work, &["commit", "-q", "-m", &format!("pushed {n}")]);
            let out = env
                .git_command(
                    &work,
                    &["push", "-q", &receive, "origin", "HEAD:refs/heads/master"],
                )
                .output()
                .unwrap();
            assert!(out.status.success(), "push {n}: {}", stderr(&out));
            n += 1;
        }
        repacks.join().unwrap();
        clones.join().unwrap();
    });
    env.git(&bare, &["fsck", "--strict"]);
    let ours = env.git(&work, &["rev-parse", "HEAD"]);
    assert_eq!(env.git(&bare, &["rev-parse", "master"]), ours);
}

/// A fresh clone (one pack, no bitmap, nothing else): the pack written is that pack again, and
/// its bitmaps, built while the objects were counted, pass git's test on every branch.
#[test]
fn a_fresh_clone_gets_its_bitmap_built_while_counting() {
    for git in gits() {
        let env = Env::with_git(git);
        let source = env.init("source.git", true);
        let mut fi = crate::util::FastImport::new();
        for i in 0..250 {
            let path = format!("d{}/f{}", i % 5, i % 11);
            let branch = if i % 50 == 49 { "side" } else { "master" };
            fi.commit(
                branch,
                &format!("c{i}"),
                &[(&path, "100644", format!("{i}\n").as_bytes())],
            );
        }
        env.fast_import(&source, fi.finish());
        let bare = env.path().join("bare.git");
        env.git(
            env.path(),
            &[
                "clone",
                "-q",
                "--bare",
                "--no-local",
                source.to_str().unwrap(),
                "bare.git",
            ],
        );
        let pack_name = |repo: &Path| {
            std::fs::read_dir(repo.join("objects/pack"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.extension().is_some_and(|x| x == "pack"))
                .unwrap()
        };
        let before = pack_name(&bare);
        let out = env.sluice(&bare, &["repack", "-a", "-d", "-q"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(pack_name(&bare), before, "the same pack");
        assert_eq!(pack_files(&bare, "bitmap"), 1);
        assert_branch_bitmaps(&env, &bare);
        env.git(&bare, &["fsck", "--strict"]);
    }
}

/// A work repository with `count` commits, each changing one of `files` files.
fn work_with_commits(env: &Env, count: usize, files: usize) -> std::path::PathBuf {
    let work = env.init("work", false);
    for i in 0..count {
        std::fs::write(work.join(format!("f{}", i % files)), format!("{i}\n")).unwrap();
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    work
}

/// Bare twins `theirs<suffix>.git` and `ours<suffix>.git`, each a full copy of `work`
/// (`--no-local`: a pack of its own), prepared by `setup`.
fn twin_copies(env: &Env, suffix: &str, setup: impl Fn(&Path)) -> Vec<std::path::PathBuf> {
    (["theirs", "ours"].iter())
        .map(|name| {
            let bare = env.path().join(format!("{name}{suffix}.git"));
            let target = bare.to_str().unwrap();
            env.git(
                env.path(),
                &["clone", "-q", "--bare", "--no-local", "work", target],
            );
            setup(&bare);
            bare
        })
        .collect()
}

/// `repack -A -d` twinned with git's: what no ref reaches any more (a deleted branch) is kept
/// loose, the rest packed; `-a -d` drops it (the packs dated two hours back, past the window
/// in which a pack may hold a push whose refs are not updated yet). The same objects remain,
/// as many loose, for both.
#[test]
fn repack_big_a_keeps_unreachable_objects_loose_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let work = work_with_commits(&env, 20, 4);
        env.git(&work, &["checkout", "-q", "-b", "doomed"]);
        std::fs::write(work.join("only-on-doomed"), "gone soon\n").unwrap();
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", "doomed"]);
        env.git(&work, &["checkout", "-q", "master"]);
        for flag in ["-A", "-a"] {
            let twins = twin_copies(&env, flag, |bare| {
                env.git(bare, &["update-ref", "-d", "refs/heads/doomed"]);
                let old = std::time::SystemTime::now() - 2 * sluice_generate::RECENT_PACK;
                for entry in std::fs::read_dir(bare.join("objects/pack")).unwrap() {
                    let path = entry.unwrap().path();
                    std::fs::File::open(&path)
                        .unwrap()
                        .set_modified(old)
                        .unwrap();
                }
            });
            env.git(&twins[0], &["repack", "-q", flag, "-d"]);
            let out = env.sluice(&twins[1], &["repack", flag, "-d", "-q"], b"");
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(
                all_objects(&env, &twins[1]),
                all_objects(&env, &twins[0]),
                "{flag}"
            );
            let loose = |repo: &Path| {
                let counted = String::from_utf8(env.git(repo, &["count-objects", "-v"])).unwrap();
                counted.lines().next().unwrap().to_owned()
            };
            assert_eq!(loose(&twins[1]), loose(&twins[0]), "{flag}");
            env.git(&twins[1], &["fsck", "--strict"]);
        }
    }
}

/// The ids of the objects in `repo`'s own packs, sorted.
fn own_packed(env: &Env, repo: &Path) -> Vec<String> {
    let mut ids = Vec::new();
    for entry in std::fs::read_dir(repo.join("objects/pack")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "idx") {
            let data = std::fs::read(&path).unwrap();
            let out = env.git_with_input(repo, &["show-index"], &data);
            for line in String::from_utf8(out.stdout).unwrap().lines() {
                ids.push(line.split_whitespace().nth(1).unwrap().to_owned());
            }
        }
    }
    ids.sort();
    ids
}

/// `repack -a -d -l` of a fork twinned with git's: its pack keeps only what its alternate
/// does not have (the fork's own commits), the same objects as git's, and no bitmap.
#[test]
fn repack_local_leaves_the_alternates_objects_there_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let work = work_with_commits(&env, 15, 3);
        let source = env.path().join("source.git");
        env.git(env.path(), &["clone", "-q", "--bare", "work", "source.git"]);
        // Each a full copy of its own, then borrowing from the source, plus work of its own.
        let twins = twin_copies(&env, "", |fork| {
            let alternates = format!("{}\n", source.join("objects").display());
            std::fs::write(fork.join("objects/info/alternates"), alternates).unwrap();
        });
        std::fs::write(work.join("fork-only"), "mine\n").unwrap();
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", "fork work"]);
        for fork in &twins {
            env.git(
                &work,
                &[
                    "push",
                    "-q",
                    fork.to_str().unwrap(),
                    "HEAD:refs/heads/master",
                ],
            );
        }
        env.git(&twins[0], &["repack", "-q", "-a", "-d", "-l"]);
        let out = env.sluice(&twins[1], &["repack", "-a", "-d", "-l", "-q"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        let ours = own_packed(&env, &twins[1]);
        assert_eq!(ours, own_packed(&env, &twins[0]));
        assert!(
            ours.len() == 3,
            "the fork's commit, tree and blob: {ours:?}"
        );
        assert_eq!(pack_files(&twins[1], "bitmap"), 0);
        env.git(&twins[1], &["fsck", "--strict"]);
    }
}
