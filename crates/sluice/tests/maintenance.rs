//! `sluice maintenance run`, twinned with `git maintenance run` task by task: the same
//! storage (packs by kind, loose counts), the same commit-graph files byte for byte, the
//! same `packed-refs`, and `--auto` holding back where git's does.

use crate::util::{gits, stderr, Env};
use std::path::{Path, PathBuf};

/// Two copies of a work repository with a few commits and a tag, all loose.
fn twins(env: &Env) -> Vec<PathBuf> {
    let seed = env.init("seed", false);
    for i in 0..4 {
        std::fs::write(seed.join(format!("f{i}")), format!("{i}\n")).unwrap();
        env.git(&seed, &["add", "."]);
        env.git(&seed, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    env.git(&seed, &["tag", "v1"]);
    ["theirs", "ours"]
        .iter()
        .map(|name| {
            let copy = env.path().join(name);
            crate::util::copy_tree(&seed, &copy);
            copy
        })
        .collect()
}

/// Pack files, loose count, commit-graph files, `packed-refs`.
type Storage = (Vec<String>, String, Vec<(String, Vec<u8>)>, String);

/// What must be the same on both sides: the pack files by kind and extension (`.rev` aside:
/// git 2.39 writes none by default, later gits and Sluice do), the loose count, the
/// commit-graph files, `packed-refs`.
fn storage(env: &Env, repo: &Path) -> Storage {
    let pack_dir = repo.join(".git/objects/pack");
    let mut packs: Vec<String> = std::fs::read_dir(&pack_dir)
        .map(|d| {
            d.map(|e| {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                let kind = name.split('-').next().unwrap_or("").to_owned();
                let extension = name.rsplit('.').next().unwrap_or("").to_owned();
                format!("{kind}.{extension}")
            })
            .filter(|name: &String| !name.ends_with(".rev"))
            .collect()
        })
        .unwrap_or_default();
    packs.sort();
    let counted = String::from_utf8(env.git(repo, &["count-objects"])).unwrap();
    let loose = counted.split(',').next().unwrap().to_owned();
    let mut graphs = Vec::new();
    let info = repo.join(".git/objects/info");
    for dir in [info.clone(), info.join("commit-graphs")] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains("graph") && entry.path().is_file() {
                graphs.push((name, std::fs::read(entry.path()).unwrap()));
            }
        }
    }
    graphs.sort();
    let packed = std::fs::read_to_string(repo.join(".git/packed-refs")).unwrap_or_default();
    (packs, loose, graphs, packed)
}

#[test]
fn maintenance_tasks_leave_what_gits_leave() {
    for git in gits() {
        let env = Env::with_git(git);
        let repos = twins(&env);
        let steps: [&[&str]; 7] = [
            &["--task=loose-objects"],
            &["--task=loose-objects"],
            &["--task=commit-graph"],
            &["--task=pack-refs"],
            &["--auto", "--task=commit-graph", "--task=loose-objects"],
            &["--task=gc"],
            &[],
        ];
        for (step, flags) in steps.iter().enumerate() {
            let mut args = vec!["maintenance", "run", "--quiet"];
            args.extend(flags.iter());
            env.git(&repos[0], &args);
            let out = env.sluice(&repos[1], &args, b"");
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(
                storage(&env, &repos[1]),
                storage(&env, &repos[0]),
                "step {step}"
            );
            env.git(&repos[1], &["fsck", "--strict"]);
        }
    }
}

/// git runs `git maintenance run --auto --no-quiet` after a commit (and `gc --auto` after a
/// fetch, with `--no-quiet` where asked): with Sluice standing in for `maintenance` and `gc`
/// (an exec path whose `git` runs Sluice for them), git's commands give what they give with
/// git's own, and Sluice is reached with git's flags.
#[test]
fn git_commands_run_sluices_maintenance_with_their_flags() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let exec = crate::util::stand_in(&env, &["maintenance", "gc"]);
        let log = env.path().join("calls");
        let mut said = Vec::new();
        for stand_in in [false, true] {
            let repo = env.init(&format!("repo-{stand_in}"), false);
            std::fs::write(repo.join("f"), "f\n").unwrap();
            env.git(&repo, &["add", "f"]);
            let mut command = env.git_command(&repo, &["commit", "-m", "one"]);
            if stand_in {
                command.env("GIT_EXEC_PATH", &exec);
            }
            let out = crate::util::run_with_input(command, b"");
            let out_text = crate::util::stdout(&out).replace(&format!("repo-{stand_in}"), "repo");
            said.push((out.status.code(), out_text, stderr(&out)));
        }
        assert_eq!(said[1], said[0], "with {git_bin:?}");
        let calls = std::fs::read_to_string(&log).unwrap();
        assert!(
            calls.contains("maintenance run --auto --no-quiet"),
            "{calls}"
        );
    }
}

/// git's gc and maintenance tasks run their helpers (`pack-refs --all --prune`, `reflog
/// expire --all`, `repack -d -l -A --unpack-unreachable=<date>` or `--cruft`, `prune --expire
/// <date> --no-progress`, `commit-graph write`, `pack-objects`): with Sluice standing in for
/// every one, they leave the same refs and objects, loose and packed, as with git's own.
#[test]
fn gits_gc_and_maintenance_run_with_sluices_helpers() {
    let helpers = [
        "pack-refs",
        "reflog",
        "repack",
        "prune",
        "pack-objects",
        "commit-graph",
    ];
    let commands: [&[&str]; 6] = [
        &["gc", "-q"],
        &["gc", "--aggressive", "-q"],
        &["gc", "--prune=now", "-q"],
        &["-c", "gc.auto=1", "gc", "--auto", "-q"],
        &[
            "maintenance",
            "run",
            "--task=loose-objects",
            "--task=pack-refs",
            "--quiet",
        ],
        &["maintenance", "run", "--task=gc", "--quiet"],
    ];
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let exec = crate::util::stand_in(&env, &helpers);
        let seed = twins(&env).remove(0);
        let blob = env.git_with_input(&seed, &["hash-object", "-w", "--stdin"], b"alone\n");
        assert!(blob.status.success());
        env.git(&seed, &["branch", "gone"]);
        env.git(&seed, &["branch", "-D", "gone"]);
        for command in commands {
            let mut seen = Vec::new();
            for stand_in in [false, true] {
                let repo = env.path().join(format!("gc-{stand_in}"));
                let _ = std::fs::remove_dir_all(&repo);
                crate::util::copy_tree(&seed, &repo);
                let mut run = env.git_command(&repo, command);
                if stand_in {
                    run.env("GIT_EXEC_PATH", &exec);
                }
                let out = crate::util::run_with_input(run, b"");
                assert!(out.status.success(), "{command:?}: {}", stderr(&out));
                env.git(&repo, &["fsck", "--strict", "--no-progress"]);
                let held = crate::pack_objects::held(&env, &repo);
                seen.push((held, packs_by_content(&env, &repo)));
            }
            assert_eq!(seen[1], seen[0], "{command:?} with {git_bin:?}");
        }
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(calls.contains("prune --expire"), "{calls}");
    }
}

/// Dates the packs of `repo` not dated yet (those newer than `from`) a second apart from
/// `from` on, in the order they were made: git orders packs by whole seconds and breaks ties
/// by name, and names are checksums, which differ between two tools' packs.
fn date_packs(repo: &Path, from: std::time::SystemTime) {
    let pack_dir = repo.join(".git/objects/pack");
    let mut packs: Vec<(std::time::SystemTime, PathBuf)> = (std::fs::read_dir(&pack_dir))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "pack"))
        .map(|path| (std::fs::metadata(&path).unwrap().modified().unwrap(), path))
        .filter(|(modified, _)| *modified > from)
        .collect();
    packs.sort();
    for (rank, (_, path)) in packs.iter().enumerate() {
        let when = from + std::time::Duration::from_secs(rank as u64);
        // An owner may date a file it can only read.
        std::fs::File::open(path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
}

/// git's incremental-repack task runs `multi-pack-index write`, `expire` and `repack
/// --batch-size=<size>`, each with `--no-progress`: with Sluice as its multi-pack-index, runs
/// one after another leave the same objects and packs as git's, and a multi-pack-index git
/// verifies; Sluice's own task leaves what git's does with Sluice's multi-pack-index (the
/// same batch sizes, from the same packs).
#[test]
fn gits_incremental_repack_runs_with_sluices_multi_pack_index() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let exec = crate::util::stand_in(&env, &["multi-pack-index"]);
        let seed = env.init("seed", false);
        for i in 0..6 {
            let text: String = (i..3000).map(|n| format!("{n}\n")).collect();
            std::fs::write(seed.join(format!("f{i}")), text).unwrap();
            env.git(&seed, &["add", "."]);
            env.git(&seed, &["commit", "-q", "-m", &format!("c{i}")]);
            env.git(&seed, &["repack", "-q"]);
        }
        // A second apart, in the order they were made: git orders packs by whole seconds and
        // breaks ties by name, and names are the packs' checksums, which differ between the
        // two tools' new packs; distinct dates make the order the same for both.
        let day_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
        date_packs(&seed, day_ago);
        let mut seen = Vec::new();
        // git alone, git with Sluice's multi-pack-index, Sluice's own task.
        for (n, (stand_in, sluice)) in [(false, false), (true, false), (false, true)]
            .into_iter()
            .enumerate()
        {
            let repo = env.path().join(format!("midx-{n}"));
            crate::util::copy_tree(&seed, &repo);
            let mut rounds = Vec::new();
            for round in 1..=3 {
                let task = ["maintenance", "run", "--task=incremental-repack"];
                let mut run = env.sluice_or_git_command(sluice, &repo, &task);
                if stand_in {
                    run.env("GIT_EXEC_PATH", &exec);
                }
                let out = crate::util::run_with_input(run, b"");
                assert!(out.status.success(), "{}", stderr(&out));
                // The round's new pack a minute after the last: no tie with the next.
                date_packs(&repo, day_ago + std::time::Duration::from_secs(60 * round));
                env.git(&repo, &["multi-pack-index", "verify"]);
                env.git(&repo, &["fsck", "--strict", "--no-progress"]);
                rounds.push(crate::pack_objects::held(&env, &repo));
            }
            seen.push(rounds);
        }
        assert_eq!(seen[1], seen[0], "with {git_bin:?}");
        assert_eq!(seen[2], seen[1], "Sluice's task, beside {git_bin:?}");
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(
            calls.contains("repack --no-progress --batch-size="),
            "{calls}"
        );
    }
}

/// `gc --keep-largest-pack`, `gc.bigPackThreshold`, `--cruft` and `--no-cruft` leave what
/// git's leave: the largest pack (or those as big as the threshold) as it was, the rest in one;
/// unreachable objects in a cruft pack or loose, and only they in a cruft pack (a kept pack's
/// objects also loose are not cruft). Compared: every object, each pack's objects and kind.
/// (Cruft packs are named each time: git 2.39 does not make them by default, 2.40 and later and
/// Sluice do.)
#[test]
fn gc_options_leave_what_gits_leave() {
    let commands: [&[&str]; 6] = [
        &["gc", "-q", "--keep-largest-pack", "--no-cruft"],
        &["gc", "-q", "--keep-largest-pack", "--cruft"],
        &["-c", "gc.bigPackThreshold=1k", "gc", "-q", "--cruft"],
        &["-c", "gc.bigPackThreshold=1", "gc", "-q", "--no-cruft"],
        &["gc", "-q", "--cruft"],
        &["gc", "-q", "--no-cruft"],
    ];
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let seed = twins(&env).remove(0);
        // Packs of different sizes, and an unreachable blob among them.
        env.git(&seed, &["repack", "-a", "-d", "-q"]);
        let blob = env.git_with_input(&seed, &["hash-object", "-w", "--stdin"], b"alone\n");
        assert!(blob.status.success());
        // Incompressible: the pack of the commit that adds it is the largest, and the objects
        // it packs stay loose too (`repack` without `-d`).
        std::fs::write(seed.join("big"), crate::util::noise(7, 50_000)).unwrap();
        env.git(&seed, &["add", "big"]);
        env.git(&seed, &["commit", "-q", "-m", "big"]);
        env.git(&seed, &["repack", "-q"]);
        for command in commands {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("gc-options-{sluice}"));
                let _ = std::fs::remove_dir_all(&repo);
                crate::util::copy_tree(&seed, &repo);
                let out = env.sluice_or_git(sluice, &repo, command);
                assert!(out.status.success(), "{command:?}: {}", stderr(&out));
                env.git(&repo, &["fsck", "--strict", "--no-progress"]);
                let held = crate::pack_objects::held(&env, &repo);
                seen.push((held, packs_by_content(&env, &repo)));
            }
            assert_eq!(seen[1], seen[0], "{command:?} with {git_bin:?}");
        }
    }
}

/// Each pack of `repo` by what it holds: whether it is a cruft pack, and its objects' ids.
fn packs_by_content(env: &Env, repo: &Path) -> Vec<(bool, Vec<String>)> {
    let dir = repo.join(".git/objects/pack");
    let mut packs: Vec<(bool, Vec<String>)> = (crate::util::list_dir(&dir).iter())
        .filter(|name| name.ends_with(".idx"))
        .map(|name| {
            let idx = dir.join(name);
            let text = std::fs::read(&idx).unwrap();
            let out = env.git_with_input(repo, &["show-index"], &text);
            let mut ids: Vec<String> = (String::from_utf8_lossy(&out.stdout).lines())
                .filter_map(|line| line.split_whitespace().nth(1).map(str::to_owned))
                .collect();
            ids.sort();
            (idx.with_extension("mtimes").exists(), ids)
        })
        .collect();
    packs.sort();
    packs
}

/// `gc --auto` past its limits asks the `pre-auto-gc` hook first, as git does: run in the work
/// tree, its output on stderr; a refusal (non-zero) leaves everything loose and exits 0.
#[test]
fn pre_auto_gc_decides_as_in_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = env.init("seed", false);
        // Enough objects that objects/17 holds more than `gc.auto=1` allows, all reachable.
        for i in 0..1200 {
            std::fs::write(seed.join(format!("b{i}")), format!("b{i}\n")).unwrap();
        }
        env.git(&seed, &["add", "."]);
        env.git(&seed, &["commit", "-q", "-m", "many"]);
        for hook in [Some("exit 1"), Some("exit 0"), None] {
            let mut seen = Vec::new();
            for (sluice, name) in [(false, "theirs"), (true, "ours")] {
                let repo = env.path().join(name);
                let _ = std::fs::remove_dir_all(&repo);
                crate::util::copy_tree(&seed, &repo);
                if let Some(body) = hook {
                    let text = format!("#!/bin/sh\necho said; pwd; echo warned >&2\n{body}\n");
                    crate::util::script(&repo.join(".git/hooks/pre-auto-gc"), &text);
                }
                let args = [
                    "-c",
                    "gc.auto=1",
                    "-c",
                    "gc.autoDetach=false",
                    "gc",
                    "--auto",
                    "--quiet",
                ];
                let out = env.sluice_or_git(sluice, &repo, &args);
                let said = (out.status.code(), out.stdout.clone(), stderr(&out));
                let said = (said.0, said.1, said.2.replace(name, "REPO"));
                let (packs, loose, ..) = storage(&env, &repo);
                seen.push((said, packs, loose));
            }
            assert_eq!(seen[1], seen[0], "{} hook {hook:?}", git.display());
        }
    }
}

/// `gc --auto` in a bare repository, as git decides: past `gc.autoPackLimit`, everything
/// repacked (with the bare repository's bitmap); past `gc.auto` only, the loose objects packed
/// beside the other packs and no bitmap written; git's "Auto packing the repository…" said
/// first, unless `-q`. Twinned: exit code, stderr, packs, bitmaps, loose objects.
#[test]
fn auto_gc_repacks_as_git_decides() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = env.init("seed", false);
        for round in 0..2 {
            std::fs::write(seed.join("small"), format!("{round}\n")).unwrap();
            env.git(&seed, &["add", "."]);
            env.git(&seed, &["commit", "-q", "-m", "small"]);
            env.git(&seed, &["repack", "-q"]);
        }
        // Enough loose objects that objects/17 holds more than `gc.auto=1` allows.
        for i in 0..1200 {
            std::fs::write(seed.join(format!("b{i}")), format!("b{i}\n")).unwrap();
        }
        env.git(&seed, &["add", "."]);
        env.git(&seed, &["commit", "-q", "-m", "many"]);
        let cases: [&[&str]; 3] = [
            &["-c", "gc.autoPackLimit=1", "gc", "--auto"],
            &["gc", "--auto"],
            &["gc", "--auto", "-q"],
        ];
        for case in cases {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("auto-{sluice}.git"));
                let _ = std::fs::remove_dir_all(&repo);
                crate::util::copy_tree(&seed.join(".git"), &repo);
                env.git(&repo, &["config", "core.bare", "true"]);
                let settings = ["-c", "gc.auto=1", "-c", "gc.autoDetach=false"];
                let out = env.sluice_or_git(sluice, &repo, &[&settings[..], case].concat());
                env.git(&repo, &["fsck", "--strict", "--no-progress"]);
                let files = ["pack", "bitmap"].map(|x| crate::util::pack_files(&repo, x));
                let counted = String::from_utf8(env.git(&repo, &["count-objects"])).unwrap();
                let loose = counted.split(',').next().unwrap().to_owned();
                seen.push((out.status.code(), stderr(&out), files, loose));
            }
            assert_eq!(seen[1], seen[0], "{} {case:?}", git.display());
        }
    }
}

/// `maintenance register` and `unregister` (`--force`, `--config-file`), in a work tree and a
/// bare repository: the same global and repository configuration files as git's, byte for
/// byte, the same exit codes and messages (a section left empty goes).
#[test]
fn register_and_unregister_write_what_git_writes() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let home = env.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let global = home.join(".gitconfig");
        let steps: [&[&str]; 7] = [
            &["maintenance", "register"],
            &["maintenance", "register"],
            &["maintenance", "unregister"],
            &["maintenance", "unregister"],
            &["maintenance", "unregister", "--force"],
            &["maintenance", "register", "--config-file", "../list"],
            &["maintenance", "unregister", "--config-file", "../list"],
        ];
        for (bare, before) in [
            (false, ""),
            (
                true,
                "# mine\n[user]\n\tname = x\n[maintenance]\n\trepo = /a\n",
            ),
        ] {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join("repo");
                let _ = std::fs::remove_dir_all(&repo);
                let _ = std::fs::remove_file(env.path().join("list"));
                let mut init = vec!["init", "-q"];
                init.extend(bare.then_some("--bare"));
                init.push(repo.to_str().unwrap());
                env.git(env.path(), &init);
                std::fs::write(&global, before).unwrap();
                let config = match bare {
                    true => repo.join("config"),
                    false => repo.join(".git/config"),
                };
                let mut said = Vec::new();
                for step in steps {
                    let out = env.sluice_or_git(sluice, &repo, step);
                    said.push((
                        out.status.code(),
                        stderr(&out),
                        std::fs::read_to_string(&global).unwrap_or_default(),
                        std::fs::read_to_string(&config).unwrap(),
                        std::fs::read_to_string(env.path().join("list")).unwrap_or_default(),
                    ));
                }
                seen.push(said);
            }
            assert_eq!(seen[1], seen[0], "{} bare {bare}", git.display());
        }
    }
}

/// gc's dates refused in git's words (`--prune=<bad>`, a bad `gc.reflogExpire`), nothing
/// changed; `--force`, `--detach` and `--no-quiet` taken as git takes them.
#[test]
fn gc_takes_and_refuses_what_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let runs: [&[&str]; 5] = [
            &["gc", "-q", "--prune=garbage"],
            &["-c", "gc.reflogExpire=garbage", "gc", "-q"],
            &["gc", "-q", "--force"],
            &["gc", "--no-quiet", "-q"],
            &["gc", "-q", "--no-detach"],
        ];
        for args in runs {
            let mut seen = Vec::new();
            let _ = std::fs::remove_dir_all(env.path().join("seed"));
            for (sluice, repo) in [false, true].into_iter().zip(twins(&env)) {
                let out = env.sluice_or_git(sluice, &repo, args);
                let (packs, loose, ..) = storage(&env, &repo);
                seen.push((out.status.code(), stderr(&out), packs, loose));
                std::fs::remove_dir_all(&repo).unwrap();
            }
            // git 2.39 has no --detach.
            if args.contains(&"--no-detach") && seen[0].0 == Some(129) {
                continue;
            }
            assert_eq!(seen[1], seen[0], "{} {args:?}", git.display());
        }
    }
}

/// Which tasks `maintenance run` picks, as git picks them: `gc` enabled unless turned off and
/// others added to it, `--schedule` taking only tasks scheduled at least that often (by
/// `maintenance.<task>.schedule` or the incremental strategy's defaults), `--task` under a
/// schedule, named tasks run last-named first (as git sorts them: the prefetched refs are not
/// packed), the prefetch task fetching every remote but those skipped into `refs/prefetch/`,
/// and bad schedules refused in git's words. Compared: exit code, stderr, refs, storage.
#[test]
fn tasks_are_chosen_and_prefetched_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let upstream = env.init("upstream", false);
        env.commit_versions(&upstream, "f", 3);
        env.git(&upstream, &["tag", "v1"]);
        let seed = env.path().join("seed");
        let from = upstream.to_str().unwrap();
        env.git(env.path(), &["clone", "-q", from, seed.to_str().unwrap()]);
        env.git(&seed, &["remote", "add", "skipped", from]);
        env.git(&seed, &["config", "remote.skipped.skipFetchAll", "true"]);
        std::fs::write(seed.join("loose"), "loose\n").unwrap();
        env.git(&seed, &["add", "loose"]);
        env.git(&seed, &["commit", "-q", "-m", "loose"]);
        env.git(&upstream, &["checkout", "-q", "-b", "topic"]);
        env.git(&upstream, &["commit", "-q", "--allow-empty", "-m", "topic"]);
        env.git(&upstream, &["tag", "v2"]);
        let strategy = "maintenance.strategy=incremental";
        let cases: [(&[&str], &[&str]); 10] = [
            (&["maintenance.commit-graph.enabled=true"], &[]),
            (&[], &["--schedule=hourly"]),
            (&[strategy], &["--schedule=hourly"]),
            (&[strategy], &["--schedule=DAILY"]),
            (&[strategy], &["--schedule=weekly"]),
            (
                &[strategy, "maintenance.loose-objects.schedule=weekly"],
                &["--schedule=daily"],
            ),
            (&[], &["--task=prefetch", "--task=pack-refs"]),
            (&[], &["--task=prefetch", "--schedule=weekly"]),
            (&[], &["--schedule=monthly"]),
            (&[], &["--auto", "--schedule=daily"]),
        ];
        for (n, (settings, flags)) in cases.into_iter().enumerate() {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("case-{n}-{sluice}"));
                crate::util::copy_tree(&seed, &repo);
                for setting in settings {
                    let (key, value) = setting.split_once('=').unwrap();
                    env.git(&repo, &["config", key, value]);
                }
                let args = [&["maintenance", "run"][..], flags].concat();
                let out = env.sluice_or_git(sluice, &repo, &args);
                let refs = String::from_utf8(env.git(&repo, &["for-each-ref"])).unwrap();
                seen.push((out.status.code(), stderr(&out), refs, storage(&env, &repo)));
            }
            assert_eq!(seen[1], seen[0], "{} {settings:?} {flags:?}", git.display());
        }
    }
}

/// The settings git's gc reads, read as git reads them: its own before it starts (a bad one
/// fails gc at once), those of its steps as each runs (a bad one fails the step: "failed to run
/// pack-refs", "… repack"); `gc.packRefs` false or `notbare` leaves the refs loose;
/// `core.commitGraph=false` writes no commit-graph and says so. Compared: exit code, messages,
/// and the storage left (packs, loose objects, commit-graph files, `packed-refs`).
#[test]
fn gc_settings_are_read_as_gits() {
    let settings = [
        "gc.auto=bogus",
        "gc.autoPackLimit=bogus",
        "gc.aggressiveDepth=bogus",
        "gc.autoDetach=bogus",
        "gc.bigPackThreshold=bogus",
        "pack.deltaCacheSize=bogus",
        "gc.packRefs=bogus",
        "gc.packRefs=false",
        "gc.packRefs=notbare",
        "gc.writeCommitGraph=bogus",
        "core.commitGraph=bogus",
        "core.commitGraph=false",
        "repack.writeBitmaps=bogus",
        "gc.bigPackThreshold=-1",
        "pack.deltaCacheSize=-1",
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = twins(&env).remove(0);
        // git 2.39's gc read the repository's settings itself; 2.47's first step reads them,
        // as Sluice's does, and fails: "failed to run pack-refs" after the refusal.
        let older = env.git_version() < (2, 40);
        for setting in settings {
            let mut seen = Vec::new();
            for (sluice, name) in [(false, "by-git"), (true, "by-sluice")] {
                let repo = env.path().join(name);
                let _ = std::fs::remove_dir_all(&repo);
                crate::util::copy_tree(&seed, &repo);
                let out = env.sluice_or_git(sluice, &repo, &["-c", setting, "gc", "-q"]);
                let mut said = stderr(&out);
                if older && sluice {
                    said = said.replace("fatal: failed to run pack-refs\n", "");
                }
                seen.push(((out.status.code(), said), storage(&env, &repo)));
            }
            assert_eq!(seen[1], seen[0], "{setting} with {}", git.display());
        }
    }
}
