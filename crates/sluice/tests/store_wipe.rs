//! A serving node's `--cache-dir` is a cache: wiped at any moment, while clones and pushes are
//! in flight, it loses nothing. A clone in flight completes whole (its files stay open) or
//! fails; a push in flight completes or fails unacknowledged; every request after a wipe is
//! served (the node materialises the generation again, also after a wipe that stopped half
//! way); the store keeps every acknowledged push (export, `git fsck --strict`).

use crate::store::{git_url, imported, node, refs, sluice};
use crate::util::{stderr, Env};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn spawn(mut command: Command) -> std::process::Child {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command.spawn().unwrap()
}

/// A commit pushed from `work` to `refs/heads/<name>` and a bare clone as `<name>.git`, both of
/// which must succeed (the clone fsck-clean); returns the ref and the id pushed.
fn served(env: &Env, work: &Path, remote: &str, name: &str) -> (String, String) {
    env.git(work, &["commit", "-q", "--allow-empty", "-m", name]);
    let branch = format!("refs/heads/{name}");
    let push = env.git_command(work, &["push", "-q", remote, &format!("HEAD:{branch}")]);
    let out = crate::util::run_with_input(push, b"");
    assert!(out.status.success(), "{name}: {}", stderr(&out));
    let id = String::from_utf8(env.git(work, &["rev-parse", "HEAD"])).unwrap();
    let clone_dir = format!("{name}.git");
    env.git(env.path(), &["clone", "-q", "--bare", remote, &clone_dir]);
    env.git(&env.path().join(&clone_dir), &["fsck", "--strict"]);
    (branch, id)
}

#[test]
fn a_nodes_cache_wiped_at_any_moment_loses_nothing() {
    wipes_lose_nothing(&[], &["p.git/packs", "p.git/gen"]);
}

/// The same with every pack read in ranges: a wipe takes the sparse packs and their marks too,
/// or only them.
#[test]
fn a_cache_of_ranged_packs_wiped_at_any_moment_loses_nothing() {
    let halves = ["p.git/ranged", "p.git/packs", "p.git/gen"];
    wipes_lose_nothing(&["--read-ranges-above", "1"], &halves);
}

/// Wipes of the cache of a node started with `options` during pushes and clones, then wipes of
/// the parts `halves` of it alone; every acknowledged push must be in the store.
fn wipes_lose_nothing(options: &[&str], halves: &[&str]) {
    let env = Env::new();
    let (_bucket, store, url) = imported(&env);
    let node = node(&env, &store, "cache", options);
    let cache = env.path().join("cache");
    let remote = git_url(&node, "p.git");
    env.git(env.path(), &["clone", "-q", &remote, "work"]);
    let work = env.path().join("work");
    let head = |env: &Env| String::from_utf8(env.git(&work, &["rev-parse", "HEAD"])).unwrap();
    let mut acknowledged = Vec::new();
    for (round, delay) in [0u64, 1, 3, 8, 20, 50].into_iter().enumerate() {
        env.git(
            &work,
            &["commit", "-q", "--allow-empty", "-m", &format!("r{round}")],
        );
        let branch = format!("refs/heads/during-{round}");
        let push =
            spawn(env.git_command(&work, &["push", "-q", &remote, &format!("HEAD:{branch}")]));
        let clone_dir = format!("during-{round}.git");
        let clone =
            spawn(env.git_command(env.path(), &["clone", "-q", "--bare", &remote, &clone_dir]));
        std::thread::sleep(Duration::from_millis(delay));
        let _ = std::fs::remove_dir_all(&cache);
        let pushed = push.wait_with_output().unwrap();
        if pushed.status.success() {
            acknowledged.push((branch, head(&env)));
        }
        if clone.wait_with_output().unwrap().status.success() {
            env.git(&env.path().join(&clone_dir), &["fsck", "--strict"]);
        }
        // Right after a wipe, the node serves as before.
        acknowledged.push(served(&env, &work, &remote, &format!("after-{round}")));
    }
    // A wipe that stopped half way: the packs gone, the generations left, or the other way.
    for (round, part) in halves.iter().enumerate() {
        let _ = std::fs::remove_dir_all(cache.join(part));
        acknowledged.push(served(&env, &work, &remote, &format!("half-{round}")));
    }
    let out = sluice(
        &env,
        env.path(),
        &["store", "export", "-q", &url, "export.git"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let export = env.path().join("export.git");
    env.git(&export, &["fsck", "--strict"]);
    let listed = refs(&env, &export);
    for (branch, id) in &acknowledged {
        assert!(
            listed.contains(&format!("{} {branch}", id.trim())),
            "{branch}: {listed}"
        );
    }
}
