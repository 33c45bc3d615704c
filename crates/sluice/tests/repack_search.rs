//! `sluice repack -a -d -f` (and `gc --aggressive`): every delta searched anew, twinned with
//! git's: a pack git verifies and accepts, no deeper than `--depth`, about the size git's own
//! search makes, with its bitmap, and the same objects. Without `-f`, stored deltas are kept
//! and whole objects searched against the other packs' objects, as git's repack and gc do.

use crate::util::{gits, stderr, Env};
use std::path::Path;

/// A work repository whose files grow and change a few lines at a time over `count` commits:
/// history that only deltas make small.
fn evolving_work(env: &Env, count: usize) -> std::path::PathBuf {
    let work = env.init("work", false);
    std::fs::create_dir_all(work.join("src")).unwrap();
    for i in 0..count {
        for f in 0..4 {
            // One line in ten changes, and one more is added, in each commit.
            let lines: String = (0..60 + i)
                .map(|l| {
                    let value = if l % 10 == i % 10 { i } else { l };
                    format!("file {f} line {l}: value {value}\n")
                })
                .collect();
            std::fs::write(work.join(format!("src/f{f}.txt")), lines).unwrap();
        }
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    work
}

/// A bare copy of `work` whose one pack holds no delta at all.
fn undeltified_copy(env: &Env, name: &str) -> std::path::PathBuf {
    let bare = env.path().join(name);
    let target = bare.to_str().unwrap();
    env.git(
        env.path(),
        &["clone", "-q", "--bare", "--no-local", "work", target],
    );
    env.git(&bare, &["repack", "-q", "-a", "-d", "-F", "--window=0"]);
    bare
}

/// A bare copy of `work` whose history is in two packs without a delta, the commits up to
/// `HEAD~newer` in one and the rest in the other, as packs written without a search (or
/// cut at a size limit) leave a repository.
fn two_whole_packs(env: &Env, name: &str, newer: usize) -> std::path::PathBuf {
    let bare = undeltified_copy(env, name);
    let pack_dir = bare.join("objects/pack");
    let old = crate::util::list_dir(&pack_dir);
    let cut = format!("HEAD~{newer}");
    for range in [
        vec![cut.clone()],
        vec!["HEAD".to_owned(), format!("^{cut}")],
    ] {
        let mut args = vec!["rev-list", "--objects"];
        args.extend(range.iter().map(String::as_str));
        let listed = env.git(&bare, &args);
        let packed = env.git_with_input(
            &bare,
            &["pack-objects", "-q", "--window=0", "objects/pack/pack"],
            &listed,
        );
        assert!(packed.status.success(), "{}", stderr(&packed));
    }
    for file in old {
        std::fs::remove_file(pack_dir.join(file)).unwrap();
    }
    bare
}

/// Deltas in `repo`'s pack and its longest chain, from `git verify-pack -v`.
fn chains(env: &Env, repo: &Path) -> (usize, usize) {
    let pack_dir = repo.join("objects/pack");
    let idx = std::fs::read_dir(&pack_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "idx"))
        .unwrap();
    let listing = env.git(repo, &["verify-pack", "-v", idx.to_str().unwrap()]);
    let listing = String::from_utf8(listing).unwrap();
    let mut deltas = 0;
    let mut longest = 0;
    for line in listing.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // id kind size size-in-pack offset [depth base]
        if fields.len() == 7 && fields[0].len() == 40 {
            deltas += 1;
            longest = longest.max(fields[5].parse::<usize>().unwrap());
        }
    }
    (deltas, longest)
}

fn pack_size(repo: &Path) -> u64 {
    std::fs::read_dir(repo.join("objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pack"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

fn objects(env: &Env, repo: &Path) -> String {
    String::from_utf8(env.git(repo, &["rev-list", "--objects", "--all"])).unwrap()
}

fn assert_bitmaps_pass(env: &Env, repo: &Path) {
    let tips = String::from_utf8(env.git(repo, &["for-each-ref", "--format=%(objectname)"]));
    for tip in tips.unwrap().lines() {
        let out = env
            .git_command(repo, &["rev-list", "--test-bitmap", tip])
            .output()
            .unwrap();
        assert!(out.status.success(), "{tip}: {}", stderr(&out));
    }
}

#[test]
fn repack_f_searches_every_delta_anew_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let work = evolving_work(&env, 40);
        env.git(&work, &["branch", "side", "HEAD~10"]);
        let theirs = undeltified_copy(&env, "theirs.git");
        let ours = undeltified_copy(&env, "ours.git");
        assert_eq!(chains(&env, &ours).0, 0, "the starting pack has no delta");
        let before = pack_size(&ours);
        env.git(&theirs, &["repack", "-q", "-a", "-d", "-f"]);
        let out = env.sluice(&ours, &["repack", "-a", "-d", "-f", "-q"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        env.git(&ours, &["fsck", "--strict"]);
        assert_eq!(objects(&env, &ours), objects(&env, &theirs));
        let (deltas, longest) = chains(&env, &ours);
        assert!(
            deltas > 100 && longest <= 50,
            "{deltas} deltas, chain {longest}"
        );
        let (ours_size, theirs_size) = (pack_size(&ours), pack_size(&theirs));
        assert!(ours_size * 2 < before, "{ours_size} of {before} bytes");
        // Small packs are mostly headers and zlib's framing: a looser bound than the
        // benchmark's on real histories.
        assert!(
            ours_size * 100 <= theirs_size * 110,
            "{ours_size} against git's {theirs_size}"
        );
        assert_bitmaps_pass(&env, &ours);
        crate::util::sluice_clone_checked(&env, &ours, "clone");
    }
}

#[test]
fn repack_and_gc_search_whole_objects_against_other_packs_as_git_does() {
    let commands: [&[&str]; 2] = [&["repack", "-a", "-d", "-q"], &["gc", "-q"]];
    for git in gits() {
        let env = Env::with_git(git);
        evolving_work(&env, 40);
        for (n, command) in commands.iter().enumerate() {
            let theirs = two_whole_packs(&env, &format!("theirs{n}.git"), 20);
            let ours = two_whole_packs(&env, &format!("ours{n}.git"), 20);
            env.git(&theirs, command);
            let out = env.sluice(&ours, command, b"");
            assert!(out.status.success(), "{command:?}: {}", stderr(&out));
            assert_searched_as(&env, (&ours, &theirs), &format!("{command:?}"));
        }
        // git's repack, its pack-objects Sluice's.
        let exec = crate::util::stand_in(&env, &["pack-objects"]);
        let stood = two_whole_packs(&env, "stood.git", 20);
        let out = (env.git_command(&stood, commands[0]))
            .env("GIT_EXEC_PATH", &exec)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let theirs = env.path().join("theirs0.git");
        assert_searched_as(&env, (&stood, &theirs), "pack-objects");
        // A bare repository's bitmap, asked for quietly (`--write-bitmap-index-quiet`).
        let bitmaps = |repo: &Path| crate::util::pack_files(repo, "bitmap");
        assert_eq!((bitmaps(&stood), bitmaps(&theirs)), (1, 1));
    }
}

/// `ours` holds what `theirs` holds, git finds it whole, and about as many deltas made it as
/// small as git's search made `theirs`.
fn assert_searched_as(env: &Env, (ours, theirs): (&Path, &Path), what: &str) {
    env.git(ours, &["fsck", "--strict"]);
    assert_eq!(objects(env, ours), objects(env, theirs));
    let (ours_deltas, longest) = chains(env, ours);
    let (theirs_deltas, _) = chains(env, theirs);
    // Each pack's objects were tried against each other when it was written (here, with no
    // window): git finds deltas across the two packs only.
    assert!(theirs_deltas > 20, "{what}: git made {theirs_deltas}");
    assert!(
        ours_deltas * 10 >= theirs_deltas * 9 && longest <= 50,
        "{what}: {ours_deltas} deltas (git {theirs_deltas}), chain {longest}"
    );
    let (ours_size, theirs_size) = (pack_size(ours), pack_size(theirs));
    assert!(
        ours_size * 100 <= theirs_size * 110,
        "{what}: {ours_size} bytes against git's {theirs_size}"
    );
}

#[test]
fn repack_f_keeps_chains_within_depth_and_window() {
    let env = Env::new();
    evolving_work(&env, 30);
    let ours = undeltified_copy(&env, "ours.git");
    let out = env.sluice(
        &ours,
        &[
            "repack",
            "-adf",
            "-q",
            "--depth=3",
            "--window=4",
            "--threads=1",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    env.git(&ours, &["fsck", "--strict"]);
    let (deltas, longest) = chains(&env, &ours);
    assert!(
        deltas > 50 && longest <= 3,
        "{deltas} deltas, chain {longest}"
    );
    // pack.depth from the config, when no --depth is given.
    env.git(&ours, &["config", "pack.depth", "1"]);
    let out = env.sluice(&ours, &["repack", "-adf", "-q"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let (deltas, longest) = chains(&env, &ours);
    assert!(
        deltas > 20 && longest == 1,
        "{deltas} deltas, chain {longest}"
    );
    // -F compresses every object anew too.
    let out = env.sluice(&ours, &["repack", "-adF", "-q", "--depth=2"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    env.git(&ours, &["fsck", "--strict"]);
    assert!(chains(&env, &ours).1 <= 2);
    // A window memory of a few hundred bytes keeps one base at a time: fewer deltas, a sound
    // pack.
    let out = env.sluice(&ours, &["repack", "-adf", "-q", "--window-memory=300"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    env.git(&ours, &["fsck", "--strict"]);
    let (tight, _) = chains(&env, &ours);
    let out = env.sluice(&ours, &["repack", "-adf", "-q"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        tight <= chains(&env, &ours).0,
        "{tight} deltas with a tight window"
    );
    // A window of one object holds only the object searched: no delta.
    let out = env.sluice(&ours, &["repack", "-adf", "-q", "--window=1"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(chains(&env, &ours).0, 0);
    env.git(&ours, &["fsck", "--strict"]);
}

#[test]
fn gc_aggressive_keeps_every_object_in_a_smaller_pack() {
    let env = Env::new();
    evolving_work(&env, 30);
    let ours = undeltified_copy(&env, "ours.git");
    let twin = undeltified_copy(&env, "theirs.git");
    let before = pack_size(&ours);
    let out = env.sluice(&ours, &["gc", "--aggressive", "-q"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    env.git(&twin, &["gc", "--aggressive", "-q"]);
    env.git(&ours, &["fsck", "--strict"]);
    assert_eq!(objects(&env, &ours), objects(&env, &twin));
    let after = pack_size(&ours);
    assert!(after * 2 < before, "{after} of {before} bytes");
}

/// A full-search repack, or a cruft repack, killed at any moment leaves a repository git
/// finds complete, with its refs as they were; a repack run to its end afterwards succeeds.
#[test]
fn a_killed_full_search_or_cruft_repack_loses_nothing() {
    let env = Env::new();
    evolving_work(&env, 60);
    for (i, delay_ms) in [0u64, 10, 30, 60, 120, 240].into_iter().enumerate() {
        let bare = undeltified_copy(&env, &format!("killed-{delay_ms}.git"));
        env.git(&bare, &["update-ref", "refs/heads/side", "HEAD~5"]);
        env.git(&bare, &["update-ref", "-d", "refs/heads/side"]);
        let args: &[&str] = match i % 2 {
            0 => &["repack", "-a", "-d", "-f"],
            _ => &["repack", "--cruft", "-d"],
        };
        crate::util::kill_and_recover(&env, &bare, args, delay_ms);
    }
}

/// A work repository with one file of noise that drifts a few bytes at a time over `count`
/// commits: each version is nearest the one before, so a search deep enough chains them all.
fn drifting_work(env: &Env, count: usize) {
    let work = env.init("work", false);
    let mut data = crate::util::noise(7, 20_000);
    let mut seed: u64 = 1;
    for i in 0..count {
        for _ in 0..20 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = (seed >> 33) as usize % (data.len() - 8);
            data[at..at + 8].copy_from_slice(&seed.to_le_bytes());
        }
        std::fs::write(work.join("drift.bin"), &data).unwrap();
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
    }
}

/// A pack whose delta chains run deeper than `pack.depth` (written by an old aggressive gc):
/// `repack -a -d` cuts them as git does, every 51st delta of a chain made whole or a delta
/// anew, so that no chain of the new pack is deeper than 50; about git's size.
#[test]
fn repack_cuts_stored_chains_deeper_than_the_depth_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        drifting_work(&env, 120);
        let mut repos = Vec::new();
        for name in ["theirs.git", "ours.git"] {
            let bare = undeltified_copy(&env, name);
            let deep = [
                "repack",
                "-q",
                "-a",
                "-d",
                "-f",
                "--depth=200",
                "--window=250",
            ];
            env.git(&bare, &deep);
            repos.push(bare);
        }
        let (theirs, ours) = (&repos[0], &repos[1]);
        assert!(chains(&env, ours).1 > 50, "{:?}", chains(&env, ours));
        env.git(theirs, &["repack", "-q", "-a", "-d"]);
        let out = env.sluice(ours, &["repack", "-a", "-d", "-q"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        env.git(ours, &["fsck", "--strict"]);
        assert_eq!(objects(&env, ours), objects(&env, theirs));
        let ((deltas, longest), (git_deltas, git_longest)) =
            (chains(&env, ours), chains(&env, theirs));
        assert!(
            longest <= 50 && git_longest <= 50,
            "{longest}, git {git_longest}"
        );
        assert!(
            deltas * 10 >= git_deltas * 9,
            "{deltas} deltas, git {git_deltas}"
        );
        let (size, git_size) = (pack_size(ours), pack_size(theirs));
        assert!(size * 100 <= git_size * 110, "{size} bytes, git {git_size}");
    }
}

/// A blob whose bytes are a tree's (plus a few), met right after that tree in git's order of
/// the search (the last tree by path hash, the first blob): a delta of it against the tree
/// would be tiny, and would make a tree of it, since a delta is of its base's kind. Each
/// command's pack must hold the blob as a blob: `repack -a -d -f`, `gc --aggressive`, `repack
/// -a -d` of two packs (the tree in one, the blob in the other, searched against each other),
/// and git's repack with Sluice's pack-objects standing in. (Sluice's search once crossed the
/// kinds here, and its repack deleted the good packs for the corrupt one.)
#[test]
fn no_delta_crosses_kinds_in_a_search() {
    let commands: [&[&str]; 3] = [
        &["repack", "-a", "-d", "-f", "-q"],
        &["gc", "-q", "--aggressive"],
        &["repack", "-a", "-d", "-q"],
    ];
    for git in gits() {
        let env = Env::with_git(git);
        let exec = crate::util::stand_in(&env, &["pack-objects"]);
        let work = env.init("work", false);
        std::fs::create_dir(work.join("dz")).unwrap();
        for i in 0..20 {
            let file = work.join(format!("dz/entry_{i}_z"));
            std::fs::write(file, format!("file {i}\n")).unwrap();
        }
        env.git(&work, &["add", "dz"]);
        env.git(&work, &["commit", "-q", "-m", "tree"]);
        // Its own pack: the second commit's objects go into another.
        env.git(&work, &["repack", "-q", "-a", "-d"]);
        let mut blob = env.git(&work, &["cat-file", "tree", "HEAD:dz"]);
        blob.extend_from_slice(b"more");
        std::fs::write(work.join("a"), blob).unwrap();
        env.git(&work, &["add", "a"]);
        env.git(&work, &["commit", "-q", "-m", "blob"]);
        env.git(&work, &["repack", "-q", "-d"]);
        for (n, command) in commands.iter().enumerate() {
            for stood in [false, true] {
                let repo = env.path().join(format!("r{n}-{stood}"));
                crate::util::copy_tree(&work, &repo);
                let out = match stood {
                    false => env.sluice(&repo, command, b""),
                    true => (env.git_command(&repo, command))
                        .env("GIT_EXEC_PATH", &exec)
                        .output()
                        .unwrap(),
                };
                assert!(out.status.success(), "{command:?}: {}", stderr(&out));
                let fsck = env.git_with_input(&repo, &["fsck", "--strict"], b"");
                assert!(
                    fsck.status.success(),
                    "{command:?} stood {stood}: {}",
                    stderr(&fsck)
                );
                let kind = env.git(&repo, &["cat-file", "-t", "HEAD:a"]);
                assert_eq!(kind, b"blob\n", "{command:?} stood {stood}");
            }
        }
    }
}

/// A server after 24 pushes, each kept as its own pack (`receive.unpackLimit=1`), its objects
/// whole where a push's pack was completed with its bases: `repack --geometric=2 -d` rolls the
/// small packs into one, and searches, as git's `pack-objects --stdin-packs`, each whole object
/// (commits too) against the other rolled packs'. The same objects, fsck clean, and a pack no
/// more than a tenth larger than git's (copied as stored, Sluice's was 2.4 times git's).
#[test]
fn geometric_roll_searches_across_the_rolled_packs_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let server = env.init("server.git", true);
        env.git(&server, &["config", "receive.unpackLimit", "1"]);
        let work = env.init("pusher", false);
        for i in 0..24 {
            for f in 0..4 {
                let lines: String = (0..200 + i * 3)
                    .map(|l| {
                        format!(
                            "file {f} line {l}: value {}\n",
                            if l % 10 == i % 10 { i } else { l }
                        )
                    })
                    .collect();
                std::fs::write(work.join(format!("f{f}.txt")), lines).unwrap();
            }
            env.git(&work, &["add", "."]);
            // A message long enough that a commit is worth a delta against the one before.
            let message = format!("c{i}\n\n{}", "The same long explanation.\n".repeat(12));
            env.git(&work, &["commit", "-q", "-m", &message]);
            env.git(
                &work,
                &[
                    "push",
                    "-q",
                    server.to_str().unwrap(),
                    "HEAD:refs/heads/main",
                ],
            );
        }
        let sizes: Vec<u64> = [false, true]
            .iter()
            .map(|&sluice| {
                let repo = env.path().join(format!("rolled-{sluice}.git"));
                crate::util::copy_tree(&server, &repo);
                let out =
                    env.sluice_or_git(sluice, &repo, &["repack", "--geometric=2", "-d", "-q"]);
                assert!(out.status.success(), "{}", stderr(&out));
                env.git(&repo, &["fsck", "--strict"]);
                assert_eq!(
                    crate::util::pack_files(&repo, "pack"),
                    1,
                    "sluice: {sluice}"
                );
                pack_size(&repo)
            })
            .collect();
        let (theirs, ours) = (
            env.path().join("rolled-false.git"),
            env.path().join("rolled-true.git"),
        );
        assert_eq!(objects(&env, &ours), objects(&env, &theirs));
        let what = format!(
            "{}: Sluice {} bytes, git {}",
            git.display(),
            sizes[1],
            sizes[0]
        );
        assert!(sizes[1] * 10 <= sizes[0] * 11, "{what}");
        // Commits are searched too: git makes deltas of most of these.
        let (ours, theirs) = (commit_deltas(&env, &ours), commit_deltas(&env, &theirs));
        assert!(
            theirs > 12 && ours * 10 >= theirs * 9,
            "commit deltas: {ours}, git's {theirs}"
        );
    }
}

/// How many commits the one pack of `repo` holds as deltas.
fn commit_deltas(env: &Env, repo: &Path) -> usize {
    let pack_dir = repo.join("objects/pack");
    let idx = (crate::util::list_dir(&pack_dir).into_iter())
        .find(|name| name.ends_with(".idx"))
        .unwrap();
    let listing = env.git(
        repo,
        &["verify-pack", "-v", pack_dir.join(idx).to_str().unwrap()],
    );
    (String::from_utf8(listing).unwrap().lines())
        .filter(|line| line.split_whitespace().count() == 7 && line.contains(" commit "))
        .count()
}

/// The same roll in a shallow repository (a `--depth 1` clone taking pushes): the walk that
/// names the objects stops at the cut rather than failing on the parents the repository lacks
/// (Sluice's roll died with "missing commit" when it first walked there).
#[test]
fn geometric_roll_of_a_shallow_repository_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let work = evolving_work(&env, 6);
        let url = format!("file://{}", work.display());
        let server = env.path().join("shallow.git");
        let args = [
            "clone",
            "-q",
            "--bare",
            "--depth",
            "1",
            &url,
            server.to_str().unwrap(),
        ];
        env.git(env.path(), &args);
        env.git(&server, &["config", "receive.unpackLimit", "1"]);
        for i in 0..4 {
            std::fs::write(work.join("src/f0.txt"), format!("pushed {i}\n").repeat(50)).unwrap();
            env.git(&work, &["commit", "-q", "-a", "-m", &format!("p{i}")]);
            let branch = String::from_utf8(env.git(&work, &["branch", "--show-current"])).unwrap();
            let spec = format!("HEAD:refs/heads/{}", branch.trim());
            env.git(&work, &["push", "-q", server.to_str().unwrap(), &spec]);
        }
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let repo = env.path().join(format!("shallow-{sluice}.git"));
            crate::util::copy_tree(&server, &repo);
            let out = env.sluice_or_git(sluice, &repo, &["repack", "--geometric=2", "-d", "-q"]);
            assert!(out.status.success(), "sluice {sluice}: {}", stderr(&out));
            env.git(&repo, &["fsck", "--strict"]);
            let packs = crate::util::pack_files(&repo, "pack");
            seen.push((packs, objects(&env, &repo)));
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}

/// A plain `repack -d` (no `-a`) of loose objects, as gc's incremental repack makes: each tried
/// against the others as git's pack-objects tries them, so about as many deltas and a pack
/// about as small as git's.
#[test]
fn a_plain_repack_searches_the_loose_objects_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        evolving_work(&env, 40);
        let [theirs, ours] = ["theirs-loose.git", "ours-loose.git"].map(|name| {
            let bare = undeltified_copy(&env, name);
            let pack_dir = bare.join("objects/pack");
            let moved = env.path().join(format!("{name}.pack"));
            for file in crate::util::list_dir(&pack_dir) {
                match file.ends_with(".pack") {
                    true => std::fs::rename(pack_dir.join(&file), &moved).unwrap(),
                    false => std::fs::remove_file(pack_dir.join(&file)).unwrap(),
                }
            }
            let pack = std::fs::read(&moved).unwrap();
            let out = env.git_with_input(&bare, &["unpack-objects", "-q"], &pack);
            assert!(out.status.success(), "{}", stderr(&out));
            bare
        });
        env.git(&theirs, &["repack", "-d", "-q"]);
        let out = env.sluice(&ours, &["repack", "-d", "-q"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_searched_as(&env, (&ours, &theirs), "repack -d");
    }
}

/// `repack.useDeltaBaseOffset=false` makes every delta name its base by id (`REF_DELTA`), as
/// git's repack asks its pack-objects then; by default they name it by offset. Which of the
/// two forms the pack holds is compared with git's, with the entries found at the offsets git's
/// `verify-pack -v` gives; git's `fsck --strict` accepts both.
#[test]
fn repack_names_delta_bases_as_use_delta_base_offset_says() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        evolving_work(&env, 12);
        for setting in [None, Some("repack.useDeltaBaseOffset=false")] {
            let mut forms = Vec::new();
            for sluice in [false, true] {
                let name = format!("forms-{}-{sluice}.git", setting.is_some());
                let repo = undeltified_copy(&env, &name);
                let mut args = vec!["repack", "-a", "-d", "-f", "-q"];
                if let Some(setting) = setting {
                    args.splice(0..0, ["-c", setting]);
                }
                let out = env.sluice_or_git_command(sluice, &repo, &args).output();
                let out = out.unwrap();
                assert!(out.status.success(), "{args:?}: {}", stderr(&out));
                env.git(&repo, &["fsck", "--strict"]);
                forms.push(delta_forms(&env, &repo));
            }
            assert_eq!(forms[1], forms[0], "{} {setting:?}", git.display());
        }
    }
}

/// Whether the one pack of `repo` holds deltas by offset, and deltas by id: the type in the
/// first byte of each entry, at the offsets git's `verify-pack -v` lists.
fn delta_forms(env: &Env, repo: &Path) -> (bool, bool) {
    let pack_dir = repo.join("objects/pack");
    let idx = std::fs::read_dir(&pack_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "idx"))
        .unwrap();
    let pack = std::fs::read(idx.with_extension("pack")).unwrap();
    let listed = env.git(&pack_dir, &["verify-pack", "-v", idx.to_str().unwrap()]);
    let kinds: Vec<u8> = String::from_utf8(listed)
        .unwrap()
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        // An object's line: its id, kind, sizes and offset (the summary lines are not).
        .filter(|words| words.len() >= 5 && words[0].len() >= 40)
        .filter_map(|words| words[4].parse::<usize>().ok())
        .map(|offset| (pack[offset] >> 4) & 7)
        .collect();
    assert!(!kinds.is_empty());
    (kinds.contains(&6), kinds.contains(&7))
}

/// The objects a search compresses are counted as git's pack-objects counts them: those it
/// tries, neither kept as stored deltas nor under 50 bytes (git tries no smaller object, nor
/// makes one a base). A pack of part of the history beside loose objects, small and large.
#[test]
fn the_objects_compressed_are_counted_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let work = env.init("work", false);
        for i in 0..16 {
            let lines: String = (0..40 + i).map(|l| format!("line {l} of {i}\n")).collect();
            std::fs::write(work.join("big.txt"), lines).unwrap();
            std::fs::write(work.join("small"), format!("{i}\n")).unwrap();
            env.git(&work, &["add", "."]);
            env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
            if i == 7 {
                env.git(&work, &["repack", "-q", "-a", "-d"]);
            }
        }
        let mut said = Vec::new();
        for sluice in [false, true] {
            let out_dir = env.path().join(format!("out-{sluice}"));
            std::fs::create_dir(&out_dir).unwrap();
            let base = out_dir.join("pack");
            let args = ["pack-objects", "--revs", "--all", "--progress"];
            let args = [&args[..], &[base.to_str().unwrap()]].concat();
            let command = env.sluice_or_git_command(sluice, &work, &args);
            let out = crate::util::run_with_input(command, b"");
            assert!(out.status.success(), "{}", stderr(&out));
            let compressed = (stderr(&out).split(['\r', '\n']))
                .filter(|line| line.starts_with("Compressing objects") && line.contains("done"))
                .map(str::to_owned)
                .collect::<Vec<_>>();
            said.push(compressed);
        }
        assert_eq!(said[1], said[0], "{}", git.display());
    }
}
