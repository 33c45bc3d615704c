//! A server that does not send everything the new tips need (an object left out of the pack,
//! or a loose object on the server whose content is not what its name says) must not leave a
//! broken repository behind. git's fetch and clone refuse such a pack after their connectivity
//! walk; Sluice's must refuse it as git does (exit code and the `did not send all necessary
//! objects` line), with no ref moved and, unlike git, no object of the pack left behind.

use crate::upload_pack::snapshot;
use crate::util::{gits, python, stderr, Env};
use std::path::{Path, PathBuf};

fn stand_in() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support/bad_upload_pack.py")
        .display()
        .to_string()
}

/// A repository with two commits: `a` in the first, `b` added in the second.
fn two_commits(env: &Env, name: &str) -> PathBuf {
    let repo = env.init(name, false);
    for (file, text) in [("a", "one\n"), ("b", "two\n")] {
        std::fs::write(repo.join(file), text).unwrap();
        env.git(&repo, &["add", file]);
        env.git(&repo, &["commit", "-q", "-m", file]);
    }
    env.git(&repo, &["branch", "-M", "main"]);
    repo
}

fn rev(env: &Env, repo: &Path, name: &str) -> String {
    String::from_utf8(env.git(repo, &["rev-parse", name]))
        .unwrap()
        .trim()
        .to_owned()
}

/// A pack of what `main~1..main` adds, but for `b`'s blob.
fn pack_without_blob(env: &Env, source: &Path) -> PathBuf {
    let blob = rev(env, source, "main:b");
    let listed = env.git(source, &["rev-list", "--objects", "main~1..main"]);
    let ids: String = String::from_utf8(listed)
        .unwrap()
        .lines()
        .map(|line| &line[..40])
        .filter(|id| *id != blob)
        .map(|id| format!("{id}\n"))
        .collect();
    let out = env.git_with_input(source, &["pack-objects", "--stdout", "-q"], ids.as_bytes());
    assert!(out.status.success());
    let path = env.path().join("without-blob.pack");
    std::fs::write(&path, out.stdout).unwrap();
    path
}

/// Twin repositories that already have `main~1` of `source`.
fn twins(env: &Env, source: &Path) -> [PathBuf; 2] {
    let first = rev(env, source, "main~1");
    ["by-git", "by-sluice"].map(|name| {
        let repo = env.init(name, true);
        let url = format!("file://{}", source.display());
        env.git(
            &repo,
            &["fetch", "-q", &url, &format!("{first}:refs/heads/main")],
        );
        repo
    })
}

/// Fetches `main` from `url` with git and with Sluice into the twins (`-c` settings in
/// `config`, `flags` after `fetch`): both must refuse with the same exit code and git's line;
/// Sluice's twin must be exactly as it was, and complete.
fn fetch_is_refused(env: &Env, source: &Path, config: &[&str], flags: &[&str], url: &str) {
    let [by_git, by_sluice] = twins(env, source);
    let before = snapshot(&by_sluice);
    let mut args: Vec<&str> = Vec::new();
    for setting in config {
        args.extend(["-c", setting]);
    }
    args.push("fetch");
    args.extend_from_slice(flags);
    args.extend([url, "main:refs/heads/main"]);
    let theirs = env.sluice_or_git(false, &by_git, &args);
    let ours = env.sluice_or_git(true, &by_sluice, &args);
    let (theirs_err, ours_err) = (stderr(&theirs), stderr(&ours));
    assert!(!theirs.status.success(), "{config:?}: git accepted it");
    assert_eq!(
        ours.status.code(),
        theirs.status.code(),
        "{config:?}: {ours_err}"
    );
    let line = format!("error: {url} did not send all necessary objects\n");
    assert!(
        theirs_err.contains(&line),
        "{config:?}: git said {theirs_err}"
    );
    assert!(
        ours_err.contains(&line),
        "{config:?}: sluice said {ours_err}"
    );
    assert!(
        before == snapshot(&by_sluice),
        "{config:?}: the refused fetch changed the repository"
    );
    env.git(&by_sluice, &["fsck", "--strict"]);
}

#[test]
fn a_pack_missing_an_object_is_refused_as_git_refuses_it() {
    for git in gits() {
        let env = Env::with_git(git);
        let source = two_commits(&env, "source");
        let pack = pack_without_blob(&env, &source);
        let upload = format!(
            "--upload-pack={} {} good {} {}",
            python(),
            stand_in(),
            pack.display(),
            rev(&env, &source, "main")
        );
        let url = format!("file://{}", source.display());
        // Below fetch.unpackLimit the objects would be loose, above it a kept pack: neither stays.
        for limit in ["fetch.unpackLimit=100", "fetch.unpackLimit=1"] {
            fetch_is_refused(&env, &source, &[limit], &[&upload], &url);
        }

        // A clone refuses it too, whether or not it checks out: git's exit code, no directory.
        for flags in [&["--bare"][..], &["-n"][..], &[][..]] {
            for sluice in [false, true] {
                let dest = env.path().join(format!("clone-{sluice}-{}", flags.len()));
                let dest_arg = dest.to_str().unwrap();
                let mut args = vec!["clone", "-q", &upload];
                args.extend_from_slice(flags);
                args.extend([url.as_str(), dest_arg]);
                let out = env.sluice_or_git(sluice, env.path(), &args);
                assert_eq!(out.status.code(), Some(128), "{flags:?} {}", stderr(&out));
                assert!(
                    !dest.exists(),
                    "{flags:?}: the failed clone left its directory"
                );
                if sluice {
                    let err = stderr(&out);
                    assert!(err.contains("did not send all necessary objects"), "{err}");
                }
            }
        }
    }
}

#[test]
fn a_lying_loose_object_on_the_server_is_refused_as_git_refuses_it() {
    for git in gits() {
        let env = Env::with_git(git);
        let source = two_commits(&env, "source");
        // `b`'s loose object now holds `a`'s content: git's upload-pack sends that content,
        // whose id is `a`'s, and `b` never arrives.
        let path_of = |id: &str| source.join(".git/objects").join(&id[..2]).join(&id[2..]);
        let (a, b) = (rev(&env, &source, "main:a"), rev(&env, &source, "main:b"));
        let lying = path_of(&b);
        let mut permissions = std::fs::metadata(&lying).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        permissions.set_readonly(false);
        std::fs::set_permissions(&lying, permissions).unwrap();
        std::fs::copy(path_of(&a), &lying).unwrap();
        let url = format!("file://{}", source.display());
        fetch_is_refused(&env, &source, &[], &[], &url);
    }
}
