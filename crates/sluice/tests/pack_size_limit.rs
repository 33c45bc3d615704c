//! `--max-pack-size` and `pack.packSizeLimit` (pack-objects, repack, gc), twinned with git's:
//! a history of about 2 MiB of incompressible blobs with deltas, cut at 1 MiB.
//!
//! Where the packs are cut depends on the order objects are written in, which is each tool's
//! own, so the packs are judged by git's rule rather than by name: every pack under the limit
//! unless it holds one object, the objects of all packs together exactly git's, none twice,
//! every pack whole for `git verify-pack`, no bitmap, later packs dated older (git dates each
//! a second before the one before it). Exit codes and messages are compared as they are.

use crate::util::{gits, list_dir, noise, stderr, Env, FastImport};
use std::path::{Path, PathBuf};

const LIMIT: u64 = 1 << 20;

/// Four files of 200 KB of noise, each version changing a kilobyte and adding 20 KB.
fn history(env: &Env, repo: &Path) {
    let mut import = FastImport::new();
    let mut files: Vec<Vec<u8>> = (0..4).map(|f| noise(f + 1, 200_000)).collect();
    for version in 0..6u64 {
        for (f, data) in files.iter_mut().enumerate() {
            let at = (version as usize * 7_919 + f * 1_000) % (data.len() - 1_000);
            let seed = 100 * (f as u64 + 1) + version;
            data[at..at + 1_000].copy_from_slice(&noise(seed, 1_000));
            data.extend_from_slice(&noise(seed + 50, 20_000));
        }
        let named: Vec<(String, &[u8])> = (files.iter().enumerate())
            .map(|(f, data)| (format!("f{f}.bin"), &data[..]))
            .collect();
        let entries: Vec<(&str, &str, &[u8])> = (named.iter())
            .map(|(name, data)| (name.as_str(), "100644", *data))
            .collect();
        import.commit("main", &format!("v{version}"), &entries);
    }
    env.fast_import(repo, import.finish());
    env.git(repo, &["checkout", "-q", "main"]);
}

/// The packs under `dir` in the order `names` gives (pack-objects' output), else by name:
/// each pack's size and sorted objects. Checks each with `git verify-pack`, and with git's
/// rule when `cut`.
fn judged_packs(
    env: &Env,
    dir: &Path,
    names: Option<Vec<PathBuf>>,
    cut: bool,
) -> Vec<(u64, Vec<String>)> {
    let names = names.unwrap_or_else(|| {
        (list_dir(dir).into_iter())
            .filter(|name| name.ends_with(".pack"))
            .map(|name| dir.join(name))
            .collect()
    });
    assert!(!list_dir(dir).iter().any(|n| n.ends_with(".bitmap")));
    let mut packs = Vec::new();
    for pack in names {
        let idx = pack.with_extension("idx");
        let listing = env.git(dir, &["verify-pack", "-v", idx.to_str().unwrap()]);
        let mut objects: Vec<String> = (String::from_utf8(listing).unwrap().lines())
            .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
            .filter(|id| id.len() == 40)
            .collect();
        objects.sort();
        let size = std::fs::metadata(&pack).unwrap().len();
        assert!(
            !cut || size < LIMIT || objects.len() == 1,
            "{} holds {} objects in {size} bytes",
            pack.display(),
            objects.len()
        );
        packs.push((size, objects));
    }
    packs
}

/// Every object of `packs`, sorted; none may be in two packs.
fn all_objects(packs: &[(u64, Vec<String>)]) -> Vec<String> {
    let mut all: Vec<String> = packs.iter().flat_map(|(_, ids)| ids.clone()).collect();
    all.sort();
    let count = all.len();
    all.dedup();
    assert_eq!(all.len(), count, "an object in two packs");
    all
}

/// The modification times of `packs`, which must fall from each to the next.
fn assert_dated_older(packs: &[PathBuf]) {
    let times: Vec<_> = (packs.iter())
        .map(|p| std::fs::metadata(p).unwrap().modified().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[1] < w[0]), "{times:?}");
}

#[test]
fn pack_objects_cuts_packs_at_the_limit_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let repo = env.init("repo", false);
        history(&env, &repo);
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let out_dir = env.path().join(format!("out-{sluice}"));
            std::fs::create_dir(&out_dir).unwrap();
            let base = out_dir.join("p");
            let args = [
                "pack-objects",
                "--all",
                "-q",
                "--delta-base-offset",
                "--write-bitmap-index",
                "--max-pack-size=1m",
                base.to_str().unwrap(),
            ];
            let out = env.sluice_or_git(sluice, &repo, &args);
            let names: Vec<PathBuf> = (String::from_utf8(out.stdout.clone()).unwrap().lines())
                .map(|sum| out_dir.join(format!("p-{sum}.pack")))
                .collect();
            assert!(names.len() >= 2, "{}: {:?}", git.display(), names);
            assert_dated_older(&names);
            let packs = judged_packs(&env, &out_dir, Some(names), true);
            seen.push((out.status.code(), stderr(&out), all_objects(&packs)));
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());

        // Refused as git refuses them, and the smallest limit raised as git raises it.
        for args in [
            &["pack-objects", "--all", "--stdout", "--max-pack-size=1m"][..],
            &["pack-objects", "--all", "--max-pack-size=zz", "x"],
            &[
                "pack-objects",
                "--all",
                "-q",
                "--max-pack-size=10k",
                "small",
            ],
            &[
                "-c",
                "pack.packSizeLimit=zz",
                "pack-objects",
                "--all",
                "-q",
                "y",
            ],
        ] {
            let said: Vec<_> = [false, true]
                .map(|sluice| {
                    let out = env.sluice_or_git(sluice, &repo, args);
                    (out.status.code(), stderr(&out))
                })
                .into();
            assert_eq!(said[1], said[0], "{} {args:?}", git.display());
        }
    }
}

#[test]
fn repack_and_gc_cut_packs_at_the_limit_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let repo = env.init("repo", false);
        history(&env, &repo);
        let mut steps: Vec<(&str, &[&str])> = vec![
            (
                "repack",
                &["repack", "-a", "-d", "-q", "-b", "--max-pack-size=1m"],
            ),
            ("gc", &["-c", "pack.packSizeLimit=1m", "gc", "-q"]),
            // Raised to 1 MiB, with git's warning from each pack-objects gc runs.
            (
                "raised",
                &[
                    "-c",
                    "pack.packSizeLimit=100k",
                    "-c",
                    "gc.cruftPacks=false",
                    "gc",
                    "-q",
                ],
            ),
            ("bad", &["repack", "-a", "-d", "--max-pack-size=1q"]),
        ];
        // git 2.39's cruft pack-objects is given no limit, and says nothing.
        let version = String::from_utf8(env.git(env.path(), &["version"])).unwrap();
        if !version.contains(" 2.39.") {
            steps.push((
                "raised-cruft",
                &["-c", "pack.packSizeLimit=100k", "gc", "-q"],
            ));
        }
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let mut said = Vec::new();
            for &(step, args) in &steps {
                let twin = env.path().join(format!("{step}-{sluice}"));
                let twin_str = twin.to_str().unwrap();
                env.git(
                    env.path(),
                    &["clone", "-q", "--bare", "--no-local", "repo", twin_str],
                );
                let out = env.sluice_or_git(sluice, &twin, args);
                env.git(&twin, &["fsck", "--strict", "--no-dangling"]);
                let cut = step != "bad";
                let packs = judged_packs(&env, &twin.join("objects/pack"), None, cut);
                assert!(!cut || packs.len() >= 2, "{step}: {packs:?}");
                let warned = stderr(&out).contains("minimum pack size limit is 1 MiB");
                assert_eq!(
                    warned,
                    step.starts_with("raised"),
                    "{step}: {}",
                    stderr(&out)
                );
                said.push((out.status.code(), stderr(&out), all_objects(&packs)));
            }
            seen.push(said);
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}

/// A repository whose unreachable history lies in three cruft packs of about 300, 600 and
/// 900 KB (three branches of noise, each deleted and its reflog expired, then `repack --cruft`
/// by git with every earlier cruft pack kept); git 2.39, which combines them always, leaves
/// one.
fn cruft_history(env: &Env) -> PathBuf {
    let version = String::from_utf8(env.git(env.path(), &["version"])).unwrap();
    let repo = env.init("cruft", false);
    env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "base"]);
    for round in 1..=3u64 {
        let branch = format!("tmp{round}");
        env.git(&repo, &["checkout", "-q", "-b", &branch]);
        let file = format!("big{round}");
        std::fs::write(
            repo.join(&file),
            noise(round + 40, round as usize * 300_000),
        )
        .unwrap();
        env.git(&repo, &["add", &file]);
        env.git(&repo, &["commit", "-q", "-m", &file]);
        env.git(&repo, &["checkout", "-q", "-"]);
        env.git(&repo, &["branch", "-q", "-D", &branch]);
        env.git(
            &repo,
            &["reflog", "expire", "--expire-unreachable=now", "--all"],
        );
        // Every cruft pack written before is kept as it is (git 2.47's rule below 1 KiB).
        let mut args = vec!["repack", "--cruft", "-d", "-q", "--max-cruft-size=1k"];
        if version.contains(" 2.39.") {
            args.pop();
        }
        let out = env.git_command(&repo, &args).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    repo
}

#[test]
fn max_cruft_size_combines_and_cuts_cruft_packs_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let version = String::from_utf8(env.git(env.path(), &["version"])).unwrap();
        if version.contains(" 2.39.") {
            // `--max-cruft-size` came with git 2.43.
            continue;
        }
        let repo = cruft_history(&env);
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let mut said = Vec::new();
            for (step, args) in [
                // 300 and 600 KB combine, 900 KB is kept.
                (
                    "combine",
                    &["repack", "--cruft", "-d", "-q", "--max-cruft-size=1200k"][..],
                ),
                // With an expiration nothing is combined by size: all three (1.8 MB) go into
                // new cruft packs, cut at 1 MiB.
                (
                    "expiring",
                    &[
                        "repack",
                        "--cruft",
                        "-d",
                        "-q",
                        "--cruft-expiration=1.day.ago",
                        "--max-cruft-size=1m",
                    ],
                ),
                ("gc", &["-c", "gc.maxCruftSize=1m", "gc", "-q"]),
                // `--no-prune` gives the repack no expiration: combined as above.
                (
                    "no-prune",
                    &["-c", "gc.maxCruftSize=1m", "gc", "-q", "--no-prune"],
                ),
                // `never` is an expiration: nothing combined by size.
                (
                    "never",
                    &[
                        "-c",
                        "gc.maxCruftSize=1m",
                        "-c",
                        "gc.pruneExpire=never",
                        "gc",
                        "-q",
                    ],
                ),
                ("bad", &["gc", "-q", "--max-cruft-size=x"]),
                // Under 1 MiB, raised with the warning of the cruft pack's pack-objects.
                (
                    "raised",
                    &["repack", "--cruft", "-d", "-q", "--max-cruft-size=100k"],
                ),
                ("raised-gc", &["gc", "-q", "--max-cruft-size=100k"]),
            ] {
                let twin = env.path().join(format!("{step}-{sluice}"));
                crate::util::copy_tree(&repo, &twin);
                let out = env.sluice_or_git(sluice, &twin, args);
                env.git(&twin, &["fsck", "--strict", "--no-dangling"]);
                let dir = twin.join(".git/objects/pack");
                let cut = matches!(step, "expiring" | "gc" | "never" | "raised-gc");
                let packs = match step {
                    "combine" | "no-prune" | "raised" => crate::repack_filter::packs_in(&env, &dir),
                    _ => vec![format!(
                        "{:?}",
                        all_objects(&judged_packs(&env, &dir, None, cut))
                    )],
                };
                let cruft_packs = (list_dir(&dir).iter())
                    .filter(|name| name.ends_with(".mtimes"))
                    .count();
                assert!(
                    !cut || cruft_packs >= 2,
                    "{step}: {cruft_packs} cruft packs"
                );
                // git reads the cruft packs' dates back and writes them again.
                let again = ["repack", "--cruft", "-d", "-q"];
                let out_again = env.git_command(&twin, &again).output().unwrap();
                assert!(out_again.status.success(), "{}", stderr(&out_again));
                env.git(&twin, &["fsck", "--strict", "--no-dangling"]);
                said.push((step, out.status.code(), stderr(&out), packs));
            }
            seen.push(said);
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}

/// git's own repack and gc, with Sluice standing in for the `pack-objects` they run (which
/// then gets `--max-pack-size`, and `--cruft` with it): the same objects in packs cut as git's
/// rule says.
#[test]
fn gits_repack_cuts_packs_with_sluices_pack_objects() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let exec = crate::util::stand_in(&env, &["pack-objects"]);
        let repo = env.init("repo", false);
        history(&env, &repo);
        let cruft = cruft_history(&env);
        let mut runs: Vec<(&Path, &[&str])> =
            vec![(&repo, &["repack", "-a", "-d", "-q", "--max-pack-size=1m"])];
        // git 2.39 never cuts a cruft pack (its repack asks its pack-objects for none).
        let version = String::from_utf8(env.git(env.path(), &["version"])).unwrap();
        if !version.contains(" 2.39.") {
            let args = &[
                "-c",
                "pack.packSizeLimit=1m",
                "repack",
                "--cruft",
                "-d",
                "-q",
            ];
            runs.push((&cruft, args));
        }
        for (seed, args) in runs {
            let mut seen = Vec::new();
            for stand_in in [false, true] {
                let twin = env.path().join(format!("twin-{stand_in}"));
                let _ = std::fs::remove_dir_all(&twin);
                crate::util::copy_tree(seed, &twin);
                let mut run = env.git_command(&twin, args);
                if stand_in {
                    run.env("GIT_EXEC_PATH", &exec);
                }
                let out = crate::util::run_with_input(run, b"");
                assert!(out.status.success(), "{args:?}: {}", stderr(&out));
                env.git(&twin, &["fsck", "--strict", "--no-dangling"]);
                let packs = judged_packs(&env, &twin.join(".git/objects/pack"), None, true);
                // Cut at least once. (git writes in order of recency, a version's delta often
                // after its base went into an earlier pack, and so whole; Sluice writes each
                // family of deltas after its base, in fewer packs.)
                assert!(packs.len() >= 2, "{args:?}: {packs:?}");
                let bytes: u64 = packs.iter().map(|(size, _)| size).sum();
                seen.push((all_objects(&packs), bytes));
            }
            assert_eq!(seen[1].0, seen[0].0, "{args:?} with {}", git.display());
            assert!(seen[1].1 <= seen[0].1, "{args:?}: {seen:?}");
        }
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(calls.contains("--max-pack-size="), "{calls}");
    }
}
