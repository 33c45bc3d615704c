//! The server's log, as an operator reads it: one line per request with an RFC 3339 time, the
//! client, the repository, the service, the user who pushed, the status, the bytes each way
//! and the duration, as text or as JSON (`--log-format json`); a client that finished and
//! hung up is no error. Under TLS the server announces `https://`, and a plain HTTP request to
//! its port is answered in the clear and logged as what it is.

use crate::util::{stderr, Env};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// `sluice serve` on free ports with `extra` options, its log going to `log`; the addresses
/// it announced.
fn serve(env: &Env, extra: &[&str], log: &Path) -> (Child, Vec<String>) {
    let mut args = vec!["serve", "--http", "127.0.0.1:0", "--git", "127.0.0.1:0"];
    args.extend(extra);
    args.push(".");
    let mut command = env.sluice_command(env.path(), &args);
    command
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap());
    let mut child = command.spawn().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let announced = (0..2).map(|_| lines.next().unwrap().unwrap()).collect();
    (child, announced)
}

fn address(announced: &[String], scheme: &str) -> String {
    let prefix = format!("{scheme}://");
    let line = announced.iter().find(|l| l.contains(&prefix)).unwrap();
    line.rsplit_once(&prefix).unwrap().1.to_owned()
}

/// Stops the server (SIGTERM: it finishes what runs) and returns its log.
fn stop(mut child: Child, log: &Path) -> String {
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let _ = child.wait();
    std::fs::read_to_string(log).unwrap()
}

/// A served repository with a commit, pushes allowed to the users of `users` (alice).
fn served(env: &Env) -> PathBuf {
    let work = env.init("work", false);
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "one"]);
    env.git(
        env.path(),
        &["clone", "-q", "--bare", "work", "project.git"],
    );
    let htpasswd = Command::new("htpasswd")
        .args(["-nbB", "alice", "secret"])
        .output()
        .expect("htpasswd (Debian package apache2-utils) is needed for the HTTP push tests");
    std::fs::write(env.path().join("users"), &htpasswd.stdout).unwrap();
    work
}

/// A JSON value's field, as text (strings unquoted), from a flat JSON object line.
fn field(line: &str, name: &str) -> Option<String> {
    let start = line.find(&format!("\"{name}\":"))? + name.len() + 3;
    let rest = &line[start..];
    Some(match rest.strip_prefix('"') {
        Some(text) => text[..text.find('"')?].to_owned(),
        None => rest[..rest.find([',', '}'])?].to_owned(),
    })
}

/// Whether `text` starts with an RFC 3339 UTC time (`2026-11-28T21:08:58.328080Z`).
fn rfc3339(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 20
        && [4, 7].iter().all(|&i| bytes[i] == b'-')
        && bytes[10] == b'T'
        && [13, 16].iter().all(|&i| bytes[i] == b':')
        && text[..text.find('Z').unwrap_or(0)].len() >= 19
}

#[test]
fn every_request_is_one_json_line_an_operator_can_use() {
    let env = Env::new();
    let work = served(&env);
    let log = env.path().join("serve.log");
    let (child, announced) = serve(
        &env,
        &["--auth-file", "users", "--log-format", "json"],
        &log,
    );
    let http = address(&announced, "http");
    let git = address(&announced, "git");
    for (url, name) in [
        (format!("http://{http}/project.git"), "by-http"),
        (format!("git://{git}/project.git"), "by-git"),
    ] {
        env.git(env.path(), &["clone", "-q", &url, name]);
        let out = env.sluice(
            env.path(),
            &["clone", "-q", &url, &format!("{name}-2")],
            b"",
        );
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let push_url = format!("http://alice:secret@{http}/project.git");
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "two"]);
    env.git(&work, &["push", "-q", &push_url, "HEAD:refs/heads/pushed"]);
    let missing = env
        .git_command(
            env.path(),
            &["clone", "-q", &format!("http://{http}/nope.git"), "x"],
        )
        .output()
        .unwrap();
    assert!(!missing.status.success());
    let text = stop(child, &log);
    let requests: Vec<&str> = text.lines().filter(|l| l.starts_with('{')).collect();
    assert!(requests.len() >= 8, "{text}");
    for line in &requests {
        assert!(rfc3339(&field(line, "timestamp").unwrap()), "{line}");
        for name in [
            "client",
            "scheme",
            "request",
            "repository",
            "service",
            "user",
            "status",
        ] {
            assert!(field(line, name).is_some(), "{name} in {line}");
        }
        for name in ["sent", "received"] {
            let bytes: u64 = field(line, name).unwrap().parse().unwrap();
            assert!(bytes > 0, "{name} in {line}");
        }
        let took: f64 = field(line, "duration_ms").unwrap().parse().unwrap();
        assert!(took >= 0.0, "{line}");
        let failed = field(line, "message").as_deref() == Some("failed");
        let refused = ["401", "404"].contains(&field(line, "status").unwrap().as_str());
        // Only the refusals are failures: no finished client is logged as an error.
        assert_eq!(failed, refused, "{line}");
    }
    let pushed = requests
        .iter()
        .find(|l| l.contains("POST") && l.contains("git-receive-pack"))
        .unwrap();
    assert_eq!(field(pushed, "user").as_deref(), Some("alice"), "{pushed}");
    assert_eq!(field(pushed, "repository").as_deref(), Some("/project.git"));
    assert!(requests
        .iter()
        .any(|l| field(l, "scheme").as_deref() == Some("git")));
    assert!(requests
        .iter()
        .any(|l| field(l, "status").as_deref() == Some("404")));
}

#[test]
fn text_lines_carry_the_same_fields() {
    let env = Env::new();
    served(&env);
    let log = env.path().join("serve.log");
    let (child, announced) = serve(&env, &[], &log);
    let url = format!("http://{}/project.git", address(&announced, "http"));
    let out = env.sluice(env.path(), &["clone", "-q", &url, "copy"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stop(child, &log);
    let served: Vec<&str> = text.lines().filter(|l| l.contains(" served ")).collect();
    assert!(served.len() >= 2, "{text}");
    for line in served {
        assert!(rfc3339(line), "{line}");
        for name in [
            "client=",
            "repository=\"/project.git\"",
            "service=",
            "status=\"200\"",
            "sent=",
            "received=",
            "duration_ms=",
        ] {
            assert!(line.contains(name), "{name} in {line}");
        }
    }
    assert!(
        !text.contains("Broken pipe") && !text.contains("failed"),
        "{text}"
    );
}

#[test]
fn tls_is_announced_and_plain_http_to_it_is_answered_and_logged() {
    let env = Env::new();
    served(&env);
    let (_ca, cert, key) = crate::transports::tls_certificate(&env);
    let log = env.path().join("serve.log");
    let tls = [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    let (child, announced) = serve(&env, &tls, &log);
    assert!(
        announced.iter().any(|l| l.contains("https://")),
        "{announced:?}"
    );
    let address = address(&announced, "https");
    let mut socket = std::net::TcpStream::connect(&address).unwrap();
    socket
        .write_all(b"GET /project.git/info/refs HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    let _ = socket.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("https"), "{answer}");
    let text = stop(child, &log);
    assert!(
        text.contains("plain HTTP request on the https port"),
        "{text}"
    );
}
