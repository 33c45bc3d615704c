//! The template directory a clone copies into its new repository, as git copies it:
//! `--template=<dir>`, `GIT_TEMPLATE_DIR`, `init.templateDir`; files with their permissions,
//! directories and symbolic links, but names starting with a dot. Twins compared: every file
//! the template could have given (the repository's own objects, refs, logs, index and config
//! aside), its mode and its content.

use crate::util::{gits, Env};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// What the template could have put in `git_dir`: each path with its mode and content.
fn templated(git_dir: &Path) -> Vec<String> {
    let own = [
        "objects",
        "refs",
        "logs",
        "index",
        "packed-refs",
        "config",
        "HEAD",
    ];
    let mut found = Vec::new();
    let mut pending = vec![git_dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = path
                .strip_prefix(git_dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if own.contains(&name.as_str()) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let shown = if meta.is_dir() {
                pending.push(path.clone());
                format!("{name}/")
            } else if meta.file_type().is_symlink() {
                format!("{name} -> {}", std::fs::read_link(&path).unwrap().display())
            } else {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                format!("{name} {:o} {text:?}", meta.permissions().mode() & 0o111)
            };
            found.push(shown);
        }
    }
    found.sort();
    found
}

#[test]
fn clones_copy_their_template_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        std::fs::write(src.join("f"), "one\n").unwrap();
        env.git(&src, &["add", "f"]);
        env.git(&src, &["commit", "-q", "-m", "one"]);
        let template = env.path().join("template");
        std::fs::create_dir_all(template.join("hooks")).unwrap();
        std::fs::create_dir_all(template.join("info")).unwrap();
        crate::util::script(&template.join("hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
        std::fs::write(template.join("info/exclude"), "*.tmp\n").unwrap();
        std::fs::write(template.join("description"), "from the template\n").unwrap();
        std::fs::write(template.join(".hidden"), "not copied\n").unwrap();
        std::os::unix::fs::symlink("hooks/pre-commit", template.join("linked")).unwrap();
        let dir = template.to_str().unwrap();
        let given = format!("--template={dir}");
        let setting = format!("init.templateDir={dir}");
        // (the clone's arguments, GIT_TEMPLATE_DIR); an empty `--template=` is git's way to
        // copy none, whatever else names one.
        let cases: [(Vec<&str>, Option<&str>); 4] = [
            (vec!["clone", "-q", &given], None),
            (vec!["-c", &setting, "clone", "-q"], None),
            (vec!["clone", "-q", "--bare"], Some(dir)),
            (
                vec!["-c", &setting, "clone", "-q", "--template="],
                Some(dir),
            ),
        ];
        for (i, (args, variable)) in cases.iter().enumerate() {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let into = format!("clone-{i}-{sluice}");
                let mut all = args.clone();
                all.extend(["src", into.as_str()]);
                let mut command = env.sluice_or_git_command(sluice, env.path(), &all);
                if let Some(variable) = variable {
                    command.env("GIT_TEMPLATE_DIR", variable);
                }
                let out = crate::util::run_with_input(command, b"");
                assert!(
                    out.status.success(),
                    "{all:?}: {}",
                    crate::util::stderr(&out)
                );
                let clone = env.path().join(&into);
                let git_dir = match clone.join(".git").is_dir() {
                    true => clone.join(".git"),
                    false => clone,
                };
                seen.push(templated(&git_dir));
            }
            assert_eq!(seen[1], seen[0], "{} {args:?}", git.display());
        }
    }
}

/// A template that is not there, or no directory, is none: the clone goes on with git's
/// warning naming it as given (quiet or not), as git's.
#[test]
fn a_missing_template_is_warned_of_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        env.git(&src, &["commit", "-q", "--allow-empty", "-m", "one"]);
        std::fs::write(env.path().join("a-file"), "no directory\n").unwrap();
        let cases: [&[&str]; 3] = [
            &["clone", "--template=/nonexistent/template"],
            &["clone", "-q", "--template=relative/nope"],
            &["clone", "-q", "--template=a-file"],
        ];
        for (i, args) in cases.iter().enumerate() {
            let [ours, theirs] = [true, false].map(|sluice| {
                let into = format!("clone-{i}-{sluice}");
                let all = [args, &["src", into.as_str()][..]].concat();
                let out = env.sluice_or_git(sluice, env.path(), &all);
                let said = crate::util::stderr(&out).replace(&into, "<into>");
                (
                    out.status.code(),
                    said,
                    templated(&env.path().join(&into).join(".git")),
                )
            });
            assert_eq!(ours, theirs, "{} {args:?}", git.display());
        }
    }
}
