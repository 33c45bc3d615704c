//! `sluice receive-pack` takes pushes from real git clients: twin bare repositories, one
//! pushed to through git's receive-pack and one through Sluice's, must end with the same refs,
//! and the client must say the same things and exit the same way.

use crate::util::{stderr, Env};
use std::path::Path;

fn push(
    env: &Env,
    work: &Path,
    server: &Path,
    sluice: bool,
    args: &[&str],
) -> (Option<i32>, String) {
    let receive = format!("{} receive-pack", env!("CARGO_BIN_EXE_sluice"));
    let mut all = vec!["push"];
    if sluice {
        all.push("--receive-pack");
        all.push(&receive);
    }
    all.push(server.to_str().unwrap());
    all.extend(args);
    let out = env.git_command(work, &all).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr).replace(server.to_str().unwrap(), "<server>");
    (out.status.code(), said)
}

fn refs(env: &Env, repo: &Path) -> String {
    String::from_utf8(env.git(repo, &["for-each-ref", "--format=%(refname) %(objectname)"]))
        .unwrap()
}

/// Bare twins `theirs.git` and `ours.git`, each prepared by `setup`.
fn twin_servers(env: &Env, setup: impl Fn(&Path)) -> Vec<std::path::PathBuf> {
    (["theirs.git", "ours.git"].iter())
        .map(|name| {
            let server = env.init(name, true);
            setup(&server);
            server
        })
        .collect()
}

/// A work repository with one empty commit.
fn work_with_a_commit(env: &Env) -> std::path::PathBuf {
    let work = env.init("work", false);
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "one"]);
    work
}

/// How many objects are loose and packed, and in how many packs.
pub(crate) fn storage(env: &Env, repo: &Path) -> Vec<String> {
    let out = String::from_utf8(env.git(repo, &["count-objects", "-v"])).unwrap();
    (out.lines())
        .filter(|l| l.starts_with("count:") || l.starts_with("in-pack:") || l.starts_with("packs:"))
        .map(str::to_owned)
        .collect()
}

pub(crate) fn leftovers(repo: &Path) -> Vec<String> {
    let out = std::process::Command::new("find")
        .arg(repo)
        .args(["-name", "*.lock", "-o", "-name", "tmp_*"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn pushes_land_as_they_land_through_git() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let theirs = env.init("theirs.git", true);
        let ours = env.init("ours.git", true);
        let work = env.init("work", false);
        let commit = |name: &str| {
            std::fs::write(work.join(name), format!("{name}\n")).unwrap();
            env.git(&work, &["add", name]);
            env.git(&work, &["commit", "-q", "-m", name]);
        };
        commit("one");
        commit("two");
        env.git(&work, &["tag", "-a", "-m", "v1", "v1"]);
        let steps: Vec<Vec<&str>> = vec![
            vec!["HEAD:refs/heads/main", "v1"],
            vec!["HEAD~1:refs/heads/topic"],
            vec!["HEAD~1:refs/heads/main"],
            vec!["--force", "HEAD~1:refs/heads/main"],
            vec!["HEAD:refs/heads/main", ":refs/heads/topic"],
            vec!["--atomic", "HEAD:refs/heads/a", "HEAD~1:refs/heads/b"],
            vec!["--delete", "refs/heads/a"],
            vec!["--porcelain", "HEAD:refs/heads/c"],
        ];
        for (i, step) in steps.iter().enumerate() {
            if i == 4 {
                commit("three");
            }
            let theirs_said = push(&env, &work, &theirs, false, step);
            let ours_said = push(&env, &work, &ours, true, step);
            assert_eq!(ours_said, theirs_said, "{step:?}");
            assert_eq!(refs(&env, &ours), refs(&env, &theirs), "{step:?}");
            // Stored alike: a push below receive.unpackLimit as loose objects.
            assert_eq!(storage(&env, &ours), storage(&env, &theirs), "{step:?}");
            assert_eq!(leftovers(&ours), Vec::<String>::new(), "{step:?}");
        }
        // Above receive.unpackLimit a push stays a pack.
        commit("four");
        for server in [&theirs, &ours] {
            env.git(server, &["config", "receive.unpackLimit", "2"]);
        }
        let step = ["HEAD:refs/heads/main"];
        assert_eq!(
            push(&env, &work, &ours, true, &step),
            push(&env, &work, &theirs, false, &step)
        );
        assert_eq!(storage(&env, &ours), storage(&env, &theirs));
        env.git(&ours, &["fsck", "--strict"]);
        // And git clones what Sluice received.
        let clone = env.path().join("clone");
        let out = env
            .git_command(
                env.path(),
                &[
                    "clone",
                    "-q",
                    ours.to_str().unwrap(),
                    clone.to_str().unwrap(),
                ],
            )
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

/// A ref another writer holds: the push is refused for it (and, atomic, for all), as git's
/// receive-pack refuses it, and nothing moves.
#[test]
fn a_locked_ref_is_refused_as_git_refuses_it() {
    let env = Env::new();
    let theirs = env.init("theirs.git", true);
    let ours = env.init("ours.git", true);
    let work = env.init("work", false);
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "one"]);
    for server in [&theirs, &ours] {
        push(&env, &work, server, false, &["HEAD:refs/heads/main"]);
        std::fs::write(server.join("refs/heads/main.lock"), "").unwrap();
    }
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "two"]);
    for step in [
        &["HEAD:refs/heads/main"][..],
        &["--atomic", "HEAD:refs/heads/main", "HEAD:refs/heads/x"],
    ] {
        let (theirs_code, theirs_said) = push(&env, &work, &theirs, false, step);
        let (ours_code, ours_said) = push(&env, &work, &ours, true, step);
        assert_eq!(ours_code, theirs_code);
        // The client's lines, without the server's explanation (which names its own paths).
        let client = |said: &str| -> Vec<String> {
            said.lines()
                .filter(|l| !l.starts_with("remote:"))
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(client(&ours_said), client(&theirs_said), "{step:?}");
        assert!(ours_said.contains("remote: error: cannot lock ref 'refs/heads/main'"));
        assert_eq!(refs(&env, &ours), refs(&env, &theirs));
    }
}

/// `receive.*` as git applies it: the checked-out branch of a non-bare repository, the current
/// branch's deletion, `denyDeletes`, `denyNonFastForwards`; and reflogs where git keeps them.
#[test]
fn receive_settings_refuse_and_log_as_gits_do() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let work = env.init("work", false);
        env.git(&work, &["commit", "-q", "--allow-empty", "-m", "one"]);
        env.git(&work, &["commit", "-q", "--allow-empty", "-m", "two"]);
        let servers: Vec<std::path::PathBuf> = ["theirs", "ours"]
            .iter()
            .map(|name| {
                let server = env.init(name, false);
                env.git(&server, &["commit", "-q", "--allow-empty", "-m", "base"]);
                env.git(&server, &["branch", "-M", "main"]);
                env.git(&server, &["config", "receive.denyNonFastForwards", "true"]);
                server
            })
            .collect();
        let (theirs, ours) = (&servers[0], &servers[1]);
        let steps: Vec<Vec<&str>> = vec![
            vec!["--force", "HEAD:refs/heads/main"],
            vec!["HEAD:refs/heads/side", "HEAD~1:refs/heads/other"],
            vec!["--force", "HEAD~1:refs/heads/side"],
            vec![":refs/heads/main"],
            vec!["-c"],
            vec![":refs/heads/other"],
        ];
        for step in &steps {
            if step == &["-c"] {
                for server in [theirs, ours] {
                    env.git(server, &["config", "receive.denyDeletes", "true"]);
                }
                continue;
            }
            let theirs_said = push(&env, &work, theirs, false, step);
            let ours_said = push(&env, &work, ours, true, step);
            let client = |said: &(Option<i32>, String)| -> (Option<i32>, Vec<String>) {
                let lines = said.1.lines().filter(|l| !l.starts_with("remote:"));
                (said.0, lines.map(str::to_owned).collect())
            };
            assert_eq!(client(&ours_said), client(&theirs_said), "{step:?}");
            // The server's first word on a refusal is git's too.
            let first_error = |said: &str| {
                said.lines()
                    .find(|l| l.starts_with("remote: error:"))
                    .map(|l| l.trim_end().to_owned())
            };
            assert_eq!(
                first_error(&ours_said.1),
                first_error(&theirs_said.1),
                "{step:?}"
            );
            assert_eq!(refs(&env, ours), refs(&env, theirs), "{step:?}");
        }
        // Reflogs where git keeps them (a non-bare repository logs its branches).
        let log = |repo: &Path| {
            let text =
                std::fs::read_to_string(repo.join(".git/logs/refs/heads/side")).unwrap_or_default();
            text.lines()
                .map(|l| l.split(' ').take(2).collect::<Vec<_>>().join(" "))
                .collect::<Vec<_>>()
        };
        assert_eq!(log(ours), log(theirs));
        assert!(!log(ours).is_empty());
    }
}

/// `receive.fsckObjects`: a push carrying a malformed commit is refused whole, as git's
/// receive-pack refuses it, with the same report, and no object of it is left behind.
#[test]
fn receive_fsck_objects_refuses_bad_objects_as_git_does() {
    let env = Env::new();
    let work = env.init("work", false);
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "one"]);
    let tree = String::from_utf8(env.git(&work, &["write-tree"])).unwrap();
    let parent = String::from_utf8(env.git(&work, &["rev-parse", "HEAD"])).unwrap();
    let bad = format!(
        "tree {}\nparent {}\nauthor A <a@example.com> notadate +0000\ncommitter C <c@example.com> 1700000000 +0000\n\nbad date\n",
        tree.trim(),
        parent.trim()
    );
    let out = env.git_with_input(
        &work,
        &[
            "hash-object",
            "-t",
            "commit",
            "-w",
            "--literally",
            "--stdin",
        ],
        bad.as_bytes(),
    );
    assert!(out.status.success());
    let bad = String::from_utf8(out.stdout).unwrap();
    let servers: Vec<std::path::PathBuf> = ["theirs.git", "ours.git"]
        .iter()
        .map(|name| {
            let server = env.init(name, true);
            push(&env, &work, &server, false, &["HEAD:refs/heads/main"]);
            env.git(&server, &["config", "receive.fsckObjects", "true"]);
            server
        })
        .collect();
    let refspec = format!("{}:refs/heads/main", bad.trim());
    let theirs_said = push(&env, &work, &servers[0], false, &[&refspec]);
    let ours_said = push(&env, &work, &servers[1], true, &[&refspec]);
    let client = |said: &(Option<i32>, String)| -> (Option<i32>, Vec<String>) {
        let lines = said.1.lines().filter(|l| !l.starts_with("remote:"));
        (said.0, lines.map(str::to_owned).collect())
    };
    assert_eq!(client(&ours_said), client(&theirs_said));
    let first_error = |said: &str| {
        said.lines()
            .find(|l| l.starts_with("remote: error:"))
            .map(|l| l.trim_end().to_owned())
    };
    assert_eq!(first_error(&ours_said.1), first_error(&theirs_said.1));
    assert_eq!(refs(&env, &servers[1]), refs(&env, &servers[0]));
    assert!(!has_object(&env, &servers[1], bad.trim()));
    assert_eq!(leftovers(&servers[1]), Vec::<String>::new());
}

fn has_object(env: &Env, repo: &Path, id: &str) -> bool {
    env.git_command(repo, &["cat-file", "-e", id])
        .output()
        .unwrap()
        .status
        .success()
}

/// Writes an executable hook.
fn hook(server: &Path, name: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = server.join("hooks").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, format!("#!/bin/sh\n{script}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The hooks of a push run as git runs them: pre-receive sees every command and the
/// quarantined objects, update refuses one ref, post-receive and post-update see what moved;
/// their output reaches the client as git's does. A declining pre-receive refuses everything
/// and leaves no object.
#[test]
fn hooks_run_as_gits_do() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let work = work_with_a_commit(&env);
        let servers = twin_servers(&env, |server| {
            hook(server, "pre-receive", "while read old new ref; do git cat-file -e $new && echo \"pre-receive: $ref has its objects\"; done\ntest -n \"$GIT_QUARANTINE_PATH\" && echo quarantined\nexit 0\n");
            hook(server, "update", "echo \"update: $1\"\ntest \"$1\" != refs/heads/blocked || { echo no pushing to $1 >&2; exit 1; }\n");
            hook(
                server,
                "post-receive",
                "while read old new ref; do echo \"post-receive: $ref\"; done\n",
            );
            hook(server, "post-update", "echo \"post-update: $*\"\n");
        });
        let step = ["HEAD:refs/heads/main", "HEAD:refs/heads/blocked"];
        let theirs_said = push(&env, &work, &servers[0], false, &step);
        let ours_said = push(&env, &work, &servers[1], true, &step);
        assert_eq!(ours_said, theirs_said);
        assert!(
            ours_said.1.contains("remote: quarantined"),
            "{}",
            ours_said.1
        );
        assert_eq!(refs(&env, &servers[1]), refs(&env, &servers[0]));

        // A pre-receive that declines: nothing moves, and the objects go with the quarantine.
        env.git(&work, &["commit", "-q", "--allow-empty", "-m", "two"]);
        let two = String::from_utf8(env.git(&work, &["rev-parse", "HEAD"])).unwrap();
        for server in &servers {
            hook(server, "pre-receive", "echo declined by policy\nexit 1\n");
        }
        let theirs_said = push(&env, &work, &servers[0], false, &["HEAD:refs/heads/main"]);
        let ours_said = push(&env, &work, &servers[1], true, &["HEAD:refs/heads/main"]);
        assert_eq!(ours_said, theirs_said);
        assert_eq!(refs(&env, &servers[1]), refs(&env, &servers[0]));
        assert!(!has_object(&env, &servers[1], two.trim()));
        assert_eq!(leftovers(&servers[1]), Vec::<String>::new());
    }
}

/// Push options reach the hooks when `receive.advertisePushOptions` allows them, and not
/// otherwise (the client refuses); refs `receive.hideRefs` hides are neither advertised nor
/// updated; `receive.advertiseAtomic=false` makes the client refuse --atomic. All as git.
#[test]
fn push_options_hidden_refs_and_atomic_advertisement_as_gits() {
    let env = Env::new();
    let work = work_with_a_commit(&env);
    let servers = twin_servers(&env, |server| {
        hook(
            server,
            "pre-receive",
            "echo \"options: $GIT_PUSH_OPTION_COUNT $GIT_PUSH_OPTION_0 $GIT_PUSH_OPTION_1\"\n",
        );
        hook(
            server,
            "post-receive",
            "echo \"after: $GIT_PUSH_OPTION_COUNT\"\n",
        );
    });
    let compare = |step: &[&str]| {
        let theirs_said = push(&env, &work, &servers[0], false, step);
        let ours_said = push(&env, &work, &servers[1], true, step);
        assert_eq!(ours_said, theirs_said, "{step:?}");
        assert_eq!(refs(&env, &servers[1]), refs(&env, &servers[0]), "{step:?}");
    };
    // Not advertised: the client refuses to send them.
    compare(&["-o", "first", "HEAD:refs/heads/main"]);
    for server in &servers {
        env.git(server, &["config", "receive.advertisePushOptions", "true"]);
        env.git(server, &["config", "receive.hideRefs", "refs/hidden"]);
        env.git(server, &["config", "receive.advertiseAtomic", "false"]);
    }
    compare(&["-o", "first", "-o", "second=2", "HEAD:refs/heads/main"]);
    compare(&["HEAD:refs/hidden/x"]);
    compare(&["--atomic", "HEAD:refs/heads/a"]);
}

/// `sluice serve` takes pushes over git:// where the repository enables them
/// (`daemon.receivepack`, as git daemon), and refuses them elsewhere.
#[test]
fn git_daemon_protocol_takes_pushes_where_enabled() {
    let env = Env::new();
    let served = env.path().join("served");
    std::fs::create_dir_all(&served).unwrap();
    let open = env.init("served/open.git", true);
    env.git(&open, &["config", "daemon.receivepack", "true"]);
    let closed = env.init("served/closed.git", true);
    let server = crate::serve::Server::start(&env, "served", &[]);
    let address = server.git.clone().unwrap();
    let work = work_with_a_commit(&env);
    let url = |name: &str| format!("git://{address}/{name}");
    let out = env
        .git_command(&work, &["push", &url("open.git"), "HEAD:refs/heads/main"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let head = String::from_utf8(env.git(&work, &["rev-parse", "HEAD"])).unwrap();
    assert_eq!(refs(&env, &open), format!("refs/heads/main {}", head));
    env.git(&open, &["fsck", "--strict"]);
    let out = env
        .git_command(&work, &["push", &url("closed.git"), "HEAD:refs/heads/main"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("service not enabled"),
        "{}",
        stderr(&out)
    );
    assert_eq!(refs(&env, &closed), "");
}

/// A fork that borrows its objects from another repository (`objects/info/alternates`)
/// advertises that repository's tips as `.have`: the first push to it carries only what is new,
/// and it stores what git's receive-pack stores.
#[test]
fn a_fork_advertises_what_its_alternate_has() {
    let env = Env::new();
    let base = env.init("base.git", true);
    let work = work_with_a_commit(&env);
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "two"]);
    push(&env, &work, &base, false, &["HEAD:refs/heads/main"]);
    let objects = base.join("objects");
    let forks = twin_servers(&env, |fork| {
        std::fs::write(
            fork.join("objects/info/alternates"),
            format!("{}\n", objects.display()),
        )
        .unwrap();
    });
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "three"]);
    let step = ["HEAD:refs/heads/main"];
    let theirs_said = push(&env, &work, &forks[0], false, &step);
    let ours_said = push(&env, &work, &forks[1], true, &step);
    assert_eq!(ours_said, theirs_said);
    assert_eq!(refs(&env, &forks[1]), refs(&env, &forks[0]));
    // One commit sent and stored (loose, below the unpack limit), not the whole history.
    assert_eq!(storage(&env, &forks[1]), storage(&env, &forks[0]));
    assert!(storage(&env, &forks[1]).contains(&"count: 1".to_owned()));
    env.git(&forks[1], &["fsck", "--strict"]);
}

/// `receive.updateServerInfo`: after each push, `info/refs` and `objects/info/packs` hold
/// what git's receive-pack writes there, byte for byte (annotated tags with their `^{}`
/// line, packs in git's order).
#[test]
fn update_server_info_writes_what_git_writes() {
    let env = Env::new();
    let servers = twin_servers(&env, |server| {
        env.git(server, &["config", "receive.updateServerInfo", "true"]);
        env.git(server, &["config", "receive.unpackLimit", "1"]);
    });
    let work = work_with_a_commit(&env);
    env.git(&work, &["tag", "-a", "-m", "v1", "v1"]);
    env.git(&work, &["tag", "light"]);
    let steps: [&[&str]; 3] = [
        &["HEAD:refs/heads/main", "v1", "light"],
        &["HEAD:refs/heads/other"],
        &[":refs/heads/other"],
    ];
    for (i, step) in steps.iter().enumerate() {
        if i == 1 {
            env.git(&work, &["commit", "-q", "--allow-empty", "-m", "two"]);
        }
        for (server, sluice) in servers.iter().zip([false, true]) {
            let (code, said) = push(&env, &work, server, sluice, step);
            assert_eq!(code, Some(0), "{said}");
        }
        for file in ["info/refs", "objects/info/packs"] {
            let read = |server: &Path| std::fs::read(server.join(file)).unwrap();
            assert_eq!(
                read(&servers[1]),
                read(&servers[0]),
                "{file} after {step:?}"
            );
        }
    }
}

/// The reference-transaction hook sees each ref transaction of a push as git's receive-pack
/// shows it (`prepared`, then `committed` or `aborted`, with `<old> <new> <ref>` lines), and
/// refusing in `prepared` refuses the update as git does.
#[test]
fn the_reference_transaction_hook_runs_as_gits() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let work = work_with_a_commit(&env);
        let servers = twin_servers(&env, |server| {
            let log = server.join("transactions.log");
            let script = format!(
                "echo \"$1\" >> {log}\ncat >> {log}\ngrep -q refs/heads/refused {log} && test \"$1\" = prepared && exit 1\nexit 0\n",
                log = log.display()
            );
            hook(server, "reference-transaction", &script);
        });
        for step in [
            &["HEAD:refs/heads/main", "HEAD:refs/heads/other"][..],
            &[":refs/heads/other"],
            &["--atomic", "HEAD:refs/heads/a", "HEAD:refs/heads/b"],
            &["HEAD:refs/heads/refused"],
        ] {
            let theirs_said = push(&env, &work, &servers[0], false, step);
            let ours_said = push(&env, &work, &servers[1], true, step);
            let client = |said: &str| -> Vec<String> {
                (said.lines().filter(|l| !l.starts_with("remote:")))
                    .map(str::to_owned)
                    .collect()
            };
            if step == ["HEAD:refs/heads/refused"] {
                // git's receive-pack dies there ("fatal: ref updates aborted by hook", the
                // client: "unexpected disconnect", 128); Sluice's refuses the ref and reports
                // it. Both refuse, and the hook sees the same.
                assert_eq!(theirs_said.0, Some(128));
                assert_eq!(ours_said.0, Some(1), "{}", ours_said.1);
                assert!(ours_said.1.contains("[remote rejected] HEAD -> refused"));
            } else {
                assert_eq!(ours_said.0, theirs_said.0, "{step:?}: {}", ours_said.1);
                assert_eq!(client(&ours_said.1), client(&theirs_said.1), "{step:?}");
            }
            assert_eq!(refs(&env, &servers[1]), refs(&env, &servers[0]), "{step:?}");
            let log = |server: &Path| std::fs::read_to_string(server.join("transactions.log"));
            assert_eq!(
                log(&servers[1]).unwrap(),
                log(&servers[0]).unwrap(),
                "{step:?}"
            );
        }
    }
}

/// `receive.denyCurrentBranch=updateInstead`: a push to the checked-out branch of a non-bare
/// repository moves its work tree and index when they are clean, and is refused with git's
/// reason when they are not; a `push-to-checkout` hook decides instead when there is one.
#[test]
fn update_instead_moves_the_work_tree_as_git_does() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let servers: Vec<std::path::PathBuf> = ["theirs", "ours"]
            .iter()
            .map(|name| {
                let server = env.init(name, false);
                std::fs::write(server.join("file"), "base\n").unwrap();
                env.git(&server, &["add", "file"]);
                env.git(&server, &["commit", "-q", "-m", "base"]);
                env.git(&server, &["branch", "-M", "main"]);
                env.git(
                    &server,
                    &["config", "receive.denyCurrentBranch", "updateInstead"],
                );
                server
            })
            .collect();
        let work = env.path().join("work");
        env.git(
            env.path(),
            &["clone", "-q", servers[0].to_str().unwrap(), "work"],
        );
        let commit = |text: &str| {
            std::fs::write(work.join("file"), text).unwrap();
            std::fs::write(work.join(text.trim()), text).unwrap();
            env.git(&work, &["add", "."]);
            env.git(&work, &["commit", "-q", "-m", text.trim()]);
        };
        let state = |server: &Path| {
            let status = env.git(server, &["status", "--porcelain"]);
            let staged = env.git(server, &["ls-files", "-s"]);
            let file = std::fs::read(server.join("file")).unwrap();
            (refs(&env, server), status, staged, file)
        };
        let both = |change: &dyn Fn(&Path)| {
            for server in &servers {
                change(server);
            }
        };
        let compare = |what: &str| {
            let theirs_said = push(&env, &work, &servers[0], false, &["HEAD:refs/heads/main"]);
            let ours_said = push(&env, &work, &servers[1], true, &["HEAD:refs/heads/main"]);
            assert_eq!(ours_said, theirs_said, "{what}");
            assert_eq!(state(&servers[1]), state(&servers[0]), "{what}");
        };
        commit("two\n");
        compare("clean: the work tree follows");
        commit("three\n");
        both(&|s| std::fs::write(s.join("file"), "edited\n").unwrap());
        compare("unstaged changes");
        both(&|s| {
            env.git(s, &["add", "file"]);
        });
        compare("staged changes");
        both(&|s| {
            env.git(s, &["reset", "-q", "--hard"]);
            hook(s, "push-to-checkout", "echo declined >&2\nexit 1\n");
        });
        compare("push-to-checkout declines");
        both(&|s| hook(s, "push-to-checkout", "git read-tree -u -m HEAD \"$1\"\n"));
        compare("push-to-checkout updates");
    }
}

/// `receive.autogc`: a push that leaves more packs than `gc.autoPackLimit` is followed by
/// `gc --auto`, as git's receive-pack follows it (run in the foreground here, for both);
/// `receive.autogc=false` leaves the packs.
#[test]
fn auto_gc_follows_a_push_as_gits() {
    let env = Env::new();
    let servers = twin_servers(&env, |server| {
        env.git(server, &["config", "receive.unpackLimit", "1"]);
        env.git(server, &["config", "gc.autoPackLimit", "1"]);
        env.git(server, &["config", "gc.autoDetach", "false"]);
    });
    let work = work_with_a_commit(&env);
    for (i, step) in [["HEAD:refs/heads/a"], ["HEAD:refs/heads/b"]]
        .iter()
        .enumerate()
    {
        env.git(
            &work,
            &["commit", "-q", "--allow-empty", "-m", &format!("c{i}")],
        );
        for (server, sluice) in servers.iter().zip([false, true]) {
            let (code, said) = push(&env, &work, server, sluice, step);
            assert_eq!(code, Some(0), "{said}");
        }
        assert_eq!(
            storage(&env, &servers[1]),
            storage(&env, &servers[0]),
            "{step:?}"
        );
    }
    // Two pushes, two packs, one past the limit: collected into one.
    assert!(storage(&env, &servers[1]).contains(&"packs: 1".to_owned()));
    env.git(&servers[1], &["fsck", "--strict"]);
    for server in &servers {
        env.git(server, &["config", "receive.autogc", "false"]);
    }
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "more"]);
    for step in [["HEAD:refs/heads/c"], ["HEAD:refs/heads/d"]] {
        for (server, sluice) in servers.iter().zip([false, true]) {
            let (code, said) = push(&env, &work, server, sluice, &step);
            assert_eq!(code, Some(0), "{said}");
        }
    }
    assert_eq!(storage(&env, &servers[1]), storage(&env, &servers[0]));
    // One more pack (the second push brought nothing new), and no gc.
    assert!(storage(&env, &servers[1]).contains(&"packs: 2".to_owned()));
}

/// Maintenance after each push: packs from pushes (above `receive.unpackLimit`) are rolled
/// geometrically, so that after 16 pushes there are a handful of packs, not 17; the big pack
/// and its bitmap are left as they are; nothing is lost, and clones through Sluice's server
/// (counting with that bitmap plus a walk of the new objects) are complete.
#[test]
fn pushes_are_followed_by_a_geometric_roll_that_spares_the_bitmapped_pack() {
    let env = Env::new();
    let server = env.init("server.git", true);
    env.git(&server, &["config", "receive.unpackLimit", "1"]);
    let work = env.init("work", false);
    for i in 0..120 {
        std::fs::write(work.join(format!("base{i}")), format!("{i}\n")).unwrap();
    }
    env.git(&work, &["add", "."]);
    env.git(&work, &["commit", "-q", "-m", "base"]);
    let (code, said) = push(&env, &work, &server, true, &["HEAD:refs/heads/main"]);
    assert_eq!(code, Some(0), "{said}");
    env.git(&server, &["repack", "-q", "-a", "-d", "-b"]);
    let bitmap = |server: &Path| {
        std::fs::read_dir(server.join("objects/pack"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "bitmap"))
    };
    let big = bitmap(&server).expect("git wrote a bitmap");
    for i in 0..16 {
        std::fs::write(work.join(format!("push{i}")), format!("push {i}\n")).unwrap();
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", &format!("push {i}")]);
        let (code, said) = push(&env, &work, &server, true, &["HEAD:refs/heads/main"]);
        assert_eq!(code, Some(0), "{said}");
    }
    let packs = storage(&env, &server);
    let count: usize = packs[2].trim_start_matches("packs: ").parse().unwrap();
    assert!(count <= 5, "packs stay few: {packs:?}");
    assert_eq!(bitmap(&server), Some(big), "the bitmapped pack is spared");
    env.git(&server, &["fsck", "--strict"]);
    let clone = crate::util::sluice_clone_checked(&env, &server, "clone.git");
    assert_eq!(refs(&env, &clone), refs(&env, &server));
}

/// When the packs pushed since the last repack reach half the largest, the roll that would
/// take it in becomes a full gc: one pack again, with a bitmap git accepts, every ref's
/// history kept.
#[test]
fn small_packs_grown_to_half_the_largest_bring_a_full_gc() {
    let env = Env::new();
    let server = env.init("server.git", true);
    env.git(&server, &["config", "receive.unpackLimit", "1"]);
    let work = env.init("work", false);
    let commit_files = |tag: &str, count: usize| {
        for i in 0..count {
            std::fs::write(work.join(format!("{tag}{i}")), format!("{tag} {i}\n")).unwrap();
        }
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", tag]);
    };
    commit_files("base", 20);
    let (code, said) = push(&env, &work, &server, true, &["HEAD:refs/heads/main"]);
    assert_eq!(code, Some(0), "{said}");
    env.git(&server, &["repack", "-q", "-a", "-d", "-b"]);
    let mut collected = false;
    for round in 0..12 {
        commit_files(&format!("round{round}-"), 6);
        let (code, said) = push(&env, &work, &server, true, &["HEAD:refs/heads/main"]);
        assert_eq!(code, Some(0), "{said}");
        let packs = storage(&env, &server);
        if packs[2] == "packs: 1" {
            collected = true;
            break;
        }
    }
    assert!(collected, "a full gc ran: {:?}", storage(&env, &server));
    let bitmaps = crate::util::pack_files(&server, "bitmap");
    assert_eq!(bitmaps, 1, "the new pack has its bitmap");
    let head = String::from_utf8(env.git(&server, &["rev-parse", "main"])).unwrap();
    let out = env
        .git_command(&server, &["rev-list", "--test-bitmap", head.trim()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    env.git(&server, &["fsck", "--strict"]);
    assert_eq!(
        head,
        String::from_utf8(env.git(&work, &["rev-parse", "HEAD"])).unwrap()
    );
}

/// A deletion of a ref that does not exist: git's warning, and no line for it in
/// post-receive's or post-update's input (neither runs for it alone); beside an update, the
/// hooks see the update only.
#[test]
fn deleting_a_ref_that_does_not_exist_is_left_out_of_the_hooks_as_git_does() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let work = work_with_a_commit(&env);
        let servers = twin_servers(&env, |server| {
            hook(
                server,
                "post-receive",
                "while read old new ref; do echo \"post-receive: $old $new $ref\"; done\n",
            );
            hook(server, "post-update", "echo \"post-update: $*\"\n");
        });
        for server in &servers {
            env.git(
                &work,
                &["push", "-q", server.to_str().unwrap(), "HEAD:main"],
            );
        }
        for step in [
            vec![":refs/heads/never"],
            vec![":refs/heads/never", "HEAD:refs/heads/new"],
            vec![":refs/heads/new", ":refs/heads/never"],
        ] {
            let theirs_said = push(&env, &work, &servers[0], false, &step);
            let ours_said = push(&env, &work, &servers[1], true, &step);
            assert_eq!(ours_said, theirs_said, "{step:?}");
            assert_eq!(refs(&env, &servers[1]), refs(&env, &servers[0]), "{step:?}");
        }
    }
}

/// `receive.denyCurrentBranch` guards the branches linked worktrees have checked out, in a
/// repository with a work tree and in a bare one, as git's does.
#[test]
fn branches_checked_out_in_linked_worktrees_are_refused_as_git_refuses_them() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let work = work_with_a_commit(&env);
        for bare in [false, true] {
            let servers: Vec<std::path::PathBuf> = ["theirs", "ours"]
                .iter()
                .map(|side| {
                    let name = format!("{side}-{bare}");
                    let server = env.init(&name, bare);
                    env.git(
                        &work,
                        &[
                            "push",
                            "-q",
                            server.to_str().unwrap(),
                            "HEAD:main",
                            "HEAD:wt",
                        ],
                    );
                    if !bare {
                        env.git(&server, &["checkout", "-q", "main"]);
                    }
                    let linked = env.path().join(format!("{name}-wt"));
                    env.git(
                        &server,
                        &["worktree", "add", "-q", linked.to_str().unwrap(), "wt"],
                    );
                    server
                })
                .collect();
            env.git(
                &work,
                &[
                    "commit",
                    "-q",
                    "--allow-empty",
                    "-m",
                    &format!("next {bare}"),
                ],
            );
            for step in [["HEAD:refs/heads/wt"], ["HEAD:refs/heads/other"]] {
                let theirs_said = push(&env, &work, &servers[0], false, &step);
                let ours_said = push(&env, &work, &servers[1], true, &step);
                assert_eq!(ours_said, theirs_said, "bare {bare}: {step:?}");
                assert_eq!(refs(&env, &servers[1]), refs(&env, &servers[0]));
            }
        }
    }
}

/// Pushes into a symbolic ref and its target (aliased refs): advertised at the target's
/// value, a lone update moves the target, a consistent pair moves it once, an inconsistent
/// pair is refused whole, in git's words.
#[test]
fn pushes_into_symbolic_refs_and_their_targets_are_taken_as_git_takes_them() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let work = work_with_a_commit(&env);
        let servers = twin_servers(&env, |_| {});
        for server in &servers {
            env.git(
                &work,
                &["push", "-q", server.to_str().unwrap(), "HEAD:main"],
            );
            env.git(
                server,
                &["symbolic-ref", "refs/heads/alias", "refs/heads/main"],
            );
        }
        let commit = |message: &str| {
            env.git(&work, &["commit", "-q", "--allow-empty", "-m", message]);
        };
        commit("two");
        let steps: Vec<Vec<&str>> = vec![
            vec!["HEAD:refs/heads/main", "HEAD:refs/heads/alias"],
            vec!["HEAD~1:refs/heads/other"],
        ];
        for step in &steps {
            let theirs_said = push(&env, &work, &servers[0], false, step);
            let ours_said = push(&env, &work, &servers[1], true, step);
            assert_eq!(ours_said, theirs_said, "{step:?}");
            assert_eq!(refs(&env, &servers[1]), refs(&env, &servers[0]), "{step:?}");
            commit("next");
        }
        let theirs_said = push(&env, &work, &servers[0], false, &["HEAD:refs/heads/alias"]);
        let ours_said = push(&env, &work, &servers[1], true, &["HEAD:refs/heads/alias"]);
        assert_eq!(ours_said, theirs_said);
        // Two new commits, one for the symbolic ref and one for its target.
        env.git(&work, &["checkout", "-q", "-b", "a"]);
        commit("for the alias");
        env.git(&work, &["checkout", "-q", "-b", "b", "HEAD~1"]);
        commit("for the target");
        let step = ["--force", "a:refs/heads/alias", "b:refs/heads/main"];
        let theirs_said = push(&env, &work, &servers[0], false, &step);
        let ours_said = push(&env, &work, &servers[1], true, &step);
        assert_eq!(ours_said, theirs_said);
        assert!(
            ours_said.1.contains("inconsistent aliased update"),
            "{}",
            ours_said.1
        );
        let symbolic = |server: &Path| {
            env.git(
                server,
                &[
                    "for-each-ref",
                    "--format=%(refname) %(objectname) %(symref)",
                ],
            )
        };
        assert_eq!(symbolic(&servers[1]), symbolic(&servers[0]));
    }
}

/// `receive.maxInputSize`: a push past it is refused whole, in the words of the program git runs
/// for its pack (unpack-objects below `receive.unpackLimit`, index-pack from it on, whose words
/// name the limit), and nothing of it is left.
#[test]
fn a_push_past_max_input_size_is_refused_in_the_words_git_uses() {
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        let work = work_with_a_commit(&env);
        std::fs::write(work.join("f"), "content\n".repeat(100)).unwrap();
        env.git(&work, &["add", "f"]);
        env.git(&work, &["commit", "-q", "-m", "two"]);
        for unpack_limit in ["100", "1"] {
            let servers = twin_servers(&env, |server| {
                env.git(server, &["config", "receive.maxInputSize", "10"]);
                env.git(server, &["config", "receive.unpackLimit", unpack_limit]);
            });
            let (theirs, ours) = (&servers[0], &servers[1]);
            let step = ["HEAD:refs/heads/main"];
            let theirs_said = push(&env, &work, theirs, false, &step);
            let ours_said = push(&env, &work, ours, true, &step);
            assert_eq!(ours_said, theirs_said, "{} {unpack_limit}", git.display());
            assert_eq!(refs(&env, ours), refs(&env, theirs));
            assert_eq!(storage(&env, ours)[0], "count: 0");
            assert!(leftovers(ours).is_empty(), "{:?}", leftovers(ours));
            for server in servers {
                std::fs::remove_dir_all(server).unwrap();
            }
        }
    }
}
