//! `sluice push` over every transport git pushes over, to git's own servers and to Sluice's:
//! a local path (git's receive-pack, and `--receive-pack='sluice receive-pack'`), ssh (a stand-in
//! command), git daemon with `--enable=receive-pack`, git http-backend behind a web server
//! (anonymous, and with Basic credentials), and `sluice serve` over HTTP and git://. Each push is
//! made twice, by git and by Sluice, into twin repositories behind the same server: the same
//! exit code, the same words (push options included, which the servers' `pre-receive` hook
//! repeats), the same refs, and `git fsck --strict` clean.

use crate::http_push::work_with_commits;
use crate::serve::{fake_ssh, Server};
use crate::transports::{git_daemon, serve_with, Kind};
use crate::util::{gits, stderr, Env};
use std::path::Path;
use std::process::Command;

/// A work repository with two commits and a tag, and two empty bare repositories beside it
/// that take pushes over HTTP, and push options, which their `pre-receive` hook repeats.
fn setup(env: &Env) -> std::path::PathBuf {
    let work = work_with_commits(env);
    for name in ["theirs.git", "ours.git"] {
        let repo = env.init(name, true);
        env.git(&repo, &["config", "http.receivepack", "true"]);
        env.git(&repo, &["config", "receive.advertisePushOptions", "true"]);
        let hook = "#!/bin/sh\ni=0\nwhile test \"$i\" -lt \"${GIT_PUSH_OPTION_COUNT:-0}\"; do\n  eval \"echo option: \\$GIT_PUSH_OPTION_$i\"\n  i=$((i + 1))\ndone\n";
        crate::util::script(&repo.join("hooks/pre-receive"), hook);
    }
    work
}

pub(crate) fn refs(env: &Env, repo: &Path) -> String {
    let format = "--format=%(refname) %(objectname)";
    String::from_utf8(env.git(repo, &["for-each-ref", format])).unwrap()
}

/// Pushes `args` to `url` with git (`sluice` false) or Sluice; the exit code and what was said,
/// the URL replaced.
fn push(
    env: &Env,
    work: &Path,
    sluice: bool,
    url: &str,
    extra: &[&str],
    args: &[&str],
) -> (Option<i32>, String) {
    let mut all = vec!["push"];
    all.extend(extra);
    all.push(url);
    all.extend(args);
    let mut command = env.sluice_or_git_command(sluice, work, &all);
    command
        .env("GIT_SSH_COMMAND", fake_ssh(env))
        .env("GIT_TERMINAL_PROMPT", "0");
    let out = command.output().unwrap();
    let shown = match url.split_once("://") {
        Some((scheme, rest)) => format!("{scheme}://{}", rest.rsplit('@').next().unwrap()),
        None => url.to_owned(),
    };
    (out.status.code(), stderr(&out).replace(&shown, "<url>"))
}

/// The same pushes by git and by Sluice to `url_of("theirs.git")` and `url_of("ours.git")`.
fn twin_pushes(env: &Env, work: &Path, url_of: impl Fn(&str) -> String, extra: &[&str]) {
    let steps: [&[&str]; 5] = [
        &["HEAD:refs/heads/main", "v1"],
        &["HEAD~1:refs/heads/topic"],
        &["--force", "HEAD~1:refs/heads/main"],
        &[":refs/heads/topic", "HEAD:refs/heads/main"],
        &[
            "--push-option=ci.skip",
            "-o",
            "topic=a b",
            "HEAD:refs/heads/options",
        ],
    ];
    let (theirs, ours) = (env.path().join("theirs.git"), env.path().join("ours.git"));
    for step in steps {
        let said_by_git = push(env, work, false, &url_of("theirs.git"), extra, step);
        let said_by_sluice = push(env, work, true, &url_of("ours.git"), extra, step);
        let url = url_of("ours.git");
        assert_eq!(said_by_sluice, said_by_git, "{url} {extra:?} {step:?}");
        assert_eq!(
            refs(env, &ours),
            refs(env, &theirs),
            "{url} {extra:?} {step:?}"
        );
    }
    env.git(&ours, &["fsck", "--strict"]);
    for repo in [&theirs, &ours] {
        env.git(repo, &["update-ref", "-d", "refs/heads/main"]);
        env.git(repo, &["update-ref", "-d", "refs/tags/v1"]);
        env.git(repo, &["update-ref", "-d", "refs/heads/options"]);
    }
}

#[test]
fn sluice_pushes_over_every_transport_as_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let work = setup(&env);
        let root = env.path().to_owned();
        let path = |name: &str| root.join(name).display().to_string();
        // A local path, to git's receive-pack and to Sluice's.
        twin_pushes(&env, &work, |name| path(name), &[]);
        let sluice_receive = format!(
            "--receive-pack={} receive-pack",
            env!("CARGO_BIN_EXE_sluice")
        );
        twin_pushes(&env, &work, |name| path(name), &[&sluice_receive]);
        // ssh, through the stand-in.
        twin_pushes(
            &env,
            &work,
            |name| format!("ssh://example.invalid{}", path(name)),
            &[],
        );
        // ssh to Sluice's receive-pack, from git and from Sluice.
        twin_pushes(
            &env,
            &work,
            |name| format!("ssh://example.invalid{}", path(name)),
            &[&sluice_receive],
        );
        // git daemon.
        let (mut daemon, port) = git_daemon(&env, &git, &["--enable=receive-pack"]);
        twin_pushes(
            &env,
            &work,
            |name| format!("git://127.0.0.1:{port}/{name}"),
            &[],
        );
        let _ = daemon.kill();
        let _ = daemon.wait();
        // git http-backend, anonymous.
        let served = serve_with(&env, Kind::Http, &git, &[]);
        let base = served.url.trim_end_matches("source.git").to_owned();
        twin_pushes(&env, &work, |name| format!("{base}{name}"), &[]);
        drop(served);
        // sluice serve: HTTP and git://.
        let server = Server::start(&env, ".", &["--enable", "receive-pack"]);
        twin_pushes(
            &env,
            &work,
            |name| format!("http://{}/{name}", server.http()),
            &[],
        );
        let git_address = server.git.clone().unwrap();
        twin_pushes(
            &env,
            &work,
            |name| format!("git://{git_address}/{name}"),
            &[],
        );
    }
}

/// Over HTTP with credentials: from the URL, and through `git credential` (a helper that
/// answers), to git http-backend behind a server that asks for them and to `sluice serve` with
/// an htpasswd file; a wrong password is refused as git refuses it.
#[test]
fn sluice_pushes_with_http_credentials() {
    let git = crate::util::git_bin();
    let env = Env::with_git(git.clone());
    let work = setup(&env);
    for name in ["theirs.git", "ours.git"] {
        env.git(
            &env.path().join(name),
            &["config", "--unset", "http.receivepack"],
        );
    }
    let htpasswd = Command::new("htpasswd")
        .args(["-nbB", "alice", "secret"])
        .output()
        .unwrap();
    std::fs::write(env.path().join("users"), &htpasswd.stdout).unwrap();
    let served = serve_with(
        &env,
        Kind::Http,
        &git,
        &[("SLUICE_TEST_HTTP_AUTH", "alice:secret")],
    );
    let server = Server::start(&env, ".", &["--auth-file", "users"]);
    let theirs = served.url.replace("source.git", "theirs.git");
    let ours = format!("http://{}/ours.git", server.http());
    let with = |url: &str, user: &str| url.replacen("http://", &format!("http://{user}@"), 1);
    let step = ["HEAD:refs/heads/main"];
    for user in ["alice:wrong", "alice:secret"] {
        let said_by_git = push(&env, &work, false, &with(&theirs, user), &[], &step);
        let said_by_sluice = push(&env, &work, true, &with(&ours, user), &[], &step);
        assert_eq!(said_by_sluice, said_by_git, "{user}");
    }
    // Credentials from a helper, for the next push.
    let helper = "credential.helper=!f() { echo username=alice; echo password=secret; }; f";
    let step = ["HEAD~1:refs/heads/topic"];
    for (sluice, url) in [(false, &theirs), (true, &ours)] {
        let mut all = vec!["-c", helper, "push", url];
        all.extend(step);
        let out = env.sluice_or_git(sluice, &work, &all);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let (theirs_dir, ours_dir) = (env.path().join("theirs.git"), env.path().join("ours.git"));
    assert_eq!(refs(&env, &ours_dir), refs(&env, &theirs_dir));
    env.git(&ours_dir, &["fsck", "--strict"]);
}
