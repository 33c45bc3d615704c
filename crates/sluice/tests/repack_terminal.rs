//! Repacks at a terminal, beside git's: the phases each shows and the packs and loose objects
//! each leaves. A plain `repack -d` packs only what is loose (enumerating only that), says
//! its Total, and removes every loose copy of a packed object, with nothing new to pack too;
//! `--geometric` rolls the packs that break the progression (the loose objects go along
//! uncounted), with git's phases; a commit-graph written quickly says nothing (git's phases
//! there are delayed); a multi-pack-index's bitmap shows only its bitmap phases; what no ref
//! reaches goes into a cruft pack with git's phases (enumerating, and with an expiration
//! traversing, the cruft) and its own Total; maintenance's loose-objects and incremental
//! repacks, and `multi-pack-index repack`, show pack-objects' phases as git's run it;
//! `multi-pack-index verify` shows git's three phases.

use crate::util::terminal::{final_lines, on_terminal};
use crate::util::{gits, Env};
use std::path::Path;

#[test]
fn repacks_at_a_terminal_show_and_leave_what_gits_do() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let older = env.git_version() < (2, 40);
        let cases: [(&str, &[&str]); 11] = [
            ("incremental", &["repack", "-d"]),
            ("nothing-new", &["repack", "-d"]),
            ("geometric", &["repack", "--geometric=2", "-d"]),
            (
                "graph",
                &["commit-graph", "write", "--reachable", "--changed-paths"],
            ),
            ("midx", &["multi-pack-index", "write", "--bitmap"]),
            ("cruft", &["repack", "--cruft", "-d"]),
            ("cruft", &["gc"]),
            ("cruft", &["maintenance", "run", "--task=loose-objects"]),
            ("midx-written", &["multi-pack-index", "verify"]),
            ("midx-written", &["multi-pack-index", "repack"]),
            (
                "midx-written",
                &["maintenance", "run", "--task=incremental-repack"],
            ),
        ];
        for (n, (setup, args)) in cases.into_iter().enumerate() {
            // git 2.39's gc writes no cruft pack; 2.47's, which Sluice follows, does.
            if older && args == ["gc"] {
                continue;
            }
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = prepared(&env, (setup, n), sluice);
                let command = env.sluice_or_git_command(sluice, &repo, args);
                let (code, text) = on_terminal(&command);
                let lines: Vec<String> = (final_lines(&text).iter())
                    // git 2.39's plain repack enumerates the packed objects it meets too;
                    // 2.47's, which Sluice follows, only those it packs.
                    .filter(|l| !(older && args[1] == "-d" && l.starts_with("Enumerating")))
                    // git 2.39's maintenance lets its pack-objects print the pack's name.
                    .filter(|l| {
                        !(older && l.len() == 40 && l.bytes().all(|b| b.is_ascii_hexdigit()))
                    })
                    .map(|l| comparable(l))
                    .collect();
                seen.push((code, lines, packs_and_loose(&env, &repo)));
            }
            assert_eq!(seen[1], seen[0], "{setup} {args:?} with {}", git.display());
        }
    }
}

/// A repository for `setup` (case `n`): history packed by git, a pack per later commit (each
/// commit's objects left loose too), loose objects that are packed already, and new loose
/// commits (but for `nothing-new`); for `cruft`, a loose object nothing reaches; for
/// `midx-written`, a multi-pack-index of the packs.
fn prepared(env: &Env, (setup, n): (&str, usize), sluice: bool) -> std::path::PathBuf {
    let repo = env.init(&format!("{n}-{setup}-{sluice}"), false);
    for i in 0..8 {
        let lines: String = (0..30 + i).map(|l| format!("line {l} of {i}\n")).collect();
        std::fs::write(repo.join("big.txt"), lines).unwrap();
        std::fs::write(repo.join(format!("small{}", i % 3)), format!("{i}\n")).unwrap();
        env.git(&repo, &["add", "."]);
        env.git(&repo, &["commit", "-q", "-m", &format!("c{i}")]);
        if i == 4 {
            env.git(&repo, &["repack", "-q", "-a", "-d"]);
        }
        if i > 4 {
            // A pack of the new objects; their loose copies stay.
            env.git(&repo, &["repack", "-q"]);
        }
    }
    if setup != "nothing-new" {
        std::fs::write(repo.join("new.txt"), "new\n".repeat(10)).unwrap();
        env.git(&repo, &["add", "."]);
        env.git(&repo, &["commit", "-q", "-m", "new"]);
    }
    if setup == "midx-written" {
        env.git(&repo, &["multi-pack-index", "write"]);
    }
    if setup == "cruft" {
        let out = env.git_with_input(&repo, &["hash-object", "-w", "--stdin"], b"dangling\n");
        assert!(out.status.success());
    }
    repo
}

/// `line` with what two delta searches choose apart left out: the deltas of a Total line,
/// and git 2.47's `(from N)`, which 2.39 lacks.
fn comparable(line: &str) -> String {
    let Some(rest) = line.strip_prefix("Total ") else {
        return line.to_owned();
    };
    let total = rest.split(' ').next().unwrap_or_default();
    let reused = rest.split("pack-reused ").nth(1).unwrap_or_default();
    let reused = reused.split(' ').next().unwrap_or_default();
    format!("Total {total} ... pack-reused {reused}")
}

/// How many objects each pack of `repo` holds (sorted), and how many objects are loose.
fn packs_and_loose(env: &Env, repo: &Path) -> (Vec<usize>, String) {
    let pack_dir = repo.join(".git/objects/pack");
    let mut packs: Vec<usize> = std::fs::read_dir(&pack_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "idx"))
        .map(|idx| {
            let listed = env.git(repo, &["verify-pack", "-s", idx.to_str().unwrap()]);
            let listed = String::from_utf8(listed).unwrap();
            listed
                .lines()
                .filter(|l| l.starts_with("non delta") || l.starts_with("chain"))
                .map(|l| {
                    l.split(':')
                        .nth(1)
                        .unwrap()
                        .split_whitespace()
                        .next()
                        .unwrap()
                        .parse::<usize>()
                        .unwrap()
                })
                .sum()
        })
        .collect();
    packs.sort_unstable();
    let counted = String::from_utf8(env.git(repo, &["count-objects", "-v"])).unwrap();
    let loose = counted.lines().next().unwrap_or_default().to_owned();
    (packs, loose)
}
