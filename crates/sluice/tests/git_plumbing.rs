//! git's own fetch, clone and verify-pack with Sluice standing in for their `index-pack`, with
//! the flags git passes it (`--pack_header`, `--check-self-contained-and-connected`,
//! `--promisor`, `--verify-stat`, ...), against twins where git runs its own: same refs, same
//! files, `fsck --strict` clean.
//!
//! git starts `git index-pack` through the `git` it finds first on its PATH, and it puts its
//! exec path first there; so the stand-in is an exec path of links to git's programs whose `git`
//! runs `sluice index-pack` for index-pack and the real git for everything else.

use crate::util::{gits, list_dir, stderr, stdout, Env, FastImport};
use std::path::{Path, PathBuf};
use std::process::Output;

/// An exec path for `git` whose index-pack is Sluice's (and, with `upload_pack`, whose
/// upload-pack is too); it logs each call's arguments.
fn stand_in(env: &Env) -> PathBuf {
    stand_in_with(env, false)
}

fn stand_in_with(env: &Env, upload_pack: bool) -> PathBuf {
    let ours: &[&str] = if upload_pack {
        &["git-upload-pack"]
    } else {
        &[]
    };
    let (exec, real) = crate::util::exec_dir(env, ours);
    let (log, sluice) = (env.path().join("calls"), env!("CARGO_BIN_EXE_sluice"));
    // The command's name is the first word past git's global options (and their values):
    // `index-pack`, or `--shallow-file <file> index-pack` for a shallow fetch, is Sluice's, with
    // every global option passed on as git passes it.
    let script = format!(
        "#!/bin/sh\nskip=\nfor arg; do\n  case \"$skip$arg\" in\n    1*) skip= ;;\n    \
         -C|-c|--shallow-file|--git-dir|--work-tree|--namespace|--config-env) skip=1 ;;\n    \
         -*) ;;\n    *) name=$arg; break ;;\n  esac\ndone\n\
         if [ \"$name\" = index-pack ]; then\n  echo \"$*\" >> '{log}'\n  \
         exec '{sluice}' \"$@\"\nfi\nexec '{git}' \"$@\"\n",
        log = log.display(),
        git = real.join("git").display(),
    );
    crate::util::script(&exec.join("git"), &script);
    if upload_pack {
        let script = format!(
            "#!/bin/sh\necho \"upload-pack $*\" >> '{log}'\nexec '{sluice}' upload-pack \"$@\"\n",
            log = log.display(),
        );
        crate::util::script(&exec.join("git-upload-pack"), &script);
    }
    exec
}

/// Runs git in `cwd`, with Sluice's index-pack when `exec` is given; it must succeed.
fn git(env: &Env, exec: Option<&Path>, cwd: &Path, args: &[&str]) -> Output {
    let mut command = env.git_command(cwd, args);
    if let Some(exec) = exec {
        command.env("GIT_EXEC_PATH", exec);
    }
    let out = crate::util::run_with_input(command, b"");
    assert!(
        out.status.success(),
        "git {args:?} (stand-in: {}) failed: {}",
        exec.is_some(),
        stderr(&out)
    );
    out
}

/// What a repository holds, as git reports it: refs, FETCH_HEAD, the pack directory's file
/// names and `.promisor` contents, and the objects `cat-file` lists.
fn state(env: &Env, repo: &Path) -> String {
    let refs = stdout(&git(env, None, repo, &["for-each-ref"]));
    let fetch_head = std::fs::read_to_string(repo.join(".git/FETCH_HEAD")).unwrap_or_default();
    let pack_dir = repo.join(".git/objects/pack");
    let mut promisors = String::new();
    // `.rev` files are left out: Sluice writes them by default as git does since 2.41.
    let names: Vec<String> = list_dir(&pack_dir)
        .into_iter()
        .filter(|name| !name.ends_with(".rev"))
        .collect();
    for name in &names {
        if name.ends_with(".promisor") {
            promisors += &std::fs::read_to_string(pack_dir.join(name)).unwrap();
        }
    }
    let objects = stdout(&git(
        env,
        None,
        repo,
        &["cat-file", "--batch-all-objects", "--batch-check"],
    ));
    format!("{refs}\n{fetch_head}\n{names:?}\n{promisors}\n{objects}")
}

/// Requires `ours` to equal `theirs`, showing only the lines that differ.
fn assert_same(ours: &str, theirs: &str, what: &str) {
    let (a, b): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), theirs.lines().collect());
    let only_ours: Vec<&&str> = a.iter().filter(|l| !b.contains(l)).collect();
    let only_theirs: Vec<&&str> = b.iter().filter(|l| !a.contains(l)).collect();
    assert!(
        ours == theirs,
        "{what}: only with sluice: {only_ours:#?}\nonly with git: {only_theirs:#?}"
    );
}

/// git judges the repository: complete and strict, the work tree clean.
fn assert_sound(env: &Env, repo: &Path) {
    git(env, None, repo, &["fsck", "--strict", "--no-dangling"]);
    assert_eq!(
        stdout(&git(env, None, repo, &["status", "--porcelain"])),
        ""
    );
}

/// A source with more than `fetch.unpackLimit` (100) objects, a branch and a tag.
fn source(env: &Env) -> PathBuf {
    let src = env.init("src", false);
    let contents: Vec<Vec<u8>> = (0..120).map(|i| format!("{i}\n").into_bytes()).collect();
    let names: Vec<String> = (0..120).map(|i| format!("d{}/f{i}", i % 7)).collect();
    let files: Vec<(&str, &str, &[u8])> = (0..120)
        .map(|i| (names[i].as_str(), "100644", &contents[i][..]))
        .collect();
    let mut stream = FastImport::new();
    let first = stream.commit("main", "one", &files);
    stream.tag("v1", first);
    stream.commit("side", "side", &files[..3]);
    env.fast_import(&src, stream.finish());
    git(env, None, &src, &["config", "pack.threads", "1"]);
    git(
        env,
        None,
        &src,
        &["config", "uploadpack.allowFilter", "true"],
    );
    git(env, None, &src, &["checkout", "-q", "main"]);
    src
}

/// A commit on main in `src` that adds `count` files.
fn grow(env: &Env, src: &Path, count: usize, tag: &str) {
    for i in 0..count {
        std::fs::write(src.join(format!("{tag}-{i}")), format!("{tag} {i}\n")).unwrap();
    }
    git(env, None, src, &["add", "."]);
    git(env, None, src, &["commit", "-q", "-m", tag]);
}

#[test]
fn git_clones_and_fetches_with_sluice_as_its_index_pack() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let exec = stand_in(&env);
        let src = source(&env);
        let url = format!("file://{}", src.display());
        for (name, exec) in [("plain", None), ("sluice", Some(&*exec))] {
            git(&env, exec, env.path(), &["clone", "-q", &url, name]);
        }
        let (plain, ours) = (env.path().join("plain"), env.path().join("sluice"));
        // Above fetch.unpackLimit a pack is kept (index-pack); below it, unpack-objects.
        for (count, tag) in [(150, "big"), (2, "small")] {
            grow(&env, &src, count, tag);
            git(&env, None, &plain, &["fetch", "-q", "origin"]);
            git(&env, Some(&exec), &ours, &["fetch", "-q", "origin"]);
            assert_same(&state(&env, &ours), &state(&env, &plain), tag);
        }
        assert_sound(&env, &ours);

        // verify-pack -v runs index-pack --verify-stat; -s, --verify-stat-only.
        for pack in list_dir(&ours.join(".git/objects/pack")) {
            let Some(base) = pack.strip_suffix(".pack") else {
                continue;
            };
            let idx = format!(".git/objects/pack/{base}.idx");
            for flag in ["-v", "-s"] {
                let ours_out = git(&env, Some(&exec), &ours, &["verify-pack", flag, &idx]);
                let git_out = git(&env, None, &ours, &["verify-pack", flag, &idx]);
                assert_eq!(stdout(&ours_out), stdout(&git_out), "verify-pack {flag}");
            }
        }

        // A partial clone: the pack is marked as the promisor remote's, as git marks it.
        for (name, exec) in [("plain-partial", None), ("sluice-partial", Some(&*exec))] {
            let args = ["clone", "-q", "--filter=blob:none", &url, name];
            git(&env, exec, env.path(), &args);
        }
        let (plain, ours) = (
            env.path().join("plain-partial"),
            env.path().join("sluice-partial"),
        );
        assert_same(&state(&env, &ours), &state(&env, &plain), "partial clone");
        assert_sound(&env, &ours);

        // With transfer.fsckObjects, git asks its index-pack for --strict.
        for (name, exec) in [("plain-fsck", None), ("sluice-fsck", Some(&*exec))] {
            let args = ["-c", "transfer.fsckObjects=true", "clone", "-q", &url, name];
            git(&env, exec, env.path(), &args);
        }
        let (plain, ours) = (
            env.path().join("plain-fsck"),
            env.path().join("sluice-fsck"),
        );
        assert_same(&state(&env, &ours), &state(&env, &plain), "fsck clone");

        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        for flag in [
            "--check-self-contained-and-connected",
            "--pack_header=2,",
            "--promisor",
            "--verify-stat",
            "--verify-stat-only",
            "--strict",
        ] {
            assert!(
                calls.contains(flag),
                "{}: no call with {flag}",
                git_bin.display()
            );
        }
    }
}

/// index-pack's flags for git's callers, run by git and by Sluice on the same packs: exit code,
/// the report line, the NUL of `--report-end-of-input`, progress, and the files written (with the
/// contents of `.keep` and `.promisor`).
#[test]
fn index_pack_answers_gits_callers_as_git_does() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let src = source(&env);
        let pack = |revs: &str| {
            let list = git(&env, None, &src, &["rev-list", "--objects", revs]).stdout;
            let out = env.git_with_input(&src, &["pack-objects", "-q", "--stdout"], &list);
            out.stdout
        };
        // A whole history is self-contained; the top commit alone is not.
        let (whole, top) = (pack("main"), pack("main^!"));
        let count = u32::from_be_bytes(whole[8..12].try_into().unwrap());
        let header = format!("--pack_header=2,{count}");
        let runs: [(&[u8], &[&str]); 6] = [
            // -v shows progress although stderr is no terminal, as git's fetch expects.
            (&whole, &["-v"]),
            (&whole, &["--check-self-contained-and-connected"]),
            (
                &top,
                &[
                    "--check-self-contained-and-connected",
                    "--keep=fetch-pack 7 on h",
                ],
            ),
            (&whole, &["--promisor", "--keep"]),
            (&top, &["--promisor=for the lazy", "--report-end-of-input"]),
            (&whole[12..], &[&header, "--fix-thin"]),
        ];
        for (i, (input, flags)) in runs.iter().enumerate() {
            let mut results = Vec::new();
            for sluice in [false, true] {
                let repo = env.init(&format!("r{i}-{sluice}"), true);
                let mut args = vec!["index-pack", "--stdin"];
                args.extend_from_slice(flags);
                let out = crate::util::run_with_input(
                    env.sluice_or_git_command(sluice, &repo, &args),
                    input,
                );
                let pack_dir = repo.join("objects/pack");
                let files: Vec<(String, String)> = list_dir(&pack_dir)
                    .into_iter()
                    .filter(|name| !name.ends_with(".rev"))
                    .map(|name| {
                        let text = match name.ends_with(".keep") || name.ends_with(".promisor") {
                            true => std::fs::read_to_string(pack_dir.join(&name)).unwrap(),
                            false => String::new(),
                        };
                        (name, text)
                    })
                    .collect();
                let nul = out.stderr.contains(&0);
                let shown = stderr(&out).contains("Receiving objects: 100%");
                results.push((out.status.code(), stdout(&out), nul, shown, files));
            }
            assert_eq!(results[1], results[0], "{} {flags:?}", git_bin.display());
        }
    }
}

/// What a shallow fetch leaves, pack names aside (a thin pack completed with its bases is named
/// by its bytes, and the bases appended are Sluice's own): refs, `FETCH_HEAD`, the shallow
/// file and every object.
fn shallow_state(env: &Env, repo: &Path) -> String {
    let refs = stdout(&git(env, None, repo, &["for-each-ref"]));
    let fetch_head = std::fs::read_to_string(repo.join(".git/FETCH_HEAD")).unwrap_or_default();
    let shallow = std::fs::read_to_string(repo.join(".git/shallow")).unwrap_or_default();
    let objects = stdout(&git(
        env,
        None,
        repo,
        &["cat-file", "--batch-all-objects", "--batch-check"],
    ));
    format!("{refs}\n{fetch_head}\n{shallow}\n{objects}")
}

/// Shallow clones and fetches: git runs `git --shallow-file <file> index-pack …` for them
/// (`--depth`, `--shallow-since`, `--shallow-exclude`, `--deepen`, `--unshallow`, a fetch into a
/// shallow repository), and Sluice takes the global option as git does: the same refs, shallow
/// file, objects and `fsck` as with git's own index-pack.
#[test]
fn shallow_fetches_reach_sluice_with_their_shallow_file() {
    for git_bin in gits() {
        shallow_series(&git_bin, &[], false);
    }
}

/// The same series with settings given to git on its command line (`git -c …`), which reach
/// its children through `GIT_CONFIG_PARAMETERS`: objects checked (`fetch.fsckObjects`, passed
/// to index-pack as `--strict`), a version 1 `.idx` (`pack.indexVersion`, read by index-pack
/// itself) and both protocol versions (`GIT_PROTOCOL` for upload-pack), with Sluice as the
/// index-pack and the upload-pack.
#[test]
fn git_settings_reach_sluices_index_pack_and_upload_pack() {
    let settings: [&[&str]; 2] = [
        &[
            "-c",
            "fetch.fsckObjects=true",
            "-c",
            "pack.indexVersion=1",
            "-c",
            "protocol.version=0",
        ],
        &["-c", "protocol.version=2", "-c", "fetch.fsckObjects=false"],
    ];
    for git_bin in gits() {
        for settings in settings {
            shallow_series(&git_bin, settings, true);
        }
    }
}

/// The `.idx` versions of the pack directory, sorted (names differ: a thin pack completed with
/// its bases is named by its bytes).
fn idx_versions(repo: &Path) -> Vec<&'static str> {
    let pack_dir = repo.join(".git/objects/pack");
    let mut versions: Vec<&str> = (list_dir(&pack_dir).iter())
        .filter(|name| name.ends_with(".idx"))
        .map(|name| {
            match std::fs::read(pack_dir.join(name))
                .unwrap()
                .starts_with(b"\xfftOc")
            {
                true => "v2",
                false => "v1",
            }
        })
        .collect();
    versions.sort_unstable();
    versions
}

/// Clones and fetches of shallow histories, git's alone in one repository and with Sluice's
/// stand-ins in its twin, each git command run with `settings` before its name.
fn shallow_series(git_bin: &Path, settings: &[&str], upload_pack: bool) {
    let env = Env::with_git(git_bin.to_owned());
    let exec = stand_in_with(&env, upload_pack);
    let src = source(&env);
    for (count, tag) in [(110, "two"), (110, "three"), (110, "four")] {
        grow(&env, &src, count, tag);
    }
    let url = format!("file://{}", src.display());
    let with = |args: &[&str]| -> Vec<String> {
        (settings.iter().chain(args))
            .map(|a| a.to_string())
            .collect()
    };
    let run = |exec: Option<&Path>, cwd: &Path, args: &[&str]| {
        let args = with(args);
        git(
            &env,
            exec,
            cwd,
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        );
    };
    let check = |ours: &Path, plain: &Path, what: &str| {
        let what = format!("{what} with {git_bin:?} and {settings:?}");
        assert_same(
            &shallow_state(&env, ours),
            &shallow_state(&env, plain),
            &what,
        );
        assert_eq!(idx_versions(ours), idx_versions(plain), "{what}");
        git(&env, None, ours, &["fsck", "--strict", "--no-dangling"]);
    };
    for (name, exec) in [("plain", None), ("sluice", Some(&*exec))] {
        let args = [
            "clone",
            "-q",
            "--depth",
            "2",
            "--no-single-branch",
            &url,
            name,
        ];
        run(exec, env.path(), &args);
    }
    let (plain, ours) = (env.path().join("plain"), env.path().join("sluice"));
    let steps: [&[&str]; 4] = [
        &["fetch", "-q", "--deepen", "1", "origin"],
        &["fetch", "-q", "--shallow-exclude", "side", "origin", "main"],
        &["fetch", "-q", "--depth", "1", "origin"],
        &["fetch", "-q", "--unshallow", "origin"],
    ];
    for (i, step) in steps.iter().enumerate() {
        grow(&env, &src, 110, &format!("grown{i}"));
        run(None, &plain, step);
        run(Some(&exec), &ours, step);
        check(&ours, &plain, &format!("{step:?}"));
    }
    // A clone cut by date, through the same stand-ins.
    for (name, exec) in [("since-plain", None), ("since-sluice", Some(&*exec))] {
        run(
            exec,
            env.path(),
            &["clone", "-q", "--shallow-since", "2001-01-01", &url, name],
        );
    }
    let since = |name: &str| env.path().join(name);
    check(&since("since-sluice"), &since("since-plain"), "since");
    let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
    assert!(calls.contains("--shallow-file"), "{calls}");
    assert_eq!(calls.contains("upload-pack"), upload_pack, "{calls}");
}

/// git's fetch and receive-pack store a pack of fewer than `fetch.unpackLimit` /
/// `receive.unpackLimit` objects with `git unpack-objects -q --pack_header=<v>,<n>`: with
/// Sluice as its unpack-objects, the same refs and the same objects, all loose, as with git's
/// own, with and without the objects checked.
#[test]
fn git_unpacks_small_packs_with_sluices_unpack_objects() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let exec = crate::util::stand_in(&env, &["unpack-objects"]);
        let src = source(&env);
        let url = format!("file://{}", src.display());
        for name in ["plain", "sluice"] {
            git(&env, None, env.path(), &["clone", "-q", &url, name]);
            git(
                &env,
                None,
                env.path(),
                &["init", "-q", "--bare", &format!("{name}.git")],
            );
        }
        grow(&env, &src, 5, "small");
        let checked: [&[&str]; 2] = [
            &[],
            &[
                "-c",
                "fetch.fsckObjects=true",
                "-c",
                "receive.fsckObjects=true",
            ],
        ];
        for settings in checked {
            grow(&env, &src, 3, &format!("more{}", settings.len()));
            let mut seen = Vec::new();
            for (name, exec) in [("plain", None), ("sluice", Some(&*exec))] {
                let repo = env.path().join(name);
                let with = |args: &[&str]| -> Vec<String> {
                    (settings.iter().chain(args))
                        .map(|a| a.to_string())
                        .collect()
                };
                let fetch = with(&["fetch", "-q", "origin"]);
                git(
                    &env,
                    exec,
                    &repo,
                    &fetch.iter().map(String::as_str).collect::<Vec<_>>(),
                );
                let bare = env.path().join(format!("{name}.git"));
                let push = with(&[
                    "push",
                    "-q",
                    bare.to_str().unwrap(),
                    "origin/main:refs/heads/main",
                ]);
                git(
                    &env,
                    exec,
                    &repo,
                    &push.iter().map(String::as_str).collect::<Vec<_>>(),
                );
                let mut state = Vec::new();
                for repo in [&repo, &bare] {
                    git(&env, None, repo, &["fsck", "--strict", "--no-dangling"]);
                    state.push(shallow_state(&env, repo));
                    state.push(stdout(&git(&env, None, repo, &["count-objects"])));
                }
                seen.push(state);
            }
            assert_eq!(seen[1], seen[0], "{settings:?} with {git_bin:?}");
        }
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(calls.matches("--pack_header=").count() >= 2, "{calls}");
    }
}
