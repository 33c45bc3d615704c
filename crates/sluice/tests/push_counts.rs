//! How many objects a push (and a fetch served without a bitmap) enumerates and counts, as git
//! counts them: besides the objects sent, the other side's versions of the paths sent, git's
//! preferred delta bases (the same path looked up in each edge commit's tree). Nested
//! directories, files of the same name in several, a merge with two edges; the final lines of
//! the enumerating, counting and compressing phases compared with git's.

use crate::util::{gits, stderr, Env};
use std::path::Path;

#[test]
fn pushes_and_fetches_count_the_other_sides_versions_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let mut said = Vec::new();
        for sluice in [false, true] {
            let (remote, work) = deep_history(&env, sluice);
            let mut lines = Vec::new();
            // The search's threads as pack.threads says them (none said for one).
            for args in [
                &[
                    "-c",
                    "pack.threads=3",
                    "push",
                    "--progress",
                    "origin",
                    "side",
                ][..],
                &[
                    "-c",
                    "pack.threads=1",
                    "push",
                    "--progress",
                    "origin",
                    "--all",
                ],
            ] {
                let out = env
                    .sluice_or_git_command(sluice, &work, args)
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{args:?}: {}", stderr(&out));
                lines.extend(counts(&stderr(&out), ""));
            }
            // A fetch of what was pushed since, served by each side's upload-pack.
            let upload = match sluice {
                true => env!("CARGO_BIN_EXE_sluice").to_owned(),
                false => env.git.display().to_string(),
            };
            let clone = env.path().join(format!("clone-{sluice}"));
            let url = remote.to_str().unwrap();
            env.git(env.path(), &["clone", "-q", url, clone.to_str().unwrap()]);
            grow(&env, &work);
            env.git(&work, &["push", "-q", "origin", "main"]);
            let upload = format!("--upload-pack={upload} upload-pack");
            let out = env
                .git_command(&clone, &["fetch", "--progress", &upload, "origin"])
                .output();
            let out = out.unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            lines.extend(counts(&stderr(&out), "remote: "));
            said.push(lines);
        }
        assert_eq!(said[1], said[0], "{}", git.display());
    }
}

/// A remote and a work repository that has pushed `base` to it, then grown: changes in
/// nested directories, files named alike in several, a side branch merged.
fn deep_history(env: &Env, sluice: bool) -> (std::path::PathBuf, std::path::PathBuf) {
    let work = env.init(&format!("work-{sluice}"), false);
    for dir in ["a/b/c", "x/y"] {
        std::fs::create_dir_all(work.join(dir)).unwrap();
    }
    let lines: String = (1..=50).map(|n| format!("{n}\n")).collect();
    for file in [
        "a/one",
        "a/b/two",
        "a/b/c/three",
        "x/y/Makefile",
        "x/Makefile",
        "Makefile",
    ] {
        std::fs::write(work.join(file), &lines).unwrap();
    }
    env.git(&work, &["add", "."]);
    env.git(&work, &["commit", "-q", "-m", "base"]);
    let remote = env.init(&format!("remote-{sluice}.git"), true);
    env.git(
        &work,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    env.git(&work, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
    append(&work, "a/b/c/three", "more\n");
    std::fs::write(work.join("x/y/newfile"), "new\n").unwrap();
    append(&work, "x/Makefile", "m\n");
    env.git(&work, &["add", "."]);
    env.git(&work, &["commit", "-q", "-m", "c1"]);
    env.git(&work, &["checkout", "-q", "-b", "side", "HEAD~1"]);
    std::fs::create_dir_all(work.join("z")).unwrap();
    std::fs::write(work.join("z/Makefile"), "z\n").unwrap();
    append(&work, "Makefile", "side\n");
    env.git(&work, &["add", "."]);
    env.git(&work, &["commit", "-q", "-m", "side"]);
    env.git(&work, &["checkout", "-q", "-B", "main", "master"]);
    env.git(&work, &["merge", "-q", "--no-edit", "side"]);
    append(&work, "a/one", "again\n");
    env.git(&work, &["commit", "-q", "-a", "-m", "c2"]);
    (remote, work)
}

/// Another commit on `work`'s branch, deep in its directories.
fn grow(env: &Env, work: &Path) {
    append(work, "a/b/c/three", "fresh\n");
    std::fs::write(work.join("x/q"), "q\n").unwrap();
    env.git(work, &["add", "."]);
    env.git(work, &["commit", "-q", "-m", "fresh"]);
}

fn append(work: &Path, file: &str, text: &str) {
    let mut content = std::fs::read(work.join(file)).unwrap();
    content.extend_from_slice(text.as_bytes());
    std::fs::write(work.join(file), content).unwrap();
}

/// The final lines of the enumerating, counting and compressing phases in `stderr`, after
/// `prefix`, and the line that says the search's threads.
fn counts(stderr: &str, prefix: &str) -> Vec<String> {
    (stderr.split(['\r', '\n']))
        .filter_map(|line| line.strip_prefix(prefix))
        .map(str::trim_end)
        .filter(|line| line.ends_with(", done.") || line.starts_with("Delta compression"))
        .filter(|line| {
            ["Enumerating", "Counting", "Compressing", "Delta"]
                .iter()
                .any(|p| line.starts_with(p))
        })
        .map(str::to_owned)
        .collect()
}

/// What index-pack says of a pack that needed the repository's objects as bases, as git's says
/// it: "Resolving deltas: 100% (n/n), completed with m local objects." A git client pushing to
/// Sluice's receive-pack sees it (as `remote:`, none under `-q`; index-pack's resolving only,
/// for a pack past `receive.unpackLimit`), and so does Sluice's fetch of a thin pack.
#[test]
fn thin_packs_say_the_local_objects_they_took_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let mut said = Vec::new();
        for sluice in [false, true] {
            let (remote, work) = deep_history(&env, sluice);
            // One thread: the same client makes the same pack for both servers.
            env.git(&work, &["config", "pack.threads", "1"]);
            env.git(&remote, &["config", "pack.threads", "1"]);
            env.git(&remote, &["config", "receive.unpackLimit", "1"]);
            let clone = env.path().join(format!("thin-clone-{sluice}"));
            let url = remote.to_str().unwrap();
            env.git(env.path(), &["clone", "-q", url, clone.to_str().unwrap()]);
            let receive = match sluice {
                true => format!(
                    "--receive-pack={} receive-pack",
                    env!("CARGO_BIN_EXE_sluice")
                ),
                false => format!("--receive-pack={} receive-pack", env.git.display()),
            };
            let mut lines = Vec::new();
            for quiet in [false, true] {
                grow(&env, &work);
                let mut args = vec!["push", "--progress", &receive, "origin", "main"];
                if quiet {
                    args.push("-q");
                }
                let out = env.git_command(&work, &args).output().unwrap();
                assert!(out.status.success(), "{}", stderr(&out));
                lines.extend(resolving(&stderr(&out), "remote: "));
            }
            let args = ["-c", "fetch.unpackLimit=1", "fetch", "--progress", "origin"];
            let out = env.sluice_or_git_command(sluice, &clone, &args).output();
            let out = out.unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            lines.extend(resolving(&stderr(&out), ""));
            said.push(lines);
        }
        assert!(
            said[0].iter().any(|l| l.contains("local object")),
            "{said:?}"
        );
        assert_eq!(said[1], said[0], "{}", git.display());
    }
}

/// The final "Resolving deltas" lines in `stderr`, after `prefix`.
fn resolving(stderr: &str, prefix: &str) -> Vec<String> {
    (stderr.split(['\r', '\n']))
        .filter_map(|line| line.strip_prefix(prefix))
        .map(str::trim_end)
        .filter(|line| line.starts_with("Resolving deltas") && line.ends_with('.'))
        .map(str::to_owned)
        .collect()
}
