//! Nothing lost: every command that deletes, drops or leaves out objects keeps at least what
//! git's same command keeps, in a repository where each kind of root holds an object of its
//! own (a ref, a reflog entry of a branch and of `HEAD`, the stash's reflog, the index's blob
//! and cache-tree, a linked worktree's detached `HEAD`, index and per-worktree ref, a `.keep`
//! pack, a `.promisor` pack, a young unreachable object), once loose and once in packs older
//! than every expiry. Twins are copies of one seed; git runs the command in one, Sluice in the
//! other; afterwards Sluice's copy holds every object git's holds and every rooted object, and
//! `git fsck --strict` finds it complete.

use crate::util::{copy_tree, gits, stderr, Env};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The seed repository and, by what roots it, each object that only that root keeps alive.
struct Seed {
    repo: PathBuf,
    rooted: Vec<(&'static str, String)>,
}

/// The current time, as git's date variables take it: reflog entries are written now, so
/// that no reflog expiry (90 and 30 days) takes them before the command under test runs.
fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    format!("{secs} +0000")
}

fn git_now(env: &Env, dir: &Path, args: &[&str]) -> String {
    let out = env
        .git_command(dir, args)
        .env("GIT_COMMITTER_DATE", now())
        .env("GIT_AUTHOR_DATE", now())
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn blob(env: &Env, repo: &Path, text: &str) -> String {
    let out = env.git_with_input(repo, &["hash-object", "-w", "--stdin"], text.as_bytes());
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A pack of `id` alone, marked by a file with `extension` (`keep`, `promisor`).
fn marked_pack(env: &Env, repo: &Path, id: &str, extension: &str) {
    let base = repo.join(".git/objects/pack/pack");
    let out = env.git_with_input(
        repo,
        &["pack-objects", "-q", base.to_str().unwrap()],
        format!("{id}\n").as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let name = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let marker = repo.join(format!(".git/objects/pack/pack-{name}.{extension}"));
    std::fs::write(marker, "").unwrap();
}

/// Dates every file under `objects/` (loose objects, packs and their files) to a month ago:
/// older than `gc.pruneExpire`'s two weeks and Sluice's hour of recent packs.
fn age_objects(repo: &Path) {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("find .git/objects -type f -exec touch -d '1 month ago' {} +")
        .current_dir(repo)
        .status()
        .unwrap();
    assert!(status.success());
}

fn seed(env: &Env, packed: bool) -> Seed {
    let name = if packed { "seed-packed" } else { "seed-loose" };
    let repo = env.init(name, false);
    let mut rooted = Vec::new();
    let commit = |file: &str| {
        std::fs::write(repo.join(file), format!("{file}\n")).unwrap();
        git_now(env, &repo, &["add", file]);
        git_now(env, &repo, &["commit", "-q", "-m", file]);
        git_now(env, &repo, &["rev-parse", "HEAD"])
    };
    commit("one");
    rooted.push(("ref", commit("two")));
    // Reset away: only the reflogs of HEAD and master keep it.
    rooted.push(("reflog", commit("three")));
    git_now(env, &repo, &["reset", "-q", "--hard", "HEAD~1"]);
    // Two stashes: the older one only in refs/stash's reflog.
    std::fs::write(repo.join("two"), "stashed first\n").unwrap();
    git_now(env, &repo, &["stash", "-q"]);
    rooted.push(("stash reflog", git_now(env, &repo, &["rev-parse", "stash"])));
    std::fs::write(repo.join("two"), "stashed second\n").unwrap();
    git_now(env, &repo, &["stash", "-q"]);
    // Staged only, and a tree only the cache-tree names.
    std::fs::create_dir(repo.join("dir")).unwrap();
    std::fs::write(repo.join("dir/staged"), "staged only\n").unwrap();
    git_now(env, &repo, &["add", "dir/staged"]);
    rooted.push(("index", git_now(env, &repo, &["rev-parse", ":dir/staged"])));
    rooted.push(("cache-tree", git_now(env, &repo, &["write-tree"])));
    // A linked worktree on a detached commit of its own, with a staged blob and a ref of its
    // own (refs/worktree/ is per worktree and has no reflog).
    let tree = env.path().join(format!("{name}-wt"));
    let tree_arg = tree.to_str().unwrap();
    git_now(env, &repo, &["worktree", "add", "-q", "--detach", tree_arg]);
    std::fs::write(tree.join("wt-file"), "worktree commit\n").unwrap();
    git_now(env, &tree, &["add", "wt-file"]);
    git_now(env, &tree, &["commit", "-q", "-m", "worktree only"]);
    rooted.push(("worktree HEAD", git_now(env, &tree, &["rev-parse", "HEAD"])));
    std::fs::write(tree.join("wt-staged"), "worktree staged\n").unwrap();
    git_now(env, &tree, &["add", "wt-staged"]);
    rooted.push((
        "worktree index",
        git_now(env, &tree, &["rev-parse", ":wt-staged"]),
    ));
    let loner = git_now(
        env,
        &tree,
        &["commit-tree", "HEAD^{tree}", "-m", "per worktree"],
    );
    git_now(env, &tree, &["update-ref", "refs/worktree/only", &loner]);
    rooted.push(("per-worktree ref", loner));
    // Packs git and Sluice must leave as they are.
    let kept = blob(env, &repo, "in a kept pack\n");
    marked_pack(env, &repo, &kept, "keep");
    rooted.push((".keep pack", kept));
    let promised = blob(env, &repo, "in a promisor pack\n");
    marked_pack(env, &repo, &promised, "promisor");
    rooted.push((".promisor pack", promised));
    blob(env, &repo, "old and unreachable\n");
    if packed {
        git_now(env, &repo, &["repack", "-q", "-a", "-d"]);
    }
    git_now(env, &repo, &["prune-packed"]);
    age_objects(&repo);
    // Unreachable but younger than every expiry.
    rooted.push(("recent", blob(env, &repo, "young and unreachable\n")));
    Seed { repo, rooted }
}

/// Every object the repository holds, loose or in any pack.
fn objects(env: &Env, repo: &Path) -> BTreeSet<String> {
    let out = env.git(
        repo,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname)",
        ],
    );
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Runs `args` with git in one copy of `seed` and with Sluice in another, then judges Sluice's.
fn twin(env: &Env, seed: &Seed, args: &[&str]) {
    // Pruning "now" takes what is unreachable, however young; so does `prune` with no
    // `--expire`, as git's.
    let pruned_now = args.iter().any(|a| a.ends_with("=now")) || args == ["prune"];
    twin_with(
        env,
        seed,
        &format!("{args:?}"),
        pruned_now,
        |sluice, dir| env.sluice_or_git(sluice, dir, args),
    );
}

/// Runs `run` (with git, then with Sluice) each in a copy of `seed`; Sluice's copy must then
/// hold every object git's holds and every rooted object (but the young unreachable one when
/// `pruned_now`), and be complete for `git fsck --strict`.
fn twin_with(
    env: &Env,
    seed: &Seed,
    what: &str,
    pruned_now: bool,
    run: impl Fn(bool, &Path) -> std::process::Output,
) {
    let label = format!("{} {what}", seed.repo.display());
    let copies = ["git", "sluice"].map(|side| {
        let to = env.path().join(format!("twin-{side}"));
        let _ = std::fs::remove_dir_all(&to);
        copy_tree(&seed.repo, &to);
        to
    });
    for (sluice, copy) in [false, true].into_iter().zip(&copies) {
        let out = run(sluice, copy);
        assert!(
            out.status.success(),
            "{label} (sluice: {sluice}): {}",
            stderr(&out)
        );
    }
    let (theirs, ours) = (objects(env, &copies[0]), objects(env, &copies[1]));
    let lost: Vec<_> = theirs.difference(&ours).collect();
    assert!(lost.is_empty(), "{label}: git kept, Sluice lost {lost:?}");
    for (root, id) in &seed.rooted {
        if *root == "recent" && pruned_now {
            continue;
        }
        assert!(
            ours.contains(id),
            "{label}: the object of the {root} ({id}) is gone"
        );
    }
    let fsck = env
        .git_command(&copies[1], &["fsck", "--strict"])
        .output()
        .unwrap();
    let said = format!("{}{}", stderr(&fsck), String::from_utf8_lossy(&fsck.stdout));
    assert!(fsck.status.success(), "{label}: fsck: {said}");
    assert!(
        !said.contains("missing") && !said.contains("invalid") && !said.contains("broken"),
        "{label}: fsck: {said}"
    );
}

/// Every command that deletes or drops objects, as a user (or git's own maintenance) runs it.
const COMMANDS: &[&[&str]] = &[
    &["repack", "-q", "-a", "-d"],
    &["repack", "-q", "-A", "-d"],
    &["repack", "-q", "--cruft", "-d"],
    &["repack", "-q", "-d"],
    &["repack", "-q", "--geometric=2", "-d"],
    &["repack", "-q", "-a", "-d", "--write-midx"],
    &["repack", "-q", "-a", "-d", "-b"],
    &["repack", "-q", "-a", "-d", "-b", "--write-midx"],
    &["repack", "-q", "-a", "-d", "-f"],
    &["gc", "-q"],
    &["gc", "-q", "--aggressive"],
    &["gc", "-q", "--prune=now"],
    &["prune"],
    &["prune", "--expire=now"],
    &["maintenance", "run", "--task=gc"],
    &["maintenance", "run", "--task=loose-objects"],
    &["maintenance", "run", "--task=commit-graph"],
    &["maintenance", "run", "--task=pack-refs"],
];

#[test]
fn every_deleting_command_keeps_what_git_keeps() {
    for git in gits() {
        let env = Env::with_git(git);
        for packed in [false, true] {
            let seed = seed(&env, packed);
            for args in COMMANDS {
                twin(&env, &seed, args);
            }
        }
    }
}

/// The ids of the objects in the pack pack-objects wrote under `base`.
fn packed_ids(env: &Env, repo: &Path, out: &std::process::Output, base: &Path) -> BTreeSet<String> {
    assert!(out.status.success(), "{}", stderr(out));
    let name = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let idx = std::fs::read(format!("{}-{name}.idx", base.display())).unwrap();
    let listed = env.git_with_input(repo, &["show-index"], &idx);
    (String::from_utf8(listed.stdout).unwrap().lines())
        .map(|l| l.split(' ').nth(1).unwrap().to_owned())
        .collect()
}

/// `pack-objects --all --reflog --indexed-objects`, as git's repack calls it: the same objects
/// as git's own (and another worktree's per-worktree refs, which Sluice counts as refs).
#[test]
fn pack_objects_takes_every_root_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git);
        let seed = seed(&env, false);
        for roots in [
            &["--all"][..],
            &["--all", "--reflog"],
            &["--all", "--indexed-objects"],
            &["--all", "--reflog", "--indexed-objects"],
        ] {
            let mut sets = Vec::new();
            for (sluice, side) in [(false, "git"), (true, "sluice")] {
                let base = env.path().join(format!("out-{side}/pack"));
                std::fs::create_dir_all(base.parent().unwrap()).unwrap();
                let mut args = vec!["pack-objects", "-q"];
                args.extend(roots);
                args.push(base.to_str().unwrap());
                let out = crate::util::run_with_input(
                    env.sluice_or_git_command(sluice, &seed.repo, &args),
                    b"",
                );
                sets.push(packed_ids(&env, &seed.repo, &out, &base));
                std::fs::remove_dir_all(base.parent().unwrap()).unwrap();
            }
            let lost: Vec<_> = sets[0].difference(&sets[1]).collect();
            assert!(
                lost.is_empty(),
                "{roots:?}: git packs, Sluice does not: {lost:?}"
            );
            // Beyond git's: the commit only another worktree's own ref (refs/worktree/) names,
            // which git's --all leaves out (it lists that worktree's HEAD, not its refs) and
            // Sluice counts as a ref, so that no command drops it.
            let loner = &seed
                .rooted
                .iter()
                .find(|(r, _)| *r == "per-worktree ref")
                .unwrap()
                .1;
            let extra: Vec<_> = sets[1]
                .difference(&sets[0])
                .filter(|id| *id != loner)
                .collect();
            assert!(
                extra.is_empty(),
                "{roots:?}: Sluice packs, git does not: {extra:?}"
            );
        }
    }
}

/// The automatic gc after a push (`receive.autogc`, forced here by `gc.autoPackLimit=1`):
/// git's receive-pack runs `gc --auto`, Sluice's its maintenance after a push, through
/// `sluice receive-pack` and through `sluice serve`; both keep every root.
#[test]
fn gc_after_a_push_keeps_what_git_keeps() {
    for git in gits() {
        let env = Env::with_git(git);
        let work = env.init("work", false);
        git_now(
            &env,
            &work,
            &["commit", "-q", "--allow-empty", "-m", "pushed"],
        );
        for packed in [false, true] {
            let seed = seed(&env, packed);
            for (key, value) in [
                ("receive.unpackLimit", "1"),
                ("gc.autoPackLimit", "1"),
                ("gc.autoDetach", "false"),
            ] {
                env.git(&seed.repo, &["config", key, value]);
            }
            env.git(&seed.repo, &["config", "http.receivepack", "true"]);
            let receive = format!("{} receive-pack", env!("CARGO_BIN_EXE_sluice"));
            twin_with(&env, &seed, "push", false, |sluice, dir| {
                let mut args = vec!["push", "-q"];
                if sluice {
                    args.extend(["--receive-pack", &receive]);
                }
                args.extend([dir.to_str().unwrap(), "HEAD:refs/heads/pushed"]);
                env.git_command(&work, &args).output().unwrap()
            });
            // The same through `sluice serve` over HTTP: the maintenance a server runs.
            let server = crate::serve::Server::start(&env, ".", &[]);
            twin_with(&env, &seed, "push over HTTP", false, |sluice, dir| {
                let name = dir.file_name().unwrap().to_str().unwrap();
                let url = format!("http://{}/{name}", server.http());
                let target = match sluice {
                    true => url,
                    false => dir.to_str().unwrap().to_owned(),
                };
                let args = ["push", "-q", &target, "HEAD:refs/heads/pushed"];
                env.git_command(&work, &args).output().unwrap()
            });
        }
    }
}

/// A temporary index (`GIT_INDEX_FILE`, as `git commit -a` and hooks use) keeps its objects:
/// a blob staged only there survives `repack -a -d` and `prune` run with it set, as in git.
#[test]
fn a_temporary_index_keeps_its_objects() {
    let env = Env::new();
    let repo = env.init("repo", false);
    git_now(&env, &repo, &["commit", "-q", "--allow-empty", "-m", "one"]);
    std::fs::write(repo.join("temp"), "staged in a temporary index\n").unwrap();
    let index = repo.join(".git/temporary-index");
    let staged = env
        .git_command(&repo, &["add", "temp"])
        .env("GIT_INDEX_FILE", &index)
        .status()
        .unwrap();
    assert!(staged.success());
    let id = blob(&env, &repo, "staged in a temporary index\n");
    age_objects(&repo);
    for args in [
        &["repack", "-q", "-a", "-d"][..],
        &["prune", "--expire=now"],
    ] {
        let out = env
            .sluice_command(&repo, args)
            .env("GIT_INDEX_FILE", &index)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(objects(&env, &repo).contains(&id), "{args:?} dropped {id}");
    }
}
