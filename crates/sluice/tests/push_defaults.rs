//! What a push without refspecs pushes, as git decides it: `push.default` in each mode, with
//! the remote the branch fetches from and another one, branches without an upstream, with an
//! upstream of another name or with two, `push.autoSetupRemote`, and `--set-upstream` to a URL;
//! and the push settings git refuses.
//! Twins compared after each step (exit code, output, refs of both sides, `branch.*`).

use crate::push::{compare, twins};
use crate::util::{gits, stderr, Env};

#[test]
fn push_default_modes_choose_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        let steps: Vec<Vec<&str>> = vec![
            vec!["-u", "origin", "main"],
            vec!["!git", "remote", "add", "other", "../server.git"],
            vec!["!git", "fetch", "-q", "other"],
            // An upstream of another name: simple refuses, with the advice for an unset
            // push.default; then set, without it.
            vec![
                "!git",
                "checkout",
                "-q",
                "-b",
                "topic",
                "--track",
                "origin/main",
            ],
            vec![],
            vec!["!git", "config", "push.default", "simple"],
            vec![],
            // simple to another remote pushes the branch to its own name.
            vec!["other"],
            vec!["!git", "config", "push.default", "upstream"],
            vec![],
            vec!["other"],
            vec!["!git", "config", "push.default", "current"],
            vec!["other"],
            vec!["!git", "config", "push.default", "nothing"],
            vec![],
            // Two upstream branches.
            vec!["!git", "config", "push.default", "upstream"],
            vec![
                "!git",
                "config",
                "--add",
                "branch.topic.merge",
                "refs/heads/topic",
            ],
            vec![],
            // No upstream: refused, then set up by push.autoSetupRemote in each mode.
            vec!["!git", "checkout", "-q", "-b", "fresh", "main"],
            vec!["!git", "config", "push.default", "simple"],
            vec![],
            vec!["!git", "config", "push.autoSetupRemote", "true"],
            vec![],
            vec!["!git", "checkout", "-q", "-b", "fresher", "main"],
            vec!["!git", "config", "push.default", "upstream"],
            vec![],
            vec!["!git", "checkout", "-q", "-b", "freshest", "main"],
            vec!["!git", "config", "push.default", "current"],
            vec![],
            vec!["!git", "config", "--unset", "push.autoSetupRemote"],
            vec!["!git", "config", "--unset", "push.default"],
            // --set-upstream to a URL records the URL as given.
            vec!["!git", "checkout", "-q", "-b", "by-url", "main"],
            vec!["--set-upstream", "../server.git", "by-url"],
            // `tracking`, git's old name of `upstream`; values git refuses, whether or not
            // they decide the push, and named by where they were set.
            vec!["!git", "config", "push.default", "tracking"],
            vec![],
            vec!["!git", "config", "--unset", "push.default"],
            vec!["!git", "config", "push.autoSetupRemote", "bogus"],
            vec!["origin", "main"],
            vec!["!git", "config", "--unset", "push.autoSetupRemote"],
            vec!["!git", "config", "push.gpgSign", "bogus"],
            vec!["origin", "main"],
            vec!["--signed=bogus", "origin", "main"],
            vec!["!git", "config", "--unset", "push.gpgSign"],
            vec!["!git", "config", "push.recurseSubmodules", "bogus"],
            vec!["origin", "main"],
            vec!["!git", "config", "--unset", "push.recurseSubmodules"],
        ];
        compare(&env, &git, &sides, &steps);
    }
}

/// A `push.default` git does not know, in a file or on the command line: refused in git's
/// words whether or not it decides the push (every git command refuses it, so it is given
/// with `-c` or set and removed around the push).
#[test]
fn a_bad_push_default_is_refused_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        let mut said = Vec::new();
        for (sluice, side) in [(false, &sides[0]), (true, &sides[1])] {
            let work = side.join("work");
            let mut runs = Vec::new();
            for args in [&["push"][..], &["push", "origin", "main"]] {
                let mut given = vec!["-c", "push.default=Simple"];
                given.extend(args);
                runs.push(env.sluice_or_git(sluice, &work, &given));
                let config = work.join(".git/config");
                let text = std::fs::read_to_string(&config).unwrap();
                std::fs::write(&config, format!("{text}[push]\n\tdefault = bogus\n")).unwrap();
                runs.push(env.sluice_or_git(sluice, &work, args));
                std::fs::write(&config, text).unwrap();
            }
            let runs: Vec<_> = (runs.iter())
                .map(|out| (out.status.code(), stderr(out)))
                .collect();
            said.push(runs);
        }
        assert_eq!(said[1], said[0], "with {}", git.display());
    }
}

/// Which remote a push without one goes to, as git chooses: `branch.<name>.pushRemote`, else
/// `remote.pushDefault`, else the branch's remote, else `origin`; a remote named on the
/// command line over all of them; and what each `push.default` mode pushes to a push remote
/// that is not the upstream's (`upstream` refuses it).
#[test]
fn push_remotes_are_chosen_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        let steps: Vec<Vec<&str>> = vec![
            vec!["-u", "origin", "main"],
            vec!["!git", "init", "-q", "--bare", "../second.git"],
            vec!["!git", "remote", "add", "other", "../second.git"],
            vec!["!git", "config", "remote.pushDefault", "other"],
            vec![],
            vec!["!commit", "three"],
            // pushRemote over pushDefault.
            vec!["!git", "config", "branch.main.pushRemote", "origin"],
            vec![],
            vec!["!commit", "four"],
            // The command line over both.
            vec!["other"],
            vec!["!git", "config", "push.default", "upstream"],
            vec!["!git", "config", "branch.main.pushRemote", "other"],
            vec![],
            vec!["!git", "config", "push.default", "current"],
            vec!["!commit", "five"],
            vec![],
            // A branch without a pushRemote of its own, nor an upstream.
            vec!["!git", "checkout", "-q", "-b", "side"],
            vec![],
            vec!["!git", "config", "--unset", "remote.pushDefault"],
            vec!["!commit", "six"],
            vec![],
            // A pushRemote given as a path rather than a remote's name.
            vec!["!git", "config", "branch.side.pushRemote", "../second.git"],
            vec!["!commit", "seven"],
            vec![],
        ];
        compare(&env, &git, &sides, &steps);
    }
}

/// `--set-upstream` records what git records and says what git says: nothing with `-q`, and
/// "by rebasing" with `branch.<name>.rebase` where `branch.autoSetupRebase` asks for it.
#[test]
fn set_upstream_records_and_says_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        let steps: Vec<Vec<&str>> = vec![
            vec!["-q", "-u", "origin", "main"],
            vec!["!git", "config", "branch.autoSetupRebase", "always"],
            vec!["-u", "origin", "main:elsewhere"],
            vec!["!git", "checkout", "-q", "-b", "second", "main"],
            vec!["!git", "config", "branch.autoSetupRebase", "remote"],
            vec!["--set-upstream", "origin", "second"],
            vec!["!git", "checkout", "-q", "-b", "third", "main"],
            vec!["!git", "config", "branch.autoSetupRebase", "local"],
            vec!["-u", "origin", "third"],
            // Every ref update logged: the remote-tracking ref too.
            vec!["!git", "config", "core.logAllRefUpdates", "always"],
            vec!["!commit", "four"],
            vec!["origin", "third"],
        ];
        compare(&env, &git, &sides, &steps);
    }
}

/// Negative refspecs (`^<ref>`, `^<pattern>`) leave out the remote refs they name or match,
/// whatever paired them (a pattern, `:`, an explicit refspec, `--prune`, `--follow-tags`); a
/// partial name matches nothing; alone they push nothing. And the options git refuses
/// together (`--delete`, `--tags`, `--all`, `--mirror`; `--all` or `--mirror` with refspecs),
/// in git 2.47's words (2.39 words some otherwise: its exit codes are compared).
#[test]
fn negative_refspecs_and_refused_combinations_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        let steps: Vec<Vec<&str>> = vec![
            vec!["origin", "^main"],
            vec!["origin", "main", "^refs/heads/main"],
            vec!["!git", "branch", "topic"],
            vec!["!git", "branch", "wip"],
            vec!["origin", "main"],
            vec!["origin", "refs/heads/*", "^refs/heads/topic"],
            vec!["!git", "commit", "-q", "--allow-empty", "-m", "more"],
            vec!["origin", "^topic"],
            vec!["origin", ":", "^refs/heads/main"],
            vec!["origin", "refs/heads/*:refs/heads/x/*", "^refs/heads/x/w*"],
            vec!["origin", "main:other", "^refs/heads/other"],
            vec!["!git", "branch", "-D", "wip"],
            vec!["--prune", "origin", "refs/heads/*", "^refs/heads/wip"],
            vec!["--follow-tags", "origin", "main", "^refs/tags/v1"],
            vec!["origin", "^main:x"],
        ];
        compare(&env, &git, &sides, &steps);
        let newest = env.git_version() >= (2, 40);
        let refused: [&[&str]; 7] = [
            &["--all", "--tags", "origin"],
            &["--all", "--mirror", "origin"],
            &["--mirror", "--tags", "origin"],
            &["--delete", "--all", "origin"],
            &["--delete", "--tags", "origin", "main"],
            &["--mirror", "origin", "main"],
            &["--all", "origin", "^refs/heads/x"],
        ];
        for args in refused {
            let mut said = Vec::new();
            for (sluice, side) in [(false, &sides[0]), (true, &sides[1])] {
                let mut all = vec!["push"];
                all.extend(args);
                let out = env.sluice_or_git(sluice, &side.join("work"), &all);
                said.push((out.status.code(), newest.then(|| stderr(&out))));
            }
            assert_eq!(said[1], said[0], "{args:?} with {}", git.display());
        }
    }
}
