//! Sluice's smart HTTP client against git's http-backend behind a server that redirects,
//! wants credentials and requires a header: it gets through exactly when git does, and its
//! requests look like git's.

use crate::transports::{advance, read, serve_with, state, Kind};
use crate::upload_pack::{fsck, source};
use crate::util::{gits, stderr, Env};
use std::path::Path;

/// One request as `scripts/git_http_server.py` logs it.
struct Logged {
    method: String,
    path: String,
    status: u16,
    agent: String,
    git_protocol: String,
    content_encoding: String,
}

/// The requests logged so far, parsed from the server's JSON lines (flat objects of strings
/// and one number, which is all it writes).
fn logged(log: &Path) -> Vec<Logged> {
    read(log)
        .lines()
        .map(|line| {
            let field = |name: &str| {
                let key = format!("\"{name}\": ");
                let rest = &line[line.find(&key).expect(name) + key.len()..];
                match rest.strip_prefix('"') {
                    Some(text) => text[..text.find('"').unwrap()].to_owned(),
                    None => rest[..rest.find([',', '}']).unwrap()].to_owned(),
                }
            };
            Logged {
                method: field("method"),
                path: field("path"),
                status: field("status").parse().unwrap(),
                agent: field("agent"),
                git_protocol: field("git_protocol"),
                content_encoding: field("content_encoding"),
            }
        })
        .collect()
}

/// git's http-backend behind a server that redirects `/moved/…`, wants Basic credentials and
/// requires a header. Sluice must get through exactly when git does: with the credentials of
/// the URL or of `git credential fill` (git's `store` helper), the header from
/// `http.extraHeader` (given with `-c`, so also seen by the `git credential` it runs), the
/// redirect followed for the first request only; and it must fail as git fails without them,
/// leaving nothing. Requests over 1 KiB go gzipped, v2 ones with `Git-Protocol`.
#[test]
fn http_credentials_redirects_and_extra_headers_work_as_in_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let repo = source(&env);
        // Forty annotated tags: forty more wants, a request of more than 1 KiB.
        for i in 0..40 {
            env.git(
                &repo,
                &["tag", "-a", "-m", "t", &format!("many-{i}"), "main"],
            );
        }
        let log = env.path().join("requests.log");
        let log_text = log.display().to_string();
        let served = serve_with(
            &env,
            Kind::Http,
            &git,
            &[
                ("SLUICE_TEST_HTTP_AUTH", "reader:s3cret"),
                ("SLUICE_TEST_HTTP_HEADER", "X-Sluice-Test: yes"),
                ("SLUICE_TEST_HTTP_LOG", &log_text),
            ],
        );
        let url = served.url.clone();
        let host = url.trim_end_matches("/source.git").to_owned();
        let store = env.path().join("credentials");
        std::fs::write(
            &store,
            host.replacen("http://", "http://reader:s3cret@", 1) + "\n",
        )
        .unwrap();
        let helper = format!("credential.helper=store --file={}", store.display());
        let header = "http.extraHeader=X-Sluice-Test: yes";
        let moved = url
            .replacen("http://", "http://reader:s3cret@", 1)
            .replacen("/source.git", "/moved/source.git", 1);
        let wrong = url.replacen("http://", "http://reader:wrong@", 1);
        let cases: [(&str, &[&str], &str, Option<&str>); 6] = [
            ("in-url-moved", &[header], &moved, None),
            ("helper", &[header, &helper], &url, None),
            (
                "wrong-password",
                &[header],
                &wrong,
                Some("Authentication failed"),
            ),
            ("no-header", &[&helper], &url, Some("403")),
            // An empty value drops the headers set before it.
            (
                "header-reset",
                &[header, "http.extraHeader=", &helper],
                &url,
                Some("403"),
            ),
            ("no-credentials", &[header], &url, Some("Username")),
        ];
        let attempt = |sluice: bool, cwd: &Path, config: &[&str], args: &[&str]| {
            let mut all = Vec::new();
            for item in config {
                all.extend(["-c", item]);
            }
            all.extend_from_slice(args);
            let mut command = env.sluice_or_git_command(sluice, cwd, &all);
            command.env("GIT_TERMINAL_PROMPT", "0");
            crate::util::run_with_input(command, b"")
        };
        for (name, config, from, failure) in cases {
            let label = format!("{} {name}", git.display());
            for sluice in [true, false] {
                let dest = env.path().join(format!("{name}-{sluice}"));
                let out = attempt(
                    sluice,
                    env.path(),
                    config,
                    &["clone", "-q", from, dest.to_str().unwrap()],
                );
                let message = stderr(&out);
                match failure {
                    None => assert!(out.status.success(), "{label} {sluice}: {message}"),
                    Some(expected) => {
                        assert_eq!(out.status.code(), Some(128), "{label} {sluice}: {message}");
                        assert!(message.contains(expected), "{label} {sluice}: {message}");
                        assert!(!message.contains("panicked"), "{message}");
                        assert!(!dest.exists(), "{label} {sluice}: left {}", dest.display());
                    }
                }
            }
            if failure.is_none() {
                let ours = env.path().join(format!("{name}-true"));
                let theirs = env.path().join(format!("{name}-false"));
                assert_eq!(
                    state(&env, &ours, false),
                    state(&env, &theirs, false),
                    "{label}"
                );
                fsck(&env, &ours);
            }
        }
        // A fetch asks the helper again, and brings the same news as git's.
        advance(&env, 0);
        for sluice in [true, false] {
            let dest = env.path().join(format!("helper-{sluice}"));
            let out = attempt(sluice, &dest, &[header, &helper], &["fetch", "-q"]);
            assert!(out.status.success(), "{sluice}: {}", stderr(&out));
        }
        let (ours, theirs) = (
            env.path().join("helper-true"),
            env.path().join("helper-false"),
        );
        assert_eq!(state(&env, &ours, false), state(&env, &theirs, false));
        // The password stays in the configuration: messages, FETCH_HEAD and reflogs name the
        // server without it, as git's do.
        let mut said = Vec::new();
        for sluice in [true, false] {
            let dest = env.path().join(format!("in-url-moved-{sluice}"));
            let out = attempt(sluice, &dest, &[header], &["fetch", "origin", "main"]);
            assert!(out.status.success(), "{sluice}: {}", stderr(&out));
            let log = env.git(&dest, &["reflog", "show", "--format=%gs", "HEAD"]);
            said.push(format!(
                "{}{}{}",
                stderr(&out),
                read(&dest.join(".git/FETCH_HEAD")),
                String::from_utf8(log).unwrap()
            ));
        }
        assert_eq!(said[0], said[1]);
        assert!(!said[0].contains("s3cret"), "{}", said[0]);
        check_requests(&logged(&log));
    }
}

/// What the server saw of Sluice's requests: the redirect asked once at the old address and
/// never posted to, protocol v2 on every request, and gzipped bodies from git and Sluice.
fn check_requests(requests: &[Logged]) {
    {
        let sluice_requests: Vec<&Logged> = requests
            .iter()
            .filter(|r| r.agent.starts_with("git/sluice"))
            .collect();
        assert!(
            sluice_requests
                .iter()
                .any(|r| r.path.starts_with("/moved/") && r.status == 301),
            "sluice never asked the old address"
        );
        for request in &sluice_requests {
            assert_eq!(request.git_protocol, "version=2", "{}", request.path);
            if request.method == "POST" {
                assert!(
                    !request.path.starts_with("/moved/"),
                    "sluice posted to the old address"
                );
            }
        }
        for client in ["git/sluice", "git/2"] {
            assert!(
                requests.iter().any(|r| r.agent.starts_with(client)
                    && r.method == "POST"
                    && r.status == 200
                    && r.content_encoding == "gzip"),
                "{client} sent no gzipped request"
            );
        }
    }
}

/// The `http.*` settings are git's HTTP helper's: a value git refuses fails a clone over HTTP
/// in git's words, and a clone over any other transport does not read it.
#[test]
fn http_settings_are_read_only_to_talk_http_as_in_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let repo = source(&env);
        let served = serve_with(&env, Kind::Http, &git, &[]);
        let path = repo.to_str().unwrap();
        // git 2.39 says nothing of its helper after the helper's own words; 2.47 does, as Sluice.
        let older = env.git_version() < (2, 40);
        for setting in ["http.postBuffer=bogus", "http.sslVerify=bogus"] {
            for (name, from) in [("http", served.url.as_str()), ("path", path)] {
                let mut said = Vec::new();
                for sluice in [false, true] {
                    let dest = env.path().join(format!("{name}-{sluice}"));
                    let _ = std::fs::remove_dir_all(&dest);
                    let args = ["-c", setting, "clone", "-q", from, dest.to_str().unwrap()];
                    let out = env.sluice_or_git(sluice, env.path(), &args);
                    let mut text = stderr(&out);
                    if older && sluice {
                        text = text.replace("fatal: remote helper 'http' aborted session\n", "");
                    }
                    said.push((out.status.code(), text));
                }
                assert_eq!(
                    said[1],
                    said[0],
                    "{setting} over {name} with {}",
                    git.display()
                );
            }
        }
    }
}
