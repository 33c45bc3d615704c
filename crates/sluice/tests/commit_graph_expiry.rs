//! `commit-graph write --expire-time`: the layers a new chain no longer names are removed as
//! git removes them, only where older than the date (by default, now), the rest left; a date
//! git cannot read refused in its words.

use crate::util::{copy_tree, file_names, gits, stderr, Env};
use std::path::Path;

const LAYERS: &str = ".git/objects/info/commit-graphs";

/// A repository with a chain of three layers, the first two dated long ago, the third in
/// the future (as a layer another writer made a moment ago may be to a clock behind).
fn three_layers(env: &Env) -> std::path::PathBuf {
    let repo = env.init("seed", false);
    for i in 0..3 {
        env.git(
            &repo,
            &["commit", "-q", "--allow-empty", "-m", &format!("c{i}")],
        );
        let layer = ["commit-graph", "write", "--reachable", "--split=no-merge"];
        env.git(&repo, &layer);
    }
    let mut layers = graph_files(&repo);
    layers.retain(|name| name.ends_with(".graph"));
    let chain = std::fs::read_to_string(repo.join(LAYERS).join("commit-graph-chain")).unwrap();
    // In the chain's order, oldest first.
    layers.sort_by_key(|name| chain.lines().position(|line| name.contains(line)));
    let dates = [1_600_000_000, 1_600_000_100, 4_000_000_000];
    for (name, date) in layers.iter().zip(dates) {
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(date);
        let file = std::fs::File::options()
            .write(true)
            .open(repo.join(LAYERS).join(name))
            .unwrap();
        file.set_modified(when).unwrap();
    }
    env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "last"]);
    repo
}

/// The names in the layers' directory, sorted.
fn graph_files(repo: &Path) -> Vec<String> {
    file_names(&repo.join(LAYERS))
}

#[test]
fn old_layers_expire_as_git_expires_them() {
    for git in gits() {
        let env = Env::with_git(git);
        let seed = three_layers(&env);
        let cases: [&[&str]; 5] = [
            &["--split=replace", "--expire-time=2020-09-13 12:26:50 +0000"],
            &["--split=replace"],
            &["--split=replace", "--expire-time=1.year.ago"],
            &["--expire-time=2020-09-13 12:26:50 +0000"],
            &["--split", "--expire-time=bogus"],
        ];
        for (case, given) in cases.iter().enumerate() {
            let [ours, theirs] = [true, false].map(|sluice| {
                let repo = env.path().join(format!("case-{case}-{sluice}"));
                copy_tree(&seed, &repo);
                let args = [&["commit-graph", "write", "--reachable"][..], given].concat();
                let out = env.sluice_or_git(sluice, &repo, &args);
                if out.status.success() {
                    env.git(&repo, &["commit-graph", "verify"]);
                }
                (out.status.code(), stderr(&out), graph_files(&repo))
            });
            assert_eq!(ours, theirs, "{:?} {given:?}", env.git);
        }
    }
}
