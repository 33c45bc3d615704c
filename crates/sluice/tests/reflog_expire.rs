//! Which reflog entries `reflog expire --all` and `gc` drop, twinned with git 2.39 and 2.47:
//! a stash's reflog (its older stashes) never expires unless a setting or the command line says
//! so (Sluice's gc used to drop stashes older than 90 days with the objects only they kept),
//! and `gc.<pattern>.reflogExpire[Unreachable]` decide for the refs their pattern matches, `*`
//! crossing `/` (a pattern that sets one age leaves the other at never, as git). Compared: exit
//! code, every reflog's lines, and the objects the refs and reflogs still reach.

use crate::util::{copy_tree, gits, stderr, stdout, Env};
use std::path::Path;

#[test]
fn reflogs_expire_as_git_expires_them() {
    let cases: [&[&str]; 7] = [
        &["gc", "-q"],
        &["reflog", "expire", "--all"],
        &["reflog", "expire", "--all", "--expire=now"],
        &["-c", "gc.reflogExpire=now", "reflog", "expire", "--all"],
        &[
            "-c",
            "gc.refs/stash.reflogExpire=now",
            "reflog",
            "expire",
            "--all",
        ],
        &[
            "-c",
            "gc.refs/remotes/*.reflogExpire=never",
            "gc",
            "-q",
            "--prune=now",
        ],
        &[
            "-c",
            "gc.refs/heads/*.reflogExpireUnreachable=now",
            "reflog",
            "expire",
            "--all",
            "--expire=never",
        ],
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = env.init("seed", false);
        env.commit_versions(&seed, "f", 3);
        // A commit only the branch's reflog holds, two stashes, a remote-tracking ref moved twice.
        env.git(&seed, &["reset", "-q", "--hard", "HEAD~1"]);
        for i in 0..2 {
            std::fs::write(seed.join("f"), format!("stash {i}\n")).unwrap();
            env.git(&seed, &["stash", "-q"]);
        }
        for rev in ["HEAD~1", "HEAD"] {
            let args = ["update-ref", "-m", "fetch", "refs/remotes/origin/main", rev];
            env.git(&seed, &args);
        }
        for case in cases {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("twin-{sluice}"));
                let _ = std::fs::remove_dir_all(&repo);
                copy_tree(&seed, &repo);
                let out = env.sluice_or_git(sluice, &repo, case);
                assert!(
                    out.status.success(),
                    "{case:?} sluice {sluice}: {}",
                    stderr(&out)
                );
                seen.push(reflogs_and_objects(&env, &repo));
            }
            assert_eq!(seen[1], seen[0], "{case:?} with {}", git.display());
        }
    }
}

/// Every reflog of `repo` with its lines, and the objects its refs and reflogs reach.
fn reflogs_and_objects(env: &Env, repo: &Path) -> String {
    let logs = repo.join(".git/logs");
    let mut files = Vec::new();
    let mut stack = vec![logs.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            match path.is_dir() {
                true => stack.push(path),
                false => files.push(path),
            }
        }
    }
    files.sort();
    let mut text = String::new();
    for file in files {
        let name = file.strip_prefix(&logs).unwrap().display().to_string();
        let lines = std::fs::read_to_string(&file).unwrap();
        text.push_str(&format!("{name}:\n{lines}"));
    }
    let args = ["rev-list", "--objects", "--all", "--reflog"];
    let mut objects: Vec<String> = (stdout(&env.git_with_input(repo, &args, b"")).lines())
        .map(str::to_owned)
        .collect();
    objects.sort();
    format!("{text}\n{}", objects.join("\n"))
}
