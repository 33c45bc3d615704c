//! Pushes from a shallow clone (a CI job's `--depth 1` checkout pushing back), each made
//! three ways: git's push to git's receive-pack, git's push to Sluice's, Sluice's push to
//! git's. To a server that has the history below the cut, the push lands; to one that does
//! not, the ref is refused ("shallow update not allowed"), or with `receive.shallowUpdate`
//! taken with the cut into the server's `shallow` file. Compared: the client's exit code and
//! stderr, the server's refs and `shallow` file; git's fsck judges every server.

use crate::util::{gits, Env};
use std::path::{Path, PathBuf};

/// A full server (three commits on `main`) and a depth-1 clone of it with one more commit.
fn setup(env: &Env) -> (PathBuf, PathBuf) {
    let full = env.init("full.git", true);
    let work = env.init("work", false);
    for i in 0..3 {
        env.git(
            &work,
            &["commit", "-q", "--allow-empty", "-m", &format!("c{i}")],
        );
    }
    env.git(
        &work,
        &["push", "-q", full.to_str().unwrap(), "HEAD:refs/heads/main"],
    );
    env.git(&full, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    let shallow = env.path().join("shallow");
    let url = format!("file://{}", full.display());
    env.git(
        env.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            shallow.to_str().unwrap(),
        ],
    );
    env.git(&shallow, &["commit", "-q", "--allow-empty", "-m", "new"]);
    (full, shallow)
}

/// What one push leaves.
fn pushed(env: &Env, from: &Path, server: &Path, side: usize, args: &[&str]) -> [String; 4] {
    let receive = match side {
        1 => format!("{} receive-pack", env!("CARGO_BIN_EXE_sluice")),
        _ => format!("{} receive-pack", env.git.display()),
    };
    let to = server.to_str().unwrap();
    let all = [&["push", "--receive-pack", &receive, to][..], args].concat();
    let command = env.sluice_or_git_command(side == 2, from, &all);
    let out = crate::util::run_with_input(command, b"");
    let refs = env.git(
        server,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    let fsck = env.git_with_input(server, &["fsck", "--strict", "--no-progress"], b"");
    assert!(fsck.status.success(), "{}", crate::util::stderr(&fsck));
    [
        format!("{:?}", out.status.code()),
        String::from_utf8_lossy(&out.stderr).replace(to, "<server>"),
        String::from_utf8(refs).unwrap(),
        std::fs::read_to_string(server.join("shallow")).unwrap_or_default(),
    ]
}

#[test]
fn pushes_from_shallow_clones_are_taken_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (full, shallow) = setup(&env);
        // (server: a copy of the full one, or an empty one; settings; what to push)
        let cases: [(bool, &[&str], &[&str]); 5] = [
            (true, &[], &["HEAD:refs/heads/main"]),
            (
                true,
                &[],
                &["HEAD:refs/heads/topic", "HEAD~1:refs/heads/old"],
            ),
            (false, &[], &["HEAD:refs/heads/main"]),
            (
                false,
                &["receive.shallowUpdate=true"],
                &["HEAD:refs/heads/main"],
            ),
            (
                false,
                &[],
                &["--atomic", "HEAD:refs/heads/a", "HEAD:refs/heads/b"],
            ),
        ];
        for (n, (copy, settings, args)) in cases.into_iter().enumerate() {
            let mut seen = Vec::new();
            for side in 0..3 {
                let server = env.path().join(format!("server-{n}-{side}.git"));
                match copy {
                    true => crate::util::copy_tree(&full, &server),
                    false => drop(env.init(&format!("server-{n}-{side}.git"), true)),
                }
                for setting in settings {
                    let (key, value) = setting.split_once('=').unwrap();
                    env.git(&server, &["config", key, value]);
                }
                seen.push(pushed(&env, &shallow, &server, side, args));
            }
            let case = format!("{} case {n}: {args:?}", git.display());
            assert_eq!(seen[1], seen[0], "Sluice's receive-pack, {case}");
            assert_eq!(seen[2], seen[0], "Sluice's push, {case}");
        }
    }
}
