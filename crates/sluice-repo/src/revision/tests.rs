//! Every form against `git rev-parse` on the same repository.

use crate::Repository;
use sluice_odb::testing::git;

/// A repository with history, an annotated tag, a merge, a remote-tracking branch as upstream,
/// a reflog and two checkouts.
fn repo() -> (tempfile::TempDir, Repository) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    git(path, &["init", "-q", "-b", "main"]);
    for name in ["one", "two", "three"] {
        std::fs::write(path.join(name), name).unwrap();
        git(path, &["add", name]);
        git(path, &["commit", "-q", "-m", name]);
    }
    git(path, &["tag", "-a", "-m", "tagged", "v1", "HEAD~1"]);
    git(path, &["checkout", "-q", "-b", "side", "HEAD~2"]);
    git(path, &["commit", "-q", "--allow-empty", "-m", "side"]);
    git(path, &["checkout", "-q", "main"]);
    git(path, &["merge", "-q", "--no-ff", "-m", "merge", "side"]);
    git(path, &["update-ref", "refs/remotes/origin/main", "HEAD~1"]);
    git(path, &["config", "remote.origin.url", "/nowhere"]);
    git(
        path,
        &[
            "config",
            "remote.origin.fetch",
            "+refs/heads/*:refs/remotes/origin/*",
        ],
    );
    git(path, &["config", "branch.main.remote", "origin"]);
    git(path, &["config", "branch.main.merge", "refs/heads/main"]);
    git(path, &["checkout", "-q", "side"]);
    git(path, &["checkout", "-q", "main"]);
    let repo = Repository::discover(path).unwrap();
    (dir, repo)
}

#[test]
fn every_form_names_what_git_rev_parse_names() {
    let (dir, repo) = repo();
    let head = git(dir.path(), &["rev-parse", "HEAD"]).trim().to_owned();
    let short = &head[..7];
    let forms = [
        "HEAD",
        "@",
        "main",
        "v1",
        "v1^{}",
        "v1^{commit}",
        "v1^{tag}",
        "v1^{tree}",
        "HEAD^{tree}",
        "HEAD~1",
        "HEAD^2",
        "HEAD^0",
        "HEAD~2^{tree}",
        "v1~1",
        "main@{1}",
        "HEAD@{2}",
        "@{1}",
        "@{-1}",
        "@{-2}",
        "@{u}",
        "main@{upstream}",
        "@{push}",
        "main@{push}",
        "refs/heads/side",
        "side^{object}",
        short,
        &head,
    ];
    for form in forms {
        let expected = git(dir.path(), &["rev-parse", "--verify", "-q", form]);
        let named = super::resolve(&repo, form).map(|n| n.id.to_string());
        assert_eq!(named.as_deref(), Some(expected.trim()), "{form}");
    }
    for form in [
        "v1^{blob}",
        "HEAD~9",
        "HEAD^3",
        "nothing",
        "@{-9}",
        "side@{u}",
        "HEAD^{nope}",
    ] {
        assert_eq!(super::resolve(&repo, form), None, "{form}");
    }
}

#[test]
fn a_branch_form_says_which_branch_and_a_commit_form_peels_tags() {
    let (_dir, repo) = repo();
    let previous = super::resolve(&repo, "@{-1}").unwrap();
    assert_eq!(previous.ref_name.as_deref(), Some("refs/heads/side"));
    let upstream = super::resolve(&repo, "@{u}").unwrap();
    assert_eq!(
        upstream.ref_name.as_deref(),
        Some("refs/remotes/origin/main")
    );
    let tag = super::resolve(&repo, "v1").unwrap();
    let commit = super::resolve(&repo, "v1^{commit}").unwrap();
    assert_ne!(tag.id, commit.id);
    assert_eq!(Some(commit.id), repo.objects().peel_to_commit(tag.id));
    let tree = super::resolve(&repo, "HEAD^{tree}").unwrap().id;
    assert_eq!(repo.objects().peel_to_commit(tree), None);
}

/// `form` names in `repo` what `git rev-parse` names in the repository at `path` (nothing
/// where git's fails).
fn assert_resolved_as_git(path: &std::path::Path, repo: &Repository, form: &str, label: &str) {
    let out = std::process::Command::new("git")
        .current_dir(path)
        .args(["rev-parse", "--verify", "-q", form])
        .output()
        .unwrap();
    let expected = String::from_utf8(out.stdout).unwrap();
    let expected = Some(expected.trim()).filter(|e| out.status.success() && !e.is_empty());
    let named = super::resolve(repo, form).map(|n| n.id.to_string());
    assert_eq!(named.as_deref(), expected, "{form}{label}");
}

/// A remote whose fetch refspecs map a branch twice tracks it where the first one says, and a
/// negative refspec does not hide an upstream: as `git rev-parse` finds them.
#[test]
fn an_upstream_is_found_through_the_first_refspec_as_git_finds_it() {
    let (dir, repo) = repo();
    let path = dir.path();
    let add = |key: &str, value: &str| git(path, &["config", "--add", key, value]);
    add(
        "remote.origin.fetch",
        "+refs/heads/main:refs/remotes/mirror/main",
    );
    git(path, &["update-ref", "refs/remotes/mirror/main", "HEAD~2"]);
    add("remote.other.url", "/nowhere");
    add("remote.other.fetch", "+refs/heads/*:refs/remotes/other/*");
    add("remote.other.fetch", "^refs/heads/secret");
    git(path, &["update-ref", "refs/remotes/other/secret", "HEAD"]);
    add("branch.side.remote", "other");
    add("branch.side.merge", "refs/heads/secret");
    let repo = Repository::discover(repo.git_dir()).unwrap();
    for form in [
        "main@{upstream}",
        "main@{push}",
        "side@{upstream}",
        "side@{push}",
    ] {
        assert_resolved_as_git(path, &repo, form, "");
    }
}

/// `@{push}` as `git rev-parse` finds it, setting by setting: each `push.default`, a branch
/// without an upstream (pushed to `origin`), `remote.pushDefault`, `branch.<name>.pushRemote`
/// and a remote's own push refspecs, which come first.
#[test]
fn a_push_destination_is_found_as_git_finds_it() {
    let (dir, _repo) = repo();
    let path = dir.path();
    let set = |key: &str, value: &str| git(path, &["config", key, value]);
    git(path, &["update-ref", "refs/remotes/origin/side", "HEAD~2"]);
    git(path, &["update-ref", "refs/remotes/fork/main", "HEAD~1"]);
    git(path, &["update-ref", "refs/remotes/fork/side", "HEAD^2"]);
    git(path, &["update-ref", "refs/remotes/fork/for/main", "HEAD"]);
    set("remote.fork.url", "/elsewhere");
    set("remote.fork.fetch", "+refs/heads/*:refs/remotes/fork/*");
    let forms = ["main@{push}", "side@{push}", "@{push}"];
    let steps: [(&str, Option<&str>); 8] = [
        ("push.default", Some("current")),
        ("push.default", Some("matching")),
        ("push.default", Some("upstream")),
        ("push.default", Some("simple")),
        ("remote.pushdefault", Some("fork")),
        ("push.default", Some("current")),
        ("branch.main.pushremote", Some("origin")),
        (
            "remote.origin.push",
            Some("refs/heads/main:refs/heads/side"),
        ),
    ];
    for (key, value) in steps {
        match value {
            Some(value) => set(key, value),
            None => git(path, &["config", "--unset", key]),
        };
        let repo = Repository::discover(path).unwrap();
        for form in forms {
            let label = format!(" after {key}={value:?}");
            assert_resolved_as_git(path, &repo, form, &label);
        }
    }
}
