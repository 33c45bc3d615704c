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

/// `reflog expire`'s options beside git's: named refs (a short name, `HEAD`, a symbolic ref,
/// one that points nowhere: git's error and 255), `--dry-run` that writes nothing, `--verbose`
/// saying `keep` or `prune` of each entry (with `--all`, `HEAD`'s first, then the refs' by
/// name, as 2.47), `--rewrite` and `--updateref`. Compared: exit code, what each says, every
/// reflog's lines and the refs.
#[test]
fn reflog_expire_options_are_gits() {
    let mut cases: Vec<&[&str]> = vec![
        &["--dry-run", "--expire=now", "main"],
        &["--verbose", "--expire=now", "main"],
        &["--verbose", "--dry-run", "--expire-unreachable=now", "HEAD"],
        &["--verbose", "--expire-unreachable=now", "--rewrite", "main"],
        &[
            "--expire-unreachable=now",
            "--rewrite",
            "--updateref",
            "main",
        ],
        &["--expire=now", "--updateref", "main", "alias"],
        &["--verbose", "--expire=now", "nosuch", "refs/heads/side"],
        &[],
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        if git.starts_with("/usr/local") {
            cases.push(&["-n", "--verbose", "--expire-unreachable=now", "--all"]);
        }
        let seed = env.init("seed", false);
        env.git(&seed, &["branch", "-M", "main"]);
        env.commit_versions(&seed, "f", 4);
        env.git(&seed, &["checkout", "-q", "-b", "side"]);
        env.commit_versions(&seed, "g", 1);
        env.git(&seed, &["checkout", "-q", "main"]);
        // The last commit only the branch's reflog holds.
        env.git(&seed, &["reset", "-q", "--hard", "HEAD~1"]);
        env.git(
            &seed,
            &["symbolic-ref", "refs/heads/alias", "refs/heads/side"],
        );
        for case in &cases {
            let args = [&["reflog", "expire"][..], case].concat();
            let seen = [false, true].map(|sluice| {
                let repo = env.path().join(format!("options-{sluice}"));
                let _ = std::fs::remove_dir_all(&repo);
                copy_tree(&seed, &repo);
                let out = env.sluice_or_git(sluice, &repo, &args);
                let refs = env.git(
                    &repo,
                    &["for-each-ref", "--format=%(refname) %(objectname)"],
                );
                (
                    out.status.code(),
                    stdout(&out),
                    stderr(&out),
                    reflogs_and_objects(&env, &repo),
                    String::from_utf8(refs).unwrap(),
                )
            });
            assert_eq!(seen[1], seen[0], "{case:?} with {}", git.display());
        }
    }
}
