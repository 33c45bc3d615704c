//! clone's and fetch's options that shape where things go and what is said on the wire, run by
//! git and by Sluice side by side: `--separate-git-dir`, `GIT_WORK_TREE`, `--ref-format`, a
//! source whose HEAD is detached (under `--bare` and `--mirror` too), scp-style `~user` paths
//! and `-4`/`-6` as ssh gets them, `--refmap`, `-o`/`--server-option` and
//! `--negotiation-tip` as the server reads them.

use crate::util::{gits, list_dir, stderr, Env};
use std::path::{Path, PathBuf};
use std::process::Output;

fn run(env: &Env, sluice: bool, cwd: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut command = env.sluice_or_git_command(sluice, cwd, args);
    for (key, value) in vars {
        command.env(key, value);
    }
    crate::util::run_with_input(command, b"")
}

/// A repository's state as git reports it: HEAD, refs, config and status.
fn state(env: &Env, git_dir: &Path, work_tree: Option<&Path>) -> String {
    let git_dir_arg = format!("--git-dir={}", git_dir.display());
    let mut args = vec![git_dir_arg.as_str()];
    let work_tree_arg = work_tree.map(|w| format!("--work-tree={}", w.display()));
    args.extend(work_tree_arg.as_deref());
    let git = |more: &[&str]| {
        let mut all = args.clone();
        all.extend_from_slice(more);
        String::from_utf8(env.git(env.path(), &all)).unwrap()
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).unwrap();
    let status = match work_tree {
        Some(_) => git(&["status", "--porcelain"]),
        None => String::new(),
    };
    let config = git(&["config", "--local", "--list"]);
    format!("{head}{}\n{config}\n{status}", git(&["for-each-ref"]))
}

fn source(env: &Env) -> PathBuf {
    let src = env.init("src", false);
    env.git(&src, &["checkout", "-q", "-b", "main"]);
    for (file, text) in [("a", "one\n"), ("a", "two\n")] {
        std::fs::write(src.join(file), text).unwrap();
        env.git(&src, &["add", file]);
        env.git(&src, &["commit", "-q", "-m", text.trim()]);
    }
    env.git(&src, &["branch", "side", "HEAD~1"]);
    env.git(&src, &["tag", "t1", "HEAD~1"]);
    src
}

#[test]
fn clone_lays_out_repositories_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        let url = format!("file://{}", src.display());
        // HEAD detached at a branch's commit (guessed as that branch), at the default
        // branch's, and at a commit no branch has (detached in the clone too).
        for (n, detach_at) in ["side", "main", "t1"].iter().enumerate() {
            env.git(&src, &["checkout", "-q", "--detach", detach_at]);
            if *detach_at == "t1" {
                env.git(&src, &["commit", "-q", "--allow-empty", "-m", "loose"]);
            }
            // Options given twice are taken as git takes them (the last one counts).
            for (m, mode) in [&[][..], &["--bare", "--bare"], &["--mirror"]]
                .iter()
                .enumerate()
            {
                let mut states = Vec::new();
                for sluice in [false, true] {
                    let dir = env.path().join(format!("d{n}-{m}-{sluice}"));
                    let mut args = vec!["-c", "init.defaultBranch=main", "clone", "-q", "-q"];
                    args.extend_from_slice(mode);
                    args.extend([url.as_str(), dir.to_str().unwrap()]);
                    let out = run(&env, sluice, env.path(), &args, &[]);
                    assert!(out.status.success(), "{}", stderr(&out));
                    let (git_dir, work_tree) = match mode.is_empty() {
                        true => (dir.join(".git"), Some(dir.as_path())),
                        false => (dir.clone(), None),
                    };
                    states.push(state(&env, &git_dir, work_tree));
                }
                assert_eq!(
                    states[1],
                    states[0],
                    "{} HEAD at {detach_at} {mode:?}",
                    git.display()
                );
            }
        }
        env.git(&src, &["checkout", "-q", "main"]);

        // --separate-git-dir, GIT_WORK_TREE.
        let mut states = Vec::new();
        for sluice in [false, true] {
            let (dir, sep) = (
                env.path().join(format!("s-{sluice}")),
                env.path().join(format!("g-{sluice}")),
            );
            let sep_arg = format!("--separate-git-dir={}", sep.display());
            let out = run(
                &env,
                sluice,
                env.path(),
                &["clone", "-q", &sep_arg, &url, dir.to_str().unwrap()],
                &[],
            );
            assert!(out.status.success(), "{}", stderr(&out));
            let link = std::fs::read_to_string(dir.join(".git"))
                .unwrap()
                .replace(&format!("-{sluice}"), "");
            let work = env.path().join(format!("w-{sluice}"));
            let repo = env.path().join(format!("r-{sluice}"));
            let vars = [("GIT_WORK_TREE", work.to_str().unwrap())];
            let out = run(
                &env,
                sluice,
                env.path(),
                &["clone", "-q", &url, repo.to_str().unwrap()],
                &vars,
            );
            assert!(out.status.success(), "{}", stderr(&out));
            let worktree_state = state(&env, &repo, Some(&work)).replace(&format!("-{sluice}"), "");
            states.push((
                link,
                state(&env, &sep, Some(&dir)),
                worktree_state,
                list_dir(&repo).contains(&".git".to_owned()),
            ));
        }
        assert_eq!(states[1], states[0], "{} layouts", git.display());

        // Refusals: --bare with --separate-git-dir; a separate directory with files in it.
        std::fs::create_dir_all(env.path().join("full")).unwrap();
        std::fs::write(env.path().join("full/x"), "x").unwrap();
        for args in [
            &[
                "clone",
                "--bare",
                "--separate-git-dir=sepx",
                url.as_str(),
                "bx",
            ][..],
            &["clone", "--separate-git-dir=full", url.as_str(), "fx"],
        ] {
            let theirs = run(&env, false, env.path(), args, &[]);
            let ours = run(&env, true, env.path(), args, &[]);
            assert_eq!(
                (ours.status.code(), stderr(&ours)),
                (theirs.status.code(), stderr(&theirs)),
                "{args:?}"
            );
            for left in ["bx", "fx", "sepx"] {
                assert!(!env.path().join(left).exists(), "{args:?} left {left}");
            }
        }
    }
}

/// A program that stands in for ssh (or upload-pack): it logs its arguments (and, for
/// upload-pack, what it is sent) to `log`, then runs `then` with them (or fails).
fn logger(env: &Env, name: &str, log: &Path, then: &str) -> PathBuf {
    let path = env.path().join(name);
    let text = format!("#!/bin/sh\necho \"$*\" >> '{}'\n{then}\n", log.display());
    crate::util::script(&path, &text);
    path
}

/// What ssh is asked to run: scp-style `~user` paths sent as `~user/...`, ports, `-4`/`-6`,
/// as git's OpenSSH command lines; the "simple" variant refuses `-4` as git's does.
#[test]
fn ssh_gets_gits_command_lines() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let log = env.path().join("ssh.log");
        let ssh = logger(&env, "fake-ssh", &log, "exit 1");
        let ssh = ssh.to_str().unwrap();
        for url in [
            "host:~user/repo",
            "host:~/repo",
            "ssh://u@host:2222/~/x",
            "host:rel/repo",
        ] {
            for flag in ["-4", "-6", "-q"] {
                for variant in ["ssh", "simple"] {
                    let mut said = Vec::new();
                    for sluice in [false, true] {
                        let _ = std::fs::remove_file(&log);
                        let vars = [("GIT_SSH_COMMAND", ssh), ("GIT_SSH_VARIANT", variant)];
                        let out = run(&env, sluice, env.path(), &["clone", flag, url, "x"], &vars);
                        let logged = std::fs::read_to_string(&log).unwrap_or_default();
                        let refused = stderr(&out).contains("does not support");
                        said.push((out.status.code(), logged, refused));
                    }
                    assert_eq!(said[1], said[0], "{} {url} {flag} {variant}", git.display());
                }
            }
        }
    }
}

/// An `--upload-pack=` that runs `git`'s upload-pack and logs what it is sent to the log
/// returned.
fn logging_upload_pack(env: &Env, git: &Path) -> (PathBuf, String) {
    let log = env.path().join("requests");
    let command = format!(
        "tee -a '{}' | {} upload-pack \"$@\"",
        log.display(),
        git.display()
    );
    let upload_pack = logger(env, "upload-pack", &env.path().join("calls"), &command);
    (log, format!("--upload-pack={}", upload_pack.display()))
}

/// The pkt-lines of the upload-pack requests logged in `log` that start with `prefix`
/// (without their newline, which git leaves out of some), sorted.
fn sent(log: &Path, prefix: &str) -> Vec<String> {
    let data = std::fs::read(log).unwrap_or_default();
    let mut lines = Vec::new();
    let mut at = 0;
    while at + 4 <= data.len() {
        let hex = std::str::from_utf8(&data[at..at + 4]).unwrap_or("0000");
        let len = usize::from_str_radix(hex, 16).unwrap_or(0);
        if len < 4 {
            at += 4;
            continue;
        }
        let line = String::from_utf8_lossy(&data[at + 4..(at + len).min(data.len())]);
        if line.starts_with(prefix) {
            lines.push(line.trim_end_matches('\n').to_owned());
        }
        at += len;
    }
    lines.sort();
    lines
}

/// `--refmap`, `-o`/`--server-option` and `--negotiation-tip`, in twin clones: same refs and
/// FETCH_HEAD, and the server is sent the same options and the same haves.
#[test]
fn fetch_options_reach_the_server_as_gits_do() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        let url = format!("file://{}", src.display());
        let (log, upload_pack) = logging_upload_pack(&env, &git);
        let (theirs, ours) = (env.path().join("theirs"), env.path().join("ours"));
        for repo in [&theirs, &ours] {
            env.git(env.path(), &["clone", "-q", &url, repo.to_str().unwrap()]);
            env.git(repo, &["branch", "unrelated", "HEAD~1"]);
        }
        std::fs::write(src.join("b"), "new\n").unwrap();
        env.git(&src, &["add", "b"]);
        env.git(&src, &["commit", "-q", "-m", "new"]);
        env.git(&src, &["branch", "-f", "side", "HEAD"]);
        let steps: [&[&str]; 5] = [
            &["--refmap=", "origin", "main"],
            &[
                "--refmap=+refs/heads/*:refs/remotes/mapped/*",
                "origin",
                "side",
            ],
            &["-o", "first", "--server-option=second", "origin"],
            &[
                "--negotiation-tip=refs/heads/unrelated",
                "origin",
                "main:refs/heads/n1",
            ],
            &[
                "--negotiation-tip=unrelated",
                "--negotiation-tip=refs/tags/*",
                "origin",
                "main:refs/heads/n2",
            ],
        ];
        for (n, args) in steps.iter().enumerate() {
            // Something new each time, so that there is something to negotiate.
            std::fs::write(src.join("b"), format!("{n}\n")).unwrap();
            env.git(&src, &["commit", "-q", "-a", "-m", "more"]);
            let mut outcomes = Vec::new();
            for (sluice, repo) in [(false, &theirs), (true, &ours)] {
                let _ = std::fs::remove_file(&log);
                let mut fetch = vec!["-c", "protocol.version=2", "fetch", "-q", &upload_pack];
                fetch.extend_from_slice(args);
                let out = run(&env, sluice, repo, &fetch, &[]);
                let refs = String::from_utf8(env.git(repo, &["for-each-ref"])).unwrap();
                let fetch_head = std::fs::read_to_string(repo.join(".git/FETCH_HEAD")).unwrap();
                // Haves are compared where the tips choose them: how many a negotiation sends
                // otherwise is the negotiator's business.
                let haves = match args[0].starts_with("--negotiation-tip") {
                    true => sent(&log, "have "),
                    false => Vec::new(),
                };
                let wire = (sent(&log, "server-option="), haves);
                outcomes.push((out.status.code(), refs, fetch_head, wire));
            }
            assert_eq!(outcomes[1], outcomes[0], "{} fetch {args:?}", git.display());
            if args[0].starts_with("--negotiation-tip") {
                assert!(!outcomes[0].3 .1.is_empty(), "{args:?}: no haves sent");
            }
        }
    }
}

/// `clone --server-option`: the options reach the server in every v2 command, as git's.
#[test]
fn clone_server_options_reach_the_server_as_gits_do() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        let url = format!("file://{}", src.display());
        let (log, upload_pack) = logging_upload_pack(&env, &git);
        let mut outcomes = Vec::new();
        for sluice in [false, true] {
            let _ = std::fs::remove_file(&log);
            let dest = env.path().join(format!("clone-{sluice}"));
            let args = [
                "-c",
                "protocol.version=2",
                "clone",
                "-q",
                &upload_pack,
                "--server-option=first",
                "--server-option=second",
                &url,
                dest.to_str().unwrap(),
            ];
            let out = run(&env, sluice, env.path(), &args, &[]);
            let refs = String::from_utf8(env.git(&dest, &["for-each-ref"])).unwrap();
            outcomes.push((out.status.code(), refs, sent(&log, "server-option=")));
        }
        assert_eq!(outcomes[1], outcomes[0], "{}", git.display());
        assert!(!outcomes[0].2.is_empty(), "no server options sent");
    }
}

/// `remote.<name>.serverOption` (git 2.49's setting, newer than the gits installed here):
/// Sluice's clone and fetch send a remote's configured server options, an empty value dropping
/// those before it and `-o` replacing them all. Judged against git given the same options with
/// `-o`: what upload-pack is sent.
#[test]
fn configured_server_options_reach_the_server_as_gits_given_ones_do() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let url = format!("file://{}", source(&env).display());
        let (log, upload_pack) = logging_upload_pack(&env, &git);
        let v2 = ["-c", "protocol.version=2"];
        // (Sluice's settings and arguments, git's arguments), for a clone and then a fetch.
        let configured = [
            "remote.origin.serverOption=dropped",
            "remote.origin.serverOption=",
            "remote.origin.serverOption=first",
            "remote.origin.serverOption=second",
        ];
        let mut sluice_clone: Vec<&str> = configured.iter().flat_map(|c| ["-c", c]).collect();
        sluice_clone.extend(["clone", "-q", &upload_pack, &url, "clone-true"]);
        let given = ["--server-option=first", "--server-option=second"];
        let git_clone = [
            "clone",
            "-q",
            &upload_pack,
            given[0],
            given[1],
            &url,
            "clone-false",
        ];
        let fetches: [(&[&str], &[&str]); 2] = [
            (
                &["fetch", "-q", &upload_pack, "origin"],
                &[
                    "fetch",
                    "-q",
                    &upload_pack,
                    "-o",
                    "first",
                    "-o",
                    "second",
                    "origin",
                ],
            ),
            (
                &["fetch", "-q", &upload_pack, "-o", "given", "origin"],
                &["fetch", "-q", &upload_pack, "-o", "given", "origin"],
            ),
        ];
        let mut seen = [Vec::new(), Vec::new()];
        for sluice in [false, true] {
            let _ = std::fs::remove_file(&log);
            let args = match sluice {
                true => [&v2[..], &sluice_clone].concat(),
                false => [&v2[..], &git_clone].concat(),
            };
            let out = run(&env, sluice, env.path(), &args, &[]);
            assert!(out.status.success(), "{}", stderr(&out));
            seen[usize::from(sluice)].push(sent(&log, "server-option="));
            let clone = env.path().join(format!("clone-{sluice}"));
            for setting in &configured[2..] {
                let (key, value) = setting.split_once('=').unwrap();
                env.git(&clone, &["config", "--add", key, value]);
            }
            for (ours, theirs) in fetches {
                let _ = std::fs::remove_file(&log);
                let args = [&v2[..], if sluice { ours } else { theirs }].concat();
                let out = run(&env, sluice, &clone, &args, &[]);
                assert!(out.status.success(), "{}", stderr(&out));
                seen[usize::from(sluice)].push(sent(&log, "server-option="));
            }
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
        assert!(seen[0].iter().all(|s| !s.is_empty()), "{seen:?}");
    }
}

/// `transfer.advertiseSID` on the client: it names its session to a server that names its own,
/// in v0's first want line and in every v2 command, as git's client does (compared by shape:
/// every hexadecimal digit made `x`).
#[test]
fn clients_name_their_session_as_gits_do() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        env.git(&src, &["config", "transfer.advertiseSID", "true"]);
        let url = format!("file://{}", src.display());
        let (log, upload_pack) = logging_upload_pack(&env, &git);
        let shape = |line: &str| -> String {
            let at = line.find("session-id=").unwrap_or(0);
            let value = line[at..].split([' ', '\n']).next().unwrap_or("");
            value
                .chars()
                .map(|c| if c.is_ascii_hexdigit() { 'x' } else { c })
                .collect()
        };
        for (n, version) in ["0", "2"].iter().enumerate() {
            for advertise in ["true", "false"] {
                let mut shapes = Vec::new();
                for sluice in [false, true] {
                    let _ = std::fs::remove_file(&log);
                    let target = format!("c{n}-{advertise}-{sluice}");
                    let args = [
                        "-c",
                        &format!("protocol.version={version}"),
                        "-c",
                        &format!("transfer.advertiseSID={advertise}"),
                        "clone",
                        "-q",
                        &upload_pack,
                        &url,
                        &target,
                    ];
                    let out = run(&env, sluice, env.path(), &args, &[]);
                    assert!(out.status.success(), "{}", stderr(&out));
                    let mut said: Vec<String> = sent(&log, "")
                        .iter()
                        .filter(|line| line.contains("session-id="))
                        .map(|line| shape(line))
                        .collect();
                    said.dedup();
                    shapes.push(said);
                }
                assert_eq!(
                    shapes[1],
                    shapes[0],
                    "{} v{version} advertiseSID={advertise}",
                    git.display()
                );
                assert_eq!(shapes[0].is_empty(), advertise == "false");
            }
        }
    }
}

/// `fetch --negotiate-only`: the commits the server has in common with the tips, printed as
/// git prints them; nothing fetched, no ref or FETCH_HEAD written; no tip is git's error.
#[test]
fn negotiate_only_prints_what_git_prints() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        let url = format!("file://{}", src.display());
        let repo = env.path().join("clone");
        env.git(env.path(), &["clone", "-q", &url, repo.to_str().unwrap()]);
        for n in 0..3 {
            std::fs::write(src.join("b"), format!("{n}\n")).unwrap();
            env.git(&src, &["add", "b"]);
            env.git(&src, &["commit", "-q", "-m", "more"]);
        }
        let before = crate::upload_pack::snapshot(&repo.join(".git"));
        for tips in [
            &["--negotiation-tip=HEAD"][..],
            &["--negotiation-tip=t1"],
            &[],
        ] {
            let mut outcomes = Vec::new();
            for sluice in [false, true] {
                let mut args = vec!["-c", "protocol.version=2", "fetch", "--negotiate-only"];
                args.extend_from_slice(tips);
                args.push("origin");
                let out = run(&env, sluice, &repo, &args, &[]);
                outcomes.push((out.status.code(), crate::util::stdout(&out), stderr(&out)));
            }
            // git 2.39 also prints ancestors of what it acknowledged in an earlier round; 2.47
            // prints what was acknowledged once, as Sluice does.
            let older = env.git_version() < (2, 40);
            let (ours, theirs) = (&outcomes[1], &outcomes[0]);
            assert_eq!(
                (ours.0, &ours.2),
                (theirs.0, &theirs.2),
                "{} {tips:?}",
                git.display()
            );
            match older {
                true => assert!(ours.1.lines().all(|l| theirs.1.contains(l)), "{tips:?}"),
                false => assert_eq!(ours.1, theirs.1, "{} {tips:?}", git.display()),
            }
            assert_eq!(ours.1.is_empty(), theirs.1.is_empty(), "{tips:?}");
        }
        assert!(
            crate::upload_pack::snapshot(&repo.join(".git")) == before,
            "the repository changed"
        );
    }
}
