//! Servers that misbehave: a corrupt pack, a stream cut short, a broken pkt-line, a ref with a
//! name git refuses, a pack without the wanted objects, an error on band 3, silence (over a
//! pipe, git:// and HTTP), HTTP errors and a dumb HTTP server. Each clone and fetch must fail
//! with a clear message and a non-zero exit, and leave the destination as it was: no clone
//! directory, an unchanged repository for a fetch.

use crate::upload_pack::{snapshot, source};
use crate::util::{python, run_with_input, stderr, Env};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support/bad_upload_pack.py")
        .display()
        .to_string()
}

/// The source's whole history as one pack, and a pack of a single blob.
fn packs(env: &Env, repo: &Path) -> (String, String, String) {
    let head = String::from_utf8(env.git(repo, &["rev-parse", "main"])).unwrap();
    let head = head.trim().to_owned();
    let full = env.git_with_input(repo, &["pack-objects", "--all", "--stdout", "-q"], b"");
    assert!(full.status.success());
    let full_path = env.path().join("full.pack");
    std::fs::write(&full_path, &full.stdout).unwrap();
    let blob = String::from_utf8(env.git(repo, &["rev-parse", "main:README"])).unwrap();
    let one = env.git_with_input(repo, &["pack-objects", "--stdout", "-q"], blob.as_bytes());
    let one_path = env.path().join("one.pack");
    std::fs::write(&one_path, &one.stdout).unwrap();
    (
        head,
        full_path.display().to_string(),
        one_path.display().to_string(),
    )
}

/// Runs sluice, which must fail with `expected` in its message (a hang fails the test through
/// the deadline of every command the tests run).
fn must_fail(env: &Env, cwd: &Path, args: &[&str], expected: &str) {
    must_fail_with(env, cwd, args, expected, 128)
}

/// [`must_fail`], exiting with `code`.
fn must_fail_with(env: &Env, cwd: &Path, args: &[&str], expected: &str, code: i32) {
    let out = env.sluice(cwd, args, b"");
    let message = stderr(&out);
    assert!(!out.status.success(), "{args:?} succeeded: {message}");
    assert_eq!(out.status.code(), Some(code), "{args:?}: {message}");
    assert!(
        message.to_lowercase().contains(&expected.to_lowercase()),
        "{args:?}: expected '{expected}' in: {message}"
    );
    assert!(!message.contains("panicked"), "{message}");
}

#[test]
fn bad_upload_packs_leave_nothing_behind() {
    let env = Env::new();
    let repo = source(&env);
    let (head, full, one) = packs(&env, &repo);
    let repo_arg = repo.to_str().unwrap();
    // A URL, not a path: from a path a clone links the objects and only lists refs through
    // upload-pack, as git's does, and the stand-in's pack would never be read.
    let repo_url = format!("file://{repo_arg}");
    // A repository with `origin` configured and nothing fetched yet, so a fetch has work.
    let existing = env.init("existing", false);
    env.git(&existing, &["remote", "add", "origin", repo_arg]);
    let cases = [
        ("corrupt", full.as_str(), "at offset"),
        ("truncated", full.as_str(), "pack"),
        ("bad-pktline", full.as_str(), "bad line length"),
        ("bad-ref", full.as_str(), "refs/heads/../x"),
        (
            "missing",
            one.as_str(),
            "did not send all necessary objects",
        ),
        ("band3", full.as_str(), "the disk caught fire"),
        ("silent", full.as_str(), "sent nothing for 2 seconds"),
    ];
    for (mode, pack, expected) in cases {
        let upload = format!(
            "--upload-pack={} {} {mode} {pack} {head}",
            python(),
            script()
        );
        // Only the silent server is waited out; the others get time to start on a loaded
        // machine (a Python start-up has taken more than 2 seconds there).
        let timeout = if mode == "silent" {
            "sluice.fetchTimeout=2"
        } else {
            "sluice.fetchTimeout=60"
        };
        let dest = env.path().join(format!("clone-{mode}"));
        must_fail(
            &env,
            env.path(),
            &[
                "-c",
                timeout,
                "clone",
                &upload,
                &repo_url,
                dest.to_str().unwrap(),
            ],
            expected,
        );
        assert!(
            !dest.exists(),
            "{mode}: the failed clone left {}",
            dest.display()
        );

        // A directory that existed empty is left empty.
        let empty = env.path().join(format!("empty-{mode}"));
        std::fs::create_dir(&empty).unwrap();
        let out = env.sluice(
            env.path(),
            &[
                "-c",
                timeout,
                "clone",
                &upload,
                &repo_url,
                empty.to_str().unwrap(),
            ],
            b"",
        );
        assert!(!out.status.success());
        assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0, "{mode}");

        let before = snapshot(&existing);
        // A pack that leaves out what the new tips need fails the connectivity check, which
        // git's fetch reports as an error (exit 1), not a fatal one.
        let code = if mode == "missing" { 1 } else { 128 };
        must_fail_with(
            &env,
            &existing,
            &["-c", timeout, "fetch", &upload],
            expected,
            code,
        );
        assert!(
            before == snapshot(&existing),
            "{mode}: the failed fetch changed the repository"
        );
    }
    // After all that, the same commands against a good server succeed.
    let again = env.path().join("again");
    let out = env.sluice(
        env.path(),
        &["clone", "-q", repo_arg, again.to_str().unwrap()],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.sluice(&existing, &["fetch", "-q"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A socket server answering every connection with `answer` (nothing at all when empty),
/// for as long as the test runs.
fn socket_server(answer: &'static [u8]) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0; 4096];
            let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
            let _ = stream.read(&mut request);
            if !answer.is_empty() {
                let _ = stream.write_all(answer);
                continue;
            }
            held.push(stream);
        }
    });
    address
}

#[test]
fn silent_and_broken_network_servers_fail_cleanly() {
    let env = Env::new();
    let silent = socket_server(b"");
    let cases = [
        (format!("git://{silent}/repo.git"), "sent nothing for 2 seconds"),
        (format!("http://{silent}/repo.git"), "timeout"),
        (
            format!("http://{}/repo.git", socket_server(b"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n")),
            "returned error: 500",
        ),
        (
            format!(
                "http://{}/repo.git",
                socket_server(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello")
            ),
            "dumb HTTP",
        ),
        (
            format!(
                "http://{}/repo.git",
                socket_server(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\nContent-Length: 8\r\n\r\nzzzzzzzz")
            ),
            "protocol error: bad line length character",
        ),
    ];
    for (i, (url, expected)) in cases.iter().enumerate() {
        let dest = env.path().join(format!("dest-{i}"));
        let mut command = env.sluice_command(
            env.path(),
            &[
                "-c",
                "sluice.fetchTimeout=2",
                "clone",
                url,
                dest.to_str().unwrap(),
            ],
        );
        command.env("GIT_TERMINAL_PROMPT", "0");
        let start = Instant::now();
        let out = run_with_input(command, b"");
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(128), "{url}: {message}");
        assert!(
            message.to_lowercase().contains(&expected.to_lowercase()),
            "{url}: expected '{expected}' in: {message}"
        );
        assert!(start.elapsed() < Duration::from_secs(60));
        assert!(!dest.exists(), "{url}: the failed clone left its directory");
    }
}

/// Waits (at most 60 seconds) for a temporary pack in `dir`: the pack has begun to arrive.
fn wait_for_temporary_pack(dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = std::fs::read_dir(dir).into_iter().flatten().any(|entry| {
            entry
                .map(|e| e.file_name().to_string_lossy().starts_with("tmp_pack_"))
                .unwrap_or(false)
        });
        if found {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no pack began in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ctrl-C while the pack arrives (the server sent half of it and went quiet): the clone's
/// directory is gone, the fetch's repository is as it was with no temporary file left in it,
/// the exit code is the shell's for SIGINT, and the same commands then succeed.
#[test]
fn interrupted_clones_and_fetches_leave_nothing_behind() {
    let env = Env::new();
    let repo = source(&env);
    let (head, full, _) = packs(&env, &repo);
    let repo_arg = repo.to_str().unwrap();
    // A URL, so the clone reads its pack from the stand-in (see above).
    let repo_url = format!("file://{repo_arg}");
    let upload = format!(
        "--upload-pack={} {} stall {full} {head}",
        python(),
        script()
    );
    let existing = env.init("existing", false);
    env.git(&existing, &["remote", "add", "origin", repo_arg]);
    let before = snapshot(&existing);
    let dest = env.path().join("interrupted");
    let dest_arg = dest.to_str().unwrap();
    let runs: [(&Path, Vec<&str>, PathBuf); 2] = [
        (
            env.path(),
            vec!["clone", &upload, &repo_url, dest_arg],
            dest.join(".git/objects/pack"),
        ),
        (
            &existing,
            vec!["fetch", &upload],
            existing.join(".git/objects/pack"),
        ),
    ];
    for (cwd, args, pack_dir) in runs {
        let mut command = env.sluice_command(cwd, &args);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let child = command.spawn().unwrap();
        wait_for_temporary_pack(&pack_dir);
        let signalled = Instant::now();
        let kill = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        // The server's shell holds our stderr until it ends: it must not outlive sluice (the
        // stand-in itself lets go of stderr, then sleeps for a minute).
        let out = child.wait_with_output().unwrap();
        assert!(
            signalled.elapsed() < Duration::from_secs(30),
            "{args:?}: the server outlived the interrupted sluice"
        );
        assert_eq!(out.status.code(), Some(130), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
    assert!(
        !dest.exists(),
        "the interrupted clone left {}",
        dest.display()
    );
    assert!(
        before == snapshot(&existing),
        "the interrupted fetch changed the repository"
    );
    let out = env.sluice(env.path(), &["clone", "-q", repo_arg, dest_arg], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.sluice(&existing, &["fetch", "-q"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
}
