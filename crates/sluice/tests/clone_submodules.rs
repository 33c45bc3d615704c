//! `clone --recurse-submodules` beside git's: a superproject with two submodules (one named
//! apart from its path) and one nested in another, all by relative URLs. Compared for git 2.39
//! and 2.47: exit code, stdout and stderr (the clones' own directories written alike), and in
//! the superproject and every submodule the `.git` file, the local configuration, refs, HEAD,
//! reflog messages, status, shallowness and `submodule status --recursive`.

use crate::util::{gits, stderr, stdout, Env};
use std::path::{Path, PathBuf};

/// `inner`; `lib` holding `inner` at `deep/inner`; `super` holding `lib` at `libs/lib` and
/// `inner` again at `extra/inner2` under the name `other`.
fn sources(env: &Env) -> PathBuf {
    let file_allowed = ["-c", "protocol.file.allow=always"];
    let commit = |repo: &Path, file: &str| commit_file(env, repo, file);
    let add = |repo: &Path, extra: &[&str]| {
        let mut args = file_allowed.to_vec();
        args.extend(["submodule", "add", "-q"]);
        args.extend(extra);
        env.git(repo, &args);
    };
    let inner = env.init("inner", false);
    commit(&inner, "i");
    let lib = env.init("lib", false);
    commit(&lib, "l");
    add(&lib, &["../inner", "deep/inner"]);
    env.git(&lib, &["commit", "-q", "-m", "with inner"]);
    let top = env.init("super", false);
    commit(&top, "s");
    add(&top, &["../lib", "libs/lib"]);
    add(&top, &["--name", "other", "../inner", "extra/inner2"]);
    env.git(&top, &["commit", "-q", "-m", "with submodules"]);
    for repo in [&inner, &lib, &top] {
        env.git(repo, &["config", "uploadpack.allowFilter", "true"]);
    }
    top
}

/// What a clone left at `dir`, with `root` written `<root>`.
fn state(env: &Env, dir: &Path, root: &Path) -> String {
    let mut text = String::new();
    for path in ["", "libs/lib", "libs/lib/deep/inner", "extra/inner2"] {
        let at = dir.join(path);
        let dot_git = at.join(".git");
        if !dot_git.exists() {
            text.push_str(&format!("{path}: none\n"));
            continue;
        }
        let git = |args: &[&str]| {
            let out = env.git_command(&at, args).output().unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let gitfile = std::fs::read_to_string(&dot_git).unwrap_or_else(|_| "a directory".into());
        text.push_str(&format!(
            "{path}: {gitfile}\n{}{}{}{}{}{}",
            git(&["config", "--local", "--list"]),
            git(&["for-each-ref"]),
            git(&["rev-parse", "HEAD", "--is-shallow-repository"]),
            git(&["reflog", "--format=%gs"]),
            git(&["status", "--porcelain"]),
            git(&["submodule", "status", "--recursive"]),
        ));
    }
    text.replace(&root.display().to_string(), "<root>")
}

#[test]
fn clone_recurse_submodules_as_git_does() {
    let cases: &[&[&str]] = &[
        &[
            "-c",
            "protocol.file.allow=always",
            "clone",
            "--recurse-submodules",
        ],
        &[
            "-c",
            "protocol.file.allow=always",
            "clone",
            "-q",
            "--recurse-submodules",
        ],
        &[
            "-c",
            "protocol.file.allow=always",
            "clone",
            "--recurse-submodules",
            "--shallow-submodules",
            "--no-local",
        ],
        &[
            "-c",
            "protocol.file.allow=always",
            "clone",
            "-q",
            "--recurse-submodules",
            "--no-local",
            "--filter=blob:none",
            "--also-filter-submodules",
        ],
        // The same filter from `clone.filterSubmodules`.
        &[
            "-c",
            "protocol.file.allow=always",
            "-c",
            "clone.filterSubmodules=true",
            "clone",
            "-q",
            "--recurse-submodules",
            "--no-local",
            "--filter=blob:none",
        ],
        // `submodule.recurse=true` written for the commands after.
        &[
            "-c",
            "protocol.file.allow=always",
            "-c",
            "submodule.stickyRecursiveClone=true",
            "clone",
            "-q",
            "--recurse-submodules",
        ],
        // Only the submodules the pathspecs make active.
        &[
            "-c",
            "protocol.file.allow=always",
            "clone",
            "-q",
            "--recurse-submodules=libs",
        ],
        &[
            "-c",
            "protocol.file.allow=always",
            "clone",
            "-q",
            "--recurse-submodules=*/inner*",
            "--recurse-submodules=:(exclude)libs",
        ],
        // A submodule's URL may not reach local files unless configured so.
        &["clone", "--recurse-submodules"],
        &["clone", "--also-filter-submodules"],
        &["clone", "--filter=blob:none", "--also-filter-submodules"],
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let top = sources(&env);
        for (i, case) in cases.iter().enumerate() {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let root = env.path().join(format!("case{i}-{sluice}"));
                std::fs::create_dir(&root).unwrap();
                let url = format!("file://{}", top.display());
                let source = match case.contains(&"--no-local") {
                    true => url.as_str(),
                    false => top.to_str().unwrap(),
                };
                let mut args = case.to_vec();
                args.extend([source, "clone"]);
                let out = env.sluice_or_git(sluice, &root, &args);
                let said = format!(
                    "{:?}\n{}\n{}",
                    out.status.code(),
                    stdout(&out),
                    stderr(&out).replace(&root.display().to_string(), "<root>")
                );
                seen.push((said, state(&env, &root.join("clone"), &root)));
            }
            assert_eq!(seen[1], seen[0], "case {i} {case:?} with {}", git.display());
        }
    }
}

/// A fetch in a superproject cloned with its submodules, after the sources moved on (`lib`
/// has a new commit, which `super` now records): on demand by default, every submodule with
/// `yes`, none when told so, and a submodule whose remote is gone reported as git reports it.
/// Of `fetch.recurseSubmodules` and `submodule.recurse` the one set last decides; a bad value of
/// either, of a submodule's own setting or of a job count is refused as git refuses it.
#[test]
fn fetch_recurses_into_submodules_as_git_does() {
    let cases: &[(&[&str], bool)] = &[
        (&["fetch"], false),
        (&["fetch", "-q"], false),
        (&["fetch", "--dry-run"], false),
        (&["fetch", "-v", "--prune"], false),
        (&["fetch", "--recurse-submodules=yes"], false),
        (&["fetch", "--no-recurse-submodules"], false),
        (&["-c", "fetch.recurseSubmodules=false", "fetch"], false),
        (&["-c", "submodule.recurse=true", "fetch"], false),
        (&["-c", "submodule.recurse=false", "fetch"], false),
        (
            &[
                "-c",
                "submodule.recurse=false",
                "-c",
                "fetch.recurseSubmodules=on-demand",
                "fetch",
            ],
            false,
        ),
        (
            &[
                "-c",
                "fetch.recurseSubmodules=yes",
                "-c",
                "submodule.recurse=false",
                "fetch",
            ],
            false,
        ),
        (&["-c", "fetch.recurseSubmodules=bogus", "fetch"], false),
        (&["-c", "submodule.recurse=bogus", "fetch"], false),
        (
            &["-c", "submodule.libs/lib.fetchRecurseSubmodules=1", "fetch"],
            false,
        ),
        (
            &[
                "-c",
                "submodule.libs/lib.fetchRecurseSubmodules=bogus",
                "fetch",
            ],
            false,
        ),
        (&["-c", "submodule.fetchJobs=-1", "fetch"], false),
        (&["-c", "fetch.parallel=-1", "fetch"], false),
        (&["fetch", "-j", "-2"], false),
        (
            &[
                "-c",
                "submodule.libs/lib.fetchRecurseSubmodules=false",
                "fetch",
            ],
            false,
        ),
        (
            &[
                "-c",
                "fetch.recurseSubmodules=false",
                "-c",
                "submodule.libs/lib.fetchRecurseSubmodules=on-demand",
                "fetch",
            ],
            false,
        ),
        (
            &[
                "-c",
                "submodule.libs/lib.fetchRecurseSubmodules=false",
                "fetch",
                "--recurse-submodules",
            ],
            false,
        ),
        (&["fetch"], true),
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let top = sources(&env);
        let seed = seed_clone(&env, &top);
        let lib = env.path().join("lib");
        commit_file(&env, &lib, "l2");
        let allowed = ["-c", "protocol.file.allow=always"];
        let mut update = allowed.to_vec();
        update.extend(["submodule", "-q", "update", "--remote", "libs/lib"]);
        env.git(&top, &update);
        env.git(&top, &["commit", "-q", "-a", "-m", "lib moved"]);
        for (i, (args, gone)) in cases.iter().enumerate() {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let root = env.path().join(format!("fetch{i}-{sluice}"));
                crate::util::copy_tree(&seed, &root);
                if *gone {
                    let config = root.join(".git/modules/libs/lib/config");
                    let text = std::fs::read_to_string(&config).unwrap();
                    let url = format!("url = {}", lib.display());
                    let gone = format!("url = {}", env.path().join("gone").display());
                    std::fs::write(&config, text.replace(&url, &gone)).unwrap();
                }
                let out = env.sluice_or_git(sluice, &root, args);
                let said = format!(
                    "{:?}\n{}\n{}",
                    out.status.code(),
                    stdout(&out),
                    stderr(&out)
                );
                seen.push((said, state(&env, &root, &root)));
            }
            assert_eq!(seen[1], seen[0], "case {i} {args:?} with {}", git.display());
        }
    }
}

/// A `.gitmodules` whose URL a program would take for an option (`--upload-pack=<command>`):
/// ignored with git's warning, the clone stops where git's does, and nothing runs.
#[test]
fn a_submodule_url_like_an_option_is_ignored_as_git_ignores_it() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let top = sources(&env);
        let marker = env.path().join("pwned");
        let evil = format!("--upload-pack=touch {}", marker.display());
        env.git(
            &top,
            &[
                "config",
                "-f",
                ".gitmodules",
                "submodule.libs/lib.url",
                &evil,
            ],
        );
        env.git(&top, &["commit", "-q", "-a", "-m", "evil"]);
        let seen = cloned_twins(&env, &top, ("evil", &[]), |sluice| {
            assert!(!marker.exists(), "sluice: {sluice}");
        });
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}

/// A fetch on demand looks through every commit it brought, not only the new tips: `super`
/// records a new commit of `lib`, then the old one again; the submodule is fetched, as git
/// fetches it.
#[test]
fn fetch_on_demand_looks_through_every_commit_brought() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let top = sources(&env);
        let seed = seed_clone(&env, &top);
        let lib = env.path().join("lib");
        let old = String::from_utf8(env.git(&lib, &["rev-parse", "HEAD"])).unwrap();
        commit_file(&env, &lib, "l2");
        let new = String::from_utf8(env.git(&lib, &["rev-parse", "HEAD"])).unwrap();
        for (id, message) in [(new.trim(), "lib moved"), (old.trim(), "lib back")] {
            let cacheinfo = format!("160000,{id},libs/lib");
            env.git(&top, &["update-index", "--cacheinfo", &cacheinfo]);
            env.git(&top, &["commit", "-q", "-m", message]);
        }
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let root = env.path().join(format!("fetch-{sluice}"));
            crate::util::copy_tree(&seed, &root);
            let out = env.sluice_or_git(sluice, &root, &["fetch"]);
            let said = format!(
                "{:?}\n{}\n{}",
                out.status.code(),
                stdout(&out),
                stderr(&out)
            );
            seen.push((said, state(&env, &root, &root)));
        }
        assert!(
            seen[0].0.contains("Fetching submodule libs/lib"),
            "{}",
            seen[0].0
        );
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}

/// A superproject recording a submodule commit that no branch of the submodule's remote holds
/// (fetched by id after the clone, as git does), or one the remote does not have at all (git's
/// failure), over `file://` so that nothing is copied whole.
#[test]
fn a_submodule_commit_on_no_branch_is_fetched_by_id_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let lib = env.init("lib", false);
        env.git(&lib, &["commit", "-q", "--allow-empty", "-m", "a"]);
        env.git(&lib, &["checkout", "-q", "-b", "tmp"]);
        env.git(&lib, &["commit", "-q", "--allow-empty", "-m", "b"]);
        let hidden = String::from_utf8(env.git(&lib, &["rev-parse", "HEAD"])).unwrap();
        env.git(&lib, &["checkout", "-q", "-"]);
        env.git(&lib, &["branch", "-q", "-D", "tmp"]);
        let absent = "1234567890123456789012345678901234567890";
        for (case, commit) in [hidden.trim(), absent].into_iter().enumerate() {
            let top = env.init(&format!("super{case}"), false);
            env.git(&top, &["commit", "-q", "--allow-empty", "-m", "s"]);
            let url = format!("file://{}", lib.display());
            let add = [
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "add",
                "-q",
                &url,
                "lib",
            ];
            env.git(&top, &add);
            env.git(
                &top,
                &[
                    "update-index",
                    "--cacheinfo",
                    &format!("160000,{commit},lib"),
                ],
            );
            env.git(&top, &["commit", "-q", "-m", "sub"]);
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let root = env.path().join(format!("case{case}-{sluice}"));
                std::fs::create_dir(&root).unwrap();
                let source = format!("file://{}", top.display());
                let args = [
                    "-c",
                    "protocol.file.allow=always",
                    "clone",
                    "--recurse-submodules",
                    &source,
                    "clone",
                ];
                let out = env.sluice_or_git(sluice, &root, &args);
                let text = stderr(&out).replace(&root.display().to_string(), "<root>");
                // The server's own line races the client's (in git's runs too): the lines
                // are compared, not their order.
                let mut lines: Vec<&str> = text.lines().collect();
                lines.sort_unstable();
                let said = format!("{:?}\n{}\n{lines:?}", out.status.code(), stdout(&out));
                let mut lib_head = env.git_command(&root.join("clone/lib"), &["rev-parse", "HEAD"]);
                let head = lib_head.output().map(|o| o.stdout).unwrap_or_default();
                seen.push((said, head));
            }
            assert_eq!(seen[1], seen[0], "case {case} with {}", git.display());
        }
    }
}

/// A submodule named with a leading `/` (which git takes): its repository goes under
/// `.git/modules/` as git puts it, never at the root of the file system.
#[test]
fn a_submodule_named_like_an_absolute_path_stays_under_modules() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let lib = env.init("lib", false);
        env.git(&lib, &["commit", "-q", "--allow-empty", "-m", "a"]);
        let top = env.init("super", false);
        env.git(&top, &["commit", "-q", "--allow-empty", "-m", "s"]);
        let name = format!("{}/escaped", env.path().join("outside").display());
        let add = [
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            "--name",
        ];
        let mut args = add.to_vec();
        args.extend([name.as_str(), "../lib", "sub"]);
        env.git(&top, &args);
        env.git(&top, &["commit", "-q", "-m", "sub"]);
        let seen = cloned_twins(&env, &top, ("named", &["-q"]), |sluice| {
            assert!(!env.path().join("outside").exists(), "sluice: {sluice}");
        });
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}

/// `clone --recurse-submodules` of `top` by git and by Sluice, each in `<name>-<sluice>`, with
/// `options` before the URL: what each said and left, `check` run after each.
fn cloned_twins(
    env: &Env,
    top: &Path,
    (name, options): (&str, &[&str]),
    check: impl Fn(bool),
) -> Vec<(String, String)> {
    let mut seen = Vec::new();
    for sluice in [false, true] {
        let root = env.path().join(format!("{name}-{sluice}"));
        std::fs::create_dir(&root).unwrap();
        let mut args = vec!["-c", "protocol.file.allow=always", "clone"];
        args.extend(options);
        args.extend(["--recurse-submodules", top.to_str().unwrap(), "clone"]);
        let out = env.sluice_or_git(sluice, &root, &args);
        let text = stderr(&out).replace(&root.display().to_string(), "<root>");
        let said = format!("{:?}\n{}\n{text}", out.status.code(), stdout(&out));
        seen.push((said, state(env, &root.join("clone"), &root)));
        check(sluice);
    }
    seen
}

/// `clone --remote-submodules`: each submodule checked out at its remote's HEAD, not at the
/// commit the superproject records (`lib` has moved on since), as git checks it out.
#[test]
fn remote_submodules_follow_the_remotes_head_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let top = sources(&env);
        let lib = env.path().join("lib");
        commit_file(&env, &lib, "l3");
        let seen = cloned_twins(&env, &top, ("remote", &["--remote-submodules"]), |_| {});
        let moved = String::from_utf8(env.git(&lib, &["rev-parse", "HEAD"])).unwrap();
        assert!(seen[0].1.contains(moved.trim()), "{}", seen[0].1);
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}

/// A file `<file>` holding its name, added and committed in `repo`.
fn commit_file(env: &Env, repo: &Path, file: &str) {
    std::fs::write(repo.join(file), format!("{file}\n")).unwrap();
    env.git(repo, &["add", file]);
    env.git(repo, &["commit", "-q", "-m", file]);
}

/// `top` cloned by git with its submodules, at `seed`: the start of the fetch tests.
fn seed_clone(env: &Env, top: &Path) -> PathBuf {
    let seed = env.path().join("seed");
    let mut clone = vec!["-c", "protocol.file.allow=always", "clone", "-q"];
    clone.extend(["--recurse-submodules", top.to_str().unwrap()]);
    clone.push(seed.to_str().unwrap());
    env.git(env.path(), &clone);
    seed
}

/// `clone --recurse-submodules --reference <repo>` (and `--reference-if-able`): the submodules
/// borrow from the reference's own submodules (`submodule.alternateLocation=superproject`); one
/// the reference lacks fails the clone with `--reference` and is said and skipped with
/// `--reference-if-able`; both at once are refused. As git: what was said, what was left, and
/// every repository's `objects/info/alternates`.
#[test]
fn submodules_borrow_from_the_references_submodules_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let top = sources(&env);
        let full = seed_clone(&env, &top);
        let plain = env.path().join("plain");
        env.git(env.path(), &["clone", "-q", top.to_str().unwrap(), "plain"]);
        let (full, plain) = (full.to_str().unwrap(), plain.to_str().unwrap());
        let cases: [(&str, &[&str]); 5] = [
            ("full", &["--reference", full]),
            ("full-if-able", &["--reference-if-able", full]),
            ("plain", &["--reference", plain]),
            ("plain-if-able", &["--reference-if-able", plain]),
            ("both", &["--reference", full, "--reference-if-able", plain]),
        ];
        for (name, options) in cases {
            let seen = cloned_twins(&env, &top, (name, options), |_| {});
            let borrowed: Vec<String> = [false, true]
                .iter()
                .map(|sluice| alternates(&env.path().join(format!("{name}-{sluice}/clone/.git"))))
                .collect();
            assert_eq!(seen[1], seen[0], "{name} with {}", git.display());
            assert_eq!(borrowed[1], borrowed[0], "{name} with {}", git.display());
        }
        let borrowed = alternates(&env.path().join("full-true/clone/.git"));
        assert!(borrowed.contains("modules/libs/lib/objects"), "{borrowed}");
    }
}

/// Every `objects/info/alternates` under `git_dir`, with its path there.
fn alternates(git_dir: &Path) -> String {
    let mut found = String::new();
    let mut dirs = vec![git_dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                dirs.push(path);
            } else if path.ends_with("objects/info/alternates") {
                let at = path.strip_prefix(git_dir).unwrap().display().to_string();
                let text = std::fs::read_to_string(&path).unwrap();
                found.push_str(&format!("{at}: {text}"));
            }
        }
    }
    found
}

/// `clone --recurse-submodules -j 2` (and `submodule.fetchJobs=2`): the submodules cloned two
/// at a time, each clone's messages said whole when it ends; the same lines as git's, in an
/// order that depends on which clone ends first, and the same clones left.
#[test]
fn submodules_cloned_in_parallel_as_git_clones_them() {
    let cases: [(&str, &[&str]); 2] = [
        ("jobs", &["-j", "2"]),
        ("fetch-jobs", &["-c", "submodule.fetchJobs=2"]),
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let top = sources(&env);
        for (name, options) in cases {
            let seen = cloned_twins(&env, &top, (name, options), |_| {});
            let lines = |said: &str| {
                let mut lines: Vec<String> = said.lines().map(str::to_owned).collect();
                lines.sort();
                lines
            };
            assert_eq!(lines(&seen[1].0), lines(&seen[0].0), "{name}");
            assert_eq!(seen[1].1, seen[0].1, "{name} with {}", git.display());
        }
    }
}

/// `fetch --recurse-submodules=yes` with `-j 2`, else `submodule.fetchJobs`, else
/// `fetch.parallel`: both submodules fetched at once, each one's messages held and said whole
/// when it ends (lines compared as sets: their order depends on which fetch ends first, for
/// git too), one whose remote is gone reported as git reports it (by its name, here not its
/// path), one at a time too.
#[test]
fn submodules_fetched_in_parallel_as_git_fetches_them() {
    let cases: [&[&str]; 5] = [
        &["fetch", "--recurse-submodules=yes"],
        &["fetch", "-v", "--recurse-submodules=yes", "-j", "2"],
        &[
            "-c",
            "submodule.fetchJobs=2",
            "fetch",
            "--recurse-submodules=yes",
        ],
        &[
            "-c",
            "fetch.parallel=0",
            "fetch",
            "--recurse-submodules=yes",
        ],
        &["fetch", "--recurse-submodules=yes", "--jobs=2", "--dry-run"],
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let top = sources(&env);
        let seed = seed_clone(&env, &top);
        for (name, repo) in [("lib", "lib"), ("inner", "inner")] {
            commit_file(&env, &env.path().join(repo), &format!("{name}2"));
        }
        for gone in [false, true] {
            for (i, args) in cases.iter().enumerate() {
                let mut seen = Vec::new();
                for sluice in [false, true] {
                    let root = env.path().join(format!("jobs{i}-{gone}-{sluice}"));
                    crate::util::copy_tree(&seed, &root);
                    if gone {
                        let config = root.join(".git/modules/other/config");
                        let text = std::fs::read_to_string(&config).unwrap();
                        let inner = env.path().join("inner");
                        let url = format!("url = {}", inner.display());
                        let gone = format!("url = {}", env.path().join("gone").display());
                        std::fs::write(&config, text.replace(&url, &gone)).unwrap();
                    }
                    let out = env.sluice_or_git(sluice, &root, args);
                    let mut lines: Vec<String> = (stdout(&out).lines().chain(stderr(&out).lines()))
                        .map(|line| line.replace(&root.display().to_string(), "<root>"))
                        .collect();
                    lines.sort();
                    seen.push((out.status.code(), lines, state(&env, &root, &root)));
                }
                let what = format!("case {i} {args:?} gone {gone} with {}", git.display());
                assert_eq!(seen[1], seen[0], "{what}");
            }
        }
    }
}
