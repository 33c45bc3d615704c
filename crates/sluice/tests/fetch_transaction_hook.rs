//! The `reference-transaction` hook on a fetch, twinned with git 2.39 and 2.47: each ref its
//! own transaction (`prepared`, then `committed`, or `aborted` when the hook refuses), or
//! all of them as one under `--atomic`. A refusal stops the fetch in git's words ("ref updates
//! aborted by hook", 128): without `--atomic` the refs before it have moved and FETCH_HEAD
//! lists them, with it nothing moved. Compared: exit code, stdout, stderr, what the hook
//! heard, FETCH_HEAD, the refs.

use crate::util::{gits, Env};
use std::path::Path;

/// An upstream with three branches and a clone of it, then a commit upstream that moves two
/// of them, and a new branch.
fn setup(env: &Env) -> (std::path::PathBuf, std::path::PathBuf) {
    let up = env.init("up", false);
    env.git(&up, &["commit", "-q", "--allow-empty", "-m", "a"]);
    env.git(&up, &["branch", "b1"]);
    env.git(&up, &["branch", "b2"]);
    let clone = env.path().join("clone");
    env.git(
        env.path(),
        &["clone", "-q", up.to_str().unwrap(), clone.to_str().unwrap()],
    );
    env.git(&up, &["commit", "-q", "--allow-empty", "-m", "b"]);
    env.git(&up, &["branch", "-f", "b1"]);
    env.git(&up, &["branch", "b3"]);
    (up, clone)
}

/// What a fetch leaves.
fn fetched(env: &Env, repo: &Path, sluice: bool, args: &[&str]) -> [String; 6] {
    let out = env.sluice_or_git(sluice, repo, &[&["fetch"][..], args].concat());
    let read = |name: &str| std::fs::read_to_string(repo.join(".git").join(name));
    let refs = env.git(repo, &["for-each-ref"]);
    [
        format!("{:?}", out.status.code()),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        read("hook.log").unwrap_or_default(),
        read("FETCH_HEAD").unwrap_or_default(),
        String::from_utf8(refs).unwrap(),
    ]
}

#[test]
fn the_reference_transaction_hook_sees_and_stops_a_fetch_as_gits() {
    let log = "echo \"== $1\" >>.git/hook.log\ncat >>.git/hook.log\n";
    let hooks = [
        format!("#!/bin/sh\n{log}exit 0\n"),
        format!("#!/bin/sh\n{log}test \"$1\" != prepared\n"),
        format!("#!/bin/sh\n{log}test \"$1\" != prepared || ! grep -q b1 .git/hook.log\n"),
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (_up, clone) = setup(&env);
        for (n, hook) in hooks.iter().enumerate() {
            for args in [&["origin"][..], &["--atomic", "origin"], &["-q", "origin"]] {
                let mut seen = Vec::new();
                for sluice in [false, true] {
                    let repo = env.path().join(format!("case-{n}-{}-{sluice}", args.len()));
                    let _ = std::fs::remove_dir_all(&repo);
                    crate::util::copy_tree(&clone, &repo);
                    crate::util::script(&repo.join(".git/hooks/reference-transaction"), hook);
                    seen.push(fetched(&env, &repo, sluice, args));
                }
                assert_eq!(seen[1], seen[0], "{} hook {n} {args:?}", git.display());
            }
        }
    }
}

/// `fetch --prune` and the hook, as git 2.47 runs it (2.39 nests the transactions otherwise):
/// a stale ref that is packed, one that is loose, both, and a hook refusing each, which stops
/// the fetch before anything moves.
#[test]
fn a_prune_goes_by_the_reference_transaction_hook_as_git_2_47s() {
    let git = std::path::PathBuf::from("/usr/local/bin/git");
    let env = Env::with_git(git.clone());
    let version = String::from_utf8(env.git(env.path(), &["version"])).unwrap();
    if !version.contains(" 2.47.") {
        return;
    }
    let (up, clone) = setup(&env);
    // b3 is fetched loose; b2 stays packed, as the clone wrote it.
    env.git(&clone, &["fetch", "-q", "origin"]);
    let log = "echo \"== $1\" >>.git/hook.log\ncat >>.git/hook.log\n";
    let hooks = [
        format!("#!/bin/sh\n{log}exit 0\n"),
        format!("#!/bin/sh\n{log}test \"$1\" != prepared\n"),
    ];
    let gone: [&[&str]; 3] = [&["b2"], &["b3"], &["b2", "b3"]];
    for (g, branches) in gone.iter().enumerate() {
        let upstream = env.path().join(format!("up-{g}"));
        crate::util::copy_tree(&up, &upstream);
        let mut delete = vec!["branch", "-q", "-D"];
        delete.extend(branches.iter());
        env.git(&upstream, &delete);
        let url = upstream.to_str().unwrap();
        for (n, hook) in hooks.iter().enumerate() {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("prune-{g}-{n}-{sluice}"));
                crate::util::copy_tree(&clone, &repo);
                env.git(&repo, &["remote", "set-url", "origin", url]);
                crate::util::script(&repo.join(".git/hooks/reference-transaction"), hook);
                seen.push(fetched(&env, &repo, sluice, &["--prune", "origin"]));
            }
            assert_eq!(seen[1], seen[0], "{branches:?} gone, hook {n}");
        }
    }
}
