//! What a push without refspecs pushes, as git decides it: `push.default` in each mode, with
//! the remote the branch fetches from and another one, branches without an upstream, with an
//! upstream of another name or with two, `push.autoSetupRemote`, and `--set-upstream` to a URL.
//! Twins compared after each step (exit code, output, refs of both sides, `branch.*`).

use crate::push::{compare, twins};
use crate::util::{gits, Env};

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
        ];
        compare(&env, &git, &sides, &steps);
    }
}
