//! The `proc-receive` hook (`receive.procReceiveRefs`, the AGit flow of review servers): the
//! same push to triplet bare repositories with the same hook, git's push to git's
//! receive-pack, git's push to Sluice's, and Sluice's push to git's; the client's exit code and
//! words (its summary is drawn from report-status-v2's `option` lines), the refs, what the
//! hook was sent and what `post-receive` heard must be the same. The hook's answers cover the protocol's cases: a
//! ref made instead of the one pushed, a refusal, a fall-through, several reports for one
//! command, a hook that fails, breaks the protocol or is missing, push options, an atomic
//! push, and the modifiers of `receive.procReceiveRefs`.

use crate::util::{gits, Env};
use std::path::{Path, PathBuf};

/// One case: the settings, the hook's directives (none: no hook), the push's arguments.
struct Case {
    settings: &'static [&'static str],
    hook: Option<&'static str>,
    push: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        settings: &["refs/for"],
        hook: Some("run git update-ref refs/changes/1 $NEW\nsay ok refs/for/main\nsay option refname refs/changes/1\nsay option new-oid $NEW\nflush"),
        push: &["HEAD:refs/for/main"],
    },
    Case {
        settings: &["refs/for"],
        hook: Some("stderr reviewing\nsay ng refs/for/main not today\nflush"),
        push: &["HEAD:refs/for/main"],
    },
    Case {
        settings: &["refs/for"],
        hook: Some("say ok refs/for/main\nflush"),
        push: &["HEAD:refs/heads/main", "HEAD:refs/for/main"],
    },
    Case {
        settings: &["refs/for"],
        hook: Some("say ok refs/for/topic\nsay option fall-through\nflush"),
        push: &["HEAD:refs/for/topic"],
    },
    Case {
        settings: &["refs/for"],
        hook: Some("say ok refs/for/main\nsay option refname refs/changes/1\nsay option forced-update\nsay ok refs/for/main\nsay option refname refs/changes/2\nsay option old-oid $NEW\nflush"),
        push: &["HEAD:refs/for/main"],
    },
    Case {
        settings: &["refs/for"],
        hook: Some("say ok refs/for/main\nflush\nexit 1"),
        push: &["HEAD:refs/for/main", "HEAD:refs/for/next"],
    },
    Case {
        settings: &["refs/for"],
        hook: Some("say ok refs/for/elsewhere\nsay option refname x\nsay bogus refs/for/main\nsay incomplete\nflush"),
        push: &["HEAD:refs/for/main"],
    },
    Case {
        settings: &["refs/for"],
        hook: Some("say option refname refs/changes/1\nsay ok refs/heads/main\nflush"),
        push: &["HEAD:refs/for/main", "HEAD:refs/heads/main"],
    },
    Case {
        settings: &["refs/for"],
        hook: Some("version 2\nflush"),
        push: &["HEAD:refs/for/main"],
    },
    Case {
        settings: &["refs/for"],
        hook: Some("exit 3"),
        push: &["HEAD:refs/for/main"],
    },
    Case {
        settings: &["refs/for"],
        hook: None,
        push: &["HEAD:refs/for/main", "HEAD:refs/heads/side"],
    },
    Case {
        settings: &["refs/for"],
        hook: Some("features push-options\nsay ok refs/for/main\nflush"),
        push: &["-o", "topic=x", "-o", "reviewer=me", "HEAD:refs/for/main"],
    },
    Case {
        settings: &["refs/for"],
        hook: Some("say ng refs/for/main no\nflush"),
        push: &["--atomic", "HEAD:refs/heads/main", "HEAD:refs/for/main"],
    },
    Case {
        settings: &["refs/for"],
        hook: Some("say ok refs/for/main\nflush"),
        push: &["--atomic", "HEAD:refs/heads/main", "HEAD:refs/for/main"],
    },
    Case {
        settings: &["m:refs/heads", "!:refs"],
        hook: Some("say ok refs/heads/main\nsay option refname refs/heads/main\nflush"),
        push: &["HEAD:refs/heads/main", "HEAD:refs/heads/new"],
    },
];

fn hook(server: &Path, name: &str, body: &str) {
    let path = server.join("hooks").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    crate::util::script(&path, body);
}

/// A bare server whose `main` is the work repository's first commit, with the case's
/// settings and hooks (`post-receive` logging what it hears).
fn server(env: &Env, name: &str, work: &Path, case: &Case) -> PathBuf {
    let server = env.init(name, true);
    let to = server.to_str().unwrap();
    env.git(work, &["push", "-q", to, "HEAD~1:refs/heads/main"]);
    for setting in case.settings {
        env.git(
            &server,
            &["config", "--add", "receive.procReceiveRefs", setting],
        );
    }
    env.git(&server, &["config", "receive.advertisePushOptions", "true"]);
    hook(
        &server,
        "post-receive",
        "#!/bin/sh\ncat >>post-receive.log\n",
    );
    if let Some(directives) = case.hook {
        std::fs::write(server.join("proc-receive.mode"), format!("{directives}\n")).unwrap();
        let script = env!("CARGO_MANIFEST_DIR").to_owned() + "/tests/data/proc_receive_hook.py";
        let body = format!("#!/bin/sh\nexec {} {script}\n", crate::util::python());
        hook(&server, "proc-receive", &body);
    }
    server
}

/// Who pushes and who receives.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    /// git's push to git's receive-pack.
    Git,
    /// git's push to Sluice's receive-pack.
    SluiceServer,
    /// Sluice's push to git's receive-pack.
    SluiceClient,
}

/// What a push through one server leaves: the client's exit code and stderr, the refs, the
/// hooks' logs.
fn pushed(env: &Env, work: &Path, server: &Path, side: Side, args: &[&str]) -> [String; 5] {
    let receive = match side {
        Side::SluiceServer => format!("{} receive-pack", env!("CARGO_BIN_EXE_sluice")),
        _ => format!("{} receive-pack", env.git.display()),
    };
    let to = server.to_str().unwrap();
    let all = [&["push", "--receive-pack", &receive, to][..], args].concat();
    let command = env.sluice_or_git_command(side == Side::SluiceClient, work, &all);
    let out = crate::util::run_with_input(command, b"");
    let said = String::from_utf8_lossy(&out.stderr).replace(to, "<server>");
    let refs = env.git(
        server,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    let log = |name: &str| std::fs::read_to_string(server.join(name)).unwrap_or_default();
    [
        format!("{:?}", out.status.code()),
        said,
        String::from_utf8(refs).unwrap(),
        log("proc-receive.log"),
        log("post-receive.log"),
    ]
}

#[test]
fn proc_receive_hooks_run_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let work = env.init("work", false);
        env.git(&work, &["commit", "-q", "--allow-empty", "-m", "one"]);
        env.git(&work, &["commit", "-q", "--allow-empty", "-m", "two"]);
        for (n, case) in CASES.iter().enumerate() {
            let mut seen = Vec::new();
            for (k, side) in [Side::Git, Side::SluiceServer, Side::SluiceClient]
                .into_iter()
                .enumerate()
            {
                let repo = server(&env, &format!("server-{n}-{k}.git"), &work, case);
                seen.push(pushed(&env, &work, &repo, side, case.push));
            }
            let case = format!("{} case {n}: {:?}", git.display(), case.push);
            assert_eq!(seen[1], seen[0], "Sluice's receive-pack, {case}");
            assert_eq!(seen[2], seen[0], "Sluice's push, {case}");
        }
    }
}
