//! Command lines git refuses (its option parser, or its first checks of what the options
//! say), refused by Sluice in git's words: the exit code
//! (129 for usage, 1 for an unknown command) and the first line of the message, beside git
//! 2.39 and 2.47. The lines after it are each program's own usage text ("git repack" against
//! "sluice repack"), so they are not compared.

use crate::util::{gits, stderr, Env};

/// `sluice` in place of `git` in a message, so that the two programs' lines compare.
fn first_line(out: &std::process::Output) -> String {
    let text = stderr(out).replace("sluice", "git");
    text.lines().next().unwrap_or_default().to_owned()
}

#[test]
fn usage_errors_are_said_as_git_says_them() {
    let lines: &[&[&str]] = &[
        &["repack", "--bogus"],
        &["repack", "-Z"],
        &["gc", "--bogus"],
        &["fetch", "--depth"],
        &["repack", "--window"],
        &["push", "--bogus"],
        &["clone", "--bogus"],
        &["clone"],
        &["clone", "-q"],
        &["fetch", "--deepen=abc"],
        &["fetch", "--depth=0"],
        &["fetch", "origin", "refs/heads/*"],
        &["fetch", "origin", "+refs/heads/*:"],
        &["-c", "remote.origin.fetch=refs/heads/*", "fetch", "origin"],
        &["for-each-repo", "--config=x", "gc"],
        &["for-each-repo", "--config=a.", "gc"],
        &["prune", "--expire=bogus"],
        &["fetch-pack", "."],
        &["reflog", "expire", "--all", "--expire=bogus"],
        &["reflog", "expire", "--all", "--expire-unreachable=bogus"],
        &["-c", "gc.reflogExpire=bogus", "reflog", "expire", "--all"],
        &["-c", "gc.reflogExpire=bogus", "gc"],
        &["commit-graph", "write", "--bogus"],
        &["commit-graph", "bogus"],
        &["multi-pack-index", "bogus"],
        &["maintenance", "bogus"],
        &["maintenance", "run", "--task=bogus"],
        &["maintenance", "run", "--task=gc", "--task=gc"],
        &["pack-objects", "--max-pack-size=zz", "x"],
        &["repack", "-a", "-d", "--max-pack-size=1q"],
        &["reflog", "expire", "--bogus"],
        &["index-pack", "--stdin", "--pack_header=2,x"],
        &["unpack-objects", "--pack_header=2,x"],
        &["bogus"],
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let repo = env.init("repo", false);
        for args in lines {
            let said = [false, true].map(|sluice| {
                let out = env.sluice_or_git(sluice, &repo, args);
                (out.status.code(), first_line(&out))
            });
            // git before 2.47 said a bad `--config` key of for-each-repo and went on (exit 0);
            // Sluice refuses it as the newer does.
            if args[0] == "for-each-repo" && said[0].0 == Some(0) {
                assert_eq!(said[1].1, said[0].1, "{args:?} with {}", git.display());
                continue;
            }
            assert_eq!(said[1], said[0], "{args:?} with {}", git.display());
        }
    }
}
