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
    let refs = stdout(&env.git_with_input(&git_dir, &["for-each-ref"], b""));
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
            let args: Vec<&str> = given.iter().copied().chain(["fetch"]).collect();
            let case = Case {
                what: &format!("{given:?} {vars:?}"),
                inside: true,
                args: &args,
                vars,
                tree: false,
            };
            run_case(&env, &repos, &case, &git_bin);
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
            let args: Vec<&str> = given.iter().copied().chain(["fetch"]).collect();
            let case = Case {
                what: &format!("{given:?} {vars:?}"),
                inside: true,
                args: &args,
                vars,
                tree: false,
            };
            run_case(&env, &repos, &case, &git_bin);
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
