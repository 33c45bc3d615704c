//! `sluice clone` and `sluice fetch` against every server git users meet: git's upload-pack
//! through file:// and a stand-in for ssh, `git daemon`, git's `http-backend` behind a real
//! HTTP server, and `sluice serve`; each git installed as the server, protocol v0 and v2. Each
//! result must equal what `git clone` / `git fetch` (the same git) make from the same URL:
//! refs, HEAD, configuration, shallow file, FETCH_HEAD, index; and pass `git fsck --strict`.

use crate::serve::{fake_ssh, Server};
use crate::upload_pack::{fsck, refs, source};
use crate::util::{gits, python, stderr, text, Env};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server started for one test, stopped when dropped.
enum Running {
    None,
    Child(Child),
    Sluice(#[allow(dead_code)] Server),
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Running::Child(child) = self {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Where the source is served and what the clients need to reach it.
pub(crate) struct Served {
    pub(crate) url: String,
    /// `--upload-pack` for transports that run a command.
    upload_pack: Option<String>,
    /// `GIT_SSH_COMMAND`, for the ssh stand-in.
    ssh: Option<PathBuf>,
    /// `http.sslCAInfo`, for https.
    pub(crate) ca: Option<PathBuf>,
    _server: Running,
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "server on {port} never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    File,
    Ssh,
    Daemon,
    Http,
    /// git's http-backend behind a server with a certificate from a CA made for the test.
    Https,
    SluiceServe,
}

/// A CA and a certificate it signed for 127.0.0.1, made with the openssl command: returns the
/// CA's certificate, the server's certificate and the server's key (PEM files).
pub(crate) fn tls_certificate(env: &Env) -> (PathBuf, PathBuf, PathBuf) {
    let dir = env.path().join("tls");
    std::fs::create_dir_all(&dir).unwrap();
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("the openssl command (Debian package openssl) is needed for https tests");
        assert!(out.status.success(), "openssl {args:?}: {}", stderr(&out));
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509", "-days", "2", "-subj", "/CN=sluice test CA"];
    ca.extend(ec);
    ca.extend(["-keyout", "ca.key", "-out", "ca.pem"]);
    openssl(&ca);
    let mut request = vec!["req", "-subj", "/CN=127.0.0.1"];
    request.extend(ec);
    request.extend(["-keyout", "server.key", "-out", "server.csr"]);
    openssl(&request);
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-days",
        "2",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-extfile",
        "server.ext",
        "-out",
        "server.pem",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    )
}

/// Serves `env`'s `source.git` with `git` (the server's version) over `kind`.
fn serve(env: &Env, kind: Kind, git: &Path) -> Served {
    serve_with(env, kind, git, &[])
}

/// [`serve`], with variables for the HTTP server (its test gates: see
/// `scripts/git_http_server.py`).
pub(crate) fn serve_with(env: &Env, kind: Kind, git: &Path, http_env: &[(&str, &str)]) -> Served {
    let repo = env.path().join("source.git");
    let upload_pack = format!("{} upload-pack", git.display());
    match kind {
        Kind::File => Served {
            url: format!("file://{}", repo.display()),
            upload_pack: Some(upload_pack),
            ssh: None,
            ca: None,
            _server: Running::None,
        },
        Kind::Ssh => Served {
            url: format!("ssh://example.invalid{}", repo.display()),
            upload_pack: Some(upload_pack),
            ssh: Some(fake_ssh(env)),
            ca: None,
            _server: Running::None,
        },
        Kind::Daemon => {
            let (child, port) = git_daemon(env, git, &[]);
            Served {
                url: format!("git://127.0.0.1:{port}/source.git"),
                upload_pack: None,
                ssh: None,
                ca: None,
                _server: Running::Child(child),
            }
        }
        Kind::Http | Kind::Https => {
            let port_file = env.path().join("http-port");
            let script =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/git_http_server.py");
            let mut command = Command::new(python());
            command.arg(script).arg(&port_file).arg(env.path()).arg(git);
            let mut ca = None;
            if let Kind::Https = kind {
                let (authority, certificate, key) = tls_certificate(env);
                command.arg(certificate).arg(key);
                ca = Some(authority);
            }
            let child = command
                .envs(http_env.iter().copied())
                .env("HOME", env.path().join("home"))
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(20);
            let port = loop {
                if let Ok(text) = std::fs::read_to_string(&port_file) {
                    if let Ok(port) = text.trim().parse::<u16>() {
                        break port;
                    }
                }
                assert!(Instant::now() < deadline, "the HTTP server did not start");
                std::thread::sleep(Duration::from_millis(50));
            };
            let scheme = if ca.is_some() { "https" } else { "http" };
            Served {
                url: format!("{scheme}://127.0.0.1:{port}/source.git"),
                upload_pack: None,
                ssh: None,
                ca,
                _server: Running::Child(child),
            }
        }
        Kind::SluiceServe => {
            let server = Server::start(env, ".", &[]);
            Served {
                url: format!("http://{}/source.git", server.http()),
                upload_pack: None,
                ssh: None,
                ca: None,
                _server: Running::Sluice(server),
            }
        }
    }
}

/// git daemon serving `env`'s directory (every repository exported) with `extra` options, on
/// a free port: the child and the port.
pub(crate) fn git_daemon(env: &Env, git: &Path, extra: &[&str]) -> (Child, u16) {
    let port = free_port();
    // git-daemon itself, not `git daemon` (whose child would outlive a kill).
    let exec_path = Command::new(git)
        .arg("--exec-path")
        .output()
        .unwrap()
        .stdout;
    let daemon = PathBuf::from(String::from_utf8(exec_path).unwrap().trim()).join("git-daemon");
    let child = Command::new(daemon)
        .args(["--reuseaddr", "--export-all", "--listen=127.0.0.1"])
        .args(extra)
        .arg(format!("--port={port}"))
        .arg(format!("--base-path={}", env.path().display()))
        .arg(env.path())
        .env("HOME", env.path().join("home"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port);
    (child, port)
}

/// Runs `program` (git or sluice) with the served options; must succeed.
fn run(env: &Env, served: &Served, sluice: bool, cwd: &Path, protocol: &str, args: &[&str]) {
    let mut all = vec!["-c", protocol, "-c", "ssh.variant=ssh"];
    let ca = served
        .ca
        .as_ref()
        .map(|ca| format!("http.sslCAInfo={}", ca.display()));
    if let Some(ca) = &ca {
        all.extend(["-c", ca]);
    }
    all.extend_from_slice(args);
    let mut command = env.sluice_or_git_command(sluice, cwd, &all);
    if let Some(ssh) = &served.ssh {
        command.env("GIT_SSH_COMMAND", ssh);
    }
    let out = crate::util::run_with_input(command, b"");
    let who = if sluice { "sluice" } else { "git" };
    assert!(
        out.status.success(),
        "{who} {all:?} failed: {}",
        stderr(&out)
    );
}

pub(crate) fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// What must be equal between Sluice's repository and git's.
pub(crate) fn state(env: &Env, repo: &Path, bare: bool) -> String {
    let git_dir = if bare {
        repo.to_owned()
    } else {
        repo.join(".git")
    };
    let config = env.git(repo, &["config", "--local", "--list"]);
    let mut out = format!(
        "{}\nconfig:\n{}\nshallow:\n{}",
        refs(env, repo),
        String::from_utf8_lossy(&config),
        read(&git_dir.join("shallow")),
    );
    if !bare {
        let index = env.git(repo, &["ls-files", "-s"]);
        out.push_str(&format!("index:\n{}", String::from_utf8_lossy(&index)));
        let status = env.git(repo, &["status", "--porcelain"]);
        assert!(status.is_empty(), "{}: status not clean", repo.display());
    }
    out
}

/// Moves the source on: a new commit on main, an annotated tag on it, topic rewound.
pub(crate) fn advance(env: &Env, round: usize) {
    let work = env.path().join("advance");
    let repo = env.path().join("source.git");
    if !work.exists() {
        env.git(
            env.path(),
            &[
                "clone",
                "-q",
                repo.to_str().unwrap(),
                work.to_str().unwrap(),
            ],
        );
    }
    std::fs::write(work.join("README"), text(5000 + round, 40)).unwrap();
    std::fs::write(
        work.join(format!("added{round}.txt")),
        text(6000 + round, 10),
    )
    .unwrap();
    env.git(&work, &["add", "-A"]);
    env.git(&work, &["commit", "-q", "-m", &format!("advance {round}")]);
    env.git(&work, &["tag", "-a", "-m", "t", &format!("adv-{round}")]);
    env.git(&work, &["push", "-q", "origin", "main", "--tags"]);
    env.git(
        &repo,
        &["update-ref", "refs/heads/topic", "refs/heads/topic~1"],
    );
}

/// How `repo` stores its objects: which are loose, and how many packs there are.
fn storage(env: &Env, repo: &Path) -> (Vec<String>, usize) {
    let objects = PathBuf::from(
        String::from_utf8(env.git(repo, &["rev-parse", "--git-path", "objects"]))
            .unwrap()
            .trim(),
    );
    let objects = repo.join(objects);
    let mut loose = Vec::new();
    let mut packs = 0;
    for dir in std::fs::read_dir(&objects).unwrap() {
        let dir = dir.unwrap();
        let name = dir.file_name().to_string_lossy().into_owned();
        if name == "pack" {
            packs = crate::util::pack_files(objects.parent().unwrap(), "pack");
        } else if name.len() == 2 {
            for file in std::fs::read_dir(dir.path()).unwrap() {
                loose.push(format!(
                    "{name}{}",
                    file.unwrap().file_name().to_string_lossy()
                ));
            }
        }
    }
    loose.sort();
    (loose, packs)
}

/// What a fetch added to `before` ([`storage`]): the new loose objects and packs.
fn stored_since(env: &Env, repo: &Path, before: &(Vec<String>, usize)) -> String {
    let (loose, packs) = storage(env, repo);
    let new: Vec<&String> = loose.iter().filter(|id| !before.0.contains(id)).collect();
    format!(
        "new packs: {}, new loose objects: {new:?}",
        packs - before.1
    )
}

/// Clones and fetches in every way through `kind`, for each git as the server and client.
fn every_way(kind: Kind) {
    for git in gits() {
        for protocol in ["protocol.version=0", "protocol.version=2"] {
            let env = Env::with_git(git.clone());
            let repo = source(&env);
            env.git(&repo, &["config", "uploadpack.allowFilter", "true"]);
            env.git(&repo, &["config", "uploadpack.allowAnySHA1InWant", "true"]);
            let served = serve(&env, kind, &git);
            let label = format!("{kind:?} {} {protocol}", git.display());
            // The source's commits are a minute apart from 2023-11-14 22:13:20 UTC.
            let clones: [(&str, &[&str]); 9] = [
                ("full", &[]),
                ("bare", &["--bare"]),
                ("mirror", &["--mirror"]),
                ("single", &["--single-branch", "-b", "topic"]),
                ("shallow", &["--depth", "2"]),
                ("since", &["--shallow-since=2023-11-14 22:20:00 +0000"]),
                ("exclude", &["--shallow-exclude=v0.5"]),
                ("partial", &["--filter=blob:none"]),
                ("limit", &["--filter=blob:limit=1k"]),
            ];
            for (name, options) in clones {
                for sluice in [true, false] {
                    let dest = env.path().join(format!("{name}-{sluice}"));
                    let mut args = vec!["clone", "-q"];
                    let upload;
                    if let Some(command) = &served.upload_pack {
                        upload = format!("--upload-pack={command}");
                        args.push(&upload);
                    }
                    args.extend_from_slice(options);
                    args.push(&served.url);
                    args.push(dest.to_str().unwrap());
                    run(&env, &served, sluice, env.path(), protocol, &args);
                }
                let bare = name == "bare" || name == "mirror";
                let (ours, theirs) = (
                    env.path().join(format!("{name}-true")),
                    env.path().join(format!("{name}-false")),
                );
                assert_eq!(
                    state(&env, &ours, bare),
                    state(&env, &theirs, bare),
                    "{label}: clone {name}"
                );
                fsck(&env, &ours);
                if ["shallow", "since", "exclude"].contains(&name) {
                    let shallow = read(&ours.join(".git/shallow"));
                    assert!(!shallow.is_empty(), "{label}: {name} cut no history");
                }
            }
            // git can fetch what the partial clone left out, from the remote it recorded.
            // (In git's own partial clone too, so that both have the same packs after.)
            let lazy = &["cat-file", "-p", "HEAD~3:README"];
            for partial in ["partial-true", "partial-false"] {
                run(
                    &env,
                    &served,
                    false,
                    &env.path().join(partial),
                    protocol,
                    lazy,
                );
            }
            // The source moves on; each kind of clone fetches the news.
            for round in 0..2 {
                advance(&env, round);
                for name in ["full", "single", "shallow", "partial", "mirror"] {
                    let stored: Vec<(Vec<String>, usize)> = [true, false]
                        .iter()
                        .map(|sluice| storage(&env, &env.path().join(format!("{name}-{sluice}"))))
                        .collect();
                    for sluice in [true, false] {
                        let dest = env.path().join(format!("{name}-{sluice}"));
                        // A fetch of fewer objects than transfer.unpackLimit (100 unless
                        // set) is stored loose, except into a partial clone; 1 keeps it.
                        let mut args = match round {
                            0 => vec!["fetch", "-q"],
                            _ => vec!["-c", "transfer.unpackLimit=1", "fetch", "-q"],
                        };
                        let upload;
                        if let Some(command) = &served.upload_pack {
                            upload = format!("--upload-pack={command}");
                            args.push(&upload);
                        }
                        if name == "full" && round == 1 {
                            args.push("--prune");
                        }
                        run(&env, &served, sluice, &dest, protocol, &args);
                    }
                    let bare = name == "mirror";
                    let (ours, theirs) = (
                        env.path().join(format!("{name}-true")),
                        env.path().join(format!("{name}-false")),
                    );
                    let git_dir = |repo: &Path| {
                        if bare {
                            repo.to_owned()
                        } else {
                            repo.join(".git")
                        }
                    };
                    let head = |repo: &Path| read(&git_dir(repo).join("FETCH_HEAD"));
                    assert_eq!(
                        state(&env, &ours, bare),
                        state(&env, &theirs, bare),
                        "{label}: fetch {round} into {name}"
                    );
                    assert_eq!(head(&ours), head(&theirs), "{label}: FETCH_HEAD {name}");
                    assert_eq!(
                        stored_since(&env, &ours, &stored[0]),
                        stored_since(&env, &theirs, &stored[1]),
                        "{label}: fetch {round} into {name}: loose objects and packs"
                    );
                    fsck(&env, &ours);
                }
            }
        }
    }
}

#[test]
fn clone_and_fetch_over_file_urls() {
    every_way(Kind::File);
}

#[test]
fn clone_and_fetch_over_ssh() {
    every_way(Kind::Ssh);
}

#[test]
fn clone_and_fetch_from_git_daemon() {
    every_way(Kind::Daemon);
}

#[test]
fn clone_and_fetch_from_git_http_backend() {
    every_way(Kind::Http);
}

#[test]
fn clone_and_fetch_over_https() {
    every_way(Kind::Https);
}

/// An https server whose certificate nothing vouches for is refused, with the reason and
/// nothing left behind; `GIT_SSL_NO_VERIFY` and `http.sslVerify=false` let it through, as in
/// git.
#[test]
fn https_refuses_an_untrusted_server_unless_told_not_to_verify() {
    let env = Env::new();
    source(&env);
    let served = serve(&env, Kind::Https, &crate::util::git_bin());
    let dest = env.path().join("refused");
    let out = env.sluice(
        env.path(),
        &["clone", "-q", &served.url, dest.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(
        message.contains(&served.url) && message.contains("certificate"),
        "{message}"
    );
    assert!(!dest.exists(), "a refused clone left {}", dest.display());
    let ca = served.ca.as_ref().unwrap();
    let missing = format!("http.sslCAInfo={}", env.path().join("none.pem").display());
    let out = env.sluice(
        env.path(),
        &[
            "-c",
            &missing,
            "clone",
            "-q",
            &served.url,
            dest.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
    assert!(stderr(&out).contains("none.pem"), "{}", stderr(&out));
    assert!(!dest.exists());
    for (i, (setting, variable)) in [
        (Some("http.sslVerify=false"), None),
        (None, Some("GIT_SSL_NO_VERIFY")),
    ]
    .into_iter()
    .enumerate()
    {
        let dest = env.path().join(format!("unverified{i}"));
        let mut args = Vec::new();
        args.extend(setting.map(|s| ["-c", s]).into_iter().flatten());
        args.extend(["clone", "-q", &served.url, dest.to_str().unwrap()]);
        let mut command = env.sluice_command(env.path(), &args);
        if let Some(variable) = variable {
            command.env(variable, "1");
        }
        let out = crate::util::run_with_input(command, b"");
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        fsck(&env, &dest);
    }
    assert!(ca.exists());
}

/// The ssh command from `core.sshCommand` when `GIT_SSH_COMMAND` is not set, and git's
/// scp-like address `user@host:path`: the same clone, and then fetch, as git's.
#[test]
fn ssh_command_from_config_and_scp_like_addresses() {
    let env = Env::new();
    let repo = source(&env);
    let ssh = format!("core.sshCommand={}", fake_ssh(&env).display());
    let upload = format!("--upload-pack={} upload-pack", env.git.display());
    let url = format!("someone@example.invalid:{}", repo.display());
    for sluice in [true, false] {
        let dest = env.path().join(format!("scp-{sluice}"));
        let dest_arg = dest.to_str().unwrap();
        for (cwd, args) in [
            (env.path(), vec!["clone", "-q", &upload, &url, dest_arg]),
            (dest.as_path(), vec!["fetch", "-q", &upload]),
        ] {
            let mut all = vec!["-c", "ssh.variant=ssh", "-c", &ssh];
            all.extend(args);
            let out = env.sluice_or_git(sluice, cwd, &all);
            assert!(out.status.success(), "{sluice} {all:?}: {}", stderr(&out));
        }
    }
    let (ours, theirs) = (env.path().join("scp-true"), env.path().join("scp-false"));
    assert_eq!(state(&env, &ours, false), state(&env, &theirs, false));
    fsck(&env, &ours);
}

#[test]
fn clone_and_fetch_from_sluice_serve() {
    every_way(Kind::SluiceServe);
}

/// Objects in `repo`, loose and packed, as `git count-objects -v` counts them.
fn object_count(env: &Env, repo: &Path) -> usize {
    let out = String::from_utf8(env.git(repo, &["count-objects", "-v"])).unwrap();
    out.lines()
        .filter_map(|l| l.split_once(": "))
        .filter(|(key, _)| *key == "count" || *key == "in-pack")
        .map(|(_, value)| value.parse::<usize>().unwrap())
        .sum()
}

/// A fast-import stream of `commits` commits on `branch`, the first on top of `from` (a root
/// without it), each changing one file; committed from `time` on, a minute apart.
fn commits_on(branch: &str, from: Option<&str>, commits: usize, time: u64, tag: &str) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::new();
    for i in 0..commits {
        let when = time + 60 * i as u64;
        writeln!(out, "commit refs/heads/{branch}").unwrap();
        writeln!(out, "committer C <c@example.com> {when} +0000").unwrap();
        let message = format!("{tag} {i}");
        writeln!(out, "data {}\n{message}", message.len()).unwrap();
        if let (0, Some(from)) = (i, from) {
            writeln!(out, "from {from}").unwrap();
        }
        let content = format!("{tag} {i}\n");
        writeln!(out, "M 100644 inline {tag}/{}.txt", i % 7).unwrap();
        writeln!(out, "data {}\n{content}", content.len()).unwrap();
        out.push(b'\n');
    }
    out
}

/// A fetch into a repository whose newest commits the server has never seen, more than one
/// round of haves deep, still finds the common history: it receives no more objects than
/// git's own fetch does from the same state, and not the history both sides share: over a
/// stateful pipe and over stateless HTTP (git's http-backend and `sluice serve`), protocol v0
/// and v2.
#[test]
fn negotiation_reaches_past_many_local_commits() {
    for git in gits() {
        for kind in [Kind::File, Kind::Http, Kind::SluiceServe] {
            for protocol in ["protocol.version=0", "protocol.version=2"] {
                let env = Env::with_git(git.clone());
                let repo = env.init("source.git", true);
                let shared = commits_on("main", None, 80, 1_700_000_000, "shared");
                env.fast_import(&repo, &shared);
                env.git(&repo, &["symbolic-ref", "HEAD", "refs/heads/main"]);
                let served = serve(&env, kind, &git);
                let label = format!("{kind:?} {} {protocol}", git.display());
                let upload = served
                    .upload_pack
                    .as_ref()
                    .map(|command| format!("--upload-pack={command}"));
                let mut received = Vec::new();
                for sluice in [true, false] {
                    let dest = env.path().join(format!("clone-{sluice}"));
                    let mut args = vec!["clone", "-q"];
                    args.extend(upload.as_deref());
                    args.extend([served.url.as_str(), dest.to_str().unwrap()]);
                    run(&env, &served, false, env.path(), protocol, &args);
                    // 400 commits of this side's own, newer than anything the server has.
                    let local = commits_on(
                        "local",
                        Some("refs/heads/main^0"),
                        400,
                        1_800_000_000,
                        "local",
                    );
                    env.fast_import(&dest, &local);
                    received.push((dest, sluice));
                }
                let news = commits_on("main", Some("refs/heads/main^0"), 1, 1_900_000_000, "news");
                env.fast_import(&repo, &news);
                let mut counts = Vec::new();
                for (dest, sluice) in &received {
                    let before = object_count(&env, dest);
                    let mut args = vec!["fetch", "-q"];
                    args.extend(upload.as_deref());
                    run(&env, &served, *sluice, dest, protocol, &args);
                    counts.push(object_count(&env, dest) - before);
                    fsck(&env, dest);
                }
                let (ours, theirs) = (counts[0], counts[1]);
                assert!(
                    theirs < 20,
                    "{label}: git's own fetch received {theirs} objects"
                );
                assert!(
                    ours <= theirs,
                    "{label}: sluice received {ours} objects, git {theirs}"
                );
                assert_eq!(
                    refs(&env, &received[0].0),
                    refs(&env, &received[1].0),
                    "{label}"
                );
            }
        }
    }
}
