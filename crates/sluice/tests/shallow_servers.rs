//! Clones and fetches from a shallow repository, whose own history is cut: twins, one by git
//! and one by Sluice, compared on exit code, stderr, refs, FETCH_HEAD and `.git/shallow`, with
//! both gits serving and in both protocol versions.

use crate::util::{gits, stderr, Env};
use std::path::Path;

/// A repository of four commits, and a shallow clone of it cut at the third (`src`) that has
/// a tag, an unrelated branch `aside` with a tag of its own, a branch `zz` at the cut commit,
/// and a fifth commit on `master`.
fn shallow_source(env: &Env) -> String {
    let full = env.init("full", false);
    for i in 1..=4 {
        std::fs::write(full.join("f"), format!("{i}\n")).unwrap();
        env.git(&full, &["add", "f"]);
        env.git(&full, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    env.git(&full, &["branch", "zz", "HEAD~1"]);
    let url = format!("file://{}", full.display());
    env.git(
        env.path(),
        &[
            "clone",
            "-q",
            "--no-single-branch",
            "--depth",
            "2",
            &url,
            "src",
        ],
    );
    let src = env.path().join("src");
    for args in [
        &["tag", "-a", "-m", "t", "v1"][..],
        &["checkout", "-q", "--orphan", "aside"],
        &["rm", "-q", "-f", "f"],
        &["commit", "-q", "--allow-empty", "-m", "aside"],
        &["tag", "-a", "-m", "t", "tside"],
        &["checkout", "-q", "master"],
        &["branch", "zz", "origin/zz"],
    ] {
        env.git(&src, args);
    }
    std::fs::write(src.join("f"), "5\n").unwrap();
    env.git(&src, &["commit", "-q", "-a", "-m", "c5"]);
    format!("file://{}", src.display())
}

/// What a repository holds after a command: refs, FETCH_HEAD and the shallow commits. Those
/// are compared as a set: git 2.39 lists the cut commit twice in a clone over protocol v2.
fn state(env: &Env, repo: &Path) -> String {
    let refs = env.git(repo, &["for-each-ref", "--format=%(objectname) %(refname)"]);
    let read = |name: &str| std::fs::read_to_string(repo.join(".git").join(name)).ok();
    let shallow: std::collections::BTreeSet<String> = read("shallow")
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    format!(
        "{}FETCH_HEAD: {:?}\nshallow: {shallow:?}",
        String::from_utf8_lossy(&refs),
        read("FETCH_HEAD"),
    )
}

/// Clones from the shallow repository: the clone is cut where its source is, unless
/// `--reject-shallow` (or `clone.rejectShallow`) refuses the source, from a URL or a path.
#[test]
fn clones_of_a_shallow_repository_match_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let url = shallow_source(&env);
        let path = env.path().join("src");
        let path = path.to_str().unwrap();
        let upload = format!("--upload-pack={} upload-pack", git.display());
        let cases: [(&str, &[&str], &str); 5] = [
            ("", &[], &url),
            ("", &["--reject-shallow"], &url),
            ("clone.rejectShallow=true", &[], &url),
            ("clone.rejectShallow=true", &["--no-reject-shallow"], &url),
            ("", &["--reject-shallow", "--no-local"], path),
        ];
        for version in ["0", "2"] {
            for (setting, args, source) in cases {
                let mut seen = Vec::new();
                for sluice in [true, false] {
                    let parent = env.path().join(if sluice { "ours" } else { "theirs" });
                    let _ = std::fs::remove_dir_all(&parent);
                    std::fs::create_dir(&parent).unwrap();
                    let protocol = format!("protocol.version={version}");
                    let mut all = vec!["-c", &protocol];
                    if !setting.is_empty() {
                        all.extend(["-c", setting]);
                    }
                    all.extend(["clone", &upload]);
                    all.extend_from_slice(args);
                    all.extend([source, "dst"]);
                    let out = env.sluice_or_git(sluice, &parent, &all);
                    let said = stderr(&out);
                    assert!(!said.contains("panicked"), "{said}");
                    let dst = parent.join("dst");
                    let mut outcome = format!("exit {:?}\n{said}", out.status.code());
                    if out.status.success() {
                        outcome.push_str(&state(&env, &dst));
                        env.git(&dst, &["fsck", "--strict", "--no-progress"]);
                        let status = env.git(&dst, &["status", "--porcelain"]);
                        assert!(status.is_empty(), "{sluice} {all:?}: status not clean");
                    } else {
                        assert!(!dst.exists(), "{sluice} {all:?}: the failed clone stayed");
                    }
                    seen.push(outcome);
                }
                assert_eq!(
                    seen[0],
                    seen[1],
                    "{} v{version} {setting} {args:?}: sluice, then git",
                    git.display()
                );
            }
        }
    }
}

/// Fetches from the shallow repository: into empty repositories, where refs whose history
/// reaches the cut are refused with git's warning (in git's order among the other lines) or,
/// with `--update-shallow`, taken with the cut; into a whole clone of the source's source and
/// into a shallow one, which need no cut of their own.
#[test]
fn fetches_from_a_shallow_repository_match_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let url = shallow_source(&env);
        let full = format!("file://{}", env.path().join("full").display());
        let upload = format!("--upload-pack={} upload-pack", git.display());
        let glob = "refs/heads/*:refs/remotes/s/*";
        // (how the repository is made, the fetch's arguments)
        let cases: [(&[&str], &[&str]); 6] = [
            (&["init", "-q"], &[&url, glob]),
            (&["init", "-q"], &["-v", "s"]),
            (&["init", "-q"], &[&url, "master", "aside", "zz"]),
            (&["init", "-q"], &["--update-shallow", &url, glob]),
            (&["clone", "-q", &full], &[&url, glob]),
            (&["clone", "-q", "--depth", "1", &full], &[&url, glob]),
        ];
        for version in ["0", "2"] {
            for (make, args) in cases {
                let mut seen = Vec::new();
                for sluice in [true, false] {
                    let repo = env.path().join(if sluice { "ours" } else { "theirs" });
                    let _ = std::fs::remove_dir_all(&repo);
                    let mut made = make.to_vec();
                    made.push(repo.to_str().unwrap());
                    env.git(env.path(), &made);
                    env.git(&repo, &["remote", "add", "s", &url]);
                    let protocol = format!("protocol.version={version}");
                    let mut all = vec!["-c", &protocol, "fetch", &upload];
                    all.extend_from_slice(args);
                    let out = env.sluice_or_git(sluice, &repo, &all);
                    let said = stderr(&out);
                    assert!(!said.contains("panicked"), "{said}");
                    // git's second fetch, for the tags it follows, stumbles on the parent of
                    // the commit the source is cut at, which no repository here has, and says
                    // so. Sluice's walk stops there without a word.
                    let said: String = said
                        .lines()
                        .filter(|line| !line.starts_with("error: Could not read "))
                        .map(|line| format!("{line}\n"))
                        .collect();
                    let fsck = env.git_with_input(&repo, &["fsck", "--strict"], b"");
                    seen.push(format!(
                        "exit {:?}\n{said}{}\nfsck: {:?}",
                        out.status.code(),
                        state(&env, &repo),
                        fsck.status.code()
                    ));
                }
                assert_eq!(
                    seen[0],
                    seen[1],
                    "{} v{version} {make:?} {args:?}: sluice, then git",
                    git.display()
                );
            }
        }
    }
}

/// Sluice serving the shallow repository: git clones from it as from git's own upload-pack, in
/// full and with `--depth 1`, and fetches into a whole clone of the source's source. Each
/// result passes `git fsck --strict` and has the refs and shallow commits git's server gives.
#[test]
fn git_clones_a_shallow_repository_from_sluice_as_from_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let url = shallow_source(&env);
        let full = format!("file://{}", env.path().join("full").display());
        let servers = [
            format!("--upload-pack={} upload-pack", env!("CARGO_BIN_EXE_sluice")),
            format!("--upload-pack={} upload-pack", git.display()),
        ];
        for version in ["0", "2"] {
            let protocol = format!("protocol.version={version}");
            for depth in [&[][..], &["--depth", "1", "--no-single-branch"]] {
                let mut seen = Vec::new();
                for server in &servers {
                    let dst = env.path().join("dst");
                    let _ = std::fs::remove_dir_all(&dst);
                    let mut all = vec!["-c", &protocol, "clone", "-q", server];
                    all.extend_from_slice(depth);
                    all.extend([url.as_str(), dst.to_str().unwrap()]);
                    env.git(env.path(), &all);
                    env.git(&dst, &["fsck", "--strict", "--no-progress"]);
                    seen.push(state(&env, &dst));
                }
                assert_eq!(seen[0], seen[1], "v{version} {depth:?}: sluice, then git");
            }
            let mut seen = Vec::new();
            for server in &servers {
                let dst = env.path().join("dst");
                let _ = std::fs::remove_dir_all(&dst);
                env.git(env.path(), &["clone", "-q", &full, dst.to_str().unwrap()]);
                let fetch = [
                    "-c",
                    &protocol,
                    "fetch",
                    "-q",
                    server,
                    &url,
                    "master:refs/s",
                ];
                env.git(&dst, &fetch);
                env.git(&dst, &["fsck", "--strict", "--no-progress"]);
                seen.push(state(&env, &dst));
            }
            assert_eq!(seen[0], seen[1], "v{version} fetch: sluice, then git");
        }
    }
}

/// A shallow request that selects no commit (`--shallow-since` after every commit,
/// `--shallow-exclude` of every tip) is refused as git's upload-pack refuses it, with its words,
/// and no clone is left. (git's dies without an ERR packet, so its client adds "the remote end
/// hung up unexpectedly"; Sluice's says why in the ERR packet, so the client says it too.)
#[test]
fn shallow_requests_that_select_nothing_are_refused_as_by_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        std::fs::write(src.join("f"), "1\n").unwrap();
        env.git(&src, &["add", "f"]);
        env.git(&src, &["commit", "-q", "-m", "one"]);
        let branch = String::from_utf8(env.git(&src, &["branch", "--show-current"])).unwrap();
        let exclude = format!("--shallow-exclude={}", branch.trim());
        let servers = [
            git.display().to_string(),
            env!("CARGO_BIN_EXE_sluice").to_owned(),
        ];
        for version in ["0", "2"] {
            for shallow in ["--shallow-since=2100-01-01", exclude.as_str()] {
                let mut outcomes = Vec::new();
                for (s, server) in servers.iter().enumerate() {
                    let target = env.path().join(format!("c{version}{s}{}", shallow.len()));
                    let upload_pack = format!("{server} upload-pack");
                    let version = format!("protocol.version={version}");
                    let args = [
                        "-c",
                        &version,
                        "clone",
                        "-q",
                        "--no-local",
                        shallow,
                        "-u",
                        &upload_pack,
                        src.to_str().unwrap(),
                        target.to_str().unwrap(),
                    ];
                    let out = env.git_with_input(env.path(), &args, b"");
                    // The reason, from the server itself or its ERR packet.
                    let said = stderr(&out).contains("no commits selected for shallow requests");
                    // Failed, or not: git's client may die of the closed pipe first.
                    outcomes.push((out.status.success(), said, target.exists()));
                }
                assert_eq!(
                    outcomes[1],
                    outcomes[0],
                    "{} v{version} {shallow}",
                    git.display()
                );
                assert_eq!(outcomes[0], (false, true, false));
            }
        }
    }
}
