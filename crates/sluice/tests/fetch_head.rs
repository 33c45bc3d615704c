//! FETCH_HEAD as `git pull` and scripts read it: which refs are marked for merge (the branch's
//! `branch.<name>.merge` values, else the first configured refspec that is not a glob; every
//! ref named on the command line; never a tag of a tree or a blob; the remote's HEAD for a URL
//! or `--tags <url>`), and remotes named in `.git/remotes/<name>` and `.git/branches/<name>`.
//! Twins start from one `git clone`; after each step the exit code, FETCH_HEAD and every ref
//! must be git's.

use crate::util::{gits, stderr, Env};
use std::path::Path;

/// Exit code, FETCH_HEAD and refs. After a fatal error git has emptied FETCH_HEAD, where Sluice
/// leaves the repository as it was: FETCH_HEAD is compared only when refs were updated.
fn state(env: &Env, repo: &Path, out: &std::process::Output) -> String {
    let fetch_head = match out.status.code() {
        Some(0 | 1) => std::fs::read_to_string(repo.join(".git/FETCH_HEAD")).unwrap_or_default(),
        _ => "(not compared)".into(),
    };
    let refs = String::from_utf8(env.git(repo, &["for-each-ref"])).unwrap();
    format!("exit {:?}\n{fetch_head}\n{refs}", out.status.code())
}

#[test]
fn fetch_head_marks_for_merge_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        env.git(&src, &["checkout", "-q", "-b", "main"]);
        std::fs::write(src.join("f"), "one\n").unwrap();
        env.git(&src, &["add", "f"]);
        env.git(&src, &["commit", "-q", "-m", "one"]);
        env.git(&src, &["branch", "topic"]);
        env.git(&src, &["branch", "side"]);
        env.git(
            &src,
            &["tag", "-a", "-m", "tree", "tree-tag", "HEAD^{tree}"],
        );
        env.git(&src, &["tag", "-a", "-m", "blob", "blob-tag", "HEAD:f"]);
        env.git(&src, &["tag", "light"]);
        let url = format!("file://{}", src.display());
        let (ours, theirs) = (env.path().join("ours"), env.path().join("theirs"));
        for repo in [&ours, &theirs] {
            env.git(env.path(), &["clone", "-q", &url, repo.to_str().unwrap()]);
            // .git/remotes and .git/branches name remotes the old ways.
            let remotes = repo.join(".git/remotes");
            std::fs::create_dir_all(&remotes).unwrap();
            std::fs::write(
                remotes.join("old"),
                format!("URL: {url}\nPull: refs/heads/topic:refs/heads/old-topic\nPull: refs/heads/side:refs/heads/old-side\n"),
            )
            .unwrap();
            let branches = repo.join(".git/branches");
            std::fs::create_dir_all(&branches).unwrap();
            std::fs::write(branches.join("older"), format!("{url}#side\n")).unwrap();
            std::fs::write(branches.join("oldest"), format!("{url}\n")).unwrap();
        }
        // (a git command run in both clones first, the fetch's arguments)
        let steps: [(&[&str], &[&str]); 14] = [
            (&[], &["origin"]),
            (&[], &["origin", "topic"]),
            (
                &["config", "--add", "branch.main.merge", "refs/heads/topic"],
                &["origin"],
            ),
            (
                &[],
                &["origin", "topic", "side", "tree-tag", "blob-tag", "light"],
            ),
            (&["checkout", "-q", "-b", "loose"], &["origin"]),
            (
                &[
                    "config",
                    "--replace-all",
                    "remote.origin.fetch",
                    "+refs/heads/side:refs/remotes/origin/side",
                ],
                &["origin"],
            ),
            (
                &[
                    "config",
                    "--add",
                    "remote.origin.fetch",
                    "+refs/heads/*:refs/remotes/origin/*",
                ],
                &["origin"],
            ),
            (&[], &["--tags", &url]),
            (&[], &[&url]),
            (&[], &[&url, "refs/tags/*:refs/tags/*"]),
            (&[], &["old"]),
            (&[], &["older"]),
            (
                &["checkout", "-q", "main"],
                &["--append", "origin", "refs/heads/*:refs/remotes/origin/*"],
            ),
            // The default branch name, which the source has not: refused (after a fatal
            // error git empties FETCH_HEAD, which is not compared).
            (&[], &["oldest"]),
        ];
        for (before, args) in steps {
            let mut outcomes = Vec::new();
            for (sluice, repo) in [(false, &theirs), (true, &ours)] {
                if !before.is_empty() {
                    env.git(repo, before);
                }
                let mut fetch = vec!["fetch", "-q"];
                fetch.extend_from_slice(args);
                let out = env.sluice_or_git(sluice, repo, &fetch);
                outcomes.push((state(&env, repo, &out), stderr(&out)));
            }
            assert_eq!(
                outcomes[1].0,
                outcomes[0].0,
                "{} fetch {args:?}; sluice said: {}",
                git.display(),
                outcomes[1].1
            );
        }
    }
}
