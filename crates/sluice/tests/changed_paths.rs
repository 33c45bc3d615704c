//! Changed-path Bloom filters in the commit-graph (`commit-graph write --changed-paths`),
//! twinned with git 2.39 and 2.47 on copies of one history: the graph files byte for byte,
//! exit code and stderr, for filters asked for, kept by a later write (whole, split, by gc and
//! maintenance), dropped with `--no-changed-paths`, computed under a budget
//! (`--max-new-filters`, `commitGraph.maxNewFilters`), and (git 2.47) the hash version
//! `commitGraph.changedPathsVersion` names; git verifies each result.

use crate::util::{gits, stderr, Env};
use std::path::PathBuf;

/// A history whose first-parent diffs cover what a filter holds: nested directories (each
/// leading directory is a key), names with bytes from 0x80 (where the two hash versions
/// differ), a mode change, a file turned into a directory, a commit changing nothing, a
/// submodule entry, a merge (only its first parent counts), deletions, and commits of 512 and
/// 513 paths (the most a filter holds, and one past it).
fn history(env: &Env) -> PathBuf {
    let repo = env.init("repo", false);
    let steps = r#"
        set -e
        commit() { git add -A && git commit -q --allow-empty -m "$1"; }
        mkdir -p a/b/c d; echo 1 >a/b/c/f; echo 1 >d/g; echo 1 >top; commit root
        echo 2 >"a/caf$(printf '\303\251')"; echo 2 >"$(printf '\344\270\255')文"; commit high
        chmod +x d/g; commit mode
        rm top; mkdir top; echo 3 >top/inner; commit file-to-dir
        commit nothing
        git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,sub
        git commit -q -m submodule
        git checkout -q -b side HEAD~2; echo side >side; commit side
        git checkout -q -; git merge -q --no-edit side
        rm -r a; commit deletion
        mkdir n511; for i in $(seq 511); do echo $i >n511/$i; done; commit most
        mkdir n512; for i in $(seq 512); do echo $i >n512/$i; done; commit too-many
    "#;
    let script = env.path().join("history.sh");
    crate::util::script(&script, steps);
    let out = std::process::Command::new("sh")
        .arg(&script)
        .current_dir(&repo)
        .env("PATH", git_path(env))
        .env("HOME", env.path().join("home"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "A")
        .env("GIT_AUTHOR_EMAIL", "a@example.com")
        .env("GIT_COMMITTER_NAME", "C")
        .env("GIT_COMMITTER_EMAIL", "c@example.com")
        .env("GIT_AUTHOR_DATE", "1700000000 +0000")
        .env("GIT_COMMITTER_DATE", "1700000000 +0000")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    repo
}

/// `PATH` with the git under test first, so the history script runs it.
fn git_path(env: &Env) -> std::ffi::OsString {
    let dir = env.git.parent().unwrap().to_owned();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&rest))).unwrap()
}

#[test]
fn changed_path_filters_are_written_and_kept_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = history(&env);
        let newer = !git.starts_with("/usr/bin");
        let write = ["commit-graph", "write", "--reachable", "--no-progress"];
        let with = |extra: &[&'static str]| -> Vec<&'static str> {
            let mut args = write.to_vec();
            args.extend(extra);
            args
        };
        let v2 = ["-c", "commitGraph.changedPathsVersion=2"];
        let v1 = ["-c", "commitGraph.changedPathsVersion=1"];
        let mut cases: Vec<Vec<Vec<&str>>> = vec![
            vec![with(&["--changed-paths"])],
            vec![with(&["--changed-paths"]), with(&[])],
            vec![with(&["--changed-paths"]), with(&["--no-changed-paths"])],
            vec![with(&["--split", "--changed-paths"])],
            vec![with(&["--changed-paths"]), with(&["--split=no-merge"])],
            vec![with(&["--split", "--changed-paths"]), vec!["gc", "-q"]],
            vec![
                with(&["--changed-paths"]),
                vec!["maintenance", "run", "--task=commit-graph", "--quiet"],
            ],
            vec![
                with(&["--changed-paths"]),
                vec!["commit-graph", "write", "--stdin-commits", "--no-progress"],
            ],
            // A budget of new filters: the earliest commits first; filters there are kept.
            vec![
                with(&["--changed-paths", "--max-new-filters=3"]),
                with(&["--changed-paths", "--max-new-filters=2"]),
            ],
            vec![
                [
                    &["-c", "commitGraph.maxNewFilters=4"][..],
                    &with(&["--changed-paths"]),
                ]
                .concat(),
                with(&["--split", "--max-new-filters=-1"]),
            ],
        ];
        if newer {
            cases.push(vec![[&v2[..], &with(&["--changed-paths"])].concat()]);
            cases.push(vec![
                with(&["--changed-paths"]),
                [&v2[..], &with(&[])].concat(),
            ]);
            let first = [&v2[..], &with(&["--changed-paths"])].concat();
            cases.push(vec![first, [&v1[..], &with(&[])].concat()]);
        }
        for (n, steps) in cases.iter().enumerate() {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("case-{n}-{sluice}"));
                crate::util::copy_tree(&seed, &repo);
                let mut said = Vec::new();
                for step in steps {
                    let out = env.sluice_or_git(sluice, &repo, step);
                    said.push((out.status.code(), stderr(&out)));
                }
                let verify = env.git_with_input(&repo, &["commit-graph", "verify"], b"");
                assert!(verify.status.success(), "{}", stderr(&verify));
                seen.push((said, crate::commit_graph::info_files(&repo)));
            }
            assert!(seen[1] == seen[0], "{} {steps:?}", git.display());
        }
    }
}
