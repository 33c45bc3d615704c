//! Every maintenance command over random repositories, judged by git: after each one `git fsck
//! --strict` is clean, `git status` works, and of the objects that a ref, a reflog or an index
//! (a worktree's too) held before, every one git's own command keeps is still there. The
//! repositories mix what the delta search and the roots must get right: blobs with a tree's or
//! a commit's bytes (a search that crossed kinds made trees of them), files that change a
//! little, packs and loose objects, annotated tags (of blobs and trees too), notes, gitlinks,
//! packed refs, a detached HEAD, a commit only a reflog holds, stashes, a file only the index
//! holds, a worktree's branch and index, a `.keep` pack, partial clones (`blob:none`,
//! `tree:0`) that lack what their promisor remote has, shallow ones, and one borrowing its
//! upstream's objects (`--shared`). The seeds are fixed: a failure names one to replay
//! (`SLUICE_RANDOM_SEEDS=<n>` runs seeds 1 to n).

use crate::util::{copy_tree, gits, noise, stderr, stdout, Env};
use std::path::{Path, PathBuf};

const COMMANDS: [&[&str]; 15] = [
    &["repack", "-a", "-d", "-q", "-b", "--write-midx"],
    &["repack", "-a", "-d", "-q", "-k"],
    &["repack", "-a", "-d", "-q", "-l"],
    &[
        "maintenance",
        "run",
        "--task=incremental-repack",
        "--task=loose-objects",
    ],
    &["repack", "-a", "-d", "-q", "--max-pack-size=1m"],
    &["gc", "-q", "--cruft", "--prune=now"],
    &["repack", "-a", "-d", "-q"],
    &["repack", "-a", "-d", "-f", "-q"],
    &["gc", "-q"],
    &["gc", "-q", "--aggressive"],
    &["gc", "-q", "--prune=now"],
    &["repack", "--geometric=2", "-d", "-q"],
    &["repack", "--cruft", "-d", "-q"],
    &["repack", "-A", "-d", "-q"],
    &["prune"],
];

/// A small deterministic source of choices.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

#[test]
fn maintenance_keeps_every_object_of_random_repositories() {
    let git = gits().pop().expect("a git");
    // More seeds by hand: SLUICE_RANDOM_SEEDS=200.
    let seeds: u64 = std::env::var("SLUICE_RANDOM_SEEDS").map_or(8, |n| n.parse().unwrap_or(8));
    for seed in 1..=seeds {
        let env = Env::with_git(git.clone());
        let mut dice = Dice(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let repo = random_repository(&env, &mut dice);
        let listed = env.git(
            &repo,
            &[
                "rev-list",
                "--objects",
                "--all",
                "--reflog",
                "--indexed-objects",
                "--missing=print",
            ],
        );
        let before: String = (String::from_utf8(listed).unwrap().lines())
            .filter(|line| !line.starts_with('?'))
            .map(|line| format!("{}\n", &line[..40]))
            .collect();
        for (n, command) in COMMANDS.iter().enumerate() {
            let what = format!("seed {seed} {command:?}");
            let mut kept = Vec::new();
            for sluice in [false, true] {
                let copy = env.path().join(format!("copy{n}-{sluice}"));
                copy_tree(&repo, &copy);
                let out = env.sluice_or_git(sluice, &copy, command);
                // git 2.47 cannot roll a partial clone's packs (`--stdin-packs` with
                // `--exclude-promisor-objects`): then it changed nothing, Sluice must keep all.
                if !sluice && !out.status.success() {
                    kept.push(present(&env, &repo, &before));
                    continue;
                }
                assert!(
                    out.status.success(),
                    "{what} sluice {sluice}: {}",
                    stderr(&out)
                );
                let fsck = env.git_with_input(&copy, &["fsck", "--strict"], b"");
                assert!(
                    fsck.status.success(),
                    "{what} sluice {sluice}: {}",
                    stderr(&fsck)
                );
                let status = env.git_with_input(&copy, &["status", "--porcelain"], b"");
                assert!(status.status.success(), "{what}: {}", stderr(&status));
                kept.push(present(&env, &copy, &before));
            }
            let lost: Vec<&String> = (kept[0].iter().zip(&kept[1]))
                .filter(|((_, by_git), (_, by_sluice))| *by_git && !by_sluice)
                .map(|((id, _), _)| id)
                .collect();
            assert!(lost.is_empty(), "{what}: git keeps, Sluice lost {lost:?}");
        }
    }
}

/// Each of the objects `ids` (a line each) with whether `repo` has it, asking no promisor
/// remote for it.
fn present(env: &Env, repo: &Path, ids: &str) -> Vec<(String, bool)> {
    let mut check = env.git_command(repo, &["cat-file", "--batch-check"]);
    check.env("GIT_NO_LAZY_FETCH", "1");
    let out = crate::util::run_with_input(check, ids.as_bytes());
    (stdout(&out).lines())
        .map(|line| (line[..40].to_owned(), !line.ends_with("missing")))
        .collect()
}

/// An upstream of a few commits, a clone of it (whole, shallow, `--shared`, `blob:none` or
/// `tree:0`) with commits of its own, and what only a reflog, the index, a worktree or a
/// `.keep` holds.
fn random_repository(env: &Env, dice: &mut Dice) -> PathBuf {
    let up = env.init("up", false);
    for c in 0..3 + dice.below(5) {
        change_files(env, &up, dice);
        env.git(&up, &["add", "-A"]);
        env.git(
            &up,
            &["commit", "-q", "--allow-empty", "-m", &format!("up {c}")],
        );
    }
    env.git(&up, &["config", "uploadpack.allowFilter", "true"]);
    let url = format!("file://{}", up.display());
    let mut clone = vec!["clone", "-q", "--no-local"];
    let shared = ["--shared", up.to_str().unwrap(), "repo"];
    clone.extend(match dice.below(5) {
        0 => &["--filter=blob:none"][..],
        1 => &["--filter=tree:0"],
        2 => &["--depth=2"],
        // Borrowing the upstream's objects (objects/info/alternates).
        3 => &shared[..],
        _ => &[],
    });
    if !clone.contains(&"--shared") {
        clone.extend([url.as_str(), "repo"]);
    }
    env.git(env.path(), &clone);
    let repo = env.path().join("repo");
    for c in 0..1 + dice.below(5) {
        change_files(env, &repo, dice);
        env.git(&repo, &["add", "-A"]);
        env.git(
            &repo,
            &["commit", "-q", "--allow-empty", "-m", &format!("own {c}")],
        );
        if dice.below(3) == 0 {
            env.git(&repo, &["repack", "-q", "-d"]);
        }
        if dice.below(4) == 0 {
            env.git(&repo, &["tag", "-a", "-m", "tag", &format!("t{c}")]);
        }
    }
    // Only a reflog holds this commit; only the index this file.
    change_files(env, &repo, dice);
    env.git(&repo, &["add", "-A"]);
    env.git(
        &repo,
        &["commit", "-q", "--allow-empty", "-m", "reset away"],
    );
    env.git(&repo, &["reset", "-q", "--hard", "HEAD~1"]);
    // Refs of other kinds: a note, tags of a blob and of a tree, a gitlink to a commit that is
    // nowhere (a submodule's), packed refs, a detached HEAD.
    if dice.below(2) == 0 {
        env.git(&repo, &["notes", "add", "-m", "a note"]);
        let blob = env.git_with_input(&repo, &["hash-object", "-w", "--stdin"], b"tagged blob\n");
        let blob = stdout(&blob);
        env.git(&repo, &["tag", "-a", "-m", "blob", "blob-tag", blob.trim()]);
        env.git(&repo, &["tag", "tree-tag", "HEAD^{tree}"]);
        let gitlink = format!("160000,{},sub", "ab".repeat(20));
        env.git(&repo, &["update-index", "--add", "--cacheinfo", &gitlink]);
        env.git(&repo, &["commit", "-q", "-m", "gitlink"]);
    }
    if dice.below(2) == 0 {
        env.git(&repo, &["pack-refs", "--all"]);
    }
    if dice.below(3) == 0 {
        env.git(&repo, &["checkout", "-q", "--detach", "HEAD"]);
        env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "detached"]);
    }
    // Two stashes: the older one only the reflog of refs/stash holds.
    for n in 0..dice.below(3) {
        std::fs::write(repo.join("stashed"), format!("stash {n}\n")).unwrap();
        env.git(&repo, &["stash", "-q", "-u"]);
    }
    std::fs::write(repo.join("staged"), noise(dice.below(1000), 300)).unwrap();
    env.git(&repo, &["add", "staged"]);
    if dice.below(2) == 0 {
        let packs = repo.join(".git/objects/pack");
        let pack = (crate::util::list_dir(&packs).into_iter())
            .find(|name| name.ends_with(".pack"))
            .unwrap();
        std::fs::write(packs.join(pack.replace(".pack", ".keep")), "").unwrap();
    }
    if dice.below(2) == 0 {
        let tree = env.path().join("tree");
        let args = [
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            tree.to_str().unwrap(),
        ];
        env.git(&repo, &args);
        std::fs::write(tree.join("side-file"), noise(dice.below(1000), 200)).unwrap();
        env.git(&tree, &["add", "side-file"]);
        env.git(&tree, &["commit", "-q", "-m", "side"]);
        std::fs::write(tree.join("side-staged"), noise(dice.below(1000), 200)).unwrap();
        env.git(&tree, &["add", "side-staged"]);
    }
    repo
}

/// Writes, changes or removes a few files of `repo`'s work tree.
fn change_files(env: &Env, repo: &Path, dice: &mut Dice) {
    for _ in 0..1 + dice.below(5) {
        let dir = repo.join(format!("d{}", dice.below(3)));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("f{}", dice.below(4)));
        let bytes = match dice.below(5) {
            // A tree's bytes, or a commit's, with a few more: a delta against that object
            // would be tiny.
            0 => raw_object(env, repo, "tree", "HEAD:d0"),
            1 => raw_object(env, repo, "commit", "HEAD"),
            2 => (0..40 + dice.below(40))
                .map(|l| {
                    format!(
                        "line {l}: {}\n",
                        if l % 7 == 0 { dice.below(99) } else { l }
                    )
                })
                .collect::<String>()
                .into_bytes(),
            3 => noise(dice.below(1 << 20), dice.below(3000) as usize),
            _ => {
                let _ = std::fs::remove_file(&file);
                continue;
            }
        };
        std::fs::write(&file, bytes).unwrap();
    }
}

/// The bytes of `name` as an object of `kind` (empty when there is none yet), and a few more.
fn raw_object(env: &Env, repo: &Path, kind: &str, name: &str) -> Vec<u8> {
    let out = env.git_with_input(repo, &["cat-file", kind, name], b"");
    let mut bytes = if out.status.success() {
        out.stdout
    } else {
        Vec::new()
    };
    bytes.extend_from_slice(b"and more\n");
    bytes
}
