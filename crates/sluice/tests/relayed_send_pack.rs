//! git's own push over HTTP with Sluice standing in for the `send-pack` its HTTP helper starts
//! (`send-pack --stateless-rpc --helper-status --thin … --stdin`, the conversation relayed
//! through the helper): beside the same push by git's own send-pack into a twin repository
//! behind the same git http-backend, the same exit code, the same words, the same refs.

use crate::http_push::work_with_commits;
use crate::push_transports::refs;
use crate::transports::{serve_with, Kind};
use crate::util::{gits, stand_in, stderr, Env};
use std::path::Path;

/// Pushes `args` from `work` to `url` with git, through `exec` when given; the exit code and
/// what was said, the URL replaced.
fn push(
    env: &Env,
    work: &Path,
    exec: Option<&Path>,
    url: &str,
    args: &[&str],
) -> (Option<i32>, String) {
    // git takes options after the repository too.
    let mut all = vec!["push", url];
    all.extend(args);
    let mut command = env.git_command(work, &all);
    if let Some(exec) = exec {
        command.env("GIT_EXEC_PATH", exec);
    }
    let out = crate::util::run_with_input(command, b"");
    // The request's size names the client's agent, which differs.
    let said = stderr(&out).replace(url, "<url>");
    let said = (said.lines())
        .map(|l| match l.starts_with("POST git-receive-pack (") {
            true => "POST git-receive-pack (<size>)",
            false => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    (out.status.code(), said)
}

#[test]
fn gits_http_push_with_sluice_standing_in_for_send_pack() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let work = work_with_commits(&env);
        let (theirs, ours) = (env.init("theirs.git", true), env.init("ours.git", true));
        for repo in [&theirs, &ours] {
            env.git(repo, &["config", "http.receivepack", "true"]);
            env.git(repo, &["config", "receive.advertisePushOptions", "true"]);
            env.git(repo, &["config", "receive.denyDeletes", "true"]);
            // A hook that says what it is given, refuses one branch with a message that
            // needs quoting, and repeats push options.
            let hook = "#!/bin/sh\nwhile read old new ref; do echo \"update $ref\"; done\n\
                        i=0\nwhile test \"$i\" -lt \"${GIT_PUSH_OPTION_COUNT:-0}\"; do\n  \
                        eval \"echo option: \\$GIT_PUSH_OPTION_$i\"\n  i=$((i + 1))\ndone\n";
            crate::util::script(&repo.join("hooks/pre-receive"), hook);
            let update = "#!/bin/sh\ncase \"$1\" in refs/heads/refused) echo \"no \\\"$1\\\" here\"; exit 1 ;; esac\n";
            crate::util::script(&repo.join("hooks/update"), update);
        }
        let exec = stand_in(&env, &["send-pack"]);
        let served = serve_with(&env, Kind::Http, &git, &[]);
        let base = served.url.trim_end_matches("source.git").to_owned();
        let head = String::from_utf8(env.git(&work, &["rev-parse", "HEAD"])).unwrap();
        let wrong_lease = format!("--force-with-lease=refs/heads/main:{}", head.trim());
        let steps: Vec<Vec<&str>> = vec![
            vec!["HEAD:refs/heads/main", "v1"],
            vec!["HEAD~1:refs/heads/topic"],
            // Refused before anything is sent, then forced.
            vec!["HEAD~1:refs/heads/main"],
            vec!["-v", "--force", "HEAD~1:refs/heads/main"],
            // Up to date beside a new branch.
            vec!["HEAD~1:refs/heads/main", "HEAD:refs/heads/other"],
            // A deletion the server refuses, and a hook that refuses one ref.
            vec![":refs/heads/topic", "HEAD:refs/heads/main"],
            vec!["HEAD:refs/heads/refused", "HEAD:refs/heads/taken"],
            vec![
                "--atomic",
                "HEAD:refs/heads/refused",
                "HEAD:refs/heads/atomic",
            ],
            vec![
                "-o",
                "ci.skip",
                "--push-option=topic=a b",
                "HEAD:refs/heads/options",
            ],
            vec!["--dry-run", "HEAD:refs/heads/dry"],
            vec!["-q", "HEAD~1:refs/heads/quiet"],
            // A lease that does not hold, and one that does.
            vec![&wrong_lease, "HEAD~1:refs/heads/main"],
            vec!["--force-with-lease", "HEAD~1:refs/heads/main"],
            vec!["HEAD:refs/heads/main"],
        ];
        for step in &steps {
            let by_git = push(&env, &work, None, &format!("{base}theirs.git"), step);
            let by_sluice = push(&env, &work, Some(&exec), &format!("{base}ours.git"), step);
            assert_eq!(by_sluice, by_git, "{} {step:?}", git.display());
            assert_eq!(refs(&env, &ours), refs(&env, &theirs), "{step:?}");
        }
        let calls = std::fs::read_to_string(env.path().join("calls")).unwrap();
        assert!(
            calls
                .lines()
                .all(|l| l.starts_with("send-pack --stateless-rpc --helper-status")),
            "{calls}"
        );
        assert!(calls.lines().count() >= 8, "{calls}");
        env.git(&ours, &["fsck", "--strict"]);
    }
}
