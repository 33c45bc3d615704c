//! Pushes over smart HTTP to `sluice serve`, from real git clients, twin-wise against git's own
//! `http-backend` behind a web server (`scripts/git_http_server.py`): the same refs, reflogs,
//! exit codes and messages; credentials checked as the web server in front of git checks them;
//! TLS; pushes over git:// where the server enables them; and a broken push that leaves
//! nothing behind.

use crate::receive_pack::{leftovers, storage};
use crate::serve::Server;
use crate::transports::{serve_with, tls_certificate, Kind, Served};
use crate::util::{gits, stderr, Env};
use std::io::{Read, Write};
use std::path::Path;

/// `git push <url> args…` from `work`; the exit code and what git said, the URL replaced by
/// `<url>`.
fn push(
    env: &Env,
    work: &Path,
    url: &str,
    config: &[&str],
    args: &[&str],
) -> (Option<i32>, String) {
    let mut all: Vec<&str> = config.iter().flat_map(|c| ["-c", c]).collect();
    all.push("push");
    all.push(url);
    all.extend(args);
    let out = env
        .git_command(work, &all)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .unwrap();
    // git names the URL without its credentials.
    let (scheme, rest) = url.split_once("://").unwrap();
    let shown = format!("{scheme}://{}", rest.rsplit('@').next().unwrap());
    let host = shown.split('/').nth(2).unwrap();
    let said = stderr(&out).replace(&shown, "<url>");
    (out.status.code(), said.replace(host, "<server>"))
}

fn refs(env: &Env, repo: &Path) -> String {
    String::from_utf8(env.git(repo, &["for-each-ref", "--format=%(refname) %(objectname)"]))
        .unwrap()
}

/// The reflog of `name` without times: old, new, who and why.
fn reflog(repo: &Path, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo.join("logs").join(name)).unwrap_or_default();
    text.lines()
        .map(|line| {
            let (head, message) = line.split_once('\t').unwrap();
            let who = &head[..head.rfind('>').unwrap() + 1];
            format!("{who}\t{message}")
        })
        .collect()
}

/// Twin bare repositories in `env`: `theirs.git` served by git http-backend (with `http_env`,
/// its test gates) and `ours.git` by `sluice serve` (with `extra` options); `setup` prepares
/// both. Returns the URLs and the servers, which stop when dropped.
fn twins(
    env: &Env,
    git: &Path,
    http_env: &[(&str, &str)],
    extra: &[&str],
    setup: impl Fn(&Path),
) -> (String, String, Served, Server) {
    for name in ["theirs.git", "ours.git"] {
        setup(&env.init(name, true));
    }
    let theirs = serve_with(env, Kind::Http, git, http_env);
    let ours = Server::start(env, ".", extra);
    let theirs_url = theirs.url.replace("source.git", "theirs.git");
    let ours_url = format!("http://{}/ours.git", ours.http());
    (theirs_url, ours_url, theirs, ours)
}

pub(crate) fn work_with_commits(env: &Env) -> std::path::PathBuf {
    let work = env.init("work", false);
    for name in ["one", "two"] {
        std::fs::write(work.join(name), format!("{name}\n")).unwrap();
        env.git(&work, &["add", name]);
        env.git(&work, &["commit", "-q", "-m", name]);
    }
    env.git(&work, &["tag", "-a", "-m", "v1", "v1"]);
    work
}

#[test]
fn git_pushes_over_http_as_to_git_http_backend() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let work = work_with_commits(&env);
        let (theirs, ours, _git_server, _server) = twins(&env, &git, &[], &[], |repo| {
            env.git(repo, &["config", "http.receivepack", "true"]);
            env.git(repo, &["config", "core.logAllRefUpdates", "true"]);
        });
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
        let (theirs_dir, ours_dir) = (env.path().join("theirs.git"), env.path().join("ours.git"));
        for step in &steps {
            let theirs_said = push(&env, &work, &theirs, &[], step);
            let ours_said = push(&env, &work, &ours, &[], step);
            assert_eq!(ours_said, theirs_said, "{step:?}");
            assert_eq!(refs(&env, &ours_dir), refs(&env, &theirs_dir), "{step:?}");
            assert_eq!(
                storage(&env, &ours_dir),
                storage(&env, &theirs_dir),
                "{step:?}"
            );
            assert_eq!(leftovers(&ours_dir), Vec::<String>::new(), "{step:?}");
        }
        let main = "refs/heads/main";
        assert_eq!(reflog(&ours_dir, main), reflog(&theirs_dir, main));
        env.git(&ours_dir, &["fsck", "--strict"]);
    }
}

/// Without `http.receivepack`, only users who authenticated push: to git's http-backend the web
/// server in front says who they are, to `sluice serve` its htpasswd file (`htpasswd -B`).
/// Missing and wrong credentials get a 401 and git's refusal; the right ones push, and the
/// reflog names the user as git http-backend names them. With neither, pushes are refused
/// (403), and `http.receivepack=false` refuses even the authenticated.
#[test]
fn pushes_over_http_need_credentials_as_with_git_http_backend() {
    let git = crate::util::git_bin();
    let env = Env::with_git(git.clone());
    let work = work_with_commits(&env);
    let htpasswd = std::process::Command::new("htpasswd")
        .args(["-nbB", "alice", "secret"])
        .output()
        .expect("htpasswd (Debian package apache2-utils) is needed for the HTTP push tests");
    assert!(htpasswd.status.success());
    std::fs::write(env.path().join("users"), &htpasswd.stdout).unwrap();
    let (theirs, ours, _git_server, _server) = twins(
        &env,
        &git,
        &[("SLUICE_TEST_HTTP_AUTH", "alice:secret")],
        &["--auth-file", "users"],
        |repo| {
            env.git(repo, &["config", "core.logAllRefUpdates", "true"]);
        },
    );
    let with = |url: &str, user: &str| url.replacen("http://", &format!("http://{user}@"), 1);
    let (theirs_dir, ours_dir) = (env.path().join("theirs.git"), env.path().join("ours.git"));
    for (user, lands) in [("", false), ("alice:wrong", false), ("alice:secret", true)] {
        let (theirs, ours) = match user {
            "" => (theirs.clone(), ours.clone()),
            _ => (with(&theirs, user), with(&ours, user)),
        };
        let step = ["HEAD:refs/heads/main"];
        let theirs_said = push(&env, &work, &theirs, &[], &step);
        let ours_said = push(&env, &work, &ours, &[], &step);
        assert_eq!(ours_said, theirs_said, "{user}");
        assert_eq!(theirs_said.0 == Some(0), lands, "{user}: {}", theirs_said.1);
        assert_eq!(refs(&env, &ours_dir), refs(&env, &theirs_dir));
        assert_eq!(leftovers(&ours_dir), Vec::<String>::new());
    }
    let main = "refs/heads/main";
    assert_eq!(reflog(&ours_dir, main), reflog(&theirs_dir, main));
    assert!(reflog(&ours_dir, main)[0].contains("alice <alice@http.127.0.0.1>"));
    // Turned off for the repository: refused even with credentials.
    env.git(&ours_dir, &["config", "http.receivepack", "false"]);
    let (code, said) = push(
        &env,
        &work,
        &with(&ours, "alice:secret"),
        &[],
        &["HEAD:refs/heads/x"],
    );
    assert_eq!(code, Some(128), "{said}");
    assert!(said.contains("403"), "{said}");
    // A server without an htpasswd file serves no pushes where the repository does not ask.
    let bare = Server::start(&env, ".", &[]);
    let url = format!("http://alice:secret@{}/theirs.git", bare.http());
    let (code, said) = push(&env, &work, &url, &[], &["HEAD:refs/heads/x"]);
    assert_eq!(code, Some(128), "{said}");
    assert!(said.contains("403"), "{said}");
}

/// Under TLS: a push with credentials lands, and a clone of the result is what git clones.
#[test]
fn pushes_and_clones_over_https() {
    let env = Env::new();
    let work = work_with_commits(&env);
    let (ca, cert, key) = tls_certificate(&env);
    let htpasswd = std::process::Command::new("htpasswd")
        .args(["-nbB", "alice", "secret"])
        .output()
        .unwrap();
    std::fs::write(env.path().join("users"), &htpasswd.stdout).unwrap();
    let repo = env.init("ours.git", true);
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let args = ["--auth-file", "users", "--tls-cert", cert, "--tls-key", key];
    let server = Server::start(&env, ".", &args);
    let url = format!("https://alice:secret@{}/ours.git", server.http());
    let ca = format!("http.sslCAInfo={}", ca.display());
    let (code, said) = push(&env, &work, &url, &[&ca], &["HEAD:refs/heads/main", "v1"]);
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(
        refs(&env, &repo),
        refs(&env, &work).replace("refs/heads/master", "refs/heads/main")
    );
    env.git(&repo, &["fsck", "--strict"]);
    let clone = env.path().join("clone");
    let url = format!("https://{}/ours.git", server.http());
    let out = env
        .git_command(
            env.path(),
            &["-c", &ca, "clone", "-q", &url, clone.to_str().unwrap()],
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // Plain HTTP to the TLS port is refused (a 400 in the clear, saying to use https).
    let plain = format!("http://{}/ours.git", server.http());
    let (code, _) = push(&env, &work, &plain, &[], &["HEAD:refs/heads/x"]);
    assert_ne!(code, Some(0));
}

/// A push bigger than git's http.postBuffer comes chunked, after a probe; its body is streamed
/// into the indexer and the push lands as a pack.
#[test]
fn a_large_push_is_streamed() {
    let env = Env::new();
    let work = env.init("work", false);
    std::fs::write(work.join("big"), crate::util::noise(7, 3 << 20)).unwrap();
    env.git(&work, &["add", "big"]);
    env.git(&work, &["commit", "-q", "-m", "big"]);
    let repo = env.init("ours.git", true);
    env.git(&repo, &["config", "http.receivepack", "true"]);
    let server = Server::start(&env, ".", &["--max-request-size", "100000"]);
    let url = format!("http://{}/ours.git", server.http());
    let (code, said) = push(&env, &work, &url, &[], &["HEAD:refs/heads/main"]);
    assert_eq!(code, Some(0), "{said}");
    env.git(&repo, &["fsck", "--strict"]);
}

/// A push over a raw connection to `server` that stops halfway through its pack, announcing
/// 1,000 bytes more than it sends; returns the connection, still open.
fn half_a_push(env: &Env, work: &Path, server: &Server) -> std::net::TcpStream {
    let head = String::from_utf8(env.git(work, &["rev-parse", "HEAD"])).unwrap();
    let pack = env.git_with_input(work, &["pack-objects", "--revs", "--stdout"], b"HEAD\n");
    let command = format!(
        "{} {} refs/heads/main\0report-status\n",
        "0".repeat(40),
        head.trim()
    );
    let mut body = format!("{:04x}{command}0000", command.len() + 4).into_bytes();
    body.extend_from_slice(&pack.stdout[..pack.stdout.len() / 2]);
    let mut socket = std::net::TcpStream::connect(server.http()).unwrap();
    let request = format!(
        "POST /ours.git/git-receive-pack HTTP/1.1\r\nHost: x\r\n\
         Content-Type: application/x-git-receive-pack-request\r\nContent-Length: {}\r\n\r\n",
        body.len() + 1000
    );
    socket.write_all(request.as_bytes()).unwrap();
    socket.write_all(&body).unwrap();
    socket
}

/// Nothing of a push that did not finish is left in `repo`, and the server takes the next.
fn nothing_left_and_next_push_lands(env: &Env, work: &Path, repo: &Path, server: &Server) {
    assert_eq!(refs(env, repo), "");
    assert_eq!(leftovers(repo), Vec::<String>::new());
    assert_eq!(storage(env, repo), ["count: 0", "in-pack: 0", "packs: 0"]);
    let url = format!("http://{}/ours.git", server.http());
    let (code, said) = push(env, work, &url, &[], &["HEAD:refs/heads/main"]);
    assert_eq!(code, Some(0), "{said}");
    env.git(repo, &["fsck", "--strict"]);
}

/// A push whose pack is cut off (the client vanished) is refused: the refs do not move, no
/// object and no temporary file of it stays, and the server goes on taking pushes.
#[test]
fn a_push_cut_off_mid_pack_leaves_nothing() {
    let env = Env::new();
    let work = work_with_commits(&env);
    let repo = env.init("ours.git", true);
    env.git(&repo, &["config", "http.receivepack", "true"]);
    env.git(&repo, &["config", "receive.unpackLimit", "1"]);
    let server = Server::start(&env, ".", &[]);
    let mut socket = half_a_push(&env, &work, &server);
    socket.shutdown(std::net::Shutdown::Write).unwrap();
    let mut answer = Vec::new();
    let _ = socket.read_to_end(&mut answer);
    nothing_left_and_next_push_lands(&env, &work, &repo, &server);
}

/// git:// takes pushes only where `--enable=receive-pack` (or the repository) says so.
#[test]
fn git_daemon_pushes_need_enable() {
    let env = Env::new();
    let work = work_with_commits(&env);
    let repo = env.init("ours.git", true);
    let refused = Server::start(&env, ".", &[]);
    let url = format!("git://{}/ours.git", refused.git.as_deref().unwrap());
    let (code, said) = push(&env, &work, &url, &[], &["HEAD:refs/heads/main"]);
    assert_eq!(code, Some(128), "{said}");
    assert!(said.contains("service not enabled"), "{said}");
    let enabled = Server::start(&env, ".", &["--enable", "receive-pack"]);
    let url = format!("git://{}/ours.git", enabled.git.as_deref().unwrap());
    let (code, said) = push(&env, &work, &url, &[], &["HEAD:refs/heads/main"]);
    assert_eq!(code, Some(0), "{said}");
    env.git(&repo, &["config", "daemon.receivepack", "false"]);
    let (code, _) = push(&env, &work, &url, &[], &["HEAD:refs/heads/x"]);
    assert_eq!(code, Some(128));
    env.git(&repo, &["fsck", "--strict"]);
}

/// A client that goes silent mid-pack is dropped after the server's timeout: nothing of its
/// push stays, and the server goes on.
#[test]
fn a_silent_pusher_is_dropped_and_leaves_nothing() {
    let env = Env::new();
    let work = work_with_commits(&env);
    let repo = env.init("ours.git", true);
    env.git(&repo, &["config", "http.receivepack", "true"]);
    env.git(&repo, &["config", "receive.unpackLimit", "1"]);
    let server = Server::start(&env, ".", &["--timeout", "1"]);
    let mut socket = half_a_push(&env, &work, &server);
    // Silent from here on, connection open: the server must give up on its own.
    let started = std::time::Instant::now();
    let mut answer = Vec::new();
    let _ = socket.read_to_end(&mut answer);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    nothing_left_and_next_push_lands(&env, &work, &repo, &server);
}

/// 16 git clients pushing at once through `sluice serve`: to 16 branches, all land; racing on
/// one branch, it ends at exactly one of their commits, every other client is refused as git
/// refuses a lost race, and the repository is complete with no lock file left.
#[test]
fn sixteen_concurrent_pushes() {
    let env = Env::new();
    let base = work_with_commits(&env);
    let repo = env.init("ours.git", true);
    env.git(&repo, &["config", "http.receivepack", "true"]);
    let server = Server::start(&env, ".", &[]);
    let url = format!("http://{}/ours.git", server.http());
    let (code, said) = push(&env, &base, &url, &[], &["HEAD:refs/heads/main"]);
    assert_eq!(code, Some(0), "{said}");
    let works: Vec<std::path::PathBuf> = (0..16)
        .map(|i| {
            let work = env.path().join(format!("w{i}"));
            env.git(
                env.path(),
                &[
                    "clone",
                    "-q",
                    base.to_str().unwrap(),
                    work.to_str().unwrap(),
                ],
            );
            std::fs::write(work.join("mine"), format!("{i}\n")).unwrap();
            env.git(&work, &["add", "mine"]);
            env.git(&work, &["commit", "-q", "-m", &format!("client {i}")]);
            work
        })
        .collect();
    let heads: Vec<String> = (works.iter())
        .map(|w| {
            String::from_utf8(env.git(w, &["rev-parse", "HEAD"]))
                .unwrap()
                .trim()
                .to_owned()
        })
        .collect();
    let all_at_once = |refspec: &dyn Fn(usize) -> String| -> Vec<(Option<i32>, String)> {
        std::thread::scope(|scope| {
            let running: Vec<_> = (works.iter().enumerate())
                .map(|(i, work)| {
                    let (env, url, spec) = (&env, &url, refspec(i));
                    scope.spawn(move || push(env, work, url, &[], &[&spec]))
                })
                .collect();
            running.into_iter().map(|t| t.join().unwrap()).collect()
        })
    };
    for (i, (code, said)) in all_at_once(&|i| format!("HEAD:refs/heads/b{i}"))
        .iter()
        .enumerate()
    {
        assert_eq!(*code, Some(0), "client {i}: {said}");
    }
    let landed = refs(&env, &repo);
    for (i, head) in heads.iter().enumerate() {
        assert!(
            landed.contains(&format!("refs/heads/b{i} {head}")),
            "{landed}"
        );
    }
    let raced = all_at_once(&|_| "HEAD:refs/heads/main".to_owned());
    let winners = raced.iter().filter(|(code, _)| *code == Some(0)).count();
    assert_eq!(winners, 1, "{raced:?}");
    for (code, said) in raced.iter().filter(|(code, _)| *code != Some(0)) {
        assert_eq!(*code, Some(1), "{said}");
        assert!(
            said.contains("[rejected]") || said.contains("[remote rejected]"),
            "{said}"
        );
    }
    let main = String::from_utf8(env.git(&repo, &["rev-parse", "refs/heads/main"])).unwrap();
    assert!(heads.contains(&main.trim().to_owned()));
    env.git(&repo, &["fsck", "--strict"]);
    assert_eq!(leftovers(&repo), Vec::<String>::new());
}
