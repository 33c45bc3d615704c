//! What `sluice receive-pack` tells a pushing git client while it works: a hook's output as
//! the hook writes it (the client shows it before the hook ends), and `receive.keepAlive`
//! packets while a hook is silent, as git's receive-pack sends them.

use crate::util::{gits, stderr, Env};
use std::io::Read;
use std::path::Path;

/// A bare server with `hook` as its pre-receive hook, and a work repository with a commit.
fn server_with_hook(env: &Env, hook: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let server = env.init("server.git", true);
    let path = server.join("hooks/pre-receive");
    std::fs::write(&path, hook).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let work = env.init("work", false);
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "one"]);
    (server, work)
}

fn push_args(server: &Path) -> Vec<String> {
    let receive = format!(
        "--receive-pack={} receive-pack",
        env!("CARGO_BIN_EXE_sluice")
    );
    let target = server.to_str().unwrap().to_owned();
    vec![
        "push".into(),
        receive,
        target,
        "HEAD:refs/heads/main".into(),
    ]
}

/// The hook says it started, then waits for a file only this test creates once the client
/// has shown that line: a receive-pack that held the output back until the hook ended would
/// leave it waiting (it gives up after 30 s, failing the push).
#[test]
fn hook_output_reaches_the_client_while_the_hook_runs() {
    for git in gits() {
        let env = Env::with_git(git);
        let hook = "#!/bin/sh\necho started\ni=0\nwhile [ ! -f go ] && [ $i -lt 300 ]; do \
                    sleep 0.1; i=$((i+1)); done\n[ -f go ] || exit 1\necho finished\n";
        let (server, work) = server_with_hook(&env, hook);
        let args = push_args(&server);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = env
            .git_command(&work, &args)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut errors = child.stderr.take().unwrap();
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains("remote: started") {
            let read = errors.read(&mut buffer).unwrap();
            assert!(read > 0, "ended first: {}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&buffer[..read]);
        }
        std::fs::write(server.join("go"), "").unwrap();
        errors.read_to_end(&mut seen).unwrap();
        let status = child.wait().unwrap();
        let said = String::from_utf8_lossy(&seen);
        assert!(status.success(), "{said}");
        assert!(said.contains("remote: finished"), "{said}");
    }
}

/// Keepalive packets (empty on band 1) while the hook is silent, at `receive.keepAlive`
/// seconds, as many as git's receive-pack sends for the same hook; none with 0.
#[test]
fn keepalives_are_sent_while_a_hook_is_silent_as_git_sends_them() {
    let env = Env::new();
    let (server, work) = server_with_hook(&env, "#!/bin/sh\nsleep 2.5\necho awake\n");
    let git_server = env.path().join("git-server.git");
    crate::util::copy_tree(&server, &git_server);
    let keepalives = |trace: &Path| {
        let text = std::fs::read_to_string(trace).unwrap();
        text.lines()
            .filter(|l| l.ends_with("sideband< \\1"))
            .count()
    };
    for (seconds, expected_some) in [("1", true), ("0", false)] {
        for repo in [&server, &git_server] {
            env.git(repo, &["config", "receive.keepAlive", seconds]);
            env.git(repo, &["update-ref", "-d", "refs/heads/main"]);
        }
        let ours_trace = env.path().join(format!("ours-{seconds}.trace"));
        let args = push_args(&server);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = env
            .git_command(&work, &args)
            .env("GIT_TRACE_PACKET", &ours_trace)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stderr(&out).contains("remote: awake"));
        let theirs_trace = env.path().join(format!("theirs-{seconds}.trace"));
        let target = git_server.to_str().unwrap();
        let out = env
            .git_command(&work, &["push", target, "HEAD:refs/heads/main"])
            .env("GIT_TRACE_PACKET", &theirs_trace)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let (ours, theirs) = (keepalives(&ours_trace), keepalives(&theirs_trace));
        assert_eq!(ours > 0, expected_some, "{ours} keepalives at {seconds} s");
        assert_eq!(
            theirs > 0,
            expected_some,
            "git: {theirs} keepalives at {seconds} s"
        );
        assert!(ours.abs_diff(theirs) <= 1, "{ours} against git's {theirs}");
    }
}
