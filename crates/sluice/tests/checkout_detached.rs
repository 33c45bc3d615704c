//! Checking out a commit that is no branch (`two~1`, `one^0`, a full id) detaches `HEAD` there
//! as git does: the same work tree, `HEAD` and messages on standard error, git's advice when
//! leaving a branch, "Previous HEAD position was" when leaving a detached `HEAD`; `-` and
//! `@{-1}` go back to where the last checkout came from.

use crate::checkout::{clone_both, git_view, history_for_switch};
use crate::util::{stderr, Env};
use std::path::Path;

#[test]
fn detached_checkouts_say_what_git_says() {
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        let src = history_for_switch(&env);
        let (ours, theirs) = clone_both(&env, &src, &[], "one");
        let two = String::from_utf8(env.git(&theirs, &["rev-parse", "two"])).unwrap();
        for target in [
            "two~1",
            "two",
            "one^0",
            two.trim(),
            "one",
            "-",
            "-",
            "@{-1}",
        ] {
            let said = env
                .git_command(&theirs, &["checkout", target])
                .output()
                .unwrap();
            let out = env.sluice(&ours, &["checkout", target], b"");
            assert_eq!(
                out.status.code(),
                said.status.code(),
                "{target} with {git:?}"
            );
            assert_eq!(
                stderr(&out),
                String::from_utf8_lossy(&said.stderr),
                "{target} with {git:?}"
            );
            assert_eq!(
                env.git(&ours, &["rev-parse", "HEAD"]),
                env.git(&theirs, &["rev-parse", "HEAD"]),
                "{target}"
            );
            assert_eq!(git_view(&env, &ours), git_view(&env, &theirs), "{target}");
        }
    }
}

/// An annotated tag detaches `HEAD` at the commit it peels to (never the tag itself: `git
/// fsck` then finds `HEAD` a commit, and the next commit works); a tree or a blob is refused
/// with git's message and exit code; `@{-2}`, a short id and `^{commit}` name what git's do.
#[test]
fn tags_peel_and_trees_and_blobs_are_refused_as_git() {
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        let src = history_for_switch(&env);
        let (ours, theirs) = clone_both(&env, &src, &[], "one");
        for clone in [&ours, &theirs] {
            env.git(clone, &["tag", "-a", "-m", "tagged", "v1", "two"]);
            env.git_with_input(clone, &["hash-object", "-w", "--stdin"], b"a blob\n");
        }
        let id = |rev: &str| {
            let out = env.git(&theirs, &["rev-parse", rev]);
            String::from_utf8(out).unwrap().trim().to_owned()
        };
        let tree = id("two^{tree}");
        let blob_id = String::from_utf8(
            env.git_with_input(&theirs, &["hash-object", "--stdin"], b"a blob\n")
                .stdout,
        )
        .unwrap();
        let short = id("two~1")[..8].to_owned();
        for target in [
            "v1",
            "one",
            tree.as_str(),
            blob_id.trim(),
            "two^{commit}",
            "@{-2}",
            short.as_str(),
            "v1^{tree}",
        ] {
            let said = env
                .git_command(&theirs, &["checkout", target])
                .output()
                .unwrap();
            let out = env.sluice(&ours, &["checkout", target], b"");
            let label = format!("{target} with {git:?}");
            assert_eq!(
                out.status.code(),
                said.status.code(),
                "{label}: {}",
                stderr(&out)
            );
            let theirs_said = String::from_utf8_lossy(&said.stderr);
            // git before 2.47 words a blob's refusal otherwise; Sluice speaks as the newer.
            let older_words = format!("fatal: reference is not a tree: {target}\n");
            if theirs_said != older_words {
                assert_eq!(stderr(&out), theirs_said, "{label}");
            }
            assert_eq!(
                std::fs::read_to_string(ours.join(".git/HEAD")).unwrap(),
                std::fs::read_to_string(theirs.join(".git/HEAD")).unwrap(),
                "{label}"
            );
            assert_eq!(git_view(&env, &ours), git_view(&env, &theirs), "{label}");
        }
        env.git(&ours, &["fsck", "--strict"]);
        env.git(&ours, &["commit", "-q", "--allow-empty", "-m", "after"]);
    }
}

/// `clone --branch <annotated tag>` detaches `HEAD` at the commit the tag peels to, as git's
/// clone does: the same `HEAD` file, and `git fsck` finds it a commit.
#[test]
fn clone_of_an_annotated_tag_holds_its_commit_in_head() {
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        let src = history_for_switch(&env);
        env.git(&src, &["tag", "-a", "-m", "tagged", "v9", "one"]);
        let url = src.to_str().unwrap();
        for (sluice, dest) in [(false, "theirs-tag"), (true, "ours-tag")] {
            let args = ["clone", "-q", "--no-local", "--branch", "v9", url, dest];
            let out = env.sluice_or_git(sluice, env.path(), &args);
            assert!(out.status.success(), "{}", stderr(&out));
        }
        let head = |dest: &str| std::fs::read_to_string(env.path().join(dest).join(".git/HEAD"));
        assert_eq!(
            head("ours-tag").unwrap(),
            head("theirs-tag").unwrap(),
            "{git:?}"
        );
        env.git(&env.path().join("ours-tag"), &["fsck", "--strict"]);
    }
}

/// A name that names no commit and no file is refused as git refuses it: "pathspec … did not
/// match", exit 1, nothing changed.
#[test]
fn names_of_nothing_are_refused_as_git() {
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        let src = history_for_switch(&env);
        let (ours, theirs) = clone_both(&env, &src, &[], "one");
        for target in ["nosuch", "two~9", "@{-9}", "origin/nosuch", "two^3"] {
            let label = format!("{target} with {git:?}");
            check_out_both(&env, (&ours, &theirs), target, &label);
        }
    }
}

/// The refs at the top of the repository name revisions as git's root refs do: after a fetch,
/// `FETCH_HEAD` (its first line's commit) and `FETCH_HEAD~1` detach `HEAD` there with git's
/// words and reflog entry; `ORIG_HEAD` where there is none, and names that are no root ref
/// (`fetch_head`, `FETCH-HEAD`), are refused as git refuses them.
#[test]
fn root_refs_name_revisions_as_git() {
    for git in crate::util::gits() {
        let env = Env::with_git(git.clone());
        let src = history_for_switch(&env);
        let (ours, theirs) = clone_both(&env, &src, &[], "one");
        for clone in [&ours, &theirs] {
            env.git(clone, &["fetch", "-q", "origin", "two"]);
        }
        let targets = [
            "ORIG_HEAD",
            "fetch_head",
            "FETCH-HEAD",
            "FETCH_HEAD",
            "one",
            "FETCH_HEAD~1",
        ];
        for target in targets {
            let label = format!("{target} with {git:?}");
            let moved = check_out_both(&env, (&ours, &theirs), target, &label);
            // The clones' own entries differ (their URLs): a refused checkout adds none.
            let reflog = ["reflog", "-1", "--format=%gs", "HEAD"];
            let questions = match moved {
                true => vec![&["rev-parse", "HEAD"][..], &reflog],
                false => vec![&["rev-parse", "HEAD"][..]],
            };
            for question in questions {
                assert_eq!(
                    env.git(&ours, question),
                    env.git(&theirs, question),
                    "{label}"
                );
            }
        }
    }
}

/// `checkout <target>` by Sluice in `ours` and by git in `theirs`: the same exit code, words
/// on standard error and work tree and index; whether git's succeeded.
fn check_out_both(env: &Env, (ours, theirs): (&Path, &Path), target: &str, label: &str) -> bool {
    let said = env
        .git_command(theirs, &["checkout", target])
        .output()
        .unwrap();
    let out = env.sluice(ours, &["checkout", target], b"");
    assert_eq!(out.status.code(), said.status.code(), "{label}");
    assert_eq!(
        stderr(&out),
        String::from_utf8_lossy(&said.stderr),
        "{label}"
    );
    assert_eq!(git_view(env, ours), git_view(env, theirs), "{label}");
    said.status.success()
}
