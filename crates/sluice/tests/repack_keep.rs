//! What `sluice repack -a -d` leaves alone or keeps, twinned with git's: packs with a `.keep`
//! file and packs named by `--keep-pack` stay as they are (their objects not repacked), and
//! `-k` keeps what no ref reaches in the new pack.

use crate::util::{gits, stderr, Env};
use std::path::{Path, PathBuf};

/// The packs of `repo` (a work repository), by file name.
fn packs(repo: &Path) -> Vec<String> {
    let mut names = crate::util::file_names(&repo.join(".git/objects/pack"));
    names.retain(|n| n.ends_with(".pack"));
    names
}

fn all_objects(env: &Env, repo: &Path) -> String {
    let args = ["cat-file", "--batch-all-objects", "--batch-check"];
    String::from_utf8(env.git(repo, &args)).unwrap()
}

/// Packed objects, counted once per pack that holds them.
fn packed_entries(env: &Env, repo: &Path) -> usize {
    let counted = String::from_utf8(env.git(repo, &["count-objects", "-v"])).unwrap();
    let line = counted.lines().find(|l| l.starts_with("in-pack:")).unwrap();
    line["in-pack:".len()..].trim().parse().unwrap()
}

/// Twin work repositories of three packs (the first kept by `.keep` when `keep_file`), with
/// a deleted branch whose objects only the third pack holds.
fn twins(env: &Env, keep_file: bool) -> (Vec<PathBuf>, String) {
    let work = env.init("seed", false);
    let mut first = String::new();
    for i in 0..3 {
        std::fs::write(work.join(format!("f{i}")), format!("{i}\n")).unwrap();
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
        if i == 2 {
            env.git(&work, &["branch", "doomed"]);
            env.git(&work, &["reset", "-q", "--hard", "HEAD~1"]);
        }
        env.git(&work, &["repack", "-d", "-q"]);
        if i == 0 {
            first = packs(&work)[0].clone();
            if keep_file {
                let keep = work.join(".git/objects/pack").join(&first);
                std::fs::write(keep.with_extension("keep"), "").unwrap();
            }
        }
    }
    env.git(&work, &["branch", "-D", "doomed"]);
    env.git(&work, &["reflog", "expire", "--expire=now", "--all"]);
    // Past the hour in which Sluice keeps (loose) what a pack holds beyond the new one, since
    // a push's refs may not be updated yet: git's repack drops it at once.
    let old = std::time::SystemTime::now() - 2 * sluice_generate::RECENT_PACK;
    for pack in packs(&work) {
        let path = work.join(".git/objects/pack").join(pack);
        std::fs::File::open(path)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let copies = ["theirs", "ours"]
        .iter()
        .map(|name| {
            let copy = env.path().join(name);
            crate::util::copy_tree(&work, &copy);
            copy
        })
        .collect();
    (copies, first)
}

#[test]
fn keep_files_and_keep_pack_leave_packs_as_gits_repack_leaves_them() {
    for git in gits() {
        for keep_file in [true, false] {
            let env = Env::with_git(git.clone());
            let (repos, first) = twins(&env, keep_file);
            let (theirs, ours) = (&repos[0], &repos[1]);
            let mut args = vec!["repack", "-a", "-d", "-q"];
            let named = format!("--keep-pack={first}");
            if !keep_file {
                args.push(&named);
            }
            env.git(theirs, &args);
            let out = env.sluice(ours, &args, b"");
            assert!(out.status.success(), "{}", stderr(&out));
            assert!(packs(ours).contains(&first), "the kept pack stays");
            assert_eq!(packs(ours).len(), packs(theirs).len());
            assert_eq!(all_objects(&env, ours), all_objects(&env, theirs));
            assert_eq!(packed_entries(&env, ours), packed_entries(&env, theirs));
            env.git(ours, &["fsck", "--strict"]);
        }
    }
}

/// `-b --write-midx` beside a kept pack, as git: the kept objects stay out of the new pack
/// (the multi-pack-index's bitmap covers the kept pack too), no pack bitmap is written for a
/// pack that lacks them, and the multi-pack-index gets its bitmap, which git verifies and uses.
#[test]
fn a_bitmap_beside_kept_packs_is_the_multi_pack_indexs_as_in_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (repos, first) = twins(&env, true);
        let (theirs, ours) = (&repos[0], &repos[1]);
        let args = ["repack", "-a", "-d", "-b", "--write-midx", "-q"];
        env.git(theirs, &args);
        let out = env.sluice(ours, &args, b"");
        assert!(out.status.success(), "{}", stderr(&out));
        let kept = first.trim_end_matches(".pack");
        // git before 2.41 writes no reverse index unless asked (`pack.writeReverseIndex`).
        let revs = env.git_version() >= (2, 41);
        // The files of the pack directory, the kept pack's and the new ones' told apart.
        let kinds = |repo: &Path| {
            let mut kinds: Vec<String> = (crate::util::file_names(&repo.join(".git/objects/pack")))
                .into_iter()
                .map(|name| match name.split_once('.') {
                    Some((stem, ext)) if stem == kept => format!("kept.{ext}"),
                    Some((stem, ext)) if stem.starts_with("pack-") => format!("new.{ext}"),
                    Some((stem, ext)) if stem.starts_with("multi-pack-index-") => {
                        format!("midx.{ext}")
                    }
                    _ => name,
                })
                .filter(|kind| revs || !kind.ends_with(".rev"))
                .collect();
            kinds.sort();
            kinds
        };
        assert_eq!(kinds(ours), kinds(theirs), "{git:?}");
        assert_eq!(packed_entries(&env, ours), packed_entries(&env, theirs));
        assert_eq!(all_objects(&env, ours), all_objects(&env, theirs));
        env.git(ours, &["multi-pack-index", "verify"]);
        env.git(ours, &["rev-list", "--test-bitmap", "HEAD"]);
        env.git(ours, &["fsck", "--strict"]);
    }
}

/// `repack.packKeptObjects=true`: the objects of a kept pack go into the new pack too (the
/// kept pack stays), for repack and for gc, which repacks as git's repack does.
#[test]
fn pack_kept_objects_setting_is_honoured_by_repack_and_gc_as_in_git() {
    for git in gits() {
        for command in [&["repack", "-a", "-d", "-q"][..], &["gc", "-q"][..]] {
            let env = Env::with_git(git.clone());
            let (repos, first) = twins(&env, true);
            let (theirs, ours) = (&repos[0], &repos[1]);
            for repo in [theirs, ours] {
                env.git(repo, &["config", "repack.packKeptObjects", "true"]);
                // What no ref reaches goes into a cruft pack with either git (2.39's gc
                // loosens it by default).
                env.git(repo, &["config", "gc.cruftPacks", "true"]);
            }
            env.git(theirs, command);
            let out = env.sluice(ours, command, b"");
            assert!(out.status.success(), "{command:?}: {}", stderr(&out));
            assert!(packs(ours).contains(&first), "the kept pack stays");
            assert_eq!(packs(ours).len(), packs(theirs).len(), "{command:?}");
            assert_eq!(all_objects(&env, ours), all_objects(&env, theirs));
            let entries = packed_entries(&env, theirs);
            assert_eq!(packed_entries(&env, ours), entries, "{command:?}");
            env.git(ours, &["fsck", "--strict"]);
        }
    }
}

#[test]
fn keep_unreachable_keeps_them_in_the_new_pack_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let (repos, _) = twins(&env, false);
        let (theirs, ours) = (&repos[0], &repos[1]);
        // A loose object nothing reaches goes into the new pack too, as git's
        // `--pack-loose-unreachable`.
        for repo in &repos {
            let out = env.git_with_input(repo, &["hash-object", "-w", "--stdin"], b"dangling\n");
            assert!(out.status.success());
        }
        env.git(theirs, &["repack", "-a", "-d", "-k", "-q"]);
        let out = env.sluice(ours, &["repack", "-a", "-d", "-k", "-q"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(packs(ours).len(), 1);
        assert_eq!(all_objects(&env, ours), all_objects(&env, theirs));
        let loose = |repo: &Path| String::from_utf8(env.git(repo, &["count-objects"])).unwrap();
        assert_eq!(loose(ours), loose(theirs));
        assert!(loose(ours).starts_with("0 objects"), "{}", loose(ours));
        env.git(ours, &["fsck", "--strict"]);
        // Two of -A (or --unpack-unreachable), -k and --cruft: git's refusal, 128.
        for args in [
            &["repack", "-A", "-d", "-k"][..],
            &["repack", "-a", "-d", "--unpack-unreachable=now", "-k"],
            &["repack", "-d", "--cruft", "-A"],
            &["repack", "-a", "-k", "--cruft"],
        ] {
            let theirs = env.git_command(ours, args).output().unwrap();
            let out = env.sluice(ours, args, b"");
            assert_eq!(out.status.code(), theirs.status.code(), "{args:?}");
            if env.git_version() >= (2, 40) {
                assert_eq!(stderr(&out), stderr(&theirs), "{args:?}");
            }
        }
    }
}

/// `gc --auto` counts packs as git's does: those kept by `.keep` are not counted against
/// `gc.autoPackLimit`.
#[test]
fn gc_auto_leaves_kept_packs_out_of_its_count_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let (repos, _) = twins(&env, true);
        for repo in &repos {
            env.git(repo, &["config", "gc.autoPackLimit", "2"]);
        }
        env.git(&repos[0], &["gc", "--auto", "-q"]);
        let out = env.sluice(&repos[1], &["gc", "--auto", "-q"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(packs(&repos[1]), packs(&repos[0]));
        assert_eq!(
            packs(&repos[1]).len(),
            3,
            "two unkept packs are within the limit"
        );
    }
}

/// Plain `repack -d` (no `-a`): the loose objects refs, reflogs and the index reach go into a
/// new pack, the old packs stay, what nothing reaches stays loose; then "Nothing new to
/// pack." Twinned with git's.
#[test]
fn plain_repack_packs_the_loose_reachable_objects_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let (repos, _) = twins(&env, false);
        for repo in &repos {
            std::fs::write(repo.join("new"), "new\n").unwrap();
            env.git(repo, &["add", "new"]);
            env.git(repo, &["commit", "-q", "-m", "loose"]);
            std::fs::write(repo.join("staged"), "staged only\n").unwrap();
            env.git(repo, &["add", "staged"]);
            let out = env.git_with_input(repo, &["hash-object", "-w", "--stdin"], b"dangling\n");
            assert!(out.status.success());
        }
        for round in 0..2 {
            let theirs = env
                .git_command(&repos[0], &["repack", "-d"])
                .output()
                .unwrap();
            let ours = env.sluice(&repos[1], &["repack", "-d"], b"");
            assert!(ours.status.success(), "{}", stderr(&ours));
            assert_eq!(ours.stdout, theirs.stdout, "round {round}");
            assert_eq!(
                packs(&repos[1]).len(),
                packs(&repos[0]).len(),
                "round {round}"
            );
            let counted = |repo: &Path| {
                let text = String::from_utf8(env.git(repo, &["count-objects", "-v"])).unwrap();
                text.lines().take(3).map(str::to_owned).collect::<Vec<_>>()
            };
            assert_eq!(
                counted(&repos[1])[0],
                counted(&repos[0])[0],
                "loose, round {round}"
            );
            assert_eq!(
                counted(&repos[1])[2],
                counted(&repos[0])[2],
                "packed, round {round}"
            );
            env.git(&repos[1], &["fsck", "--strict"]);
        }
    }
}

/// A `.pack` without its `.idx` (a pack another process is still writing, or one it left
/// behind: `.tmp-<pid>-pack-….pack`, `pack-….pack`) is no pack: `repack -a -d` and the
/// incremental-repack task do their work beside it as git's do (the same objects, as many
/// indexed packs), and `gc` too, where Sluice's failed before; Sluice leaves those files as
/// they are.
#[test]
fn packs_without_an_index_are_left_alone_as_git_leaves_them() {
    let indexed = |repo: &Path| {
        (std::fs::read_dir(repo.join(".git/objects/pack")).unwrap())
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".idx")
            })
            .count()
    };
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (repos, _) = twins(&env, false);
        // (Not gc: git's own cruft pack step fails on a temporary pack, "could not find pack
        // '.tmp-…'"; Sluice's gc runs beside one, below.)
        for command in [
            &["repack", "-a", "-d", "-q"][..],
            &["maintenance", "run", "--task=incremental-repack"],
        ] {
            let mut seen = Vec::new();
            for (sluice, seed) in [false, true].into_iter().zip(&repos) {
                let repo = env.path().join(format!("{}-{sluice}", command[0]));
                let _ = std::fs::remove_dir_all(&repo);
                crate::util::copy_tree(seed, &repo);
                let pack_dir = repo.join(".git/objects/pack");
                let some = pack_dir.join(&packs(&repo)[0]);
                let temporary = pack_dir.join(format!(".tmp-999-{}", packs(&repo)[0]));
                std::fs::copy(&some, &temporary).unwrap();
                let lone = pack_dir.join(format!("pack-{}.pack", "1".repeat(40)));
                std::fs::copy(&some, &lone).unwrap();
                let out = env.sluice_or_git(sluice, &repo, command);
                assert!(out.status.success(), "{command:?}: {}", stderr(&out));
                if sluice {
                    assert!(temporary.exists() && lone.exists(), "{command:?}");
                }
                env.git(&repo, &["fsck", "--strict", "--no-progress"]);
                seen.push((indexed(&repo), all_objects(&env, &repo)));
            }
            assert_eq!(seen[1], seen[0], "{} {command:?}", git.display());
        }
        let repo = env.path().join("gc");
        crate::util::copy_tree(&repos[1], &repo);
        let pack_dir = repo.join(".git/objects/pack");
        let temporary = pack_dir.join(format!(".tmp-999-{}", packs(&repo)[0]));
        std::fs::copy(pack_dir.join(&packs(&repo)[0]), &temporary).unwrap();
        let out = env.sluice(&repo, &["gc", "-q"], b"");
        assert!(
            out.status.success() && temporary.exists(),
            "{}",
            stderr(&out)
        );
        env.git(&repo, &["fsck", "--strict", "--no-progress"]);
    }
}

/// repack's short flags and switches as git takes them: `-m` (`--write-midx`), `-g`
/// (`--geometric`), `-n` (and `repack.updateServerInfo=false`: the dumb-HTTP files left as
/// they were), `-i`/`--delta-islands`, `--no-local`, `--no-quiet`: exit code, stderr, which
/// files of the pack and info directories exist, and the objects.
#[test]
fn repack_takes_gits_short_flags_and_switches() {
    let listing = |repo: &Path| {
        let mut names = Vec::new();
        for dir in [".git/objects/pack", ".git/objects/info", ".git/info"] {
            for entry in std::fs::read_dir(repo.join(dir))
                .into_iter()
                .flatten()
                .flatten()
            {
                let name = entry.file_name().to_string_lossy().into_owned();
                let kind = match name.split_once('-') {
                    Some((kind, rest)) => format!("{kind}.{}", rest.rsplit('.').next().unwrap()),
                    None => name,
                };
                // git 2.39 writes no `.rev` by default; later gits and Sluice do.
                if !kind.ends_with(".rev") {
                    names.push(format!("{dir}/{kind}"));
                }
            }
        }
        names.sort();
        names
    };
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (repos, _) = twins(&env, false);
        let cases: [&[&str]; 10] = [
            &["repack", "-a", "-d", "-m", "-n", "-q"],
            &["repack", "-d", "-n", "-q"],
            &[
                "-c",
                "repack.updateServerInfo=false",
                "repack",
                "-a",
                "-d",
                "-q",
            ],
            &["repack", "-a", "-d", "-l", "--no-local", "-i", "-q"],
            &["repack", "-g", "2", "-d", "-q", "--no-quiet", "-q"],
            &["repack", "-a", "-d", "-m", "--no-write-midx", "-q"],
            // Without -d the old packs and the loose objects stay.
            &["repack", "-a", "-q"],
            &["repack", "-A", "-q"],
            &["repack", "-a", "-b", "-q"],
            &["repack", "-a", "--write-midx", "-q"],
        ];
        for args in cases {
            let mut seen = Vec::new();
            for (sluice, seed) in [false, true].into_iter().zip(&repos) {
                let repo = env.path().join(format!("flags-{sluice}"));
                let _ = std::fs::remove_dir_all(&repo);
                crate::util::copy_tree(seed, &repo);
                // Whether the repack writes them is what `-n` decides.
                let _ = std::fs::remove_file(repo.join(".git/info/refs"));
                let _ = std::fs::remove_file(repo.join(".git/objects/info/packs"));
                let out = env.sluice_or_git(sluice, &repo, args);
                env.git(&repo, &["fsck", "--strict", "--no-progress"]);
                let said = (out.status.code(), stderr(&out));
                let counted = env.git(&repo, &["count-objects", "-v"]);
                let loose = String::from_utf8(counted)
                    .unwrap()
                    .lines()
                    .next()
                    .map(str::to_owned);
                seen.push((said, listing(&repo), all_objects(&env, &repo), loose));
            }
            assert_eq!(seen[1], seen[0], "{} {args:?}", git.display());
        }
    }
}

/// `repack -a -d` with nothing the roots reach (an empty repository; one whose only pack holds
/// objects no ref reaches, written long ago): no new pack, "Nothing new to pack." on stdout
/// (nothing with `-q`), the old pack gone; `gc` of an empty repository writes nothing either.
/// Twinned with git's.
#[test]
fn repack_with_nothing_to_pack_writes_no_pack_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let said = |sluice: bool, repo: &Path, args: &[&str]| {
            let out = env.sluice_or_git(sluice, repo, args);
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            String::from_utf8(out.stdout).unwrap()
        };
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let repo = env.init(&format!("empty-{sluice}"), false);
            let mut told = vec![said(sluice, &repo, &["repack", "-a", "-d"])];
            told.push(said(sluice, &repo, &["repack", "-a", "-d", "-q"]));
            told.push(said(sluice, &repo, &["gc", "-q"]));
            let emptied = env.init(&format!("dangling-{sluice}"), false);
            let out =
                env.git_with_input(&emptied, &["hash-object", "-w", "--stdin"], b"dangling\n");
            assert!(out.status.success());
            let packed = env.git_with_input(
                &emptied,
                &["pack-objects", "-q", ".git/objects/pack/pack"],
                &out.stdout,
            );
            assert!(packed.status.success());
            let written = crate::util::list_dir(&emptied.join(".git/objects/pack"));
            assert!(!written.is_empty());
            for pack in written {
                let path = emptied.join(".git/objects/pack").join(pack);
                let old = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
                let file = std::fs::File::open(&path).unwrap();
                file.set_modified(old).unwrap();
            }
            env.git(&emptied, &["prune-packed"]);
            told.push(said(sluice, &emptied, &["repack", "-a", "-d"]));
            let listed = |repo: &Path| crate::util::list_dir(&repo.join(".git/objects/pack"));
            seen.push((told, listed(&repo), listed(&emptied)));
            env.git(&repo, &["fsck", "--strict"]);
        }
        assert_eq!(seen[1], seen[0]);
        assert_eq!(seen[0].0[0], "Nothing new to pack.\n");
        assert!(seen[0].2.is_empty(), "{:?}", seen[0]);
    }
}

/// Where git writes a bitmap and where it refuses one, twinned: a bare repository's default
/// leaves a `.keep` pack's objects out and so writes none ("Nothing new to pack." when the
/// kept pack holds everything), `-b` packs them too and writes one; `-b` or
/// `repack.writeBitmaps=true` without `-a` (plain or geometric, no `--write-midx`) refused
/// in git's words; gc beside a kept pack. Compared: exit code, stderr, how many packs,
/// bitmaps and `.keep` files, the objects.
#[test]
fn bitmaps_are_written_and_refused_where_git_writes_and_refuses_them() {
    let count = |repo: &Path, extension: &str| crate::util::pack_files(repo, extension);
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (repos, _) = twins(&env, false);
        let cases: [(bool, &[&str]); 8] = [
            (true, &["repack", "-a", "-d"]),
            (true, &["repack", "-a", "-d", "-b"]),
            (
                true,
                &["-c", "repack.writeBitmaps=true", "repack", "-a", "-d", "-q"],
            ),
            (false, &["repack", "-d", "-b"]),
            (false, &["-c", "repack.writeBitmaps=true", "repack", "-d"]),
            (false, &["repack", "--geometric=2", "-d", "-b"]),
            (
                false,
                &["repack", "--geometric=2", "-d", "-b", "--write-midx"],
            ),
            (true, &["gc", "-q"]),
        ];
        for (kept, args) in cases {
            let mut seen = Vec::new();
            for (sluice, seed) in [false, true].into_iter().zip(&repos) {
                let repo = env.path().join(format!("bitmaps-{sluice}.git"));
                let _ = std::fs::remove_dir_all(&repo);
                let (seed, repo_str) = (seed.to_str().unwrap(), repo.to_str().unwrap());
                env.git(
                    env.path(),
                    &["clone", "-q", "--bare", "--no-local", seed, repo_str],
                );
                if kept {
                    let only = crate::util::list_dir(&repo.join("objects/pack"));
                    let pack = only.iter().find(|n| n.ends_with(".pack")).unwrap();
                    std::fs::write(
                        repo.join("objects/pack")
                            .join(pack.replace(".pack", ".keep")),
                        "",
                    )
                    .unwrap();
                }
                let out = env.sluice_or_git(sluice, &repo, args);
                env.git(&repo, &["fsck", "--strict", "--no-progress"]);
                let counts = ["pack", "bitmap", "keep"].map(|x| count(&repo, x));
                let said = (out.status.code(), stderr(&out));
                seen.push((said, counts, all_objects(&env, &repo)));
            }
            assert_eq!(seen[1], seen[0], "{} {args:?}", git.display());
        }
    }
}

/// A pack gone missing (its `.idx` left): `repack -a -d` fails as git's does and changes
/// nothing: "bad object <ref>" for the first ref (symbolic ones as what they point at, in
/// name order) whose object is gone; with those refs deleted, objects missing deeper in
/// history fail it too (git's words for that case are its walk's own: only the exit code is
/// compared).
#[test]
fn a_missing_pack_fails_the_repack_as_in_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = env.init("seed", false);
        env.commit_versions(&seed, "f", 3);
        env.git(&seed, &["repack", "-a", "-d", "-q"]);
        env.git(&seed, &["update-ref", "refs/heads/old", "HEAD~1"]);
        env.git(
            &seed,
            &["symbolic-ref", "refs/heads/alias", "refs/heads/old"],
        );
        std::fs::write(seed.join("g"), "new\n").unwrap();
        env.git(&seed, &["add", "g"]);
        env.git(&seed, &["commit", "-q", "-m", "new"]);
        env.git(&seed, &["repack", "-q"]);
        let pack_dir = seed.join(".git/objects/pack");
        let first = packs(&seed)
            .into_iter()
            .max_by_key(|p| std::fs::metadata(pack_dir.join(p)).unwrap().len());
        std::fs::remove_file(pack_dir.join(first.unwrap())).unwrap();
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let repo = env.path().join(format!("missing-{sluice}"));
            crate::util::copy_tree(&seed, &repo);
            let before = crate::util::list_dir(&repo.join(".git/objects/pack"));
            let out = env.sluice_or_git(sluice, &repo, &["repack", "-a", "-d", "-q"]);
            let tip = (out.status.code(), stderr(&out));
            for name in ["refs/heads/alias", "refs/heads/old"] {
                env.git(&repo, &["update-ref", "--no-deref", "-d", name]);
            }
            let out = env.sluice_or_git(sluice, &repo, &["repack", "-a", "-d", "-q"]);
            let after = crate::util::list_dir(&repo.join(".git/objects/pack"));
            seen.push((tip, out.status.code(), before == after));
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
        assert_eq!(seen[0].1, Some(128));
        assert!(
            seen[0].0 .1.contains("bad object refs/heads/alias"),
            "{:?}",
            seen[0]
        );
    }
}

/// A repository that borrows objects (`objects/info/alternates`) repacked with `-l`, as git's
/// gc repacks: no bitmap, and git's warning "disabling bitmap writing, as some objects are not
/// being packed" whenever one was wanted, a bare repository's default included; none for an
/// incremental repack, which wants none. Twinned: exit code, stderr, packs and bitmaps (git
/// 2.39 has no such warning: its stderr is not compared).
#[test]
fn a_borrowing_repository_gets_no_bitmap_and_gits_warning() {
    let count = |repo: &Path, extension: &str| crate::util::pack_files(repo, extension);
    for git in gits() {
        let env = Env::with_git(git.clone());
        let version = String::from_utf8(env.git(env.path(), &["version"])).unwrap();
        let warns = !version.contains(" 2.39.");
        let (repos, _) = twins(&env, false);
        let cases: [&[&str]; 5] = [
            &["repack", "-a", "-d", "-l"],
            &["repack", "-a", "-d", "-l", "-b", "-q"],
            &["repack", "-a", "-d", "-q"],
            &["repack", "-d", "-l", "-q"],
            // (Cruft packs named: git 2.39 makes none unless told.)
            &["-c", "gc.cruftPacks=true", "gc", "-q"],
        ];
        for args in cases {
            let mut seen = Vec::new();
            for (sluice, seed) in [false, true].into_iter().zip(&repos) {
                let lender = env.path().join(format!("lender-{sluice}.git"));
                let borrower = env.path().join(format!("borrower-{sluice}.git"));
                for dir in [&lender, &borrower] {
                    let _ = std::fs::remove_dir_all(dir);
                }
                let (seed, lender_str) = (seed.to_str().unwrap(), lender.to_str().unwrap());
                env.git(
                    env.path(),
                    &["clone", "-q", "--bare", "--no-local", seed, lender_str],
                );
                env.git(
                    env.path(),
                    &["init", "-q", "--bare", borrower.to_str().unwrap()],
                );
                let alternates = format!("{}/objects\n", lender.display());
                std::fs::write(borrower.join("objects/info/alternates"), alternates).unwrap();
                env.git(
                    &borrower,
                    &["fetch", "-q", lender_str, "refs/heads/*:refs/heads/*"],
                );
                let blob =
                    env.git_with_input(&borrower, &["hash-object", "-w", "--stdin"], b"own\n");
                assert!(blob.status.success());
                let out = env.sluice_or_git(sluice, &borrower, args);
                env.git(&borrower, &["fsck", "--strict", "--no-progress"]);
                let counts = ["pack", "bitmap"].map(|x| count(&borrower, x));
                let said = stderr(&out).replace(
                    "warning: disabling bitmap writing, as some objects are not being packed\n",
                    if warns { "(warned)\n" } else { "" },
                );
                seen.push((out.status.code(), said, counts));
            }
            assert_eq!(seen[1], seen[0], "{} {args:?}", git.display());
        }
    }
}
