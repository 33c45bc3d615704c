//! Ranged reads on a node (`--read-ranges-above`): a large pack is not downloaded whole; the
//! chunks a request reads are fetched from the store. A ref listing, a push and a small fetch
//! through a node with an empty cache cost the store a fraction of the pack; a full clone
//! reads all of it. Judged by git: `fsck --strict` of every clone, refs compared with the
//! source's and with what the node advertises.

use crate::serve::Server;
use crate::store::{metric, refs, sluice, with_commit};
use crate::util::seaweed::seaweed;
use crate::util::{noise, stderr, Env, FastImport};
use std::path::Path;

/// A source with a pack of about 2 MB (incompressible blobs over a few commits), imported as
/// `p.git` and compacted into one pack; returns the store's URL.
fn large_import(env: &Env) -> String {
    let repo = env.init("source", false);
    let mut stream = FastImport::new();
    for i in 0..8 {
        let blob = noise(i, 256 << 10);
        let name = format!("blob{i}.bin");
        stream.commit("main", &format!("c{i}"), &[(&name, "100644", &blob)]);
    }
    env.fast_import(&repo, stream.finish());
    env.git(&repo, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    env.git(&repo, &["reset", "-q", "--hard"]);
    let store = format!("s3://{}/repos", seaweed().new_bucket());
    let url = format!("{store}/p.git");
    for args in [
        vec!["store", "import", "-q", &url, "source"],
        vec!["store", "maintain", "-q", &url],
    ] {
        let out = sluice(env, env.path(), &args);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    store
}

/// The size of the ranged pack in a node's cache.
fn ranged_pack_len(cache: &Path) -> u64 {
    let ranged = cache.join("p.git/ranged");
    let pack = crate::util::list_dir(&ranged)
        .into_iter()
        .find(|name| name.ends_with(".pack"))
        .unwrap_or_else(|| panic!("no ranged pack in {}", ranged.display()));
    std::fs::metadata(ranged.join(pack)).unwrap().len()
}

fn node(env: &Env, store: &str, cache: &str) -> Server {
    let cache = env.path().join(cache);
    let args = ["--read-ranges-above", "1"];
    crate::store::node(env, store, cache.to_str().unwrap(), &args)
}

#[test]
fn a_node_reads_a_large_pack_in_ranges_and_serves_it_whole() {
    let env = Env::new();
    let store = large_import(&env);
    let source = refs(&env, &env.path().join("source"));
    // A node with an empty cache lists the refs: a fraction of the pack comes from the store.
    let lister = node(&env, &store, "lister");
    let url = format!("http://{}/p.git", lister.http());
    let listed = String::from_utf8(env.git(env.path(), &["ls-remote", &url])).unwrap();
    assert!(listed.contains("refs/heads/main"), "{listed}");
    let pack_len = ranged_pack_len(&env.path().join("lister")) as f64;
    let received = metric(&lister, "sluice_store_received_bytes_total");
    assert!(
        received < pack_len / 2.0,
        "{received} bytes of a {pack_len}-byte pack"
    );
    // A full clone reads all of it, and is whole.
    let clone = env.path().join("clone");
    env.git(env.path(), &["clone", "-q", &url, clone.to_str().unwrap()]);
    env.git(&clone, &["fsck", "--strict"]);
    let cloned = String::from_utf8(env.git(
        &clone,
        &[
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            "refs/remotes/origin/main",
        ],
    ))
    .unwrap();
    let main = source
        .lines()
        .find(|l| l.ends_with("refs/heads/main"))
        .unwrap();
    assert_eq!(
        cloned.trim().replace("refs/remotes/origin/", "refs/heads/"),
        main
    );
    assert!(metric(&lister, "sluice_store_received_bytes_total") >= pack_len);
    // A push through another node with an empty cache, and a fetch of it through a third:
    // each reads a fraction of the large pack.
    let pusher_node = node(&env, &store, "pusher");
    let push_url = format!("git://{}/p.git", pusher_node.git.as_deref().unwrap());
    // Made from a clone through the first node: the pushing node serves nothing else.
    let pusher = with_commit(&env, &url, "pushing", "main", "small");
    let push = ["push", "-q", &push_url, "main"];
    let out = crate::util::run_with_input(env.git_command(&pusher, &push), b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let received = metric(&pusher_node, "sluice_store_received_bytes_total");
    assert!(
        received < pack_len / 2.0,
        "a push read {received} of {pack_len} bytes"
    );
    let fetch_node = node(&env, &store, "fetcher");
    let fetch_url = format!("http://{}/p.git", fetch_node.http());
    env.git(&clone, &["fetch", "-q", &fetch_url, "main"]);
    let fetched = env.git(&clone, &["rev-parse", "FETCH_HEAD"]);
    assert_eq!(fetched, env.git(&pusher, &["rev-parse", "main"]));
    env.git(&clone, &["fsck", "--strict"]);
    let received = metric(&fetch_node, "sluice_store_received_bytes_total");
    assert!(
        received < pack_len / 2.0,
        "a fetch read {received} of {pack_len} bytes"
    );
}

/// A node that reads in ranges still maintains after pushes: its roll (which reads every
/// object) works on whole packs, and what it leaves serves whole clones.
#[test]
fn a_node_that_reads_in_ranges_rolls_pushed_packs() {
    let env = Env::new();
    let (bucket, store, _) = crate::store::imported(&env);
    let cache = env.path().join("cache");
    let args = ["--read-ranges-above", "1", "--maintain-after-packs", "2"];
    let node = crate::store::node(&env, &store, cache.to_str().unwrap(), &args);
    let url = crate::store::git_url(&node, "p.git");
    for i in 0..3 {
        let dir = with_commit(&env, &url, "client", "main", &format!("push{i}"));
        env.git(&dir, &["push", "-q", &url, "main"]);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let packs = |manifest: &str| manifest.lines().filter(|l| l.starts_with("pack ")).count();
    let mut manifest = crate::store::manifest_text(&bucket, "repos/p.git");
    while packs(&manifest) > 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no maintenance: {manifest}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
        manifest = crate::store::manifest_text(&bucket, "repos/p.git");
    }
    let after = env.path().join("after");
    env.git(env.path(), &["clone", "-q", &url, after.to_str().unwrap()]);
    env.git(&after, &["fsck", "--strict"]);
    let tip = env.git(&env.path().join("client"), &["rev-parse", "main"]);
    assert_eq!(env.git(&after, &["rev-parse", "origin/main"]), tip);
}
