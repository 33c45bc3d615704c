//! `sluice push` beside `git push`, twin-wise: two identical work repositories, each with its
//! own bare server reached as `origin` (git's receive-pack behind both), the same commands
//! run with git in one and Sluice in the other. Exit codes, what each prints, the servers'
//! refs, the work repositories' refs (remote-tracking refs follow a push), their reflogs and
//! their branch settings must be the same; git's hints are compared with the git that wrote
//! them (2.47's words).

use crate::util::{gits, Env};
use std::path::{Path, PathBuf};

/// `env`'s `git/` and `sluice/` directories, each with `server.git` and `work` (a repository
/// with two commits and an annotated tag, `origin` = `../server.git`).
pub(crate) fn twins(env: &Env) -> [PathBuf; 2] {
    let seed = env.init("seed", false);
    for name in ["one", "two"] {
        std::fs::write(seed.join(name), format!("{name}\n")).unwrap();
        env.git(&seed, &["add", name]);
        env.git(&seed, &["commit", "-q", "-m", name]);
    }
    env.git(&seed, &["tag", "-a", "-m", "v1", "v1"]);
    env.git(&seed, &["branch", "-M", "main"]);
    ["git", "sluice"].map(|side| {
        let dir = env.path().join(side);
        std::fs::create_dir(&dir).unwrap();
        crate::util::copy_tree(&seed, &dir.join("work"));
        env.git(&dir, &["init", "-q", "--bare", "server.git"]);
        env.git(
            &dir.join("work"),
            &["remote", "add", "origin", "../server.git"],
        );
        dir
    })
}

/// What one side did: exit code, stdout, stderr.
type SideRan = (Option<i32>, String, String);

fn run(env: &Env, side: &Path, sluice: bool, args: &[&str]) -> SideRan {
    let mut all = vec!["push"];
    all.extend(args);
    let out = env.sluice_or_git(sluice, &side.join("work"), &all);
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// The state a push leaves that must be the same on both sides.
fn state(env: &Env, side: &Path) -> Vec<String> {
    let refs = |repo: &Path| {
        let format = "--format=%(refname) %(objectname)";
        String::from_utf8(env.git(repo, &["for-each-ref", format])).unwrap()
    };
    let work = side.join("work");
    let branches = env.git_with_input(&work, &["config", "--get-regexp", "^branch\\."], b"");
    let mut state = vec![
        refs(&side.join("server.git")),
        refs(&work),
        String::from_utf8_lossy(&branches.stdout).into_owned(),
    ];
    // Every reflog of a remote-tracking ref, those under folders (`origin/x/main`) too.
    let mut dirs = vec![work.join(".git/logs/refs/remotes/origin")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.path().is_dir() {
                dirs.push(entry.path());
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap();
            for line in text.lines() {
                let (head, message) = line.split_once('\t').unwrap();
                let who = &head[..head.rfind('>').unwrap() + 1];
                state.push(format!("{:?} {who}\t{message}", entry.file_name()));
            }
        }
    }
    state.sort();
    state
}

/// Runs `steps` on both sides, comparing after each; `!commit <file>` commits a file and
/// `!git <args>` runs git, alike on both sides.
pub(crate) fn compare(env: &Env, git: &Path, sides: &[PathBuf; 2], steps: &[Vec<&str>]) {
    let newest = git.starts_with("/usr/local");
    let without_hints = |said: SideRan| -> SideRan {
        match newest {
            true => said,
            false => {
                let kept: Vec<&str> = said.2.lines().filter(|l| !l.starts_with("hint:")).collect();
                (said.0, said.1, kept.join("\n"))
            }
        }
    };
    // Where git dies (what the server does not offer), its receive-pack says the remote end
    // hung up after git's fatal: Sluice tells it the push is off instead, and that line is
    // not compared. Where git gives up an atomic push, it is (the server is left as git
    // leaves it). 2.39's receive-pack adds an empty line.
    let quirks = |said: SideRan| -> SideRan {
        let lines: Vec<&str> = said.2.lines().collect();
        let kept: Vec<&str> = (lines.iter().enumerate())
            .filter(|(i, l)| {
                let after_fatal = *i > 0 && lines[i - 1].starts_with("fatal: ");
                let hung_up = **l == "fatal: the remote end hung up unexpectedly";
                !(l.is_empty() || after_fatal && hung_up)
            })
            .map(|(_, l)| *l)
            .collect();
        (said.0, said.1, kept.join("\n"))
    };
    for step in steps {
        if step.first() == Some(&"!commit") {
            for side in sides {
                let work = side.join("work");
                std::fs::write(work.join(step[1]), step[1]).unwrap();
                env.git(&work, &["add", step[1]]);
                env.git(&work, &["commit", "-q", "-m", step[1]]);
            }
            continue;
        }
        if step.first() == Some(&"!git") {
            for side in sides {
                env.git(&side.join("work"), &step[1..]);
            }
            continue;
        }
        let theirs = quirks(without_hints(run(env, &sides[0], false, step)));
        let ours = quirks(without_hints(run(env, &sides[1], true, step)));
        assert_eq!(ours, theirs, "{step:?}");
        assert_eq!(state(env, &sides[1]), state(env, &sides[0]), "{step:?}");
    }
    env.git(&sides[1].join("server.git"), &["fsck", "--strict"]);
}

#[test]
fn pushes_as_git_pushes() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        let steps: Vec<Vec<&str>> = vec![
            vec!["origin", "HEAD:refs/heads/main", "v1"],
            // No upstream yet: push.default=simple refuses.
            vec![],
            vec!["-u", "origin", "main"],
            vec![],
            vec!["!commit", "three"],
            vec![],
            vec!["origin", "HEAD~1:refs/heads/main"],
            vec!["origin", "main~1:refs/heads/topic", "main:refs/heads/other"],
            vec!["origin", "main~2:topic"],
            vec!["--force", "origin", "main~2:topic"],
            vec![
                "--porcelain",
                "origin",
                "main:refs/heads/p",
                ":refs/heads/other",
            ],
            vec!["-n", "origin", "main:refs/heads/dry"],
            vec!["--delete", "origin", "p"],
            vec!["-v", "origin", "main"],
            vec!["origin", "nosuch"],
            vec!["origin", "main:v1"],
            // A source alone must look like a ref (`@` is HEAD); an expression is pushed as
            // the object it names, shown as written.
            vec!["origin", "@{u}"],
            vec!["origin", "HEAD@{1}"],
            vec!["origin", "@"],
            vec!["origin", "@~1:refs/heads/at"],
            vec!["origin", "main@{u}:refs/heads/up"],
            // A symbolic ref alone pushes to the branch it names, or is refused.
            vec![
                "!git",
                "symbolic-ref",
                "refs/heads/alias",
                "refs/heads/main",
            ],
            vec!["origin", "alias"],
            vec!["!git", "remote", "set-head", "origin", "main"],
            vec!["origin", "origin"],
            // The upstream set is said before the porcelain report's end.
            vec!["--porcelain", "-u", "origin", "main:refs/heads/tracked"],
        ];
        compare(&env, &git, &sides, &steps);
    }
}

/// A remote that moved on: `fetch first`, `--force-with-lease` with and without an expected
/// value, `--atomic` with one refused ref, tags and `--follow-tags`, `--all` and `--prune`,
/// `--mirror`; push options and certificates the server does not offer, refused (or warned
/// of) whether anything is to be sent or not.
#[test]
fn refusals_leases_and_selections_are_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        for side in &sides {
            // The server moves on without the work repository seeing it.
            env.git(
                &side.join("work"),
                &["push", "-q", "origin", "main", "main:refs/heads/moved"],
            );
            let other = side.join("other");
            env.git(side, &["clone", "-q", "server.git", "other"]);
            env.git(&other, &["checkout", "-q", "-B", "x", "origin/moved"]);
            env.git(
                &other,
                &["commit", "-q", "--allow-empty", "-m", "elsewhere"],
            );
            env.git(&other, &["push", "-q", "origin", "HEAD:refs/heads/moved"]);
        }
        let mut steps: Vec<Vec<&str>> = vec![
            vec!["origin", "main:moved"],
            vec!["--atomic", "origin", "main:moved", "main:refs/heads/new"],
            vec!["--force-with-lease", "origin", "main:moved"],
            vec!["--force-with-lease=moved:main", "origin", "main:moved"],
            // A lease value that names nothing; a lease forgotten; a lease that does not hold,
            // overridden by --force or a `+` (and said as a forced update).
            vec!["--force-with-lease=moved:bogus", "origin", "main:moved"],
            vec![
                "--force-with-lease",
                "--no-force-with-lease",
                "origin",
                "main:moved",
            ],
            vec!["--force-with-lease=moved:main", "origin", "+main:moved"],
            vec![
                "!git",
                "push",
                "-q",
                "-f",
                "origin",
                "HEAD~1:refs/heads/moved",
            ],
            vec![
                "--force",
                "--force-with-lease=moved:main",
                "origin",
                "main:moved",
            ],
            vec!["--tags", "origin"],
            vec!["!commit", "four"],
            vec!["--follow-tags", "origin", "main"],
            vec!["--all", "--prune", "origin"],
            vec!["--mirror", "origin"],
            // A symbolic ref is pushed as the value it resolves to.
            vec!["!git", "remote", "set-head", "origin", "main"],
            vec!["--mirror", "origin"],
            // What the server does not offer, asked of it with nothing to send, or a dry run.
            vec!["--push-option=x", "origin", "main"],
            vec!["-n", "-o", "x", "origin", "main:refs/heads/dry"],
            vec!["--signed", "origin", "main"],
            vec!["-n", "--signed", "origin", "main:refs/heads/dry"],
            vec!["--signed=if-asked", "origin", "main"],
            // `remote.<name>.mirror`: a mirror push to that remote, refspecs refused.
            vec!["!commit", "five"],
            vec!["!git", "config", "remote.origin.mirror", "true"],
            vec!["origin", "main"],
        ];
        // `--all` beside it is a mirror push in 2.47; 2.39 refused the two together.
        if git.starts_with("/usr/local") {
            steps.extend([vec!["!commit", "six"], vec!["--all"]]);
        }
        steps.extend([vec!["!git", "update-ref", "-d", "refs/heads/moved"], vec![]]);
        compare(&env, &git, &sides, &steps);
    }
}

/// The pre-push hook sees what git shows it and can stop the push; `--no-verify` skips it.
#[test]
fn the_pre_push_hook_runs_as_gits() {
    let git = crate::util::git_bin();
    let env = Env::with_git(git.clone());
    let sides = twins(&env);
    for side in &sides {
        let hook = side.join("work/.git/hooks/pre-push");
        crate::util::script(
            &hook,
            "#!/bin/sh\necho \"pre-push $1 $2\"\ncat >&2\ngrep -q refuse && exit 1\nexit 0\n",
        );
    }
    let steps: Vec<Vec<&str>> = vec![
        vec!["origin", "main", "main:refs/heads/x"],
        vec!["origin", "main:refs/heads/refuse"],
        vec!["--no-verify", "origin", "main:refs/heads/refuse"],
        vec!["origin", ":refs/heads/x"],
    ];
    compare(&env, &git, &sides, &steps);
}

/// `sluice send-pack` beside `git send-pack`: the refs named, `--all`, a refusal (255, no
/// hint), `--dry-run`, refs read from stdin (`--stdin`, after those of the command line),
/// `--helper-status` (each ref of the remote the push left alone said `no match`, in the
/// remote's order); no remote-tracking ref moves. With no ref named: the matching refs, whatever
/// `push.default` says, and into a repository with no refs git's words and death.
#[test]
fn send_pack_sends_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        for side in &sides {
            env.git(side, &["init", "-q", "--bare", "empty.git"]);
            env.git(&side.join("work"), &["config", "push.default", "nothing"]);
        }
        let steps: [(&[&str], &str); 11] = [
            (&["../empty.git"], ""),
            (&["../server.git"], ""),
            (&["../server.git", "main"], ""),
            (&["../server.git", "main"], ""),
            (&["../server.git", "main~1:refs/heads/main"], ""),
            (&["--dry-run", "../server.git", "main:refs/heads/dry"], ""),
            (&["--all", "../server.git"], ""),
            (&["--stdin", "../server.git"], "main:refs/heads/read\n"),
            (
                &["--stdin", "../server.git", "main:refs/heads/named"],
                "main:refs/heads/after\nmain~1:refs/heads/main\n",
            ),
            (
                &["--helper-status", "../server.git", "main:refs/heads/read"],
                "",
            ),
            (
                &[
                    "--helper-status",
                    "../server.git",
                    "main~1:refs/heads/main",
                    "main:refs/heads/z",
                ],
                "",
            ),
        ];
        for (step, input) in steps {
            let said: Vec<SideRan> = (sides.iter().zip([false, true]))
                .map(|(side, sluice)| {
                    let mut all = vec!["send-pack"];
                    all.extend(step);
                    let command = env.sluice_or_git_command(sluice, &side.join("work"), &all);
                    let out = crate::util::run_with_input(command, input.as_bytes());
                    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                    (out.status.code(), text(&out.stdout), text(&out.stderr))
                })
                .collect();
            assert_eq!(said[1], said[0], "{step:?}");
            assert_eq!(state(&env, &sides[1]), state(&env, &sides[0]), "{step:?}");
        }
    }
}

/// A remote with two push URLs is pushed to both, in order, each with its report; one that
/// refuses fails the push but not the other.
#[test]
fn every_push_url_of_a_remote_is_pushed_to_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        for side in &sides {
            env.git(side, &["init", "-q", "--bare", "second.git"]);
            let work = side.join("work");
            env.git(&work, &["config", "remote.both.url", "../server.git"]);
            for url in ["../server.git", "../second.git"] {
                env.git(&work, &["config", "--add", "remote.both.pushurl", url]);
            }
            // The second refuses what the first takes.
            env.git(
                &side.join("second.git"),
                &["config", "receive.denyDeletes", "true"],
            );
        }
        let steps: Vec<Vec<&str>> = vec![
            vec!["both", "main", "v1"],
            vec!["both", "main:refs/heads/gone"],
            vec!["both", ":refs/heads/gone"],
        ];
        compare(&env, &git, &sides, &steps);
        let refs = |side: &Path| env.git(&side.join("second.git"), &["for-each-ref"]);
        assert_eq!(refs(&sides[1]), refs(&sides[0]));
    }
}

/// `--force-if-includes`: a lease taken from a remote-tracking ref that was fetched but never
/// integrated does not let a force through ("remote ref updated since checkout"); once the
/// branch has held that value, it does.
#[test]
fn force_if_includes_refuses_a_lease_never_integrated_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        for side in &sides {
            let work = side.join("work");
            env.git(&work, &["push", "-q", "origin", "main"]);
            env.git(side, &["clone", "-q", "server.git", "other"]);
            let other = side.join("other");
            env.git(&other, &["checkout", "-q", "-B", "main", "origin/main"]);
            env.git(
                &other,
                &["commit", "-q", "--allow-empty", "-m", "elsewhere"],
            );
            env.git(&other, &["push", "-q", "origin", "main"]);
            // Seen here, never integrated: the local branch is rewritten instead.
            env.git(&work, &["fetch", "-q", "origin"]);
            env.git(&work, &["commit", "-q", "--amend", "-m", "rewritten"]);
        }
        let lease = vec![
            "--force-with-lease",
            "--force-if-includes",
            "origin",
            "main",
        ];
        compare(&env, &git, &sides, std::slice::from_ref(&lease));
        for side in &sides {
            let work = side.join("work");
            env.git(&work, &["reset", "-q", "--hard", "origin/main"]);
            env.git(
                &work,
                &["commit", "-q", "--amend", "--allow-empty", "-m", "on top"],
            );
        }
        compare(&env, &git, &sides, &[lease]);
    }
}

/// In a repository of over 16,384 objects git abbreviates ids to 8 digits (`core.abbrev`
/// auto), and to 5 with `core.abbrev=5`: the report's `old..new` is the same as git's.
#[test]
fn abbreviations_grow_with_the_repository_as_gits() {
    let git = crate::util::gits().pop().unwrap();
    let env = Env::with_git(git.clone());
    let sides = twins(&env);
    let mut stream = String::new();
    for i in 0..16_500 {
        let data = format!("blob {i}\n");
        stream.push_str(&format!("blob\ndata {}\n{data}\n", data.len()));
    }
    for side in &sides {
        let work = side.join("work");
        env.fast_import(&work, stream.as_bytes());
        env.git(&work, &["push", "-q", "origin", "main"]);
    }
    compare(
        &env,
        &git,
        &sides,
        &[vec!["!commit", "a"], vec!["origin", "main"]],
    );
    for side in &sides {
        env.git(&side.join("work"), &["config", "core.abbrev", "5"]);
    }
    compare(
        &env,
        &git,
        &sides,
        &[vec!["!commit", "b"], vec!["origin", "main"]],
    );
}

/// Command lines git refuses before it pushes anything, and `--no-force`: the same refusals,
/// exit codes and (untouched) remote refs. Also what matches nothing in a repository with no
/// refs (`:`, a pattern): git's words and failure.
#[test]
fn command_lines_git_refuses_are_refused_alike() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let sides = twins(&env);
        let steps: Vec<Vec<&str>> = vec![
            vec!["origin", ":"],
            vec!["origin", "nomatch*:refs/heads/*"],
            vec!["origin", ""],
            vec!["origin", "+"],
            vec!["origin", "+:"],
            vec!["--delete"],
            vec!["--delete", "origin"],
            vec!["origin", "HEAD:"],
            vec!["origin", "+main:"],
            vec!["--force", "--no-force", "origin", "main:refs/heads/copy"],
            vec!["--delete", "origin", "copy"],
        ];
        compare(&env, &git, &sides, &steps);
        // Options git 2.47 does not have (2.39 still takes --no-ipv4): the newest git's
        // usage error, first line and exit code alike (the option list after it is each
        // tool's own).
        if git != crate::util::git_bin() {
            continue;
        }
        for option in ["--no-ipv4", "--no-ipv6"] {
            let args = ["push", option, "origin", "main"];
            let work = |side: &PathBuf| side.join("work");
            let theirs = env.git_with_input(&work(&sides[0]), &args, b"");
            let ours = env.sluice(&work(&sides[1]), &args, b"");
            assert_eq!(ours.status.code(), theirs.status.code(), "{option}");
            let first = |out: &std::process::Output| {
                crate::util::stderr(out)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            };
            assert_eq!(first(&ours), first(&theirs), "{option}");
        }
    }
}

/// A push's progress, where it is shown, has git's phases: the pack's writing with its
/// throughput, then the Total line (git 2.47's, with the packs copied from), before the
/// report, and the delta search's thread line where git says it; a phase that counts nothing is
/// not shown; none of it under `-q`. How many objects a phase counts is left out: it follows
/// each side's walk and search.
#[test]
fn a_pushs_progress_has_gits_phases_and_total() {
    let git = crate::util::git_bin();
    let env = Env::with_git(git.clone());
    let sides = twins(&env);
    for side in &sides {
        let work = side.join("work");
        std::fs::write(work.join("three"), "three\n".repeat(50)).unwrap();
        env.git(&work, &["add", "three"]);
        env.git(&work, &["commit", "-q", "-m", "three"]);
    }
    let shape = |said: &str| -> Vec<String> {
        (said.lines())
            .map(|line| line.rsplit('\r').next().unwrap_or(line))
            .map(|line| match line.split_once(": ") {
                Some((title, rest)) if !line.starts_with("To ") => {
                    format!("{title} throughput={}", rest.contains("/s, done"))
                }
                _ if line.starts_with("Total ") => {
                    format!("Total from={}", line.contains("(from "))
                }
                _ => line.to_owned(),
            })
            .collect()
    };
    // The second sends an empty pack (the server has it all): no phase is shown, only the
    // Total line; the third is quiet.
    for args in [
        &["--progress", "origin", "main"][..],
        &["--progress", "origin", "main~1:refs/heads/older"],
        &["-q", "origin", "main:refs/heads/quiet"],
    ] {
        let [theirs, ours] = [false, true].map(|sluice| {
            let said = run(&env, &sides[usize::from(sluice)], sluice, args);
            (said.0, shape(&said.2))
        });
        assert_eq!(ours, theirs, "{args:?}");
    }
}
