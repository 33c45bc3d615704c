//! `fetch --all` and `--multiple` with `-j <n>` or `fetch.parallel`: the remotes fetched at
//! once, each by a fetch of its own whose messages are held and said whole, "Fetching <name>"
//! as each starts, and git's line for one that failed; FETCH_HEAD gets every remote's lines.
//! Twin repositories, one fetched by git 2.39 or 2.47, the other by Sluice; the order in which
//! the remotes end is the machine's, so lines are compared as sets: exit code, stdout, stderr,
//! refs, FETCH_HEAD and every reflog. Which of the fetches creates a tag they all follow is a
//! race in git too (the others find it there), so the lines of followed tags are left out.

use crate::upload_pack::{refs, served_source};
use crate::util::{gits, stderr, stdout, Env};
use std::path::Path;

/// The lines of `text` but those of followed tags, sorted.
fn sorted(text: &str) -> Vec<String> {
    let tag = |line: &&str| line.contains("[new tag]") || line.contains("\ttag '");
    let mut lines: Vec<String> = (text.lines().filter(|l| !tag(l)))
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

/// What a fetch left: refs, FETCH_HEAD's lines and each ref's reflog.
fn left(env: &Env, repo: &Path) -> (String, Vec<String>, Vec<String>) {
    let fetch_head = std::fs::read_to_string(repo.join(".git/FETCH_HEAD")).unwrap_or_default();
    let mut logs = Vec::new();
    let names = env.git(repo, &["for-each-ref", "--format=%(refname)"]);
    for name in String::from_utf8(names).unwrap().lines() {
        let log = env.git_with_input(repo, &["reflog", "show", "--format=%gs", name], b"");
        logs.push(format!("{name}: {}", String::from_utf8_lossy(&log.stdout)));
    }
    (refs(env, repo), sorted(&fetch_head), logs)
}

#[test]
fn remotes_fetched_at_once_as_git_fetches_them() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (_, url, upload) = served_source(&env, &git);
        let upload = upload.trim_start_matches("--upload-pack=");
        let cases: [(&[&str], &[&str]); 4] = [
            (&[], &["--all", "-j", "3"]),
            (
                &["fetch.parallel=2"],
                &["--multiple", "up", "origin", "third"],
            ),
            (&["fetch.parallel=0"], &["--all", "--no-tags", "-v"]),
            (
                &["remote.bad.url=/nonexistent"],
                &["--all", "-j", "4", "-q"],
            ),
        ];
        for (settings, args) in cases {
            let repo = env.path().join("twin");
            let seen = [true, false].map(|sluice| {
                let _ = std::fs::remove_dir_all(&repo);
                env.git(env.path(), &["init", "-q", repo.to_str().unwrap()]);
                for remote in ["origin", "up", "third"] {
                    env.git(&repo, &["remote", "add", remote, &url]);
                    let key = format!("remote.{remote}.uploadpack");
                    env.git(&repo, &["config", &key, upload]);
                }
                for setting in settings {
                    let (key, value) = setting.split_once('=').unwrap();
                    env.git(&repo, &["config", key, value]);
                }
                let all = [&["fetch"][..], args].concat();
                let out = env.sluice_or_git(sluice, &repo, &all);
                let said = (
                    out.status.code(),
                    sorted(&stdout(&out)),
                    sorted(&stderr(&out)),
                );
                (said, left(&env, &repo))
            });
            assert_eq!(
                seen[0],
                seen[1],
                "{settings:?} {args:?} with {}",
                git.display()
            );
        }
    }
}
