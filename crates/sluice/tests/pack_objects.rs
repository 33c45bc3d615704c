//! `sluice pack-objects`, the plumbing, twinned with git's: the same input on standard input
//! (and the same options: filters, and the flags git's own commands pass) gives packs of the
//! same objects, which git indexes, verifies and accepts.

use crate::util::{gits, run_with_input, stderr, Env};
use std::path::Path;

/// A repository of 12 commits on two branches, its last three commits loose.
fn history(env: &Env) -> std::path::PathBuf {
    let work = env.init("work", false);
    for i in 0..12 {
        let text: String = (0..40 + i)
            .map(|l| format!("line {l} of {}\n", i % 3))
            .collect();
        std::fs::write(work.join(format!("f{}", i % 3)), text).unwrap();
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
        if i == 5 {
            env.git(&work, &["branch", "side"]);
        }
        if i == 8 {
            env.git(&work, &["repack", "-a", "-d", "-q"]);
        }
    }
    work
}

/// The object ids a pack holds, sorted (indexed by git into a scratch file).
fn ids_in(env: &Env, pack: &[u8]) -> Vec<String> {
    let scratch = env.path().join(format!("scratch-{}.pack", pack.len()));
    std::fs::write(&scratch, pack).unwrap();
    let idx = scratch.with_extension("idx");
    let scratch_str = scratch.to_str().unwrap();
    env.git(
        env.path(),
        &["index-pack", "-o", idx.to_str().unwrap(), scratch_str],
    );
    let listing = env.git(env.path(), &["verify-pack", "-v", idx.to_str().unwrap()]);
    let mut ids: Vec<String> = String::from_utf8(listing)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.len() == 40 && w.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_owned)
        .collect();
    ids.sort();
    ids
}

fn pack_with(env: &Env, tool_is_git: bool, repo: &Path, args: &[&str], input: &str) -> Vec<u8> {
    let command = match tool_is_git {
        true => env.git_command(repo, args),
        false => env.sluice_command(repo, args),
    };
    let out = run_with_input(command, input.as_bytes());
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    out.stdout
}

#[test]
fn packs_hold_what_gits_hold_for_the_same_input() {
    for git in gits() {
        let env = Env::with_git(git);
        let work = history(&env);
        let listed = String::from_utf8(env.git(&work, &["rev-list", "--objects", "--all"]));
        let cases: Vec<(Vec<&str>, String)> = vec![
            (vec!["pack-objects", "--stdout"], listed.unwrap()),
            (
                vec!["pack-objects", "--revs", "--stdout", "--delta-base-offset"],
                "HEAD\n^HEAD~4\n".to_owned(),
            ),
            (
                vec!["pack-objects", "--revs", "--stdout"],
                "master\n--not\nside\n".to_owned(),
            ),
            (vec!["pack-objects", "--all", "--stdout"], String::new()),
            (
                vec!["pack-objects", "--revs", "--unpacked", "--stdout"],
                "HEAD\n".to_owned(),
            ),
            (
                vec!["pack-objects", "--revs", "--stdout", "--no-reuse-delta"],
                "HEAD\n".to_owned(),
            ),
            (
                vec!["pack-objects", "--revs", "--stdout", "--no-reuse-object"],
                "side\n".to_owned(),
            ),
            // Filters, and the flags git's send-pack, upload-pack and repack pass.
            (
                vec!["pack-objects", "--revs", "--stdout", "--filter=blob:none"],
                "HEAD\n".to_owned(),
            ),
            (
                vec![
                    "pack-objects",
                    "--revs",
                    "--stdout",
                    "--filter=blob:limit=2k",
                ],
                "HEAD\n^side\n".to_owned(),
            ),
            (
                vec!["pack-objects", "--revs", "--stdout", "--filter=tree:0"],
                "HEAD\n".to_owned(),
            ),
            (
                vec!["pack-objects", "--revs", "--stdout", "--use-bitmap-index"],
                "HEAD\n".to_owned(),
            ),
            (
                vec![
                    "pack-objects",
                    "--all-progress-implied",
                    "--no-use-bitmap-index",
                    "--revs",
                    "--stdout",
                    "--thin",
                    "--delta-base-offset",
                    "--shallow",
                    "--sparse",
                    "--index-version=2",
                    "--compression=1",
                    "-q",
                ],
                "HEAD\n".to_owned(),
            ),
        ];
        let version = String::from_utf8(env.git(&work, &["version"])).unwrap();
        // git before 2.4x also packed the packed trees and blobs that unpacked commits reach;
        // later versions pack only unpacked objects, as the documentation says and Sluice does.
        let old_unpacked = version.contains(" 2.39.") || version.contains(" 2.3");
        for (args, input) in cases {
            if old_unpacked && args.contains(&"--unpacked") {
                continue;
            }
            let ours = pack_with(&env, false, &work, &args, &input);
            let theirs = pack_with(&env, true, &work, &args, &input);
            assert_eq!(ids_in(&env, &ours), ids_in(&env, &theirs), "{args:?}");
        }
    }
}

#[test]
fn a_base_name_gets_the_pack_its_indexes_and_a_bitmap_git_uses() {
    let env = Env::new();
    history(&env);
    let bare = env.path().join("bare.git");
    env.git(
        env.path(),
        &["clone", "-q", "--bare", "--no-local", "work", "bare.git"],
    );
    let old: Vec<_> = std::fs::read_dir(bare.join("objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let args = [
        "pack-objects",
        "--all",
        "--write-bitmap-index",
        "objects/pack/pack",
    ];
    let out = run_with_input(env.sluice_command(&bare, &args), b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let checksum = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let pack = bare.join(format!("objects/pack/pack-{checksum}.pack"));
    for extension in ["pack", "idx", "bitmap"] {
        assert!(pack.with_extension(extension).exists(), "{extension}");
    }
    env.git(
        &bare,
        &["verify-pack", pack.with_extension("idx").to_str().unwrap()],
    );
    for path in old {
        std::fs::remove_file(path).unwrap();
    }
    env.git(&bare, &["fsck", "--strict"]);
    let out = env
        .git_command(&bare, &["rev-list", "--test-bitmap", "HEAD"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_thin_pack_completes_where_its_bases_are() {
    let env = Env::new();
    let work = history(&env);
    let thin = pack_with(
        &env,
        false,
        &work,
        &["pack-objects", "--revs", "--thin", "--stdout"],
        "HEAD\n^HEAD~2\n",
    );
    let receiver = env.path().join("receiver.git");
    env.git(
        env.path(),
        &[
            "clone",
            "-q",
            "--bare",
            "--no-local",
            "work",
            "receiver.git",
        ],
    );
    env.git(&receiver, &["update-ref", "refs/heads/master", "HEAD~2"]);
    let out = run_with_input(
        env.git_command(&receiver, &["index-pack", "--stdin", "--fix-thin"]),
        &thin,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    env.git(&receiver, &["fsck", "--strict"]);
}

/// `--index-version=1`, `1,<offset>` and `2,<offset>` (and `pack.indexVersion`): the `.idx` beside the pack
/// is byte for byte the one git's index-pack writes for that pack with the same option.
#[test]
fn index_versions_are_written_as_git_writes_them() {
    for git in gits() {
        let env = Env::with_git(git);
        let work = history(&env);
        let cases: [(&[&str], &str); 5] = [
            (&["--index-version=1"], "--index-version=1"),
            // Offsets past the limit do not fit version 1: version 2 is written, as git does.
            (&["--index-version=1,0x100"], "--index-version=1,0x100"),
            (&["--index-version=2,0x100"], "--index-version=2,0x100"),
            (&["--index-version=2"], "--index-version=2"),
            (&["-c", "pack.indexVersion=1"], "--index-version=1"),
        ];
        for (k, (options, for_git)) in cases.into_iter().enumerate() {
            let base = env.path().join(format!("out{k}"));
            let base_str = base.to_str().unwrap();
            let (config, flags) = match options[0] {
                "-c" => (options, &[][..]),
                _ => (&[][..], options),
            };
            let args = [config, &["pack-objects", "--all"], flags, &[base_str]].concat();
            let out = run_with_input(env.sluice_command(&work, &args), b"");
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            let checksum = String::from_utf8(out.stdout).unwrap().trim().to_owned();
            let pack = env.path().join(format!("out{k}-{checksum}.pack"));
            let ours = std::fs::read(pack.with_extension("idx")).unwrap();
            let theirs = env.path().join(format!("git{k}.idx"));
            let theirs_str = theirs.to_str().unwrap();
            let args = [
                "index-pack",
                for_git,
                "-o",
                theirs_str,
                pack.to_str().unwrap(),
            ];
            env.git(env.path(), &args);
            assert!(ours == std::fs::read(&theirs).unwrap(), "{options:?}");
            let idx = pack.with_extension("idx");
            env.git(env.path(), &["verify-pack", idx.to_str().unwrap()]);
        }
        let out = run_with_input(
            env.sluice_command(&work, &["pack-objects", "--all", "--index-version=3", "x"]),
            b"",
        );
        assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
    }
}

#[test]
fn bad_input_is_refused_as_git_refuses_it() {
    let env = Env::new();
    let work = history(&env);
    for (args, input, message) in [
        (
            &["pack-objects", "--revs", "--stdout"][..],
            "nosuch\n",
            "bad revision 'nosuch'",
        ),
        (
            &["pack-objects", "--stdout"][..],
            "not-an-id\n",
            "expected object ID",
        ),
        (
            &["pack-objects", "--revs", "--stdout", "--filter=bogus"][..],
            "HEAD\n",
            "fatal: invalid filter-spec 'bogus'",
        ),
        (
            &["pack-objects", "--revs", "--stdout", "--compression=12"][..],
            "HEAD\n",
            "fatal: bad pack compression level 12",
        ),
    ] {
        let out = run_with_input(env.sluice_command(&work, args), input.as_bytes());
        assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
    }
}

/// What a repository holds after a repack: its refs, every object, how many are loose, how
/// many packs there are and of which kinds.
pub(crate) fn held(env: &Env, repo: &Path) -> String {
    let objects = env.git(repo, &["cat-file", "--batch-all-objects", "--batch-check"]);
    let refs = env.git(repo, &["for-each-ref"]);
    let count = env.git(repo, &["count-objects", "-v"]);
    let count = String::from_utf8_lossy(&count);
    let kept: Vec<&str> = (count.lines())
        .filter(|l| l.starts_with("count:") || l.starts_with("packs:"))
        .collect();
    // Which kinds of pack files there are (`.mtimes` of a cruft pack, `.bitmap`, `.keep`);
    // `.rev` left out: Sluice writes it by default, as git does since 2.41.
    let mut kinds: Vec<String> = crate::util::list_dir(&repo.join(".git/objects/pack"))
        .iter()
        .filter_map(|name| name.rsplit_once('.').map(|(_, ext)| ext.to_owned()))
        .filter(|ext| ext != "rev")
        .collect();
    kinds.sort();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    format!("{}{}{kept:?}{kinds:?}", text(&objects), text(&refs))
}

/// What git's `command` leaves in a copy of `seed`, run with its own helpers and then with the
/// stand-ins of the exec path `exec`; each run must succeed and leave a repository git's fsck
/// finds whole.
pub(crate) fn held_with_and_without(
    env: &Env,
    (seed, exec): (&Path, &Path),
    command: &[&str],
) -> [String; 2] {
    [false, true].map(|stand_in| {
        let repo = env.path().join(format!("copy-{stand_in}"));
        let _ = std::fs::remove_dir_all(&repo);
        crate::util::copy_tree(seed, &repo);
        let mut run = env.git_command(&repo, command);
        if stand_in {
            run.env("GIT_EXEC_PATH", exec);
        }
        let out = run_with_input(run, b"");
        assert!(out.status.success(), "{command:?}: {}", stderr(&out));
        env.git(&repo, &["fsck", "--strict", "--no-progress"]);
        held(env, &repo)
    })
}

/// git's repack and gc run with Sluice as their pack-objects, with every option they pass
/// (`--incremental` with `--unpacked`, `--unpack-unreachable[=<date>]`, `--stdin-packs`,
/// `--cruft`, `--cruft-expiration`, `--max-pack-size=0`, `--keep-true-parents`,
/// `--honor-pack-keep`, `--non-empty`, `--write-bitmap-index`, `--keep-unreachable` with
/// `--pack-loose-unreachable`), leave
/// the same refs and objects, loose and packed, as with git's own, and fsck finds them whole.
#[test]
fn gits_repack_and_gc_run_with_sluices_pack_objects() {
    let commands: [&[&str]; 10] = [
        &["repack", "-q"],
        &["repack", "-a", "-d", "-q"],
        &["repack", "-a", "-d", "-k", "-q"],
        &["repack", "-A", "-d", "-q"],
        &["repack", "-a", "-d", "-b", "-q"],
        &["repack", "--geometric=2", "-d", "-q"],
        &["-c", "gc.cruftPacks=false", "gc", "-q"],
        &["repack", "--cruft", "-d", "-q"],
        &["repack", "--cruft", "--cruft-expiration=now", "-d", "-q"],
        &["-c", "gc.cruftPacks=true", "gc", "-q"],
    ];
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let exec = crate::util::stand_in(&env, &["pack-objects"]);
        let seed = history(&env);
        // An unreachable blob in a pack of its own, and another pack: work for -A and for the
        // geometric roll.
        let blob = env.git_with_input(&seed, &["hash-object", "-w", "--stdin"], b"alone\n");
        assert!(blob.status.success());
        env.git(&seed, &["repack", "-q"]);
        env.git(&seed, &["commit", "-q", "--allow-empty", "-m", "more"]);
        env.git(&seed, &["repack", "-q"]);
        let loose = env.git_with_input(&seed, &["hash-object", "-w", "--stdin"], b"loose\n");
        assert!(loose.status.success());
        for command in commands {
            let seen = held_with_and_without(&env, (&seed, &exec), command);
            assert_eq!(seen[1], seen[0], "{command:?} with {git_bin:?}");
        }
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(
            calls.contains("--keep-unreachable --pack-loose-unreachable"),
            "{calls}"
        );
    }
}

/// git's upload-pack runs `pack-objects --revs --thin --stdout --delta-base-offset
/// --include-tag` for a fetch: with Sluice as that pack-objects, clones and fetches get the
/// same refs and objects as from git's own, the annotated tags of what they fetch included.
#[test]
fn gits_upload_pack_serves_with_sluices_pack_objects() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let exec = crate::util::stand_in(&env, &["pack-objects"]);
        let src = history(&env);
        let url = format!("file://{}", src.display());
        let run = |stand_in: bool, cwd: &Path, args: &[&str]| {
            let mut command = env.git_command(cwd, args);
            if stand_in {
                command.env("GIT_EXEC_PATH", &exec);
            }
            let out = run_with_input(command, b"");
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        };
        for stand_in in [false, true] {
            let name = format!("client-{stand_in}");
            run(stand_in, env.path(), &["clone", "-q", &url, &name]);
        }
        // New history and an annotated tag on it, for both clients to fetch.
        env.git(&src, &["commit", "-q", "--allow-empty", "-m", "tagged"]);
        env.git(&src, &["tag", "-a", "-m", "a tag", "v9"]);
        let mut seen = Vec::new();
        for stand_in in [false, true] {
            let client = env.path().join(format!("client-{stand_in}"));
            run(stand_in, &client, &["fetch", "-q", "origin"]);
            seen.push(crate::pack_objects::held(&env, &client));
        }
        assert_eq!(seen[1], seen[0], "with {git_bin:?}");
        assert!(seen[1].contains("refs/tags/v9"), "{}", seen[1]);
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(calls.contains("--include-tag"), "{calls}");
    }
}

/// Options that imply `--revs` as in git (`--thin`, the roots, `--unpacked`, what keeps or
/// loosens unreachable objects), and the combinations git refuses with them, twin-wise: exit
/// code, stderr, and the objects of a range's pack (`<from>..<to>`, as a script may write).
#[test]
fn options_implying_revisions_and_their_refusals_are_gits() {
    let cases: [&[&str]; 10] = [
        &["--revs", "--stdout"],
        &["--thin", "--stdout"],
        &["--stdin-packs", "--thin", "--stdout"],
        &["--stdin-packs", "--revs", "--stdout"],
        &["--stdin-packs", "--filter=blob:none", "--stdout"],
        &["--cruft", "--revs", "out/p"],
        &["--cruft", "--stdin-packs", "out/p"],
        &["--cruft", "--unpack-unreachable", "out/p"],
        &["--thin", "out/p"],
        &["--keep-unreachable", "--unpack-unreachable", "out/p"],
    ];
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let work = history(&env);
        std::fs::create_dir(work.join("out")).unwrap();
        for case in cases {
            let args = [&["pack-objects"][..], case].concat();
            let seen = [false, true].map(|sluice| {
                let command = env.sluice_or_git_command(sluice, &work, &args);
                let out = run_with_input(command, b"HEAD~2..HEAD\n");
                let ids = match out.status.success() && case[0] == "--revs" {
                    true => ids_in(&env, &out.stdout),
                    false => Vec::new(),
                };
                (out.status.code(), stderr(&out), ids)
            });
            assert_eq!(seen[1], seen[0], "{case:?} with {git_bin:?}");
        }
        // The thin pack's revisions were walked: git indexes it with the bases it lacks.
        let out = run_with_input(
            env.sluice_command(&work, &["pack-objects", "--thin", "--stdout"]),
            b"HEAD~2..HEAD\n",
        );
        let fixed =
            env.git_with_input(&work, &["index-pack", "--stdin", "--fix-thin"], &out.stdout);
        assert!(fixed.status.success(), "{}", stderr(&fixed));
    }
}

/// git's `bundle create` runs `pack-objects --stdout --thin --delta-base-offset` with
/// revisions on its input and no `--revs` (`--thin` implies it): with Sluice as that
/// pack-objects, bundles verify, and a whole one clones to the same objects, as git's own.
#[test]
fn gits_bundle_create_runs_with_sluices_pack_objects() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let exec = crate::util::stand_in(&env, &["pack-objects"]);
        let work = history(&env);
        let seen = [false, true].map(|stand_in| {
            let bundle = |name: &str, revisions: &[&str]| {
                let path = env.path().join(format!("{name}-{stand_in}.bundle"));
                let path = path.to_str().unwrap().to_owned();
                let args = [&["bundle", "create", &path][..], revisions].concat();
                let mut command = env.git_command(&work, &args);
                if stand_in {
                    command.env("GIT_EXEC_PATH", &exec);
                }
                let out = run_with_input(command, b"");
                assert!(out.status.success(), "{}", stderr(&out));
                env.git(&work, &["bundle", "verify", "-q", &path]);
                path
            };
            bundle("since", &["HEAD~3..HEAD", "side"]);
            let bundle = bundle("whole", &["--all"]);
            let target = env.path().join(format!("target-{stand_in}"));
            let target_str = target.to_str().unwrap();
            env.git(
                env.path(),
                &["clone", "-q", "--mirror", &bundle, target_str],
            );
            env.git(&target, &["fsck", "--strict", "--no-progress"]);
            String::from_utf8(env.git(&target, &["rev-list", "--objects", "--all"])).unwrap()
        });
        assert_eq!(seen[1], seen[0], "with {git_bin:?}");
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(calls.contains("--thin"), "{calls}");
    }
}

/// Symmetric ranges on the input (`<a>...<b>`, an empty side `HEAD`, under `--not` too): what
/// either side reaches and not both, with one merge base and with two (criss-cross merges),
/// as git's revision parser reads them: exit code, stderr and the pack's objects.
#[test]
fn symmetric_ranges_on_the_input_are_read_as_git_reads_them() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let work = history(&env);
        let commit = |file: &str, text: &str| {
            std::fs::write(work.join(file), text).unwrap();
            env.git(&work, &["add", "."]);
            env.git(&work, &["commit", "-q", "-m", text]);
        };
        // `side` grows apart from the main line.
        env.git(&work, &["checkout", "-q", "side"]);
        commit("s", "side one\n");
        commit("s", "side two\n");
        // `p` and `q` merge each other: two merge bases.
        for (branch, file) in [("p", "p"), ("q", "q")] {
            env.git(&work, &["checkout", "-q", "-b", branch, "side~1"]);
            commit(file, &format!("{branch} one\n"));
        }
        env.git(&work, &["branch", "p1", "p"]);
        env.git(&work, &["checkout", "-q", "p"]);
        env.git(&work, &["merge", "-q", "--no-edit", "q"]);
        env.git(&work, &["checkout", "-q", "q"]);
        env.git(&work, &["merge", "-q", "--no-edit", "p1"]);
        env.git(&work, &["checkout", "-q", "-"]);
        let inputs: [&[u8]; 5] = [
            b"side...HEAD\n",
            b"HEAD...side\n",
            b"...side\n",
            b"p...q\n",
            b"HEAD\n--not\nside...HEAD~1\n",
        ];
        for input in inputs {
            let seen = [false, true].map(|sluice| {
                let args = ["pack-objects", "--revs", "--stdout"];
                let out = run_with_input(env.sluice_or_git_command(sluice, &work, &args), input);
                let ids = match out.status.success() {
                    true => ids_in(&env, &out.stdout),
                    false => Vec::new(),
                };
                (out.status.code(), stderr(&out), ids)
            });
            let shown = String::from_utf8_lossy(input);
            assert_eq!(seen[1], seen[0], "{shown:?} with {git_bin:?}");
            assert!(!seen[0].2.is_empty(), "{shown:?}");
        }
    }
}

/// A thread count below zero (`pack.threads`) stops pack-objects, repack and index-pack in
/// git's words and with git's exit code, and verify-pack fails as git's does; the repository
/// is left as it was.
#[test]
fn a_negative_thread_count_is_refused_as_git_refuses_it() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let work = history(&env);
        let pack_dir = work.join(".git/objects/pack");
        let idx = std::fs::read_dir(&pack_dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .find(|path| path.extension().is_some_and(|e| e == "idx"))
            .unwrap();
        let pack = idx.with_extension("pack");
        let scratch = env.path().join("scratch.idx");
        let cases: [(&[&str], &[u8]); 5] = [
            (&["pack-objects", "--revs", "--stdout"], b"HEAD\n"),
            (&["repack", "-a", "-d", "-q"], b""),
            (
                &[
                    "index-pack",
                    "-o",
                    scratch.to_str().unwrap(),
                    pack.to_str().unwrap(),
                ],
                b"",
            ),
            (&["verify-pack", idx.to_str().unwrap()], b""),
            (&["pack-objects", "--all", "--stdout", "-q"], b""),
        ];
        let before = held(&env, &work);
        for (args, input) in cases {
            let args = [&["-c", "pack.threads=-1"][..], args].concat();
            let seen = [false, true].map(|sluice| {
                let command = env.sluice_or_git_command(sluice, &work, &args);
                let out = run_with_input(command, input);
                let said = stderr(&out);
                let fatal = said.lines().find(|l| l.starts_with("fatal:"));
                (out.status.code(), fatal.map(str::to_owned))
            });
            assert_eq!(seen[1], seen[0], "{args:?} with {git_bin:?}");
            assert!(!scratch.exists(), "{args:?}");
        }
        assert_eq!(held(&env, &work), before);
    }
}

/// Limits read from settings, as git reads them: past 32 bits refused in git's words; a depth
/// past 4095 cut with git's warning; and a window or thread count in the billions, which git
/// dies of or starts threads for, bounded by what there is to search and a cap on threads:
/// the repack (and an index-pack) ends whole.
#[test]
fn limits_in_the_billions_are_refused_cut_or_bounded() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let work = history(&env);
        for setting in [
            "pack.depth=99999999999",
            "pack.window=99999999999",
            "pack.threads=99999999999",
            "pack.depth=5000",
        ] {
            let args = ["-c", setting, "repack", "-a", "-d", "-q"];
            let [ours, theirs] = [true, false].map(|sluice| {
                let out = env.sluice_or_git(sluice, &work, &args);
                (out.status.code(), stderr(&out))
            });
            assert_eq!(ours, theirs, "{setting} with {git_bin:?}");
        }
        for setting in ["pack.window=2147483647", "pack.threads=2147483647"] {
            let args = ["-c", setting, "repack", "-a", "-d", "-f", "-q"];
            let out = env.sluice(&work, &args, b"");
            assert!(out.status.success(), "{setting}: {}", stderr(&out));
            env.git(&work, &["fsck", "--strict"]);
        }
        let pack_dir = work.join(".git/objects/pack");
        let pack = crate::util::list_dir(&pack_dir)
            .into_iter()
            .find(|name| name.ends_with(".pack"))
            .unwrap();
        let pack = pack_dir.join(pack);
        let idx = env.path().join("copy.idx");
        let args = ["-c", "pack.threads=2147483647", "index-pack", "-o"];
        let args = [&args[..], &[idx.to_str().unwrap(), pack.to_str().unwrap()]].concat();
        let out = env.sluice(&work, &args, b"");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            std::fs::read(&idx).unwrap(),
            std::fs::read(pack.with_extension("idx")).unwrap()
        );
    }
}

/// Which phases a pack-objects shows, by where the pack goes and what is asked: with
/// `--stdout`, the writing phase only under `--all-progress` (or `--all-progress-implied`, as
/// send-pack passes it), its throughput then; a pack written to a file shows every phase; and
/// the Total line ends them all (git 2.47's, with the packs copied from). How many objects a
/// phase counts is left out: it follows each side's delta search. The search's thread line is
/// git's too.
#[test]
fn progress_phases_are_shown_where_gits_are() {
    let git = crate::util::git_bin();
    let env = Env::with_git(git);
    let work = history(&env);
    let shape = |said: &str| -> Vec<String> {
        (said.lines())
            .map(|line| line.rsplit('\r').next().unwrap_or(line))
            .map(|line| match line.split_once(':') {
                Some((title, rest)) => {
                    let throughput = rest.contains("/s, done");
                    format!("{title} throughput={throughput}")
                }
                None => format!("Total from={}", line.contains("(from ")),
            })
            .collect()
    };
    let cases: [&[&str]; 5] = [
        &["pack-objects", "--revs", "--stdout", "--progress"],
        &["pack-objects", "--revs", "--stdout", "--all-progress"],
        &[
            "pack-objects",
            "--revs",
            "--stdout",
            "--progress",
            "--all-progress-implied",
        ],
        &["pack-objects", "--revs", "--progress", "to-file"],
        &["pack-objects", "--revs", "-q", "to-file"],
    ];
    for args in cases {
        let [theirs, ours] = [true, false].map(|tool_is_git| {
            let command = match tool_is_git {
                true => env.git_command(&work, args),
                false => env.sluice_command(&work, args),
            };
            let out = run_with_input(command, b"HEAD\n");
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            shape(&stderr(&out))
        });
        assert_eq!(ours, theirs, "{args:?}");
    }
}
