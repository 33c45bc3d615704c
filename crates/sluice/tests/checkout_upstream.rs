//! Switching to a branch reports where it stands against its upstream as git does, on
//! standard output: up to date, ahead, behind, diverged, the upstream gone, a local upstream,
//! and without the hints when `advice.statusHints` is off.

use crate::util::{stderr, Env};
use std::path::Path;

/// git before 2.41 words the diverged hint differently; Sluice words it as git 2.47.
fn as_newer_git(text: &str) -> String {
    text.replace(
        "(use \"git pull\" to merge the remote branch into yours)",
        "(use \"git pull\" if you want to integrate the remote branch with yours)",
    )
}

/// Leaves `main` for `side`, then checks `main` out again with git in `theirs` and Sluice in
/// `ours`: the same exit code, standard output and standard error.
fn switch_back_alike(env: &Env, ours: &Path, theirs: &Path, step: &str) {
    let mut said = Vec::new();
    for (repo, sluice) in [(theirs, false), (ours, true)] {
        env.git(repo, &["checkout", "-q", "side"]);
        let out = env.sluice_or_git(sluice, repo, &["checkout", "main"]);
        assert!(out.status.success(), "{step}: {}", stderr(&out));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        said.push((as_newer_git(&stdout), stderr(&out)));
    }
    assert_eq!(said[1], said[0], "{step}");
}

/// Runs the same git command in both clones.
fn both(env: &Env, repos: [&Path; 2], args: &[&str]) {
    for repo in repos {
        env.git(repo, args);
    }
}

fn commit(env: &Env, repos: [&Path; 2], name: &str) {
    for repo in repos {
        std::fs::write(repo.join(name), format!("{name}\n")).unwrap();
        env.git(repo, &["add", name]);
        env.git(repo, &["commit", "-q", "-m", name]);
    }
}

#[test]
fn the_upstream_report_is_gits() {
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        env.git(&src, &["symbolic-ref", "HEAD", "refs/heads/main"]);
        for i in 0..3 {
            let name = format!("f{i}");
            std::fs::write(src.join(&name), &name).unwrap();
            env.git(&src, &["add", &name]);
            env.git(&src, &["commit", "-q", "-m", &name]);
        }
        let (theirs, ours) = (env.path().join("theirs"), env.path().join("ours"));
        for dest in [&theirs, &ours] {
            env.git(
                env.path(),
                &["clone", "-q", src.to_str().unwrap(), dest.to_str().unwrap()],
            );
            env.git(dest, &["branch", "side"]);
        }
        let repos = [theirs.as_path(), ours.as_path()];
        switch_back_alike(&env, &ours, &theirs, "up to date");
        commit(&env, repos, "local");
        switch_back_alike(&env, &ours, &theirs, "ahead");
        both(&env, repos, &["reset", "-q", "--hard", "origin/main~2"]);
        switch_back_alike(&env, &ours, &theirs, "behind");
        commit(&env, repos, "local2");
        switch_back_alike(&env, &ours, &theirs, "diverged");
        both(&env, repos, &["config", "advice.statusHints", "false"]);
        switch_back_alike(&env, &ours, &theirs, "diverged, no hints");
        both(&env, repos, &["config", "--unset", "advice.statusHints"]);
        both(
            &env,
            repos,
            &["update-ref", "-d", "refs/remotes/origin/main"],
        );
        switch_back_alike(&env, &ours, &theirs, "upstream gone");
        both(
            &env,
            repos,
            &["branch", "-q", "--set-upstream-to=side", "main"],
        );
        switch_back_alike(&env, &ours, &theirs, "a local upstream");
    }
}

/// A branch checkout makes from a remote's branch tracks it as git records it, `.rebase`
/// included where `branch.autoSetupRebase` asks for it, says so in git's words, and is logged
/// (with `HEAD`) as `core.logAllRefUpdates` says.
#[test]
fn a_branch_made_from_a_remote_one_tracks_it_as_gits() {
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        env.git(&src, &["symbolic-ref", "HEAD", "refs/heads/main"]);
        env.git(&src, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let cases = [
            ("plain", None),
            ("always", Some(("branch.autoSetupRebase", "always"))),
            ("remote", Some(("branch.autoSetupRebase", "remote"))),
            ("local", Some(("branch.autoSetupRebase", "local"))),
            ("quiet", Some(("branch.autoSetupRebase", "always"))),
            ("unlogged", Some(("core.logAllRefUpdates", "false"))),
            ("logged", Some(("core.logAllRefUpdates", "always"))),
        ];
        for (branch, _) in cases {
            env.git(&src, &["branch", branch]);
        }
        let (theirs, ours) = (env.path().join("theirs"), env.path().join("ours"));
        for dest in [&theirs, &ours] {
            let (from, to) = (src.to_str().unwrap(), dest.to_str().unwrap());
            env.git(env.path(), &["clone", "-q", from, to]);
        }
        for (branch, setting) in cases {
            let mut said = Vec::new();
            for (repo, sluice) in [(&theirs, false), (&ours, true)] {
                if let Some((key, value)) = setting {
                    env.git(repo, &["config", key, value]);
                }
                let args = match branch {
                    "quiet" => vec!["checkout", "-q", branch],
                    _ => vec!["checkout", branch],
                };
                let out = env.sluice_or_git(sluice, repo, &args);
                assert!(out.status.success(), "{branch}: {}", stderr(&out));
                let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
                let pattern = format!("^branch\\.{branch}\\.");
                let recorded = env.git(repo, &["config", "--get-regexp", &pattern]);
                let mut logs = String::new();
                for name in ["HEAD".to_owned(), format!("refs/heads/{branch}")] {
                    let args = ["reflog", "show", "--format=%gs", &name];
                    let log = env.git_with_input(repo, &args, b"");
                    logs.push_str(&format!("{name}: {}", String::from_utf8_lossy(&log.stdout)));
                }
                said.push((stdout, stderr(&out), recorded, logs));
                if let Some((key, _)) = setting {
                    env.git(repo, &["config", "--unset", key]);
                }
            }
            assert_eq!(said[1], said[0], "{branch}");
        }
    }
}

/// A checkout that would make a branch from a remote's one but is refused (local changes the
/// switch would lose) makes no branch and records no upstream, as git's: the same exit code,
/// messages, refs and configuration.
#[test]
fn a_refused_checkout_makes_no_branch() {
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        env.git(&src, &["symbolic-ref", "HEAD", "refs/heads/main"]);
        std::fs::write(src.join("f"), "one\n").unwrap();
        env.git(&src, &["add", "f"]);
        env.git(&src, &["commit", "-q", "-m", "one"]);
        env.git(&src, &["checkout", "-q", "-b", "side"]);
        std::fs::write(src.join("f"), "two\n").unwrap();
        env.git(&src, &["commit", "-q", "-a", "-m", "two"]);
        env.git(&src, &["checkout", "-q", "main"]);
        let [ours, theirs] = [true, false].map(|sluice| {
            let dest = env.path().join(format!("clone-{sluice}"));
            let (from, to) = (src.to_str().unwrap(), dest.to_str().unwrap());
            env.git(env.path(), &["clone", "-q", from, to]);
            std::fs::write(dest.join("f"), "changed here\n").unwrap();
            let out = env.sluice_or_git(sluice, &dest, &["checkout", "side"]);
            let refs = env.git(&dest, &["for-each-ref", "--format=%(refname)"]);
            let config = env.git(&dest, &["config", "--get-regexp", "^branch\\."]);
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            (out.status.code(), stdout, stderr(&out), refs, config)
        });
        assert_eq!(ours, theirs, "{git:?}");
    }
}
