//! `sluice commit-graph write --reachable` writes the file git writes, byte for byte, for
//! histories with merges, octopus merges, tags, commit dates out of order and far apart (the
//! corrected-date overflow chunk), with the commits loose, packed, and packed with a bitmap;
//! and `git commit-graph verify` accepts it.

use crate::util::{gits, stderr, Env};
use std::path::Path;

/// A commit on `branch` dated `date` (seconds), with `parents` merged in.
fn commit(env: &Env, repo: &Path, message: &str, date: &str, parents: &[&str]) {
    let tree = String::from_utf8(env.git(repo, &["write-tree"])).unwrap();
    let mut args = vec!["commit-tree", tree.trim(), "-m", message];
    let head = env.git_with_input(repo, &["rev-parse", "-q", "--verify", "HEAD"], b"");
    let head = String::from_utf8(head.stdout).unwrap();
    if !head.trim().is_empty() {
        args.extend(["-p", head.trim()]);
    }
    for parent in parents {
        args.extend(["-p", parent]);
    }
    let out = env
        .git_command(repo, &args)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let id = String::from_utf8(out.stdout).unwrap();
    env.git(repo, &["update-ref", "HEAD", id.trim()]);
}

fn history(env: &Env) -> std::path::PathBuf {
    let repo = env.init("repo", false);
    std::fs::write(repo.join("f"), "x\n").unwrap();
    env.git(&repo, &["add", "f"]);
    commit(env, &repo, "root", "1000000000 +0000", &[]);
    commit(env, &repo, "two", "1000000100 +0000", &[]);
    env.git(&repo, &["branch", "side", "HEAD~1"]);
    env.git(&repo, &["branch", "other", "HEAD~1"]);
    // A child dated before its parent: its corrected date is the parent's, plus one.
    commit(env, &repo, "skewed", "999999000 +0000", &[]);
    let side = String::from_utf8(env.git(&repo, &["rev-parse", "side"])).unwrap();
    let other = String::from_utf8(env.git(&repo, &["rev-parse", "other"])).unwrap();
    commit(
        env,
        &repo,
        "octopus",
        "1000000200 +0000",
        &[side.trim(), other.trim()],
    );
    // Far ahead (2096), then a child at the epoch's first second: a corrected-date offset
    // past 31 bits (the overflow chunk). Later than 2106 git 2.39 and 2.47 write different
    // files (2.47 wraps a parent's date at 32 bits).
    commit(env, &repo, "future", "@4000000000 +0000", &[]);
    commit(env, &repo, "epoch", "@1 +0000", &[]);
    commit(env, &repo, "zero", "@0 +0000", &[]);
    env.git(&repo, &["tag", "-a", "-m", "annotated", "v1", "HEAD~2"]);
    let tree = String::from_utf8(env.git(&repo, &["write-tree"])).unwrap();
    env.git(
        &repo,
        &["tag", "-a", "-m", "a tree", "tree-tag", tree.trim()],
    );
    repo
}

/// Copies of `seed` for git (`theirs`) and Sluice (`ours`) to work on side by side.
fn twins(env: &Env, seed: &Path) -> Vec<std::path::PathBuf> {
    (["theirs", "ours"].iter())
        .map(|name| {
            let copy = env.path().join(name);
            crate::util::copy_tree(seed, &copy);
            copy
        })
        .collect()
}

fn graph(repo: &Path) -> Vec<u8> {
    std::fs::read(repo.join(".git/objects/info/commit-graph")).unwrap()
}

#[test]
fn commit_graph_is_written_as_git_writes_it() {
    for git in gits() {
        let env = Env::with_git(git);
        let repo = history(&env);
        for storage in ["loose", "packed", "bitmapped"] {
            match storage {
                "packed" => {
                    env.git(&repo, &["gc", "-q"]);
                }
                "bitmapped" => {
                    env.git(&repo, &["repack", "-adbq"]);
                }
                _ => {}
            }
            env.git(
                &repo,
                &["commit-graph", "write", "--reachable", "--no-progress"],
            );
            let theirs = graph(&repo);
            std::fs::remove_file(repo.join(".git/objects/info/commit-graph")).unwrap();
            let out = env.sluice(&repo, &["commit-graph", "write", "--reachable"], b"");
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(graph(&repo), theirs, "{storage}");
            env.git(&repo, &["commit-graph", "verify"]);
        }
    }
}

/// Sluice reads the commit-graph git writes: every commit's parents are what the commit says,
/// and ancestry answered from the graph (generations cutting the walk short) is git's
/// `merge-base --is-ancestor`, for every pair of commits.
#[test]
fn the_graph_is_read_as_git_wrote_it() {
    for split in [false, true] {
        let env = Env::new();
        let repo = history(&env);
        let write = ["commit-graph", "write", "--reachable", "--no-progress"];
        env.git(&repo, &write);
        if split {
            // Three layers: the whole graph at the bottom, then two of a few commits each.
            for step in 0..2 {
                for i in 0..2 {
                    let date = format!("{} +0000", 1_200_000_000 + step * 10 + i);
                    commit(&env, &repo, &format!("layer {step} {i}"), &date, &[]);
                }
                env.git(&repo, &[&write[..], &["--split=no-merge"]].concat());
            }
            let chain = repo.join(".git/objects/info/commit-graphs/commit-graph-chain");
            assert_eq!(std::fs::read_to_string(chain).unwrap().lines().count(), 3);
        }
        check_reading(&env, &repo);
    }
}

/// Every commit's parents read from the graph are what git lists, and ancestry answered from
/// it is git's `merge-base --is-ancestor`, for every pair of commits.
fn check_reading(env: &Env, repo: &Path) {
    let git_dir = repo.join(".git");
    let hash = sluice_object::HashKind::Sha1;
    let graph = sluice_graph::commit_graph::GraphReader::open(&git_dir.join("objects"), hash)
        .expect("a usable graph");
    let listed = String::from_utf8(env.git(repo, &["rev-list", "--parents", "--all"])).unwrap();
    let parse = |hex: &str| sluice_object::ObjectId::from_hex(hash, hex.as_bytes()).unwrap();
    let mut commits = Vec::new();
    for line in listed.lines() {
        let mut ids = line.split(' ').map(parse);
        let commit = ids.next().unwrap();
        let position = graph.position(&commit).unwrap();
        let parents: Vec<_> = (graph.parents(position).unwrap().into_iter())
            .map(|p| graph.id(p).unwrap())
            .collect();
        assert_eq!(parents, ids.collect::<Vec<_>>());
        commits.push(commit);
    }
    let repository = sluice_repo::Repository::discover(repo).unwrap();
    for old in &commits {
        for new in &commits {
            let ours = sluice_graph::ancestry::is_ancestor(repository.objects(), old, new);
            let (old, new) = (old.to_string(), new.to_string());
            let theirs = env
                .git_command(repo, &["merge-base", "--is-ancestor", &old, &new])
                .status()
                .unwrap()
                .success();
            assert_eq!(ours, theirs, "{old} {new}");
        }
    }
}

/// The files of `objects/info` (the whole graph, the chain and its layers), by name.
pub(crate) fn info_files(repo: &Path) -> Vec<(String, Vec<u8>)> {
    let info = repo.join(".git/objects/info");
    let mut files = Vec::new();
    for dir in [info.clone(), info.join("commit-graphs")] {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.path().is_file() && entry.file_name() != "packs" {
                let name = entry
                    .path()
                    .strip_prefix(&info)
                    .unwrap()
                    .display()
                    .to_string();
                files.push((name, std::fs::read(entry.path()).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// `--split` twinned with git on copies of one history, step by step: a first layer (the
/// whole graph's bytes), small layers on top, a merge cascade when the new commits outgrow
/// the layers below, a whole graph turned into the bottom layer, `no-merge` and `replace`,
/// and back to a whole graph. The same files, byte for byte, and git verifies each chain.
#[test]
fn split_graphs_are_written_as_git_writes_them() {
    for git in gits() {
        let env = Env::with_git(git);
        let seed = history(&env);
        let twins = twins(&env, &seed);
        let steps: [(usize, &[&str]); 10] = [
            (0, &["--split"]),
            (0, &["--split"]),
            (2, &["--split"]),
            (1, &["--split=no-merge"]),
            (9, &["--split"]),
            (3, &[]),
            (0, &["--split"]),
            (1, &["--split"]),
            (2, &["--split=replace"]),
            (0, &["--split=replace"]),
        ];
        for (step, (commits, flags)) in steps.iter().enumerate() {
            for repo in &twins {
                for i in 0..*commits {
                    let message = format!("step {step} commit {i}");
                    let date = format!("{} +0000", 1_100_000_000 + step * 100 + i);
                    commit(&env, repo, &message, &date, &[]);
                }
            }
            let mut args = vec!["commit-graph", "write", "--reachable"];
            args.extend(flags.iter());
            env.git(&twins[0], &[&args[..], &["--no-progress"]].concat());
            let out = env.sluice(&twins[1], &args, b"");
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(info_files(&twins[1]), info_files(&twins[0]), "step {step}");
            env.git(&twins[1], &["commit-graph", "verify"]);
        }
    }
}

/// A walk that takes commits from the graph (whole or split) counts the objects git counts.
#[test]
fn walks_through_the_graph_count_what_git_counts() {
    let env = Env::new();
    let repo = history(&env);
    let expected = |env: &Env| {
        let listed = env.git(&repo, &["rev-list", "--objects", "--all"]);
        let mut ids: Vec<String> = String::from_utf8(listed)
            .unwrap()
            .lines()
            .map(|l| l[..40].to_owned())
            .collect();
        ids.sort();
        ids
    };
    for split in [false, true] {
        let mut write = vec!["commit-graph", "write", "--reachable", "--no-progress"];
        if split {
            commit(&env, &repo, "on top", "1300000000 +0000", &[]);
            write.push("--split=no-merge");
        }
        env.git(&repo, &write);
        let out = env.sluice(&repo, &["pack-objects", "--all", "--stdout", "-q"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        let pack = env.path().join(format!("walked-{split}.pack"));
        std::fs::write(&pack, &out.stdout).unwrap();
        let idx = pack.with_extension("idx");
        env.git(
            &repo,
            &[
                "index-pack",
                "-o",
                idx.to_str().unwrap(),
                pack.to_str().unwrap(),
            ],
        );
        let shown = env.git(&repo, &["verify-pack", "-v", idx.to_str().unwrap()]);
        let mut ids: Vec<String> = String::from_utf8(shown)
            .unwrap()
            .lines()
            .filter_map(|l| l.split(' ').next())
            .filter(|w| w.len() == 40)
            .map(str::to_owned)
            .collect();
        ids.sort();
        assert_eq!(ids, expected(&env), "split: {split}");
    }
}

/// `commit-graph verify` judges as git's does: a sound graph (whole, and split) passes; a
/// damaged checksum alone exits 2; a commit whose recorded tree is wrong exits 1, each
/// problem named in git's words; and git's fsck, which runs `git commit-graph verify
/// --object-dir <dir>`, gives the same with Sluice standing in.
#[test]
fn verify_judges_the_graph_as_git_does() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let repo = history(&env);
        let exec = crate::util::stand_in(&env, &["commit-graph"]);
        let file = repo.join(".git/objects/info/commit-graph");
        let verify = |what: &str| {
            let mut said = Vec::new();
            for sluice in [false, true] {
                let out = env.sluice_or_git(sluice, &repo, &["commit-graph", "verify"]);
                said.push((out.status.code(), stderr(&out)));
            }
            assert_eq!(said[1], said[0], "{what} with {git_bin:?}");
            let mut fsck = Vec::new();
            for stand_in in [false, true] {
                let mut run = env.git_command(&repo, &["fsck", "--no-progress"]);
                if stand_in {
                    run.env("GIT_EXEC_PATH", &exec);
                }
                fsck.push(crate::util::run_with_input(run, b"").status.code());
            }
            assert_eq!(fsck[1], fsck[0], "fsck, {what} with {git_bin:?}");
            said[0].0
        };
        env.git(&repo, &["commit-graph", "write", "--reachable"]);
        assert_eq!(verify("sound"), Some(0));
        let sound = std::fs::read(&file).unwrap();
        let mut damaged = sound.clone();
        *damaged.last_mut().unwrap() ^= 1;
        let write = |bytes: &[u8]| {
            let _ = std::fs::remove_file(&file);
            std::fs::write(&file, bytes).unwrap();
        };
        write(&damaged);
        assert_eq!(verify("checksum"), Some(2));
        // The first commit's tree, a byte off, in the commit data chunk.
        let mut damaged = sound.clone();
        let at = damaged.windows(4).position(|w| w == b"CDAT").unwrap();
        let offset = u64::from_be_bytes(damaged[at + 4..at + 12].try_into().unwrap()) as usize;
        damaged[offset + 2] ^= 1;
        write(&damaged);
        assert_eq!(verify("tree"), Some(1));
        std::fs::remove_file(&file).unwrap();
        env.git(&repo, &["commit-graph", "write", "--reachable", "--split"]);
        assert_eq!(verify("split"), Some(0));
        // A second layer, then the base damaged: `--shallow` checks the newest layer only.
        commit(&env, &repo, "on top", "1700000000 +0000", &[]);
        let layer = ["commit-graph", "write", "--reachable", "--split=no-merge"];
        env.git(&repo, &layer);
        let layers = repo.join(".git/objects/info/commit-graphs");
        let chain = std::fs::read_to_string(layers.join("commit-graph-chain")).unwrap();
        assert_eq!(chain.lines().count(), 2);
        let base = layers.join(format!("graph-{}.graph", chain.lines().next().unwrap()));
        // A tree a byte off in the base's commit data, its checksum left as it was (which
        // names the layer in the chain).
        let mut damaged = std::fs::read(&base).unwrap();
        let at = damaged.windows(4).position(|w| w == b"CDAT").unwrap();
        let offset = u64::from_be_bytes(damaged[at + 4..at + 12].try_into().unwrap()) as usize;
        damaged[offset + 2] ^= 1;
        let _ = std::fs::remove_file(&base);
        std::fs::write(&base, damaged).unwrap();
        let [ours, theirs] = [true, false].map(|sluice| {
            let args = ["commit-graph", "verify", "--shallow"];
            let out = env.sluice_or_git(sluice, &repo, &args);
            (out.status.code(), stderr(&out))
        });
        assert_eq!(ours, theirs, "--shallow with {git_bin:?}");
        assert_eq!(ours.0, Some(0));
        assert_ne!(verify("a damaged base layer"), Some(0));
    }
}

/// `commit-graph write` from each source git takes (every pack by default, `--stdin-commits`
/// with tags peeled and trees passed over, `--stdin-packs`, `--append`) gives git's file byte
/// for byte; bad input (a line that is no id, an object not there, a pack not there, two
/// sources at once) is refused in git's words with git's exit code, and writes nothing.
#[test]
fn every_source_gives_gits_graph() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let repo = history(&env);
        env.git(&repo, &["repack", "-q", "-d"]);
        // One more commit, loose: every pack's commits leave it out.
        commit(&env, &repo, "loose", "1000000300 +0000", &[]);
        let rev = |name: &str| String::from_utf8(env.git(&repo, &["rev-parse", name])).unwrap();
        let pack_dir = repo.join(".git/objects/pack");
        let idx: String = std::fs::read_dir(&pack_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".idx"))
            .collect::<Vec<_>>()
            .join("\n");
        let named = format!("{}{}{}", rev("v1"), rev("side"), rev("HEAD^{tree}"));
        let cases: [(&[&str], String, bool); 9] = [
            (&[], String::new(), false),
            (&["--reachable"], String::new(), false),
            (&["--stdin-commits"], named.clone(), false),
            (&["--stdin-packs"], idx.clone(), false),
            (&["--stdin-commits", "--append"], rev("other"), true),
            (&["--stdin-commits"], "zzz\n".to_owned(), false),
            (&["--stdin-commits"], format!("{}\n", "1".repeat(40)), false),
            (&["--stdin-packs"], "pack-nope.idx\n".to_owned(), false),
            (&["--reachable", "--stdin-packs"], String::new(), false),
        ];
        let file = repo.join(".git/objects/info/commit-graph");
        for (args, input, first_side) in &cases {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let _ = std::fs::remove_file(&file);
                if *first_side {
                    // What --append keeps: a graph of `side` alone.
                    let side = format!("{}\n", rev("side").trim());
                    let write = ["commit-graph", "write", "--stdin-commits", "--no-progress"];
                    assert!(env
                        .git_with_input(&repo, &write, side.as_bytes())
                        .status
                        .success());
                }
                let mut command = vec!["commit-graph", "write", "--no-progress"];
                command.extend(*args);
                let run = env.sluice_or_git_command(sluice, &repo, &command);
                let out = crate::util::run_with_input(run, input.as_bytes());
                seen.push((out.status.code(), stderr(&out), std::fs::read(&file).ok()));
            }
            assert_eq!(seen[1], seen[0], "{} {args:?}", git.display());
        }
    }
}

/// `--split` with each source git takes beside `--reachable` (`--stdin-commits`,
/// `--stdin-packs`, every pack, `--append`), layer on layer, and `--split=replace` keeping only
/// what its source reaches: the same files as git's, byte for byte, step by step.
#[test]
fn split_layers_from_every_source_are_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = history(&env);
        let rev = |name: &str| String::from_utf8(env.git(&seed, &["rev-parse", name])).unwrap();
        let write = |flags: &[&'static str]| -> Vec<&'static str> {
            [&["commit-graph", "write", "--no-progress"][..], flags].concat()
        };
        let steps: Vec<(Vec<&str>, String)> = vec![
            (write(&["--split"]), String::new()),
            (write(&["--split", "--stdin-commits"]), rev("side")),
            (write(&["--split=no-merge", "--stdin-commits"]), rev("v1")),
            (
                write(&["--split", "--append", "--stdin-commits"]),
                rev("other"),
            ),
            (vec!["repack", "-q", "-d"], String::new()),
            (write(&["--split=no-merge"]), String::new()),
            (write(&["--split=replace", "--stdin-commits"]), rev("side")),
            (write(&["--split", "--reachable"]), String::new()),
            (write(&["--split=replace", "--stdin-packs"]), String::new()),
        ];
        let twins = twins(&env, &seed);
        for (step, (args, input)) in steps.iter().enumerate() {
            let mut said = Vec::new();
            for (sluice, repo) in [false, true].into_iter().zip(&twins) {
                // Packs are git's on both sides, so `--stdin-packs` names the same ones.
                let sluice = sluice && args[0] != "repack";
                let input = match args.contains(&"--stdin-packs") {
                    true => crate::util::list_dir(&repo.join(".git/objects/pack"))
                        .into_iter()
                        .filter(|n| n.ends_with(".idx"))
                        .map(|n| n + "\n")
                        .collect(),
                    false => input.clone(),
                };
                let run = env.sluice_or_git_command(sluice, repo, args);
                let out = crate::util::run_with_input(run, input.as_bytes());
                said.push((out.status.code(), stderr(&out)));
            }
            assert_eq!(said[1], said[0], "{} step {step}", git.display());
            assert_eq!(
                info_files(&twins[1]),
                info_files(&twins[0]),
                "{} step {step} {args:?}",
                git.display()
            );
            env.git(&twins[1], &["commit-graph", "verify"]);
        }
    }
}

/// `--object-dir`: the repository's own object directory (write and verify), an alternate's
/// (verify, as git's fsck runs it), and a directory that is neither (refused in git's words,
/// 128, nothing written): exit code, stderr and the files as git's.
#[test]
fn object_directories_are_taken_as_git_takes_them() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = history(&env);
        let borrowed = env.path().join("borrowed");
        crate::util::copy_tree(&seed, &borrowed);
        env.git(&borrowed, &["commit-graph", "write", "--reachable"]);
        let alternate = borrowed.join(".git/objects");
        let elsewhere = env.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let (alternate, elsewhere) = (alternate.to_str().unwrap(), elsewhere.to_str().unwrap());
        let cases: [&[&str]; 5] = [
            &["write", "--reachable", "--object-dir", ".git/objects"],
            &["write", "--reachable", "--object-dir", elsewhere],
            &["verify", "--object-dir", ".git/objects"],
            &["verify", "--object-dir", alternate],
            &["verify", "--object-dir", elsewhere],
        ];
        for args in cases {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("repo-{sluice}"));
                let _ = std::fs::remove_dir_all(&repo);
                crate::util::copy_tree(&seed, &repo);
                let alternates = repo.join(".git/objects/info/alternates");
                std::fs::write(&alternates, format!("{alternate}\n")).unwrap();
                let command = [&["commit-graph"][..], args].concat();
                let out = env.sluice_or_git(sluice, &repo, &command);
                seen.push((out.status.code(), stderr(&out), info_files(&repo)));
            }
            assert_eq!(seen[1], seen[0], "{} {args:?}", git.display());
        }
    }
}

/// With `core.commitGraph=false`, a commit-graph is not written and git's warning says so: by
/// `commit-graph write` (whole or split) and by a fetch that `fetch.writeCommitGraph` asks to
/// write one. Compared: exit code, messages, and the files under `objects/info`.
#[test]
fn a_disabled_commit_graph_is_not_written_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = env.init("seed", false);
        env.git(&seed, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let url = seed.to_str().unwrap().to_owned();
        let off = ["-c", "core.commitGraph=false"];
        let runs: [&[&str]; 3] = [
            &["commit-graph", "write", "--reachable"],
            &["commit-graph", "write", "--reachable", "--split"],
            &["-c", "fetch.writeCommitGraph=true", "fetch", "-q", &url],
        ];
        for run in runs {
            let mut seen = Vec::new();
            for (sluice, repo) in [false, true].into_iter().zip(twins(&env, &seed)) {
                let _ = std::fs::remove_dir_all(repo.join(".git/objects/info"));
                let mut args = off.to_vec();
                args.extend(run);
                let out = env.sluice_or_git(sluice, &repo, &args);
                let info = crate::util::list_dir(&repo.join(".git/objects/info"));
                seen.push((out.status.code(), stderr(&out), info));
            }
            assert_eq!(seen[1], seen[0], "{run:?} with {}", git.display());
        }
    }
}
