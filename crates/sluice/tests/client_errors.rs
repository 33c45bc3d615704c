//! Errors as git words them: the same failure, met by git and by Sluice as clients, reads the
//! same and exits the same. A missing repository over HTTP ("repository '…' not found", after
//! the server's own text as `remote:` lines), one not exported over git://, a refused
//! connection over HTTP (curl's "Failed to connect to … port …") and over git:// (git's
//! "errno=Connection refused"), and a push the server does not take (403, with the server's
//! text saying what to enable).

use crate::serve::Server;
use crate::util::{gits, stderr, Env};
use std::path::Path;

/// What a command said on standard error and its exit code, with the time curl puts in its
/// message ("after 0 ms") and the directory names made the same for both.
fn said(env: &Env, sluice: bool, cwd: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = env.sluice_or_git(sluice, cwd, args);
    let text = stderr(&out).replace(env.path().to_str().unwrap(), "<dir>");
    let text = match (text.find(" after "), text.find(" ms: ")) {
        (Some(start), Some(end)) if start < end => {
            format!("{} after <n>{}", &text[..start], &text[end..])
        }
        _ => text,
    };
    (out.status.code(), text)
}

/// A work repository with a commit, and `project.git`, its bare clone, to serve.
fn project(env: &Env) -> std::path::PathBuf {
    let work = env.init("work", false);
    env.git(&work, &["commit", "-q", "--allow-empty", "-m", "one"]);
    env.git(
        env.path(),
        &["clone", "-q", "--bare", "work", "project.git"],
    );
    work
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn connection_and_repository_failures_read_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        project(&env);
        let server = Server::start(&env, ".", &[]);
        let git_address = server.git.clone().unwrap();
        let closed = closed_port();
        let urls = [
            format!("http://{}/missing.git", server.http()),
            format!("git://{git_address}/missing.git"),
            format!("http://127.0.0.1:{closed}/project.git"),
            format!("git://127.0.0.1:{closed}/project.git"),
        ];
        for (i, url) in urls.iter().enumerate() {
            let dest = format!("dest-{i}");
            let theirs = said(&env, false, env.path(), &["clone", "-q", url, &dest]);
            let ours = said(&env, true, env.path(), &["clone", "-q", url, &dest]);
            assert_eq!(ours, theirs, "{url} with {git:?}");
            assert!(!env.path().join(&dest).exists(), "{url}: a clone was left");
        }
    }
}

#[test]
fn a_push_the_server_does_not_take_shows_its_text_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let work = project(&env);
        let server = Server::start(&env, ".", &[]);
        let url = format!("http://{}/project.git", server.http());
        let args = ["push", url.as_str(), "HEAD:refs/heads/main"];
        let theirs = said(&env, false, &work, &args);
        let ours = said(&env, true, &work, &args);
        assert_eq!(ours, theirs, "{git:?}");
        assert_eq!(ours.0, Some(128));
        assert!(ours.1.contains("remote: Service not enabled"), "{}", ours.1);
        assert!(ours.1.contains("http.receivepack"), "{}", ours.1);
        assert!(ours.1.contains("--auth-file"), "{}", ours.1);
    }
}

/// A certificate made by `openssl req -x509` (self-signed, its own CA) and named by
/// `GIT_SSL_CAINFO` is trusted as git trusts it; without it, the refusal reads as git's words
/// for a certificate problem, never a dump of the TLS library's error.
#[test]
fn a_pinned_self_signed_certificate_is_trusted_as_git_trusts_it() {
    let env = Env::new();
    project(&env);
    let openssl = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .args(["-keyout", "self.key", "-out", "self.pem"])
        .current_dir(env.path())
        .output()
        .expect("the openssl command (Debian package openssl) is needed for https tests");
    assert!(openssl.status.success(), "{}", stderr(&openssl));
    let server = Server::start(
        &env,
        ".",
        &["--tls-cert", "self.pem", "--tls-key", "self.key"],
    );
    let url = format!("https://{}/project.git", server.http());
    let pinned = env.path().join("self.pem");
    let pinned = pinned.to_str().unwrap();
    for (sluice, dest) in [(false, "by-git"), (true, "by-sluice")] {
        let mut command =
            env.sluice_or_git_command(sluice, env.path(), &["clone", "-q", &url, dest]);
        let out = command.env("GIT_SSL_CAINFO", pinned).output().unwrap();
        assert!(out.status.success(), "sluice: {sluice}: {}", stderr(&out));
    }
    let refs = |dir: &str| env.git(&env.path().join(dir), &["for-each-ref"]);
    assert_eq!(refs("by-sluice"), refs("by-git"));
    // The same certificate with nothing pinned: refused in git's words.
    let out = env.sluice(env.path(), &["clone", "-q", &url, "unpinned"], b"");
    assert_eq!(out.status.code(), Some(128));
    let said = stderr(&out);
    let expected = format!("fatal: unable to access '{url}/': SSL certificate problem: ");
    assert!(said.starts_with(&expected), "{said}");
    assert!(
        !said.contains("Other(") && !said.contains("Error("),
        "{said}"
    );
}

/// `file://` URLs as git reads them (any host ignored, an escape that is none kept, no path
/// refused) and the depth options as git checks them (`--depth`'s number, `--deepen`'s sign,
/// the options that cannot go together, `--unshallow` where history is whole, a depth
/// `--all` does not pass on): the same exit code, messages, refs and shallow file, no clone
/// left where one failed.
#[test]
fn file_urls_and_depth_options_read_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let work = project(&env);
        for i in 0..3 {
            env.git(
                &work,
                &["commit", "-q", "--allow-empty", "-m", &i.to_string()],
            );
        }
        let work_str = work.to_str().unwrap();
        let clones: Vec<Vec<String>> = [
            vec!["file://localhost".to_owned() + work_str],
            vec![
                "file://elsewhere:22".to_owned() + work_str,
                "--depth=2".to_owned(),
            ],
            vec!["file://nowhere".to_owned()],
            vec!["file:///nonexistent/a%zz".to_owned()],
            vec![work_str.to_owned(), "--depth=0".to_owned()],
            vec![work_str.to_owned(), "--depth=1abc".to_owned()],
            vec![work_str.to_owned(), "--depth=010".to_owned()],
        ]
        .into();
        for (i, given) in clones.iter().enumerate() {
            let dest = format!("clone-{i}");
            let args = [
                &["clone", "-q", "--no-local"][..],
                &given.iter().map(String::as_str).collect::<Vec<_>>(),
                &[&dest],
            ]
            .concat();
            let [ours, theirs] = [true, false].map(|sluice| {
                let said = said(&env, sluice, env.path(), &args);
                let state = match env.path().join(&dest).exists() {
                    true => shallow_state(&env, &env.path().join(&dest)),
                    false => "no clone".to_owned(),
                };
                let _ = std::fs::remove_dir_all(env.path().join(&dest));
                (said, state)
            });
            assert_eq!(ours, theirs, "{args:?} with {git:?}");
        }
        let fetches: [&[&str]; 12] = [
            &["--depth=0"],
            &["--depth=-1"],
            &["--depth=abc"],
            &["--depth=1abc"],
            &["--deepen=0"],
            &["--deepen=-1"],
            &["--deepen=abc"],
            &["--deepen=1"],
            &["--depth=1", "--deepen=1"],
            &["--deepen=2", "--unshallow"],
            &["--unshallow"],
            &["--all", "--depth=1"],
        ];
        for given in fetches {
            let [ours, theirs] = [true, false].map(|sluice| {
                let repo = env.path().join("twin");
                let _ = std::fs::remove_dir_all(&repo);
                let url = format!("file://{work_str}");
                env.git(env.path(), &["clone", "-q", "--depth=2", &url, "twin"]);
                if given.contains(&"--all") || given.contains(&"--unshallow") {
                    // A whole repository with two remotes.
                    env.git(&repo, &["fetch", "-q", "--unshallow"]);
                    env.git(&repo, &["remote", "add", "second", &url]);
                }
                let args = [&["fetch", "-q"][..], given].concat();
                (said(&env, sluice, &repo, &args), shallow_state(&env, &repo))
            });
            assert_eq!(ours, theirs, "fetch {given:?} with {git:?}");
        }
    }
}

/// A repository's refs and shallow file.
fn shallow_state(env: &Env, repo: &Path) -> String {
    let refs = env.git(repo, &["for-each-ref"]);
    let shallow = std::fs::read_to_string(repo.join(".git/shallow")).unwrap_or_default();
    format!("{}shallow:\n{shallow}", String::from_utf8_lossy(&refs))
}
