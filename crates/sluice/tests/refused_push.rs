//! A push of which no ref lands leaves the object store exactly as it was: the same files under
//! `objects/`, byte for byte, for every reason a ref can be refused (the `update` and
//! `pre-receive` hooks, `receive.denyNonFastForwards`, a hidden ref, the checked-out branch,
//! its deletion, a stale old value, an invalid name, an atomic push with one stale ref, a ref
//! named twice), through `sluice receive-pack` run by git's push, through `sluice serve` over
//! HTTP and git://, and by `sluice push` into a local path. A push of which some refs land
//! keeps what it sent, as git.

use crate::receive_pack::leftovers;
use crate::serve::Server;
use crate::util::{gits, run_with_input, stderr, stdout, Env};
use std::path::{Path, PathBuf};

/// Every file under the repository's `objects/` with its bytes, in name order.
fn object_files(repo: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut dirs = vec![repo.join("objects")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            match path.is_dir() {
                true => dirs.push(path),
                false => {
                    let bytes = std::fs::read(&path).unwrap();
                    files.push((path.strip_prefix(repo).unwrap().to_owned(), bytes));
                }
            }
        }
    }
    files.sort();
    files
}

/// A bare server with `main` at one commit, and a work repository one commit ahead of it
/// (and, on `diverged`, a commit that does not descend from the server's).
struct Setup {
    server: PathBuf,
    work: PathBuf,
    main: String,
}

fn setup(env: &Env, name: &str) -> Setup {
    let server = env.init(&format!("{name}.git"), true);
    env.git(&server, &["config", "receive.unpackLimit", "1"]);
    env.git(&server, &["config", "http.receivepack", "true"]);
    let work = env.init(&format!("{name}-work"), false);
    std::fs::write(work.join("base"), "base\n").unwrap();
    env.git(&work, &["add", "base"]);
    env.git(&work, &["commit", "-q", "-m", "base"]);
    let url = server.to_str().unwrap();
    env.git(&work, &["push", "-q", url, "HEAD:refs/heads/main"]);
    let main = String::from_utf8(env.git(&work, &["rev-parse", "HEAD"])).unwrap();
    std::fs::write(work.join("new"), "pushed, never landed\n").unwrap();
    env.git(&work, &["add", "new"]);
    env.git(&work, &["commit", "-q", "-m", "new"]);
    env.git(&work, &["checkout", "-q", "--orphan", "diverged"]);
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "diverged"]);
    env.git(&work, &["checkout", "-q", "master"]);
    Setup {
        server,
        work,
        main: main.trim().to_owned(),
    }
}

fn hook(repo: &Path, name: &str, body: &str) {
    crate::util::script(
        &repo.join("hooks").join(name),
        &format!("#!/bin/sh\n{body}"),
    );
}

/// How a push reaches Sluice's receive-pack.
#[derive(Debug, Clone, Copy)]
enum Route {
    /// git's push runs `sluice receive-pack` on a local path.
    GitPush,
    /// git's push over smart HTTP to `sluice serve`.
    Http,
    /// git's push over git:// to `sluice serve --enable receive-pack`.
    Daemon,
    /// `sluice push` into a local path.
    SluicePush,
}

fn push(env: &Env, setup: &Setup, route: Route, server: &Server, args: &[&str]) -> String {
    let name = setup.server.file_name().unwrap().to_str().unwrap();
    let receive = format!(
        "--receive-pack={} receive-pack",
        env!("CARGO_BIN_EXE_sluice")
    );
    let (tool_is_sluice, url, mut all) = match route {
        Route::GitPush => (false, setup.server.display().to_string(), vec![receive]),
        Route::Http => (false, format!("http://{}/{name}", server.http()), vec![]),
        Route::Daemon => (
            false,
            format!("git://{}/{name}", server.git.as_deref().unwrap()),
            vec![],
        ),
        Route::SluicePush => (true, setup.server.display().to_string(), vec![]),
    };
    let mut full = vec!["push".to_owned()];
    full.append(&mut all);
    full.push(url);
    full.extend(args.iter().map(|a| a.to_string()));
    let full: Vec<&str> = full.iter().map(String::as_str).collect();
    let out = env.sluice_or_git(tool_is_sluice, &setup.work, &full);
    assert!(!out.status.success(), "{route:?} {args:?} was accepted");
    stderr(&out)
}

/// Each way of refusing every ref of a git push: what to set up on the server, the push's
/// arguments, and what the client must be told.
#[allow(clippy::type_complexity)]
fn refusals() -> Vec<(
    &'static str,
    fn(&Path),
    &'static [&'static str],
    &'static str,
)> {
    vec![
        (
            "update hook",
            |s| hook(s, "update", "exit 1"),
            &["HEAD:refs/heads/main"],
            "hook declined",
        ),
        (
            "pre-receive hook",
            |s| hook(s, "pre-receive", "exit 1"),
            &["HEAD:refs/heads/main"],
            "pre-receive hook declined",
        ),
        (
            "non-fast-forward",
            |s| {
                let config = s.join("config");
                let mut text = std::fs::read_to_string(&config).unwrap();
                text.push_str("[receive]\n\tdenyNonFastForwards = true\n");
                std::fs::write(config, text).unwrap();
            },
            &["--force", "diverged:refs/heads/main"],
            "non-fast-forward",
        ),
        (
            "hidden ref",
            |s| {
                let config = s.join("config");
                let mut text = std::fs::read_to_string(&config).unwrap();
                text.push_str("[receive]\n\thideRefs = refs/hidden\n");
                std::fs::write(config, text).unwrap();
            },
            &["HEAD:refs/hidden/x"],
            "deny updating a hidden ref",
        ),
    ]
}

#[test]
fn a_refused_push_leaves_no_object_on_any_route() {
    let env = Env::new();
    let server = Server::start(&env, ".", &["--enable", "receive-pack"]);
    for (what, prepare, args, told) in refusals() {
        for route in [
            Route::GitPush,
            Route::Http,
            Route::Daemon,
            Route::SluicePush,
        ] {
            let setup = setup(&env, &format!("{what}-{route:?}").replace(' ', "-"));
            prepare(&setup.server);
            let before = object_files(&setup.server);
            let said = push(&env, &setup, route, &server, args);
            assert!(said.contains(told), "{what} {route:?}: {said}");
            assert!(
                object_files(&setup.server) == before,
                "{what} {route:?}: the objects changed"
            );
            assert_eq!(leftovers(&setup.server), Vec::<String>::new());
            env.git(&setup.server, &["fsck", "--strict"]);
        }
    }
}

/// The checked-out branch of a non-bare repository, updated or deleted.
#[test]
fn a_push_to_the_checked_out_branch_leaves_no_object() {
    let env = Env::new();
    let server = Server::start(&env, ".", &[]);
    for (args, deny_current, told) in [
        (
            &["HEAD:refs/heads/master"][..],
            "refuse",
            "branch is currently checked out",
        ),
        // git judges a deletion by receive.denyCurrentBranch first.
        (
            &[":refs/heads/master"][..],
            "ignore",
            "deletion of the current branch prohibited",
        ),
    ] {
        let setup = setup(&env, &format!("checked-out{}", args[0].len()));
        let tree = env.path().join(format!("tree{}", args[0].len()));
        env.git(
            env.path(),
            &[
                "clone",
                "-q",
                setup.server.to_str().unwrap(),
                tree.to_str().unwrap(),
            ],
        );
        env.git(&tree, &["checkout", "-q", "-b", "master", "origin/main"]);
        env.git(
            &tree,
            &["config", "receive.denyCurrentBranch", deny_current],
        );
        let tree_setup = Setup {
            server: tree.join(".git"),
            work: setup.work.clone(),
            main: setup.main.clone(),
        };
        let before = object_files(&tree_setup.server);
        let said = push(&env, &tree_setup, Route::GitPush, &server, args);
        assert!(said.contains(told), "{args:?}: {said}");
        assert!(
            object_files(&tree_setup.server) == before,
            "{args:?}: the objects changed"
        );
        env.git(&tree, &["fsck", "--strict"]);
    }
}

/// A request as a client sends it: commands, then the pack of `new` less `old`.
fn raw_request(env: &Env, setup: &Setup, commands: &[String], caps: &str, new: &str) -> Vec<u8> {
    let mut request = Vec::new();
    for (i, command) in commands.iter().enumerate() {
        let line = match i {
            0 => format!("{command}\0{caps}\n"),
            _ => format!("{command}\n"),
        };
        request.extend(format!("{:04x}", line.len() + 4).as_bytes());
        request.extend(line.as_bytes());
    }
    request.extend(b"0000");
    let revs = format!("{new}\n^{}\n", setup.main);
    let pack = env.git_with_input(
        &setup.work,
        &["pack-objects", "--stdout", "--revs"],
        revs.as_bytes(),
    );
    assert!(pack.status.success(), "{}", stderr(&pack));
    request.extend(pack.stdout);
    request
}

/// Requests git's client would not send, but a hostile or racing one does: a stale old value,
/// an invalid ref name, an atomic push with one stale ref, one ref named twice. Each is
/// refused whole, and nothing of it stays.
#[test]
fn refused_raw_requests_leave_no_object() {
    let env = Env::new();
    let setup = setup(&env, "raw");
    let new = String::from_utf8(env.git(&setup.work, &["rev-parse", "master"])).unwrap();
    let new = new.trim();
    let null = "0".repeat(40);
    let stale = String::from_utf8(env.git(&setup.work, &["rev-parse", "diverged"])).unwrap();
    let stale = stale.trim();
    let main = &setup.main;
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "stale old value",
            vec![format!("{stale} {new} refs/heads/main")],
            "",
        ),
        (
            "invalid name",
            vec![format!("{null} {new} refs/heads/bad..name")],
            "",
        ),
        (
            "atomic with one stale",
            vec![
                format!("{main} {new} refs/heads/main"),
                format!("{stale} {new} refs/heads/other"),
            ],
            "atomic",
        ),
        (
            "one ref twice",
            vec![
                format!("{main} {new} refs/heads/main"),
                format!("{main} {new} refs/heads/main"),
            ],
            "",
        ),
    ];
    for (what, commands, caps) in cases {
        let before = object_files(&setup.server);
        let refs_before = env.git(&setup.server, &["for-each-ref"]);
        let request = raw_request(
            &env,
            &setup,
            &commands,
            &format!("report-status {caps}"),
            new,
        );
        let out = run_with_input(
            env.sluice_command(&setup.server, &["receive-pack", "."]),
            &request,
        );
        let report = stdout(&out);
        assert!(report.contains("unpack ok"), "{what}: {report}");
        assert!(
            !report.contains("ok refs/"),
            "{what}: a ref landed: {report}"
        );
        assert!(report.contains("ng refs/"), "{what}: {report}");
        assert!(
            object_files(&setup.server) == before,
            "{what}: the objects changed"
        );
        assert_eq!(
            env.git(&setup.server, &["for-each-ref"]),
            refs_before,
            "{what}"
        );
        assert_eq!(leftovers(&setup.server), Vec::<String>::new(), "{what}");
    }
    env.git(&setup.server, &["fsck", "--strict"]);
}

/// A push of two refs, one refused by the update hook and one that lands: what it sent stays,
/// as git keeps it, and both gits' fsck find the repository complete.
#[test]
fn a_push_that_partly_lands_keeps_its_objects() {
    for git in gits() {
        let env = Env::with_git(git);
        let server = Server::start(&env, ".", &[]);
        let setup = setup(&env, "partly");
        hook(&setup.server, "update", "test \"$1\" != refs/heads/refused");
        let receive = format!(
            "--receive-pack={} receive-pack",
            env!("CARGO_BIN_EXE_sluice")
        );
        let url = setup.server.to_str().unwrap();
        let args = [
            "push",
            &receive,
            url,
            "HEAD:refs/heads/refused",
            "HEAD:refs/heads/lands",
        ];
        let out = env.git_command(&setup.work, &args).output().unwrap();
        assert!(!out.status.success());
        drop(server);
        let refs =
            String::from_utf8(env.git(&setup.server, &["for-each-ref", "--format=%(refname)"]))
                .unwrap();
        assert_eq!(refs, "refs/heads/lands\nrefs/heads/main\n");
        env.git(&setup.server, &["fsck", "--strict"]);
    }
}

/// A branch holds commits only: an annotated tag pushed to `refs/heads/` is refused as git's
/// receive-pack refuses it (the same report and message), and its objects do not stay.
#[test]
fn a_tag_pushed_to_a_branch_is_refused_as_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let setup = setup(&env, "tagged");
        env.git(&setup.work, &["tag", "-a", "-m", "tagged", "v1", "master"]);
        let twin = env.path().join("twin.git");
        crate::util::copy_tree(&setup.server, &twin);
        let mut said = Vec::new();
        for (server, sluice) in [(&twin, false), (&setup.server, true)] {
            let before = object_files(server);
            let receive = format!(
                "--receive-pack={} receive-pack",
                env!("CARGO_BIN_EXE_sluice")
            );
            let mut args = vec!["push"];
            if sluice {
                args.push(&receive);
            }
            args.extend([server.to_str().unwrap(), "v1:refs/heads/x"]);
            let out = env.git_command(&setup.work, &args).output().unwrap();
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            said.push(stderr(&out).replace(server.to_str().unwrap(), "<server>"));
            if sluice {
                assert!(object_files(server) == before, "the objects changed");
            }
        }
        assert_eq!(said[1], said[0], "{git:?}");
    }
}

/// `--force-with-lease=<ref>:<short id>` takes the abbreviated id as git's push does.
#[test]
fn a_lease_by_short_id_is_taken_as_git() {
    let env = Env::new();
    let setup = setup(&env, "lease");
    let short = &setup.main[..7];
    let lease = format!("--force-with-lease=main:{short}");
    let url = setup.server.to_str().unwrap();
    let out = env.sluice(&setup.work, &["push", &lease, url, "HEAD:main"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let pushed = env.git(&setup.server, &["rev-parse", "main"]);
    assert_eq!(pushed, env.git(&setup.work, &["rev-parse", "master"]));
    // A lease on a value the ref no longer holds is refused.
    let out = env.sluice(&setup.work, &["push", &lease, url, "diverged:main"], b"");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("stale info"), "{}", stderr(&out));
}
