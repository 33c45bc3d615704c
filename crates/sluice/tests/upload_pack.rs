//! `sluice upload-pack` serves real git clients: clones and fetches through it (protocol v0 and
//! v2, full, incremental, shallow, partial, single-branch) end with the same refs as through
//! git's own upload-pack and pass `git fsck --strict`; hostile requests get an error and change
//! nothing.

use crate::util::{gits, noise, stderr, text, Env, FastImport};
use std::path::{Path, PathBuf};

pub(crate) fn upload_pack() -> String {
    format!("{} upload-pack", env!("CARGO_BIN_EXE_sluice"))
}

/// A source repository with branches, tags (light and annotated), binary and text files, and
/// some loose objects beside the pack.
pub(crate) fn source(env: &Env) -> PathBuf {
    let repo = env.init("source.git", true);
    let mut import = FastImport::new();
    let mut last = 0;
    for i in 0..12 {
        let big = noise(i as u64, 3000 + i * 10);
        last = import.commit(
            "main",
            &format!("main {i}"),
            &[
                ("README", "100644", &text(i, 40)),
                (
                    &format!("dir/file{}.txt", i % 4),
                    "100644",
                    &text(i * 7, 60),
                ),
                ("bin/data", "100755", &big),
            ],
        );
        if i == 5 {
            import.tag("v0.5", last);
        }
    }
    // Reverts: the topic's trees alternate, so a commit's tree is also its grandparent's,
    // which a walk that skips what a parent shares must still list once.
    for i in 0..4 {
        import.commit(
            "topic",
            &format!("topic {i}"),
            &[("topic.txt", "100644", &text(100 + i % 2, 30))],
        );
    }
    let _ = last;
    env.fast_import(&repo, import.finish());
    env.git(&repo, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    env.git(&repo, &["tag", "-a", "-m", "release", "v1.0", "main"]);
    env.git(&repo, &["tag", "light", "topic"]);
    repo
}

/// Adds a commit on `main` through a work tree, so the new objects are loose.
pub(crate) fn add_loose_commit(env: &Env, repo: &Path, n: usize) {
    let work = env.path().join(format!("work{n}"));
    let work_str = work.to_str().unwrap();
    if !work.exists() {
        env.git(
            env.path(),
            &["clone", "-q", repo.to_str().unwrap(), work_str],
        );
    }
    std::fs::write(work.join("README"), text(1000 + n, 50)).unwrap();
    std::fs::write(work.join(format!("new{n}.txt")), text(2000 + n, 20)).unwrap();
    env.git(&work, &["add", "-A"]);
    env.git(&work, &["commit", "-q", "-m", &format!("loose {n}")]);
    env.git(&work, &["tag", "-a", "-m", "t", &format!("loose-tag-{n}")]);
    env.git(&work, &["push", "-q", "origin", "main", "--tags"]);
}

pub(crate) fn refs(env: &Env, repo: &Path) -> String {
    let refs = env.git(repo, &["for-each-ref", "--format=%(objectname) %(refname)"]);
    let head = env.git(repo, &["symbolic-ref", "-q", "HEAD"]);
    format!(
        "{}HEAD {}",
        String::from_utf8_lossy(&refs),
        String::from_utf8_lossy(&head)
    )
}

pub(crate) fn fsck(env: &Env, repo: &Path) {
    let out = env.git_with_input(repo, &["fsck", "--strict", "--no-progress"], b"");
    assert!(out.status.success(), "fsck failed: {}", stderr(&out));
}

pub(crate) fn clone(
    env: &Env,
    url: &str,
    dest: &Path,
    protocol: &str,
    upload: Option<&str>,
    extra: &[&str],
) {
    let mut args = vec!["-c", protocol, "clone", "-q"];
    let option;
    if let Some(upload) = upload {
        option = format!("--upload-pack={upload}");
        args.push(&option);
    }
    args.extend_from_slice(extra);
    args.push(url);
    args.push(dest.to_str().unwrap());
    let out = env.git_with_input(env.path(), &args, b"");
    assert!(
        out.status.success(),
        "clone {args:?} failed: {}",
        stderr(&out)
    );
}

#[test]
fn clones_and_fetches_match_git() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        add_loose_commit(&env, &src, 1);
        let url = format!("file://{}", src.display());
        for protocol in ["protocol.version=0", "protocol.version=2"] {
            for (name, extra) in [
                ("full", &[][..]),
                ("bare", &["--bare"][..]),
                ("single", &["--single-branch", "-b", "topic"][..]),
                ("notags", &["--no-tags"][..]),
            ] {
                let ours = env.path().join(format!("ours-{name}-{protocol}"));
                let theirs = env.path().join(format!("theirs-{name}-{protocol}"));
                clone(&env, &url, &ours, protocol, Some(&upload_pack()), extra);
                clone(&env, &url, &theirs, protocol, None, extra);
                assert_eq!(refs(&env, &ours), refs(&env, &theirs), "{name} {protocol}");
                fsck(&env, &ours);
                if name != "bare" {
                    assert!(env.git(&ours, &["status", "--porcelain"]).is_empty());
                }
            }
            // Incremental: new loose commits and tags, then a fetch through each server.
            let ours = env.path().join(format!("ours-full-{protocol}"));
            let theirs = env.path().join(format!("theirs-full-{protocol}"));
            let n = if protocol.ends_with('0') { 2 } else { 3 };
            add_loose_commit(&env, &src, n);
            let option = format!("--upload-pack={}", upload_pack());
            env.git(&ours, &["-c", protocol, "fetch", "-q", &option, "origin"]);
            env.git(&theirs, &["-c", protocol, "fetch", "-q", "origin"]);
            assert_eq!(refs(&env, &ours), refs(&env, &theirs), "fetch {protocol}");
            fsck(&env, &ours);
        }
    }
}

#[test]
fn shallow_and_partial_clones_match_git() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        env.git(&src, &["config", "uploadpack.allowFilter", "true"]);
        // Lazy fetches of single blobs over v0 need wants of unadvertised objects.
        env.git(&src, &["config", "uploadpack.allowAnySHA1InWant", "true"]);
        let url = format!("file://{}", src.display());
        for protocol in ["protocol.version=0", "protocol.version=2"] {
            for (name, extra) in [
                ("depth1", &["--depth", "1"][..]),
                ("depth3", &["--depth", "3", "--no-single-branch"][..]),
                ("since", &["--shallow-since", "1700000400"][..]),
                ("exclude", &["--shallow-exclude", "v0.5"][..]),
                ("blobless", &["--filter=blob:none"][..]),
                ("treeless", &["--filter=tree:0", "--bare"][..]),
            ] {
                let ours = env.path().join(format!("ours-{name}-{protocol}"));
                let theirs = env.path().join(format!("theirs-{name}-{protocol}"));
                clone(&env, &url, &ours, protocol, Some(&upload_pack()), extra);
                clone(&env, &url, &theirs, protocol, None, extra);
                assert_eq!(refs(&env, &ours), refs(&env, &theirs), "{name} {protocol}");
                let shallow = |repo: &Path| {
                    let dir = if name == "treeless" {
                        repo.to_owned()
                    } else {
                        repo.join(".git")
                    };
                    std::fs::read_to_string(dir.join("shallow")).unwrap_or_default()
                };
                assert_eq!(shallow(&ours), shallow(&theirs), "{name} {protocol}");
                let count = |repo: &Path| env.git(repo, &["rev-list", "--all", "--count"]);
                assert_eq!(count(&ours), count(&theirs), "{name} {protocol}");
                if !name.ends_with("less") {
                    fsck(&env, &ours);
                }
            }
            // Deepen a depth-1 clone, then unshallow it.
            let ours = env.path().join(format!("ours-depth1-{protocol}"));
            let theirs = env.path().join(format!("theirs-depth1-{protocol}"));
            let option = format!("--upload-pack={}", upload_pack());
            for step in [&["--deepen=2"][..], &["--unshallow"][..]] {
                let mut args = vec!["-c", protocol, "fetch", "-q"];
                args.extend_from_slice(step);
                env.git(&theirs, &args);
                args.push(&option);
                env.git(&ours, &args);
                let shallow_file = |repo: &Path| {
                    std::fs::read_to_string(repo.join(".git/shallow")).unwrap_or_default()
                };
                assert_eq!(
                    shallow_file(&ours),
                    shallow_file(&theirs),
                    "{step:?} {protocol}"
                );
                assert_eq!(refs(&env, &ours), refs(&env, &theirs));
            }
            fsck(&env, &ours);
        }
    }
}

/// [`source`], and how to reach it through `git`'s own upload-pack over file://: the URL and the
/// `--upload-pack` option. Tests that compare sluice with git give both that option, so one
/// server serves both (upload-packs of different versions choose different deltas).
pub(crate) fn served_source(env: &Env, git: &Path) -> (PathBuf, String, String) {
    let src = source(env);
    let url = format!("file://{}", src.display());
    let upload = format!("--upload-pack={} upload-pack", git.display());
    (src, url, upload)
}

/// Every file of a repository with its content, to show a request changed nothing.
pub(crate) fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

pub(crate) fn pkt(line: &str) -> Vec<u8> {
    let mut out = format!("{:04x}", line.len() + 4).into_bytes();
    out.extend_from_slice(line.as_bytes());
    out
}

#[test]
fn hostile_requests_get_errors_and_change_nothing() {
    let env = Env::new();
    let src = source(&env);
    let before = snapshot(&src);
    let head = String::from_utf8(env.git(&src, &["rev-parse", "main"])).unwrap();
    let head = head.trim();
    // A blob exists but is no ref tip.
    let blob = String::from_utf8(env.git(&src, &["rev-parse", "main:README"])).unwrap();
    let blob = blob.trim();
    let src_str = src.to_str().unwrap();
    let caps = "multi_ack_detailed side-band-64k thin-pack ofs-delta";
    let mut many_haves = pkt(&format!("want {head} {caps}\n"));
    many_haves.extend_from_slice(b"0000");
    for i in 0..5000u32 {
        let id: String = format!("{:08x}", i.wrapping_mul(2654435761)).repeat(5);
        many_haves.extend_from_slice(&pkt(&format!("have {id}\n")));
        if i % 32 == 31 {
            many_haves.extend_from_slice(b"0000");
        }
    }
    many_haves.extend_from_slice(&pkt("done\n"));
    let cases: Vec<(&str, Vec<u8>, Option<&str>)> = vec![
        (
            "not advertised",
            [pkt(&format!("want {blob} {caps}\n")), b"0000".to_vec()].concat(),
            Some("not our ref"),
        ),
        (
            "oversized",
            b"ffff".iter().chain([b'x'; 100].iter()).copied().collect(),
            Some("protocol error: bad line length 65531"),
        ),
        (
            "truncated",
            pkt(&format!("want {head} {caps}\n"))[..30].to_vec(),
            Some("the remote end hung up unexpectedly"),
        ),
        (
            "not an id",
            [pkt("want 12345\n"), b"0000".to_vec()].concat(),
            Some("object id"),
        ),
        (
            "garbage line",
            [
                pkt(&format!("want {head}\n")),
                pkt("hello\n"),
                b"0000".to_vec(),
            ]
            .concat(),
            Some("protocol error"),
        ),
        (
            "no done",
            [pkt(&format!("want {head} {caps}\n")), b"0000".to_vec()].concat(),
            Some("expected SHA1 list"),
        ),
        // As git's (see v0_hang_ups_end_as_gits_do).
        (
            "nothing",
            Vec::new(),
            Some("the remote end hung up unexpectedly"),
        ),
        ("many haves", many_haves, None),
    ];
    for (name, input, error) in cases {
        let out = env.sluice(env.path(), &["upload-pack", src_str], &input);
        match error {
            Some(message) => {
                assert_eq!(out.status.code(), Some(128), "{name}: {}", stderr(&out));
                assert!(stderr(&out).contains(message), "{name}: {}", stderr(&out));
            }
            None => assert!(out.status.success(), "{name}: {}", stderr(&out)),
        }
        assert!(snapshot(&src) == before, "{name} changed the repository");
    }
    // v2: a want of a missing object, an unknown command.
    let missing = "1".repeat(40);
    for (name, input, message) in [
        (
            "missing",
            [
                pkt("command=fetch\n"),
                b"0001".to_vec(),
                pkt(&format!("want {missing}\n")),
                pkt("done\n"),
                b"0000".to_vec(),
            ]
            .concat(),
            "not our ref",
        ),
        (
            "unknown command",
            [pkt("command=push\n"), b"0000".to_vec()].concat(),
            "invalid command",
        ),
    ] {
        let mut command = env.sluice_command(env.path(), &["upload-pack", src_str]);
        command.env("GIT_PROTOCOL", "version=2");
        let out = crate::util::run_with_input(command, &input);
        assert_eq!(out.status.code(), Some(128), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{name}: {}", stderr(&out));
    }
    assert!(snapshot(&src) == before);
    // A path that is no repository.
    let out = env.sluice(env.path(), &["upload-pack", "nowhere"], b"");
    assert_eq!(out.status.code(), Some(128));
    assert!(stderr(&out).contains("does not appear to be a git repository"));
}

/// The pack of a v2 fetch response: band 1 after the `packfile` line.
fn pack_of_response(response: &[u8]) -> Vec<u8> {
    let mut pack = Vec::new();
    let mut rest = response;
    let mut in_pack = false;
    while rest.len() >= 4 {
        let len = usize::from_str_radix(std::str::from_utf8(&rest[..4]).unwrap(), 16).unwrap();
        if len < 4 {
            rest = &rest[4..];
            continue;
        }
        let payload = &rest[4..len];
        if in_pack {
            if payload[0] == 1 {
                pack.extend_from_slice(&payload[1..]);
            }
        } else {
            in_pack = payload == b"packfile\n";
        }
        rest = &rest[len..];
    }
    pack
}

#[test]
fn thin_fetch_sends_changed_files_as_deltas_against_the_clients_versions() {
    let env = Env::new();
    let work = env.init("work", false);
    let big = text(1, 4000);
    std::fs::write(work.join("big.txt"), &big).unwrap();
    env.git(&work, &["add", "."]);
    env.git(&work, &["commit", "-q", "-m", "one"]);
    env.git(&work, &["branch", "-M", "main"]);
    let old = String::from_utf8(env.git(&work, &["rev-parse", "HEAD"])).unwrap();
    let mut changed = big.clone();
    changed.extend_from_slice(b"one more line\n");
    changed[100] = b'#';
    std::fs::write(work.join("big.txt"), &changed).unwrap();
    env.git(&work, &["commit", "-q", "-a", "-m", "two"]);
    let new = String::from_utf8(env.git(&work, &["rev-parse", "HEAD"])).unwrap();
    // The client: a clone of the first commit only.
    let client = env.path().join("client.git");
    env.git(
        env.path(),
        &[
            "clone",
            "-q",
            "--bare",
            "--no-local",
            "-b",
            "main",
            "work",
            "client.git",
        ],
    );
    env.git(&client, &["update-ref", "refs/heads/main", old.trim()]);
    env.git(&client, &["gc", "-q", "--prune=now"]);
    let request = [
        pkt("command=fetch\n"),
        b"0001".to_vec(),
        pkt("thin-pack\n"),
        pkt("ofs-delta\n"),
        pkt("no-progress\n"),
        pkt(&format!("want {}\n", new.trim())),
        pkt(&format!("have {}\n", old.trim())),
        pkt("done\n"),
        b"0000".to_vec(),
    ]
    .concat();
    // Loose objects, then the same history repacked (the new version stored whole).
    for repack in [false, true] {
        if repack {
            env.git(&work, &["repack", "-q", "-a", "-d", "-f"]);
        }
        let mut command = env.sluice_command(env.path(), &["upload-pack", work.to_str().unwrap()]);
        command.env("GIT_PROTOCOL", "version=2");
        let out = crate::util::run_with_input(command, &request);
        assert!(out.status.success(), "{}", stderr(&out));
        let pack = pack_of_response(&out.stdout);
        assert!(
            pack.len() < changed.len() / 20,
            "repacked {repack}: a {} byte pack for a one-line change of {} bytes",
            pack.len(),
            changed.len()
        );
        let receiver = env.path().join(format!("receiver-{repack}.git"));
        env.git(
            env.path(),
            &[
                "clone",
                "-q",
                "--bare",
                "client.git",
                receiver.to_str().unwrap(),
            ],
        );
        let indexed =
            env.git_with_input(&receiver, &["index-pack", "--stdin", "--fix-thin"], &pack);
        assert!(indexed.status.success(), "{}", stderr(&indexed));
        env.git(&receiver, &["update-ref", "refs/heads/main", new.trim()]);
        fsck(&env, &receiver);
    }
}

#[test]
fn pack_cache_serves_identical_requests_and_stays_bounded() {
    let env = Env::new();
    let src = source(&env);
    let head = String::from_utf8(env.git(&src, &["rev-parse", "main"])).unwrap();
    let request = [
        pkt("command=fetch\n"),
        b"0001".to_vec(),
        pkt("ofs-delta\n"),
        pkt(&format!("want {}\n", head.trim())),
        pkt("done\n"),
        b"0000".to_vec(),
    ]
    .concat();
    let cache = env.path().join("cache");
    let fetch = |size: &str| {
        let mut command = env.sluice_command(
            env.path(),
            &[
                "upload-pack",
                "--pack-cache",
                cache.to_str().unwrap(),
                "--pack-cache-size",
                size,
                src.to_str().unwrap(),
            ],
        );
        command.env("GIT_PROTOCOL", "version=2");
        let out = crate::util::run_with_input(command, &request);
        assert!(out.status.success(), "{}", stderr(&out));
        (pack_of_response(&out.stdout), stderr(&out))
    };
    let (first, log) = fetch("100000000");
    assert!(log.contains("pack cache miss"), "{log}");
    let (second, log) = fetch("100000000");
    assert!(log.contains("pack cache hit"), "{log}");
    assert_eq!(first, second);
    let files = || std::fs::read_dir(&cache).unwrap().count();
    assert_eq!(files(), 1);
    // The cached pack is a good pack.
    let receiver = env.init("receiver.git", true);
    let indexed = env.git_with_input(&receiver, &["index-pack", "--stdin"], &second);
    assert!(indexed.status.success(), "{}", stderr(&indexed));
    env.git(&receiver, &["update-ref", "refs/heads/main", head.trim()]);
    fsck(&env, &receiver);
    // A bound smaller than one pack keeps nothing.
    std::fs::remove_dir_all(&cache).unwrap();
    let (_, log) = fetch("10");
    assert!(log.contains("pack cache miss"), "{log}");
    assert_eq!(files(), 0);
}

#[test]
fn full_clone_of_a_repacked_repository_reuses_the_whole_pack() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        env.git(&src, &["repack", "-q", "-a", "-d"]);
        for protocol in ["protocol.version=0", "protocol.version=2"] {
            let ours = env.path().join(format!("ours-{protocol}"));
            let theirs = env.path().join(format!("theirs-{protocol}"));
            let out = env.git_with_input(
                env.path(),
                &[
                    "-c",
                    protocol,
                    "clone",
                    "--bare",
                    "--progress",
                    &format!("--upload-pack={}", upload_pack()),
                    &format!("file://{}", src.display()),
                    ours.to_str().unwrap(),
                ],
                b"",
            );
            assert!(out.status.success(), "{}", stderr(&out));
            let objects = String::from_utf8(env.git(&src, &["count-objects", "-v"])).unwrap();
            let in_pack = objects
                .lines()
                .find_map(|l| l.strip_prefix("in-pack: "))
                .unwrap()
                .to_owned();
            assert!(
                stderr(&out).contains(&format!("pack-reused {in_pack}")),
                "{}",
                stderr(&out)
            );
            clone(
                &env,
                &format!("file://{}", src.display()),
                &theirs,
                protocol,
                None,
                &["--bare"],
            );
            assert_eq!(refs(&env, &ours), refs(&env, &theirs));
            fsck(&env, &ours);
        }
    }
}

#[test]
fn a_pack_of_one_small_object_is_a_pack() {
    // git writes 41-byte packs (one empty tree) in promisor clones; they are as good as any.
    let env = Env::new();
    let src = source(&env);
    let empty_tree = String::from_utf8(env.git_with_input(&src, &["mktree"], b"").stdout).unwrap();
    let out = env.git_with_input(
        &src,
        &["pack-objects", "-q", "objects/pack/pack"],
        empty_tree.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    bare_clones_agree(&env, &format!("file://{}", src.display()), "small-pack");
}

/// Bare clones of `url` (protocol v2) through Sluice's upload-pack and through git's end
/// with the same refs, and Sluice's passes fsck.
pub(crate) fn bare_clones_agree(env: &Env, url: &str, name: &str) {
    let ours = env.path().join(format!("ours-{name}"));
    let theirs = env.path().join(format!("theirs-{name}"));
    let protocol = "protocol.version=2";
    clone(env, url, &ours, protocol, Some(&upload_pack()), &["--bare"]);
    clone(env, url, &theirs, protocol, None, &["--bare"]);
    assert_eq!(refs(env, &ours), refs(env, &theirs), "{name}");
    fsck(env, &ours);
}

/// A SHA-256 repository, which git serves and clones: Sluice says plainly that it does not
/// support the format yet, as upload-pack (not "does not appear to be a git repository") and
/// as clone (from a path and from a URL, with git's upload-pack serving), exits 128 and leaves
/// no directory behind.
#[test]
fn a_sha256_repository_is_refused_as_not_supported_yet() {
    for git in gits() {
        let env = Env::with_git(git);
        let source = env.path().join("sha256");
        env.git(
            env.path(),
            &["init", "-q", "--object-format=sha256", "sha256"],
        );
        std::fs::write(source.join("a"), "a\n").unwrap();
        env.git(&source, &["add", "a"]);
        env.git(&source, &["commit", "-q", "-m", "a"]);
        let theirs = env.path().join("by-git");
        env.git(
            env.path(),
            &["clone", "-q", "sha256", theirs.to_str().unwrap()],
        );
        let out = env.sluice(
            env.path(),
            &["upload-pack", "--advertise-refs", "sha256"],
            b"",
        );
        assert_eq!(out.status.code(), Some(128));
        let said = stderr(&out);
        assert!(
            said.contains("'sha256'") && said.contains("not support"),
            "{said}"
        );
        let url = format!("file://{}", source.display());
        for from in ["sha256", url.as_str()] {
            let dest = env.path().join("by-sluice");
            let out = env.sluice(env.path(), &["clone", "-q", from, "by-sluice"], b"");
            assert_eq!(out.status.code(), Some(128), "{from}");
            let said = stderr(&out);
            assert!(
                said.contains("sha256") && said.contains("not support"),
                "{said}"
            );
            assert!(!dest.exists(), "{from}: left {}", dest.display());
        }
    }
}

/// A client gone before saying anything (v0, stateless or not): git's upload-pack says "the
/// remote end hung up unexpectedly" and exits 128; a client that sends only the flush ending a
/// look at the refs is no error. Sluice's must do the same, output included.
#[test]
fn v0_hang_ups_end_as_gits_do() {
    for git in gits() {
        let env = Env::with_git(git);
        let repo = source(&env);
        for (input, stateless) in [
            (&b""[..], true),
            (b"", false),
            (b"0000", true),
            (b"0000", false),
        ] {
            let mut outs = Vec::new();
            for sluice in [false, true] {
                let mut args = vec!["upload-pack"];
                if stateless {
                    args.push("--stateless-rpc");
                }
                args.push(repo.to_str().unwrap());
                let command = env.sluice_or_git_command(sluice, env.path(), &args);
                let out = crate::util::run_with_input(command, input);
                let said = stderr(&out).replace("fatal: ", "");
                // A stateless request gets no advertisement: nothing at all is written.
                assert!(
                    !stateless || out.stdout.is_empty(),
                    "{sluice}: wrote output"
                );
                outs.push((out.status.code(), said));
            }
            let case = format!("{:?} stateless={stateless}", String::from_utf8_lossy(input));
            assert_eq!(outs[1].0, outs[0].0, "{case}: exit code");
            assert_eq!(outs[1].1, outs[0].1, "{case}: message");
        }
    }
}

/// `GIT_USER_AGENT` names the server in its advertisement, in v0 and v2, as it names git's.
#[test]
fn git_user_agent_names_the_server_as_in_git() {
    for git in gits() {
        let env = Env::with_git(git);
        let repo = source(&env);
        for protocol in ["", "version=2"] {
            let agents: Vec<Vec<String>> = [false, true]
                .into_iter()
                .map(|sluice| {
                    let args = ["upload-pack", repo.to_str().unwrap()];
                    let mut command = env.sluice_or_git_command(sluice, env.path(), &args);
                    command.env("GIT_USER_AGENT", "test-agent/1.0");
                    command.env("GIT_PROTOCOL", protocol);
                    let out = crate::util::run_with_input(command, b"0000");
                    let text = String::from_utf8_lossy(&out.stdout).replace('\0', " ");
                    text.match_indices("agent=")
                        .map(|(at, _)| text[at..].split([' ', '\n']).next().unwrap().to_owned())
                        .collect()
                })
                .collect();
            assert_eq!(agents[0], ["agent=test-agent/1.0"], "git, {protocol:?}");
            assert_eq!(agents[1], agents[0], "{protocol:?}");
        }
    }
}

/// A repository reached through a `.git` file (`--separate-git-dir`, a linked worktree) is
/// served as git's upload-pack serves it: git clones the same refs through either server.
#[test]
fn a_git_file_is_followed_to_the_repository() {
    for git in gits() {
        let env = Env::with_git(git);
        let repo = source(&env);
        let separate = env.path().join("separate");
        let separate_git = env.path().join("separate.git");
        let (sep, sep_git) = (separate.to_str().unwrap(), separate_git.to_str().unwrap());
        env.git(
            env.path(),
            &["init", "-q", "--separate-git-dir", sep_git, sep],
        );
        env.git(&separate, &["pull", "-q", repo.to_str().unwrap(), "main"]);
        let linked = env.path().join("linked");
        env.git(&repo, &["worktree", "add", "-q", linked.to_str().unwrap()]);
        let sluice = format!("{} upload-pack", env!("CARGO_BIN_EXE_sluice"));
        for (name, served) in [("separate", &separate), ("linked", &linked)] {
            let url = format!("file://{}", served.display());
            for protocol in ["protocol.version=0", "protocol.version=2"] {
                let theirs = env.path().join(format!("{name}-{protocol}-git"));
                let ours = env.path().join(format!("{name}-{protocol}-sluice"));
                clone(&env, &url, &theirs, protocol, None, &[]);
                clone(&env, &url, &ours, protocol, Some(&sluice), &[]);
                assert_eq!(refs(&env, &ours), refs(&env, &theirs), "{name} {protocol}");
                fsck(&env, &ours);
            }
        }
    }
}

/// The server's "Enumerating objects" count is git's for the same clone: each object once
/// (commits were counted twice, when the walk met them and when they were listed).
#[test]
fn enumerating_counts_what_git_counts() {
    for git in crate::util::gits() {
        let env = Env::with_git(git);
        let work = env.init("work", false);
        for i in 0..3 {
            std::fs::create_dir_all(work.join(format!("d{i}"))).unwrap();
            std::fs::write(work.join(format!("f{i}")), format!("{i}\n")).unwrap();
            std::fs::write(work.join(format!("d{i}/x")), format!("{i}\n")).unwrap();
            env.git(&work, &["add", "."]);
            env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
        }
        env.git(&work, &["tag", "-a", "-m", "tagged", "v1"]);
        let server = env.path().join("server.git");
        env.git(env.path(), &["clone", "-q", "--bare", "work", "server.git"]);
        let upload = format!("--upload-pack={} upload-pack", env!("CARGO_BIN_EXE_sluice"));
        let mut counts = Vec::new();
        for (name, extra) in [("theirs", None), ("ours", Some(upload.as_str()))] {
            let mut args = vec!["clone", "--progress", "--no-local"];
            args.extend(extra);
            args.extend([server.to_str().unwrap(), name]);
            let out = env.git_command(env.path(), &args).output().unwrap();
            assert!(out.status.success(), "{}", crate::util::stderr(&out));
            let said = String::from_utf8_lossy(&out.stderr).replace('\r', "\n");
            let line = said.lines().rfind(|l| l.contains("Enumerating objects"));
            counts.push(line.map(|l| l.split_whitespace().take(4).collect::<Vec<_>>().join(" ")));
        }
        assert!(counts[0].is_some(), "git says how many it enumerates");
        assert_eq!(counts[1], counts[0]);
    }
}
