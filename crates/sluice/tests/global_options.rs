//! git's global options and environment, as git takes them: twins where git and Sluice run the
//! same command with the same options before its name, in twin repositories, and give the same
//! exit code, messages, refs and work tree; and the environment each hands the upload-pack it
//! starts.

use crate::util::{gits, list_dir, stderr, stdout, Env};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A source with `main`, `side` (a file of its own) and `gone` (deleted before the fetches,
/// for `fetch.prune`), and a clone of it for each tool, made by git.
fn twins(env: &Env) -> (PathBuf, [PathBuf; 2]) {
    let src = env.init("src", false);
    env.git(&src, &["commit", "-q", "--allow-empty", "-m", "one"]);
    env.git(&src, &["branch", "-M", "main"]);
    env.git(&src, &["branch", "gone"]);
    env.git(&src, &["checkout", "-q", "-b", "side"]);
    std::fs::write(src.join("side.txt"), "side\n").unwrap();
    env.git(&src, &["add", "side.txt"]);
    env.git(&src, &["commit", "-q", "-m", "side"]);
    env.git(&src, &["checkout", "-q", "main"]);
    let clone = |name: &str| {
        let path = env.path().join(name);
        let args = ["clone", "-q", "--no-checkout", src.to_str().unwrap(), name];
        env.git(env.path(), &args);
        path
    };
    let repos = [clone("twin1"), clone("twin2")];
    env.git(&src, &["branch", "-D", "gone"]);
    env.git(&src, &["commit", "-q", "--allow-empty", "-m", "two"]);
    (src, repos)
}

/// What a repository holds that the commands here change: refs, `HEAD` and the work tree's files.
fn state(env: &Env, repo: &Path, work_tree: &Path) -> String {
    let git_dir = match repo.join(".git").is_dir() {
        true => repo.join(".git"),
        false => repo.to_owned(),
    };
    // Names and ids only: the objects may live elsewhere (GIT_OBJECT_DIRECTORY).
    let format = ["for-each-ref", "--format=%(objectname) %(refname)"];
    let refs = stdout(&env.git_with_input(&git_dir, &format, b""));
    let head = std::fs::read_to_string(git_dir.join("HEAD")).unwrap();
    format!("{refs}{head}{:?}", list_dir(work_tree))
}

/// Runs git (`sluice` false) or Sluice with `args`, in `cwd`, with `vars` set.
fn run(env: &Env, sluice: bool, cwd: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut command = env.sluice_or_git_command(sluice, cwd, args);
    command.envs(vars.iter().copied());
    crate::util::run_with_input(command, b"")
}

/// Options before the command's name, and variables: one way of giving settings.
type Given<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);

/// One command, run by each tool in its twin: `args` and `vars` may name the twin's directory
/// as `{repo}` (its path relative to the test's directory) and its work tree as `{tree}`.
struct Case<'a> {
    what: &'a str,
    /// Run in the twin itself, else in the test's directory.
    inside: bool,
    args: &'a [&'a str],
    vars: &'a [(&'a str, &'a str)],
    /// A separate work tree, `<repo>-tree`, made before.
    tree: bool,
}

fn run_case(env: &Env, repos: &[PathBuf; 2], case: &Case<'_>, git_bin: &Path) {
    let mut said = Vec::new();
    for (sluice, repo) in [(false, &repos[0]), (true, &repos[1])] {
        let name = repo.file_name().unwrap().to_str().unwrap();
        let tree = env
            .path()
            .join(format!("{name}-{}", case.what.replace(' ', "-")));
        if case.tree {
            std::fs::create_dir_all(&tree).unwrap();
        }
        let fill = |text: &str| {
            text.replace("{repo}", name)
                .replace("{tree}", tree.file_name().unwrap().to_str().unwrap())
        };
        let args: Vec<String> = case.args.iter().map(|a| fill(a)).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let vars: Vec<(String, String)> = (case.vars.iter())
            .map(|(k, v)| (k.to_string(), fill(v)))
            .collect();
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (&**k, &**v)).collect();
        let cwd = if case.inside {
            repo.clone()
        } else {
            env.path().to_owned()
        };
        let out = run(env, sluice, &cwd, &args, &vars);
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(name, "{repo}");
        let work_tree = if case.tree {
            tree.clone()
        } else {
            repo.clone()
        };
        said.push((
            out.status.code(),
            text(&out.stdout),
            text(&out.stderr),
            state(env, repo, &work_tree).replace(name, "{repo}"),
        ));
    }
    assert_eq!(said[1], said[0], "{} with {git_bin:?}", case.what);
}

#[test]
fn global_options_before_the_command_as_git_takes_them() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let (_src, repos) = twins(&env);
        let cases = [
            Case {
                what: "-C twice",
                inside: false,
                args: &["-C", "{repo}", "-C", "..", "-C", "{repo}", "fetch", "-q"],
                vars: &[],
                tree: false,
            },
            Case {
                what: "--git-dir and --work-tree",
                inside: false,
                args: &[
                    "--git-dir={repo}/.git",
                    "--work-tree",
                    "{tree}",
                    "checkout",
                    "-q",
                    "side",
                ],
                vars: &[],
                tree: true,
            },
            Case {
                what: "GIT_DIR alone: the work tree is where the command runs",
                inside: true,
                args: &["checkout", "-q", "main"],
                vars: &[("GIT_DIR", ".git")],
                tree: false,
            },
            Case {
                what: "GIT_DIR and GIT_WORK_TREE",
                inside: false,
                args: &["checkout", "-q", "side"],
                vars: &[("GIT_DIR", "{repo}/.git"), ("GIT_WORK_TREE", "{tree}")],
                tree: true,
            },
            Case {
                what: "--bare in a repository with a work tree",
                inside: true,
                args: &["--bare", "checkout", "-q", "main"],
                vars: &[],
                tree: false,
            },
            Case {
                what: "GIT_DIR that is no repository",
                inside: true,
                args: &["fetch", "-q"],
                vars: &[("GIT_DIR", "nowhere")],
                tree: false,
            },
            Case {
                what: "every flag git takes before the command",
                inside: true,
                args: &[
                    "-p",
                    "-P",
                    "--no-replace-objects",
                    "--no-optional-locks",
                    "--literal-pathspecs",
                    "--glob-pathspecs",
                    "--noglob-pathspecs",
                    "--icase-pathspecs",
                    "--namespace=ns",
                    "fetch",
                    "-q",
                ],
                vars: &[],
                tree: false,
            },
        ];
        for case in &cases {
            run_case(&env, &repos, case, &git_bin);
        }
    }
}

/// Objects elsewhere than `.git/objects`: in the directory `GIT_OBJECT_DIRECTORY` names, or
/// borrowed through `GIT_ALTERNATE_OBJECT_DIRECTORIES`, as a push's hooks see a quarantine.
#[test]
fn objects_where_the_environment_says_as_git_finds_them() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let (_src, repos) = twins(&env);
        for repo in &repos {
            let objects = repo.join(".git/objects");
            let name = repo.file_name().unwrap().to_str().unwrap();
            std::fs::rename(&objects, env.path().join(format!("{name}-objects"))).unwrap();
            std::fs::create_dir(&objects).unwrap();
        }
        let cases = [
            Case {
                what: "GIT_OBJECT_DIRECTORY",
                inside: true,
                args: &["checkout", "-q", "side"],
                vars: &[("GIT_OBJECT_DIRECTORY", "../{repo}-objects")],
                tree: false,
            },
            Case {
                what: "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                inside: true,
                args: &["checkout", "-q", "main"],
                vars: &[("GIT_ALTERNATE_OBJECT_DIRECTORIES", "../{repo}-objects")],
                tree: false,
            },
        ];
        for case in &cases {
            run_case(&env, &repos, case, &git_bin);
        }
    }
}

/// `fetch` in each twin with the options and variables `given`.
fn fetch_given(env: &Env, repos: &[PathBuf; 2], (given, vars): Given<'_>, git_bin: &Path) {
    let args: Vec<&str> = given.iter().copied().chain(["fetch"]).collect();
    let case = Case {
        what: &format!("{given:?} {vars:?}"),
        inside: true,
        args: &args,
        vars,
        tree: false,
    };
    run_case(env, repos, &case, git_bin);
}

/// Settings on the command line (`-c`, `--config-env`) and in the environment
/// (`GIT_CONFIG_PARAMETERS` in both of git's forms, `GIT_CONFIG_COUNT`), taken and refused as
/// git takes and refuses them; a fetch in a push's quarantine refused as git's.
#[test]
fn settings_given_outside_the_files_as_git_takes_them() {
    for git_bin in gits() {
        let prunes: [Given; 5] = [
            (&["-c", "fetch.prune=true"], &[]),
            (&["--config-env=fetch.prune=PRUNE"], &[("PRUNE", "true")]),
            (&[], &[("GIT_CONFIG_PARAMETERS", "'fetch.prune'='true'")]),
            (
                &[],
                &[("GIT_CONFIG_PARAMETERS", "'fetch.prune=true' 'x.y'=")],
            ),
            (
                &[],
                &[
                    ("GIT_CONFIG_COUNT", "1"),
                    ("GIT_CONFIG_KEY_0", "fetch.prune"),
                    ("GIT_CONFIG_VALUE_0", "true"),
                ],
            ),
        ];
        for (given, vars) in prunes {
            let env = Env::with_git(git_bin.clone());
            let (_src, repos) = twins(&env);
            fetch_given(&env, &repos, (given, vars), &git_bin);
            let branches = env.git(&repos[1], &["branch", "-r"]);
            assert!(!String::from_utf8_lossy(&branches).contains("gone"));
        }
        let refused: [Given; 6] = [
            (&["-c", "nosection=1"], &[]),
            (&["--config-env=a.b=UNSET_VARIABLE"], &[]),
            (&["--config-env=a.b"], &[]),
            (&[], &[("GIT_CONFIG_COUNT", "x")]),
            (
                &[],
                &[("GIT_CONFIG_COUNT", "1"), ("GIT_CONFIG_KEY_0", "a.b")],
            ),
            (&[], &[("GIT_QUARANTINE_PATH", "/nowhere")]),
        ];
        let env = Env::with_git(git_bin.clone());
        let (_src, repos) = twins(&env);
        for (given, vars) in refused {
            fetch_given(&env, &repos, (given, vars), &git_bin);
        }
    }
}

/// What the options become for the programs a command starts: the upload-pack of a fetch sees
/// the same `GIT_*` variables under git and under Sluice (those naming this repository left
/// out, as git leaves them out), and `--exec-path` alone prints a directory.
#[test]
fn the_programs_started_see_the_environment_git_gives_them() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let (_src, repos) = twins(&env);
        let dump = env.path().join("upload-pack.sh");
        crate::util::script(
            &dump,
            "#!/bin/sh\nenv | grep '^GIT_' | grep -v '^GIT_EXEC_PATH=\\|^GIT_PROTOCOL=' \
             | sort > \"$DUMP\"\nexec git-upload-pack \"$@\"\n",
        );
        let mut seen = Vec::new();
        for (sluice, repo) in [(false, &repos[0]), (true, &repos[1])] {
            let file = env.path().join(format!("env-{sluice}"));
            let upload_pack = format!("--upload-pack={}", dump.display());
            let args = [
                "-c",
                "x.y=1",
                "--config-env=a.b=VALUE",
                "--namespace=ns",
                "--no-replace-objects",
                "--no-optional-locks",
                "--literal-pathspecs",
                "--glob-pathspecs",
                "--noglob-pathspecs",
                "--icase-pathspecs",
                "-p",
                "-P",
                "fetch",
                "-q",
                &upload_pack,
                "origin",
            ];
            let vars = [("DUMP", file.to_str().unwrap()), ("VALUE", "v")];
            let out = run(&env, sluice, repo, &args, &vars);
            assert!(out.status.success(), "{}", stderr(&out));
            seen.push(std::fs::read_to_string(&file).unwrap());
        }
        assert_eq!(seen[1], seen[0], "with {git_bin:?}");
        assert!(seen[1].contains("GIT_NAMESPACE=ns"), "{}", seen[1]);
        let out = run(&env, true, env.path(), &["--exec-path"], &[]);
        assert!(out.status.success());
        assert!(Path::new(stdout(&out).trim()).is_dir(), "{}", stdout(&out));
    }
}

/// `GIT_NAMESPACE` where Sluice serves: an upload-pack in a namespace shows only the refs
/// under it, named without the prefix, and the namespace's own `HEAD`; git's and Sluice's give
/// the same advertisement and the same clone, in both protocol versions.
#[test]
fn an_upload_pack_in_a_namespace_serves_its_refs_only() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let (src, _) = twins(&env);
        let head = stdout(&env.git_with_input(&src, &["rev-parse", "side"], b""));
        let ns = |name: &str| format!("refs/namespaces/ns/{name}");
        env.git(&src, &["update-ref", &ns("refs/heads/inside"), head.trim()]);
        env.git(&src, &["update-ref", &ns("refs/tags/t"), head.trim()]);
        env.git(
            &src,
            &["symbolic-ref", &ns("HEAD"), &ns("refs/heads/inside")],
        );
        let url = format!("file://{}", src.display());
        let sluice = env!("CARGO_BIN_EXE_sluice");
        for version in ["0", "2"] {
            let protocol = format!("protocol.version={version}");
            let mut seen = Vec::new();
            for (name, program) in [
                ("by-git", "git-upload-pack".to_owned()),
                ("by-sluice", format!("{sluice} upload-pack")),
            ] {
                let upload_pack = format!("--upload-pack=env GIT_NAMESPACE=ns {program}");
                let listed = env.git(
                    env.path(),
                    &["-c", &protocol, "ls-remote", "--symref", &upload_pack, &url],
                );
                let dir = format!("{name}-{version}");
                env.git(
                    env.path(),
                    &["-c", &protocol, "clone", "-q", &upload_pack, &url, &dir],
                );
                let cloned = env.git(&env.path().join(&dir), &["for-each-ref"]);
                let head =
                    std::fs::read_to_string(env.path().join(&dir).join(".git/HEAD")).unwrap();
                seen.push((
                    String::from_utf8_lossy(&listed).into_owned(),
                    String::from_utf8_lossy(&cloned).into_owned(),
                    head,
                ));
            }
            assert_eq!(seen[1], seen[0], "protocol {version} with {git_bin:?}");
            assert!(
                seen[1].0.contains("refs/heads/inside") && !seen[1].0.contains("refs/heads/side"),
                "{}",
                seen[1].0
            );
        }
    }
}

/// The reflog files under `logs`, a line each (none when there is no such directory).
fn reflog_files(logs: &std::path::Path) -> String {
    let mut found = Vec::new();
    let mut dirs = vec![logs.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.path().is_dir() {
                true => dirs.push(entry.path()),
                false => found.push(
                    entry
                        .path()
                        .strip_prefix(logs)
                        .unwrap()
                        .display()
                        .to_string(),
                ),
            }
        }
    }
    found.sort();
    found.iter().map(|f| format!("log {f}\n")).collect()
}

/// `GIT_NAMESPACE` where Sluice receives: a receive-pack in a namespace shows the refs under
/// it by their short names and the others' ids as `.have`, and creates, moves and deletes refs
/// under it only; git's and Sluice's leave the same refs and reflogs (with every branch update
/// logged) and tell the client the same.
#[test]
fn a_receive_pack_in_a_namespace_moves_its_refs_only() {
    for git_bin in gits() {
        let env = Env::with_git(git_bin.clone());
        let (src, [client, _]) = twins(&env);
        env.git(&client, &["checkout", "-q", "main"]);
        env.git(&client, &["commit", "-q", "--allow-empty", "-m", "mine"]);
        let sluice = env!("CARGO_BIN_EXE_sluice");
        let mut seen = Vec::new();
        for (name, program) in [
            ("server-git", "git-receive-pack".to_owned()),
            ("server-sluice", format!("{sluice} receive-pack")),
        ] {
            let server = env.path().join(name);
            let source = src.to_str().unwrap();
            env.git(env.path(), &["clone", "-q", "--mirror", source, name]);
            let side = stdout(&env.git_with_input(&server, &["rev-parse", "side"], b""));
            env.git(
                &server,
                &[
                    "update-ref",
                    "refs/namespaces/ns/refs/heads/inside",
                    side.trim(),
                ],
            );
            env.git(&server, &["config", "core.logAllRefUpdates", "true"]);
            let receive_pack = format!("--receive-pack=env GIT_NAMESPACE=ns {program}");
            let url = server.to_str().unwrap();
            let pushes: [&[&str]; 3] = [
                &["main:refs/heads/fromclient"],
                &["+main:refs/heads/inside"],
                &[":refs/heads/inside"],
            ];
            for refspecs in pushes {
                let mut args = vec!["push", "--porcelain", &receive_pack, url];
                args.extend_from_slice(refspecs);
                let out = env.git_with_input(&client, &args, b"");
                let mut refs = env.git(&server, &["for-each-ref"]);
                refs.extend(reflog_files(&server.join("logs")).into_bytes());
                let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(url, "{server}");
                seen.push((
                    out.status.code(),
                    text(&out.stdout),
                    text(&out.stderr),
                    text(&refs),
                ));
            }
        }
        let (by_git, by_sluice) = seen.split_at(3);
        assert_eq!(by_sluice, by_git, "with {git_bin:?}");
        assert!(by_sluice[0]
            .3
            .contains("refs/namespaces/ns/refs/heads/fromclient"));
        assert!(!by_sluice[0].3.contains("\trefs/heads/fromclient"));
    }
}
