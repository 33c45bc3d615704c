//! Delta islands (`pack.island`, `pack.islandCore`, `repack -i`, `repack.useDeltaIslands`,
//! `pack-objects --delta-islands`): every delta of the pack is judged by git's `verify-pack`
//! against the islands git's `rev-list` says reach its object and its base, for Sluice's repack
//! and gc, for git's repack with Sluice's pack-objects standing in, and for git's own (the
//! oracle that the repository provokes what the islands forbid).

use crate::util::{copy_tree, gits, stand_in, stderr, Env};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Lines of a file that a ref outside the main island grows: its version is the largest, so
/// that without islands the main line's versions would be stored as deltas of it.
fn version(tag: &str, lines: usize) -> String {
    (0..lines)
        .map(|i| {
            format!(
                "line {i} of data, {}\n",
                if i % 37 == 0 { tag } else { "same" }
            )
        })
        .collect()
}

/// A repository with a main line (branch and tag: the island ""), a pull ref (no island), and
/// two forks under `refs/virtual/<n>/heads/` (islands "1" and "2"), each of the last three
/// with larger versions of the main line's file; and which refs make each island.
fn islands_repo(env: &Env, name: &str) -> (PathBuf, BTreeMap<&'static str, Vec<&'static str>>) {
    let (repo, islands) = loose_islands_repo(env, name);
    // Loose objects and small packs, as a repository between repacks holds them.
    env.git(&repo, &["repack", "-d", "-q"]);
    (repo, islands)
}

/// [`islands_repo`] with every object loose.
fn loose_islands_repo(
    env: &Env,
    name: &str,
) -> (PathBuf, BTreeMap<&'static str, Vec<&'static str>>) {
    let repo = env.init(name, false);
    env.git(&repo, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    let write = |text: &str| std::fs::write(repo.join("data.txt"), text).unwrap();
    let commit = |message: &str| {
        env.git(&repo, &["add", "-A"]);
        env.git(&repo, &["commit", "-q", "-m", message]);
    };
    for i in 0..4 {
        write(&version(&format!("main {i}"), 600));
        commit(&format!("main {i}"));
    }
    env.git(&repo, &["tag", "v1", "HEAD~1"]);
    for (name, base, extra) in [
        ("refs/pull/1/head", "HEAD", 150),
        ("refs/virtual/1/heads/main", "HEAD~2", 100),
        ("refs/virtual/2/heads/main", "HEAD~1", 120),
    ] {
        env.git(&repo, &["checkout", "-q", "--detach", base]);
        write(&version(name, 600 + extra));
        commit(name);
        env.git(&repo, &["update-ref", name, "HEAD"]);
        env.git(&repo, &["checkout", "-q", "-"]);
    }
    for value in ["refs/heads/", "refs/tags/", "refs/virtual/([0-9]+)/heads/"] {
        env.git(&repo, &["config", "--add", "pack.island", value]);
    }
    let islands = BTreeMap::from([
        ("", vec!["refs/heads/main", "refs/tags/v1"]),
        ("1", vec!["refs/virtual/1/heads/main"]),
        ("2", vec!["refs/virtual/2/heads/main"]),
    ]);
    (repo, islands)
}

/// Each object's islands: the names of the islands whose refs reach it, by git's rev-list.
fn islands_of(
    env: &Env,
    repo: &Path,
    islands: &BTreeMap<&str, Vec<&str>>,
) -> HashMap<String, BTreeSet<String>> {
    let mut of: HashMap<String, BTreeSet<String>> = HashMap::new();
    for (name, refs) in islands {
        let mut args = vec!["rev-list", "--objects"];
        args.extend(refs);
        let listed = String::from_utf8(env.git(repo, &args)).unwrap();
        for line in listed.lines() {
            let id = line.split(' ').next().unwrap().to_owned();
            of.entry(id).or_default().insert(name.to_string());
        }
    }
    of
}

/// The repository's one pack as `verify-pack -v` lists it: each object's offset, and the
/// base of each delta.
fn pack_entries(env: &Env, repo: &Path) -> (HashMap<String, u64>, Vec<(String, String)>) {
    let pack_dir = repo.join(".git/objects/pack");
    let idx: Vec<_> = (std::fs::read_dir(&pack_dir).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "idx"))
        .collect();
    assert_eq!(idx.len(), 1, "one pack in {}", repo.display());
    let listed = env.git(repo, &["verify-pack", "-v", idx[0].to_str().unwrap()]);
    let mut offsets = HashMap::new();
    let mut deltas = Vec::new();
    for line in String::from_utf8(listed).unwrap().lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 5 || fields[0].len() != 40 {
            continue;
        }
        offsets.insert(fields[0].to_owned(), fields[4].parse().unwrap());
        if let Some(base) = fields.get(6) {
            deltas.push((fields[0].to_owned(), base.to_string()));
        }
    }
    (offsets, deltas)
}

/// The deltas of `repo`'s pack whose base is missing from one of its object's islands.
fn crossing_deltas(
    env: &Env,
    repo: &Path,
    islands: &BTreeMap<&str, Vec<&str>>,
) -> Vec<(String, String)> {
    let of = islands_of(env, repo, islands);
    let none = BTreeSet::new();
    let (_, deltas) = pack_entries(env, repo);
    (deltas.into_iter())
        .filter(|(target, base)| {
            let target_islands = of.get(target).unwrap_or(&none);
            !target_islands.is_empty() && !target_islands.is_subset(of.get(base).unwrap_or(&none))
        })
        .collect()
}

/// Every object of the repository, sorted.
fn objects(env: &Env, repo: &Path) -> Vec<String> {
    let listed = env.git(repo, &["cat-file", "--batch-all-objects", "--batch-check"]);
    let mut all: Vec<String> = String::from_utf8(listed)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    all.sort();
    all
}

/// `repack -a -d -f -i`, `repack.useDeltaIslands`, `gc --aggressive` with it, and git's
/// repack with Sluice's pack-objects standing in: no delta crosses an island's bounds, as in
/// git's own pack; without islands Sluice's pack has such deltas (the repository provokes
/// them). Every repository stays whole to `fsck --strict`, with the objects it had.
#[test]
fn repacks_keep_every_delta_within_its_islands_as_gits_do() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (seed, islands) = islands_repo(&env, "seed");
        let exec = stand_in(&env, &["pack-objects"]);
        let runs: [(&str, bool, &[&str]); 6] = [
            ("git", false, &["repack", "-a", "-d", "-f", "-i", "-q"]),
            ("plain", true, &["repack", "-a", "-d", "-f", "-q"]),
            ("sluice", true, &["repack", "-a", "-d", "-f", "-i", "-q"]),
            (
                "config",
                true,
                &[
                    "-c",
                    "repack.useDeltaIslands=true",
                    "repack",
                    "-a",
                    "-d",
                    "-q",
                ],
            ),
            (
                "gc",
                true,
                &[
                    "-c",
                    "repack.useDeltaIslands=true",
                    "gc",
                    "--aggressive",
                    "-q",
                ],
            ),
            (
                "standing-in",
                false,
                &["repack", "-a", "-d", "-f", "-i", "-q"],
            ),
        ];
        judge_runs(&env, (&seed, &islands), &runs, Some(&exec));
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(calls.contains("--delta-islands"), "{calls}");
    }
}

/// `repack -d -i` without `-a` and gc's incremental repack with `repack.useDeltaIslands`: the
/// new pack of the loose objects has no delta across the islands' bounds, as git's; Sluice's
/// without islands has (the objects provoke it).
#[test]
fn incremental_repacks_keep_deltas_within_islands_as_gits_do() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (seed, islands) = loose_islands_repo(&env, "seed");
        // Enough loose objects that gc --auto sees some in the directory it samples.
        crate::util::unreachable_blobs(&env, &seed, 600);
        let runs: [(&str, bool, &[&str]); 4] = [
            ("git", false, &["repack", "-d", "-i", "-q"]),
            ("plain", true, &["repack", "-d", "-q"]),
            ("sluice", true, &["repack", "-d", "-i", "-q"]),
            (
                "gc",
                true,
                &[
                    "-c",
                    "gc.auto=1",
                    "-c",
                    "repack.useDeltaIslands=true",
                    "-c",
                    "gc.autoDetach=false",
                    "gc",
                    "--auto",
                    "-q",
                ],
            ),
        ];
        judge_runs(&env, (&seed, &islands), &runs, None);
    }
}

/// Each of `runs` (a name, whether Sluice runs it, its arguments; "standing-in" runs with the
/// exec path `exec`) on a copy of `seed`: it succeeds, the repository stays whole with the
/// objects it had, and no delta crosses the bounds of `islands`; but for the run named
/// "plain" (without islands), which must have such a delta.
fn judge_runs(
    env: &Env,
    (seed, islands): (&Path, &BTreeMap<&str, Vec<&str>>),
    runs: &[(&str, bool, &[&str])],
    exec: Option<&Path>,
) {
    let before = objects(env, seed);
    for &(name, sluice, args) in runs {
        let repo = env.path().join(name);
        copy_tree(seed, &repo);
        let mut command = env.sluice_or_git_command(sluice, &repo, args);
        if let Some(exec) = exec.filter(|_| name == "standing-in") {
            command.env("GIT_EXEC_PATH", exec);
        }
        let out = crate::util::run_with_input(command, b"");
        assert!(out.status.success(), "{name} {args:?}: {}", stderr(&out));
        env.git(&repo, &["fsck", "--strict", "--no-progress"]);
        assert_eq!(objects(env, &repo), before, "{name}");
        let crossing = crossing_deltas(env, &repo, islands);
        match name {
            "plain" => assert!(!crossing.is_empty(), "{name}: no delta to forbid"),
            _ => assert_eq!(crossing, [], "{name}"),
        }
    }
}

/// `pack.islandCore`: the core island's objects are written before every other object of the
/// pack, in Sluice's pack as in git's.
#[test]
fn the_core_island_is_written_first_as_git_writes_it() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (seed, islands) = islands_repo(&env, "seed");
        env.git(&seed, &["config", "pack.islandCore", "1"]);
        for sluice in [false, true] {
            let repo = env.path().join(format!("core-{sluice}"));
            copy_tree(&seed, &repo);
            let args = ["repack", "-a", "-d", "-f", "-i", "-q"];
            let out = env.sluice_or_git(sluice, &repo, &args);
            assert!(out.status.success(), "{}", stderr(&out));
            let of = islands_of(&env, &repo, &islands);
            let (offsets, _) = pack_entries(&env, &repo);
            let in_core = |id: &String| of.get(id).is_some_and(|set| set.contains("1"));
            let last_core = offsets
                .iter()
                .filter(|(id, _)| in_core(id))
                .map(|(_, &at)| at)
                .max();
            let first_other = offsets
                .iter()
                .filter(|(id, _)| !in_core(id))
                .map(|(_, &at)| at)
                .min();
            assert!(
                last_core.unwrap() < first_other.unwrap(),
                "{} sluice={sluice}",
                git.display()
            );
            assert_eq!(
                crossing_deltas(&env, &repo, &islands),
                [],
                "sluice={sluice}"
            );
        }
    }
}

/// A `pack.island` that is no regular expression: `repack -a -d -i`, and gc with
/// `repack.useDeltaIslands`, stop with git's words (gc's "failed to run repack" after) and
/// exit code, and the packs are as they were. `pack-objects --delta-islands --progress` says
/// how many islands it marked, as git.
#[test]
fn bad_island_rules_stop_as_in_git_and_marks_are_counted_alike() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (seed, _) = islands_repo(&env, "seed");
        let mut counted = Vec::new();
        for sluice in [false, true] {
            let args = [
                "pack-objects",
                "--revs",
                "--delta-islands",
                "--progress",
                "--stdout",
            ];
            let out =
                crate::util::run_with_input(env.sluice_or_git_command(sluice, &seed, &args), b"");
            assert!(out.status.success(), "{}", stderr(&out));
            let said = stderr(&out);
            counted.push(
                said.lines()
                    .find(|l| l.starts_with("Marked"))
                    .map(str::to_owned),
            );
        }
        assert_eq!(counted[0], counted[1], "{}", git.display());
        assert!(counted[0].is_some());
        env.git(&seed, &["config", "--add", "pack.island", "refs/(broken"]);
        let cases: [&[&str]; 2] = [
            &["repack", "-a", "-d", "-i"],
            &["-c", "repack.useDeltaIslands=true", "gc", "-q"],
        ];
        for args in cases {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("bad-{sluice}"));
                let _ = std::fs::remove_dir_all(&repo);
                copy_tree(&seed, &repo);
                let packs = crate::util::list_dir(&repo.join(".git/objects/pack"));
                let out = env.sluice_or_git(sluice, &repo, args);
                let said = stderr(&out);
                assert_eq!(
                    crate::util::list_dir(&repo.join(".git/objects/pack")),
                    packs
                );
                env.git(&repo, &["fsck", "--strict", "--no-progress"]);
                seen.push((out.status.code(), said));
            }
            assert_eq!(seen[1], seen[0], "{} {args:?}", git.display());
        }
    }
}
