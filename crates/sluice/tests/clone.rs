//! `sluice clone` makes what `git clone` makes from the same local repository: the same refs,
//! HEAD, configuration and index, a clean status, a repository that passes `fsck --strict`;
//! a failed clone leaves nothing behind.

use crate::upload_pack::{add_loose_commit, fsck, refs, snapshot, source, upload_pack};
use crate::util::{gits, stderr, Env};
use std::path::Path;

fn config(env: &Env, repo: &Path) -> String {
    String::from_utf8(env.git(repo, &["config", "--local", "--list"])).unwrap()
}

#[test]
fn clones_match_git_clone() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        add_loose_commit(&env, &src, 1);
        let path = src.to_str().unwrap().to_owned();
        let url = format!("file://{path}");
        let sluice_server = format!("--upload-pack={}", upload_pack());
        for (name, from, extra) in [
            ("plain", &path, &[][..]),
            ("url", &url, &[][..]),
            ("bare", &path, &["--bare"][..]),
            ("branch", &path, &["-b", "topic"][..]),
            ("no-checkout", &path, &["--no-checkout"][..]),
            ("sluice-server", &path, &[sluice_server.as_str()][..]),
        ] {
            let ours = env.path().join(format!("ours-{name}"));
            let theirs = env.path().join(format!("theirs-{name}"));
            let mut args = vec!["clone", "-q"];
            args.extend_from_slice(extra);
            args.push(from);
            let mut ours_args = args.clone();
            ours_args.push(ours.to_str().unwrap());
            let out = env.sluice(env.path(), &ours_args, b"");
            assert!(out.status.success(), "{name}: {}", stderr(&out));
            let mut theirs_args = args.clone();
            theirs_args.push(theirs.to_str().unwrap());
            let out = env.git_with_input(env.path(), &theirs_args, b"");
            assert!(out.status.success(), "{name}: {}", stderr(&out));
            assert_eq!(refs(&env, &ours), refs(&env, &theirs), "{name}");
            assert_eq!(config(&env, &ours), config(&env, &theirs), "{name}");
            fsck(&env, &ours);
            if !extra.contains(&"--bare") && !extra.contains(&"--no-checkout") {
                assert_eq!(
                    env.git(&ours, &["ls-files", "-s"]),
                    env.git(&theirs, &["ls-files", "-s"]),
                    "{name}"
                );
                assert!(
                    env.git(&ours, &["status", "--porcelain"]).is_empty(),
                    "{name}"
                );
            }
        }
    }
}

#[test]
fn failed_clones_leave_nothing_behind() {
    let env = Env::new();
    let src = source(&env);
    let src_str = src.to_str().unwrap();
    // No repository there: nothing is created.
    let out = env.sluice(env.path(), &["clone", "-q", "nowhere", "dest"], b"");
    assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
    assert!(!env.path().join("dest").exists());
    // A server that sends garbage: the directory it made is removed again.
    let out = env.sluice(
        env.path(),
        &[
            "clone",
            "-q",
            "--upload-pack=printf garbage; true",
            src_str,
            "dest",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
    assert!(!env.path().join("dest").exists());
    // An existing empty directory is emptied again, not removed.
    std::fs::create_dir(env.path().join("empty")).unwrap();
    let out = env.sluice(
        env.path(),
        &[
            "clone",
            "-q",
            "--upload-pack=printf garbage; true",
            src_str,
            "empty",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(128));
    assert_eq!(
        std::fs::read_dir(env.path().join("empty")).unwrap().count(),
        0
    );
    // A directory that is not empty is refused and left as it was.
    std::fs::create_dir(env.path().join("full")).unwrap();
    std::fs::write(env.path().join("full/keep.txt"), "mine").unwrap();
    let before = snapshot(&env.path().join("full"));
    let out = env.sluice(env.path(), &["clone", "-q", src_str, "full"], b"");
    assert_eq!(out.status.code(), Some(128));
    assert!(stderr(&out).contains("already exists and is not an empty directory"));
    assert!(snapshot(&env.path().join("full")) == before);
}
