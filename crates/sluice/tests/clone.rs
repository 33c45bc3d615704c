//! `sluice clone` makes what `git clone` makes from the same local repository: the same refs,
//! HEAD, configuration and index, a clean status, a repository that passes `fsck --strict`;
//! a failed clone leaves nothing behind.

use crate::upload_pack::{
    add_loose_commit, fsck, refs, served_source, snapshot, source, upload_pack,
};
use crate::util::{gits, stderr, Env};
use std::path::Path;

fn config(env: &Env, repo: &Path) -> String {
    String::from_utf8(env.git(repo, &["config", "--local", "--list"])).unwrap()
}

/// `ours` is what git made as `theirs`: the same refs, configuration and (with a work tree)
/// index, a clean status, and a repository that passes `fsck --strict`.
fn assert_same_clone(env: &Env, ours: &Path, theirs: &Path, work_tree: bool, name: &str) {
    assert_eq!(refs(env, ours), refs(env, theirs), "{name}");
    assert_eq!(config(env, ours), config(env, theirs), "{name}");
    fsck(env, ours);
    if work_tree {
        assert_eq!(
            env.git(ours, &["ls-files", "-s"]),
            env.git(theirs, &["ls-files", "-s"]),
            "{name}"
        );
        assert!(
            env.git(ours, &["status", "--porcelain"]).is_empty(),
            "{name}"
        );
    }
}

#[test]
fn clones_match_git_clone() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        add_loose_commit(&env, &src, 1);
        let path = src.to_str().unwrap().to_owned();
        let url = format!("file://{path}");
        let sluice_server = format!("--upload-pack={}", upload_pack());
        for (name, from, extra) in [
            ("plain", &path, &[][..]),
            ("url", &url, &[][..]),
            ("bare", &path, &["--bare"][..]),
            ("branch", &path, &["-b", "topic"][..]),
            ("no-checkout", &path, &["--no-checkout"][..]),
            ("sluice-server", &path, &[sluice_server.as_str()][..]),
        ] {
            let ours = env.path().join(format!("ours-{name}"));
            let theirs = env.path().join(format!("theirs-{name}"));
            let mut args = vec!["clone", "-q"];
            args.extend_from_slice(extra);
            args.push(from);
            let mut ours_args = args.clone();
            ours_args.push(ours.to_str().unwrap());
            let out = env.sluice(env.path(), &ours_args, b"");
            assert!(out.status.success(), "{name}: {}", stderr(&out));
            let mut theirs_args = args.clone();
            theirs_args.push(theirs.to_str().unwrap());
            let out = env.git_with_input(env.path(), &theirs_args, b"");
            assert!(out.status.success(), "{name}: {}", stderr(&out));
            let work_tree = !extra.contains(&"--bare") && !extra.contains(&"--no-checkout");
            assert_same_clone(&env, &ours, &theirs, work_tree, name);
        }
    }
}

/// Every file below `objects/`, by path: a hash of its bytes, whether it is linked from
/// elsewhere, and the modification time of an object file (which a copy keeps).
fn object_files(git_dir: &Path) -> Vec<(String, u64, bool, Option<std::time::SystemTime>)> {
    use std::hash::{DefaultHasher, Hash, Hasher};
    use std::os::unix::fs::MetadataExt;
    let objects = git_dir.join("objects");
    let mut out: Vec<_> = snapshot(&objects)
        .into_iter()
        .map(|(path, bytes)| {
            let meta = std::fs::metadata(&path).unwrap();
            let name = path.strip_prefix(&objects).unwrap().display().to_string();
            let mut hasher = DefaultHasher::new();
            bytes.hash(&mut hasher);
            let written_anew = name.starts_with("info/");
            let modified = (!written_anew).then(|| meta.modified().unwrap());
            (name, hasher.finish(), meta.nlink() > 1, modified)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn clones_from_a_path_link_or_copy_objects_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        add_loose_commit(&env, &src, 1);
        // A relative alternate, which a clone must make absolute.
        let borrowed = env.init("borrowed.git", true);
        env.git_with_input(&borrowed, &["hash-object", "-w", "--stdin"], b"borrowed\n");
        std::fs::write(
            src.join("objects/info/alternates"),
            "# a comment\n../../borrowed.git/objects\n",
        )
        .unwrap();
        let path = src.to_str().unwrap();
        for (name, extra) in [
            ("default", &[][..]),
            ("local-bare", &["--local", "--bare"][..]),
            ("no-hardlinks", &["--no-hardlinks"][..]),
            ("shared", &["--shared"][..]),
            ("depth", &["--depth", "1"][..]),
            ("filter", &["--filter=blob:none"][..]),
            ("no-local", &["--no-local"][..]),
        ] {
            let mut outputs = Vec::new();
            for (who, sluice) in [("ours", true), ("theirs", false)] {
                let dest = format!("{who}-{name}");
                let mut args = extra.to_vec();
                args.extend([path, dest.as_str()]);
                let mut all = vec!["clone"];
                all.extend(args);
                let out = env.sluice_or_git(sluice, env.path(), &all);
                assert!(out.status.success(), "{name}: {}", stderr(&out));
                outputs.push(stderr(&out).replace(&dest, "DEST"));
            }
            let ours = env.path().join(format!("ours-{name}"));
            let theirs = env.path().join(format!("theirs-{name}"));
            let git_dir = |repo: &Path| {
                if extra.contains(&"--bare") {
                    repo.to_owned()
                } else {
                    repo.join(".git")
                }
            };
            assert_same_clone(&env, &ours, &theirs, !extra.contains(&"--bare"), name);
            if name != "no-local" {
                assert_eq!(outputs[0], outputs[1], "{name}");
                assert_eq!(
                    object_files(&git_dir(&ours)),
                    object_files(&git_dir(&theirs)),
                    "{name}"
                );
            }
        }
        // A symbolic link in the source's objects is refused, as git refuses it, and the
        // clone leaves nothing behind.
        std::os::unix::fs::symlink(src.join("objects/pack"), src.join("objects/zz")).unwrap();
        let out = env.sluice(env.path(), &["clone", "-q", path, "linked"], b"");
        let theirs = env.git_with_input(env.path(), &["clone", "-q", path, "linked"], b"");
        assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
        assert_eq!(stderr(&out), stderr(&theirs));
        assert!(!env.path().join("linked").exists());
        std::fs::remove_file(src.join("objects/zz")).unwrap();
    }
}

/// The bytes of a clone's `config` and `packed-refs`.
fn config_files(repo: &Path) -> [Vec<u8>; 2] {
    let git_dir = if repo.join(".git").exists() {
        repo.join(".git")
    } else {
        repo.to_owned()
    };
    ["config", "packed-refs"].map(|name| std::fs::read(git_dir.join(name)).unwrap_or_default())
}

#[test]
fn clone_config_and_remote_name_match_git() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        env.git(&src, &["update-ref", "refs/pull/1/head", "topic"]);
        env.git(&src, &["update-ref", "refs/notes/commits", "main"]);
        let path = src.to_str().unwrap();
        let notes = "remote.origin.fetch=+refs/notes/*:refs/notes/*";
        let pulls = "remote.origin.fetch=+refs/pull/*/head:refs/remotes/origin/pr/*";
        for (name, extra) in [
            // Names in lowercase but for subsections, values escaped and quoted, added to the
            // sections git made or the clone goes on to fill; core.autocrlf applies to the
            // checkout.
            (
                "settings",
                &[
                    "-c",
                    "Core.FooBar= x",
                    "-c",
                    "New.Sub.Key=1",
                    "-c",
                    "new.sub.key=2",
                    "-c",
                    "t.v=a\tb\\c\"d;",
                    "-c",
                    "x.y",
                    "-c",
                    "remote.origin.url=/elsewhere",
                    "-c",
                    "branch.main.rebase=true",
                    "-c",
                    "core.autocrlf=true",
                ][..],
            ),
            ("refspecs", &["-c", notes, "-c", pulls][..]),
            (
                "refspecs-single",
                &["--single-branch", "-c", notes, "-c", pulls][..],
            ),
            ("refspecs-tag", &["-b", "v1.0", "-c", pulls][..]),
            // The branch set to track its remote one is set to rebase, as git sets it.
            (
                "autosetuprebase",
                &["-c", "branch.autoSetupRebase=remote"][..],
            ),
            (
                "origin",
                &[
                    "-o",
                    "up",
                    "-c",
                    "remote.up.fetch=+refs/notes/*:refs/notes/*",
                ][..],
            ),
            ("no-tags", &["--no-tags", "-c", notes][..]),
            (
                "mirror",
                &[
                    "--mirror",
                    "--no-tags",
                    "-c",
                    "remote.origin.fetch=+refs/notes/*:refs/kept/*",
                ][..],
            ),
            ("bare", &["--bare", "-o", "up"][..]),
            // Refused, leaving nothing: a key without a section, a remote name no ref can
            // hold, a ref two refspecs map.
            ("bad-key", &["-c", "nosection"][..]),
            ("bad-name", &["-o", "bad name"][..]),
            (
                "twice",
                &[
                    "-c",
                    "remote.origin.fetch=+refs/heads/main:refs/remotes/origin/main",
                ][..],
            ),
        ] {
            let mut outputs = Vec::new();
            for (who, sluice) in [("ours", true), ("theirs", false)] {
                let dest = format!("{who}-{name}");
                let mut all = vec!["clone", "-q"];
                all.extend(extra);
                all.extend([path, dest.as_str()]);
                let out = env.sluice_or_git(sluice, env.path(), &all);
                let dest = env.path().join(dest);
                // The work tree's files and their bytes, as text to read in a failure.
                let bare = !dest.join(".git").exists();
                let work_tree: Vec<String> = (if bare { Vec::new() } else { snapshot(&dest) })
                    .into_iter()
                    .filter(|(file, _)| !file.iter().any(|part| part == ".git"))
                    .map(|(file, bytes)| {
                        let file = file.strip_prefix(&dest).unwrap();
                        format!("{}: {}", file.display(), String::from_utf8_lossy(&bytes))
                    })
                    .collect();
                let [config, packed_refs] = config_files(&dest);
                outputs.push((
                    out.status.code(),
                    stderr(&out).replace(&format!("{who}-{name}"), "DEST"),
                    String::from_utf8(config).unwrap(),
                    String::from_utf8(packed_refs).unwrap(),
                    work_tree,
                ));
            }
            if name == "refspecs-tag" {
                // git advises on the detached HEAD, in prose of its own.
                outputs[1].1 = outputs[0].1.clone();
            }
            assert_eq!(outputs[0], outputs[1], "{name}");
            let ours = env.path().join(format!("ours-{name}"));
            let theirs = env.path().join(format!("theirs-{name}"));
            if name == "refspecs-tag" {
                // A detached HEAD, which `refs` does not read.
                fsck(&env, &ours);
            } else if outputs[0].0 == Some(0) {
                let work_tree = !extra.contains(&"--bare") && !extra.contains(&"--mirror");
                assert_same_clone(&env, &ours, &theirs, work_tree, name);
            } else {
                assert_eq!(outputs[0].0, Some(128), "{name}");
                assert!(!ours.exists(), "{name}");
            }
        }
    }
}

#[test]
fn failed_clones_leave_nothing_behind() {
    let env = Env::new();
    let src = source(&env);
    let src_str = src.to_str().unwrap();
    // No repository there: nothing is created.
    let out = env.sluice(env.path(), &["clone", "-q", "nowhere", "dest"], b"");
    assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
    assert!(!env.path().join("dest").exists());
    // A server that sends garbage: the directory it made is removed again.
    let out = env.sluice(
        env.path(),
        &[
            "clone",
            "-q",
            "--upload-pack=printf garbage; true",
            src_str,
            "dest",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
    assert!(!env.path().join("dest").exists());
    // An existing empty directory is emptied again, not removed.
    std::fs::create_dir(env.path().join("empty")).unwrap();
    let out = env.sluice(
        env.path(),
        &[
            "clone",
            "-q",
            "--upload-pack=printf garbage; true",
            src_str,
            "empty",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(128));
    assert_eq!(
        std::fs::read_dir(env.path().join("empty")).unwrap().count(),
        0
    );
    // A directory that is not empty is refused and left as it was.
    std::fs::create_dir(env.path().join("full")).unwrap();
    std::fs::write(env.path().join("full/keep.txt"), "mine").unwrap();
    let before = snapshot(&env.path().join("full"));
    let out = env.sluice(env.path(), &["clone", "-q", src_str, "full"], b"");
    assert_eq!(out.status.code(), Some(128));
    assert!(stderr(&out).contains("already exists and is not an empty directory"));
    assert!(snapshot(&env.path().join("full")) == before);
}

/// The phases of progress in `stderr` (`Receiving objects`, `remote: Counting objects`, …),
/// each with its last report (`100% (12/12), done.`).
fn phases(stderr: &str) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    for line in stderr.split(['\r', '\n']) {
        let Some((label, report)) = line.split_once(": ") else {
            continue;
        };
        let (label, report) = match label {
            "remote" => match report.split_once(": ") {
                Some((inner, report)) => (format!("remote: {inner}"), report),
                None => continue,
            },
            _ => (label.to_owned(), report),
        };
        if report.contains('%') || report.contains("done") {
            out.insert(label, report.to_owned());
        }
    }
    out
}

/// `(n/n)` of a report line: how many objects or deltas the phase counted.
fn counted(report: &str) -> Option<&str> {
    let start = report.find('(')?;
    let end = report[start..].find(')')?;
    Some(&report[start..start + end + 1])
}

/// What a clone says, as git says it: nothing with `-q`; only "Cloning into …" when stderr is
/// not a terminal; with `--progress`, the phases git shows and no other (the server's on band
/// 2 as `remote: …`, then receiving and resolving), counting the same objects.
#[test]
fn clone_messages_and_progress_match_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let (_, url, upload) = served_source(&env, &git);
        for protocol in ["protocol.version=0", "protocol.version=2"] {
            let said = |sluice: bool, flag: Option<&str>, name: &str| {
                let dest = env.path().join(format!("{name}-{protocol}-{sluice}"));
                let mut args = vec!["-c", protocol, "clone", upload.as_str()];
                args.extend(flag);
                args.extend([url.as_str(), dest.to_str().unwrap()]);
                let out = env.sluice_or_git(sluice, env.path(), &args);
                assert!(out.status.success(), "{args:?}: {}", stderr(&out));
                // The destination as given, so that both name the same directory.
                stderr(&out).replace(&format!("{name}-{protocol}-{sluice}"), "DEST")
            };
            let label = format!("{} {protocol}", git.display());
            assert_eq!(said(true, Some("-q"), "quiet"), "", "{label}");
            assert_eq!(
                said(true, None, "plain"),
                said(false, None, "plain"),
                "{label}"
            );
            let ours = phases(&said(true, Some("--progress"), "progress"));
            let theirs = phases(&said(false, Some("--progress"), "progress"));
            // No phase git does not show (a quick checkout's "Updating files" is delayed).
            let names = |phases: &std::collections::BTreeMap<String, String>| {
                phases.keys().cloned().collect::<Vec<_>>()
            };
            assert_eq!(names(&ours), names(&theirs), "{label}");
            for (phase, report) in &theirs {
                let mine = ours
                    .get(phase)
                    .unwrap_or_else(|| panic!("{label}: no '{phase}' in {ours:?}"));
                // The server's threads may choose one delta more or less from one run to the
                // next, so only the objects are counted alike.
                if phase == "Receiving objects" {
                    assert_eq!(counted(mine), counted(report), "{label}: {phase}");
                    // A throughput where git gives one (a pack of many reads).
                    let rate = |report: &str| report.contains("/s, done");
                    assert_eq!(rate(mine), rate(report), "{label}: {phase}: {mine}");
                }
                if phase == "Receiving objects" || phase == "Resolving deltas" {
                    assert!(mine.starts_with("100% ("), "{label}: {phase}: {mine}");
                    assert!(mine.ends_with("done."), "{label}: {phase}: {mine}");
                }
            }
        }
    }
}

/// A small clone's progress has git's phases: its checkout is quick, so "Updating files" is
/// not shown. (Whether "Receiving objects" has a throughput depends, in git, on how the pack
/// arrived in its pipe: not compared.)
#[test]
fn a_small_clones_progress_is_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("small", false);
        std::fs::write(src.join("a"), "a\n").unwrap();
        env.git(&src, &["add", "a"]);
        env.git(&src, &["commit", "-q", "-m", "a"]);
        let [ours, theirs] = [true, false].map(|sluice| {
            let dest = format!("small-{sluice}");
            let args = ["clone", "--progress", "--no-local", "small", &dest];
            let out = env.sluice_or_git(sluice, env.path(), &args);
            assert!(out.status.success(), "{}", stderr(&out));
            let phases = phases(&stderr(&out));
            phases.keys().cloned().collect::<Vec<_>>()
        });
        assert_eq!(ours, theirs, "{}", git.display());
    }
}

/// A clone of a repository without commits: git's warning, HEAD on the remote's unborn branch
/// when protocol v2 tells it (`ls-refs unborn`), else on `init.defaultBranch` or `master`; the
/// same config; and `-b` refused as git refuses it, leaving nothing.
#[test]
fn empty_repository_clones_match_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("empty.git", true);
        env.git(&src, &["symbolic-ref", "HEAD", "refs/heads/trunk"]);
        let url = format!("file://{}", src.display());
        for protocol in ["protocol.version=0", "protocol.version=2"] {
            for initial in ["init.defaultBranch=master", "init.defaultBranch=dflt"] {
                let label = format!("{} {protocol} {initial}", git.display());
                let mut seen = Vec::new();
                for sluice in [true, false] {
                    let dest = env.path().join(format!("{protocol}-{initial}-{sluice}"));
                    let dest = dest.to_str().unwrap();
                    let run = |args: &[&str]| {
                        let mut all = vec!["-c", protocol, "-c", initial, "clone"];
                        all.extend_from_slice(args);
                        all.extend([url.as_str(), dest]);
                        env.sluice_or_git(sluice, env.path(), &all)
                    };
                    let out = run(&["-b", "nowhere"]);
                    assert_eq!(out.status.code(), Some(128), "{label}: {}", stderr(&out));
                    let message = stderr(&out);
                    assert!(
                        message.contains("Remote branch nowhere not found in upstream origin"),
                        "{label}: {message}"
                    );
                    assert!(!Path::new(dest).exists(), "{label}: -b left {dest}");
                    let out = run(&[]);
                    assert!(out.status.success(), "{label}: {}", stderr(&out));
                    let message = stderr(&out);
                    assert!(
                        message.contains("warning: You appear to have cloned an empty repository."),
                        "{label}: {message}"
                    );
                    let dest = Path::new(dest);
                    let head = env.git(dest, &["symbolic-ref", "HEAD"]);
                    seen.push((String::from_utf8(head).unwrap(), config(&env, dest)));
                    assert!(env.git(dest, &["status", "--porcelain"]).is_empty());
                }
                assert_eq!(seen[0], seen[1], "{label}");
            }
        }
    }
}

/// A clone of a repository without commits warns under `-q` too, and where `init.defaultBranch`
/// names no possible branch starts on `master`, as git 2.47's clone does (2.39's refused the
/// clone: that case is compared with the gits that take it).
#[test]
fn empty_clones_warn_quietly_and_pass_over_a_bad_default_branch_as_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("empty.git", true);
        let url = src.to_str().unwrap();
        for initial in ["init.defaultBranch=trunk", "init.defaultBranch=bad..name"] {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let dest = env.path().join(format!("{initial}-{sluice}"));
                let dest = dest.to_str().unwrap();
                let args = ["-c", initial, "clone", "-q", url, dest];
                let out = env.sluice_or_git(sluice, env.path(), &args);
                let head = match out.status.success() {
                    true => String::from_utf8(env.git(Path::new(dest), &["symbolic-ref", "HEAD"])),
                    false => Ok(String::new()),
                };
                seen.push((out.status.code(), stderr(&out), head.unwrap()));
            }
            if seen[0].0 != Some(0) {
                // git 2.39 refuses the name; Sluice follows the newer git.
                continue;
            }
            assert_eq!(seen[1], seen[0], "{initial} with {}", git.display());
        }
    }
}

/// The lines of the server's progress that a clone's stderr holds, as `remote: ` starts them,
/// each checked to start a line: after a newline or after the `\r` that ends a progress update,
/// never in the middle of one; and each with git's clearing suffix (eight spaces where stderr
/// is no terminal) before its end.
fn remote_lines(said: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(said);
    let mut lines = Vec::new();
    for (at, _) in text.match_indices("remote: ") {
        let before = text[..at].chars().last();
        assert!(
            matches!(before, None | Some('\n' | '\r')),
            "a remote line in the middle of another: {:?}",
            &text[at.saturating_sub(60)..at + 20]
        );
        let rest = &text[at..];
        let end = rest.find(['\n', '\r']).expect("remote lines end");
        let line = &rest[..end];
        if line != "remote: " {
            assert!(line.ends_with("        "), "no clearing suffix: {line:?}");
        }
        lines.push(format!("{}{}", line.trim_end(), &rest[end..=end]));
    }
    lines
}

/// `clone --progress` with stderr not a terminal, as CI logs see it: the server's progress
/// comes out as git's does (each line whole, with git's suffix, never inside a progress
/// update of our own, whose updates end in `\r` as git's do), and the final lines of the
/// server's (the `done.` and `Total` lines) are git's, in git's order.
#[test]
fn progress_and_remote_lines_are_drawn_as_git_draws_them() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        // The same upload-pack (and so the same server messages) for both clients.
        let upload = format!("--upload-pack={} upload-pack", git.display());
        let source = env.init("source", false);
        let files: Vec<(String, Vec<u8>)> = (1..=30)
            .map(|i| (format!("f{i}"), crate::util::text(i, i * 40)))
            .collect();
        for (name, content) in &files {
            std::fs::write(source.join(name), content).unwrap();
        }
        env.git(&source, &["add", "."]);
        env.git(&source, &["commit", "-q", "-m", "files"]);
        let url = format!("file://{}", source.display());
        let mut finals = Vec::new();
        for sluice in [false, true] {
            let dest = env.path().join(format!("clone-{sluice}"));
            let args = ["clone", "--progress", &upload, &url, dest.to_str().unwrap()];
            let out = env.sluice_or_git(sluice, env.path(), &args);
            assert!(out.status.success(), "{sluice}: {}", stderr(&out));
            let lines = remote_lines(&out.stderr);
            finals.push(
                lines
                    .into_iter()
                    .filter(|l| l.ends_with('\n'))
                    .collect::<Vec<_>>(),
            );
            // Each update of a phase starts a line, and the phase's last ends in ", done.\n".
            let said = stderr(&out);
            for phase in ["Receiving objects: ", "Resolving deltas: "] {
                assert!(said.contains(phase), "{sluice}: no {phase}");
                for (at, _) in said.match_indices(phase) {
                    let before = said[..at].chars().last();
                    assert!(
                        matches!(before, Some('\n' | '\r')),
                        "{sluice}: {phase} mid-line"
                    );
                }
                let at = said.rfind(phase).unwrap();
                let done = said[at..].find(", done.\n").map(|end| &said[at..end + at]);
                assert!(
                    done.is_some_and(|d| !d.contains('\n')),
                    "{sluice}: {phase} not done"
                );
            }
        }
        assert_eq!(finals[1], finals[0], "the server's final lines");
    }
}

/// `clone --bundle-uri=<path>`: the bundle first (its branches as refs/bundles/*), then what
/// it lacks from the server, as git's clone does, from a path too; a bundle that cannot be
/// read, or is none, is git's two warnings and the server sends everything; with a cut history
/// it is refused.
#[test]
fn clone_takes_a_given_bundle_first_as_git_does() {
    for git in crate::util::gits() {
        let env = crate::util::Env::with_git(git);
        let served = env.path().join("served");
        std::fs::create_dir(&served).unwrap();
        let repo = env.init("served/repo.git", true);
        let work = env.init("work", false);
        for i in 0..3 {
            std::fs::write(work.join("f.txt"), format!("{i}\n")).unwrap();
            env.git(&work, &["add", "."]);
            env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
            if i == 1 {
                env.git(&work, &["bundle", "create", "-q", "../b.bundle", "--all"]);
            }
        }
        env.git(
            &work,
            &["push", "-q", repo.to_str().unwrap(), "HEAD:refs/heads/main"],
        );
        env.git(&repo, &["symbolic-ref", "HEAD", "refs/heads/main"]);
        let server = crate::serve::Server::start(&env, "served", &[]);
        let url = format!("git://{}/repo.git", server.git.as_deref().unwrap());
        let bundle = env.path().join("b.bundle");
        std::fs::write(env.path().join("junk.bundle"), "junk\n").unwrap();
        let given = format!("--bundle-uri={}", bundle.display());
        let missing = format!("--bundle-uri={}", env.path().join("none.bundle").display());
        let junk = format!("--bundle-uri={}", env.path().join("junk.bundle").display());
        let path = work.to_str().unwrap();
        let cases = [
            ("given", &given, url.as_str()),
            ("missing", &missing, &url),
            ("junk", &junk, &url),
            ("given-local", &given, path),
            ("missing-local", &missing, path),
        ];
        for (name, flag, from) in cases {
            let theirs = format!("{name}-git");
            let ours = format!("{name}-sluice");
            let git_out =
                env.git_with_input(env.path(), &["clone", "-q", flag, from, &theirs], b"");
            let our_out = env.sluice(env.path(), &["clone", "-q", flag, from, &ours], b"");
            assert_eq!(our_out.status.code(), git_out.status.code(), "{name}");
            // git also says what its config reader made of a file that is no bundle, naming a
            // temporary file of its own.
            let said = |out: &std::process::Output| -> String {
                let text = crate::util::stderr(out);
                let kept = text
                    .lines()
                    .filter(|l| !l.starts_with("error: bad config line"));
                kept.map(|line| format!("{line}\n")).collect()
            };
            assert_eq!(said(&our_out), said(&git_out), "{name}");
            let refs = |dir: &str| env.git(&env.path().join(dir), &["for-each-ref"]);
            assert_eq!(refs(&ours), refs(&theirs), "{name}");
            env.git(&env.path().join(&ours), &["fsck", "--strict"]);
        }
        // A bundle and a cut history are refused together (2.39 words it otherwise).
        let newest = env.git_version() >= (2, 40);
        let args = ["clone", "--depth", "1", &given, &url, "cut"];
        let git_out = env.git_with_input(env.path(), &args, b"");
        let our_out = env.sluice(env.path(), &args, b"");
        assert_eq!(our_out.status.code(), git_out.status.code());
        if newest {
            assert_eq!(crate::util::stderr(&our_out), crate::util::stderr(&git_out));
        }
    }
}

/// A clone on a tag (`--branch <tag>`) is on no branch: git's advice, under `-q` too, unless
/// `advice.detachedHead` is off; `-q` and `-v` together, the last one counting.
#[test]
fn clone_on_a_tag_advises_as_git_does() {
    for git in crate::util::gits() {
        let env = crate::util::Env::with_git(git.clone());
        let src = env.init("src", false);
        env.git(&src, &["commit", "-q", "--allow-empty", "-m", "one"]);
        env.git(&src, &["tag", "v1"]);
        env.git(&src, &["tag", "-a", "-m", "two", "v2"]);
        let from = src.to_str().unwrap();
        let cases: [&[&str]; 6] = [
            &["clone", "--branch", "v1"],
            &["clone", "-q", "--branch", "v2"],
            &["-c", "advice.detachedHead=false", "clone", "--branch", "v1"],
            &["clone", "-c", "advice.detachedHead=false", "--branch", "v1"],
            &["clone", "-v", "-q"],
            &["clone", "-q", "-v"],
        ];
        for case in cases {
            let mut said = Vec::new();
            for sluice in [false, true] {
                let _ = std::fs::remove_dir_all(env.path().join("dest"));
                let mut args = case.to_vec();
                args.extend([from, "dest"]);
                let out = env.sluice_or_git(sluice, env.path(), &args);
                said.push((out.status.code(), crate::util::stderr(&out)));
            }
            assert_eq!(said[1], said[0], "{case:?} with {}", git.display());
        }
    }
}
