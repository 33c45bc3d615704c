//! Repositories in object storage, on a real one (SeaweedFS): `sluice store import` and
//! `export`, three `sluice serve --store` nodes on one bucket serving real git clients, pushes
//! through one node seen at once through the others, racing pushes of which exactly one lands,
//! and bad input refused with the store left as it was. Judged by git: `fsck --strict` of
//! every clone and export, refs compared with the source's.

use crate::serve::Server;
use crate::util::seaweed::seaweed;
use crate::util::{gits, stderr, stdout, Env, FastImport};
use std::path::{Path, PathBuf};
use std::process::Output;

/// A source repository made by git: two branches, a lightweight and an annotated tag.
fn source(env: &Env) -> PathBuf {
    let repo = env.init("source", false);
    let mut stream = FastImport::new();
    for i in 0..6 {
        let text = crate::util::text(i, 40);
        stream.commit("main", &format!("c{i}"), &[("f.txt", "100644", &text)]);
    }
    let side = stream.commit("side", "side", &[("side.txt", "100644", b"side\n")]);
    stream.tag("light", side);
    env.fast_import(&repo, stream.finish());
    env.git(&repo, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    env.git(&repo, &["reset", "-q", "--hard"]);
    env.git(&repo, &["tag", "-a", "-m", "v1", "v1", "main~2"]);
    repo
}

/// Runs `sluice` with the store's environment.
pub(crate) fn sluice(env: &Env, cwd: &Path, args: &[&str]) -> Output {
    let mut command = env.sluice_command(cwd, args);
    command.envs(seaweed().vars());
    crate::util::run_with_input(command, b"")
}

/// The refs of a repository, as git lists them.
pub(crate) fn refs(env: &Env, repo: &Path) -> String {
    String::from_utf8(env.git(repo, &["for-each-ref", "--format=%(objectname) %(refname)"]))
        .unwrap()
}

/// The refs a remote advertises, as `git ls-remote` shows them.
fn remote_refs(env: &Env, url: &str) -> String {
    String::from_utf8(env.git(env.path(), &["ls-remote", url])).unwrap()
}

/// A bucket of its own with the source imported as `repos/p.git`: the bucket, the store's
/// URL and the repository's.
pub(crate) fn imported(env: &Env) -> (String, String, String) {
    source(env);
    let bucket = seaweed().new_bucket();
    let store = format!("s3://{bucket}/repos");
    let url = format!("{store}/p.git");
    let out = sluice(env, env.path(), &["store", "import", &url, "source"]);
    assert!(out.status.success(), "{}", stderr(&out));
    (bucket, store, url)
}

/// A node serving `store` with its cache in `cache` (under `env`), taking pushes over git://,
/// with `extra` options.
pub(crate) fn node(env: &Env, store: &str, cache: &str, extra: &[&str]) -> Server {
    let vars = seaweed().vars();
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let cache = env.path().join(cache);
    let cache = cache.to_str().unwrap();
    let mut args = vec![
        "--store",
        store,
        "--cache-dir",
        cache,
        "--enable",
        "receive-pack",
    ];
    args.extend_from_slice(extra);
    Server::start_with(env, &args, &vars)
}

/// `n` nodes serving the store at `url`, each with its own cache, taking pushes over git://.
fn nodes(env: &Env, url: &str, n: usize) -> Vec<Server> {
    (0..n)
        .map(|i| node(env, url, &format!("cache{i}"), &[]))
        .collect()
}

/// `git -c transfer.bundleURI=true clone` of `url` into `name` under `env`, which must
/// succeed with no bundle failing; returns the clone.
fn git_bundle_clone(env: &Env, url: &str, name: &str) -> PathBuf {
    let args = ["-c", "transfer.bundleURI=true", "clone", "-q", url, name];
    let out = crate::util::run_with_input(env.git_command(env.path(), &args), b"");
    let said = stderr(&out);
    assert!(out.status.success() && !said.contains("failed"), "{said}");
    env.path().join(name)
}

/// A value of the node's `GET /metrics` (0 when absent).
pub(crate) fn metric(node: &Server, name: &str) -> f64 {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(node.http()).unwrap();
    let request = format!(
        "GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        node.http()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    (answer.lines())
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

/// The answer of the node's protocol v2 `bundle-uri` command for `p.git`, a line each.
fn bundle_list(node: &Server) -> Vec<String> {
    use crate::util::{pkt, read_pkt};
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(node.git.as_deref().unwrap()).unwrap();
    let hello = pkt("git-upload-pack /p.git\0host=localhost\0\0version=2\0");
    let request = [
        pkt("command=bundle-uri\n"),
        "0001".to_owned(),
        "0000".to_owned(),
    ]
    .concat();
    stream.write_all(hello.as_bytes()).unwrap();
    let read_until_flush = |stream: &mut std::net::TcpStream| {
        std::iter::from_fn(|| read_pkt(stream))
            .map(|line| line.trim_end().to_owned())
            .collect::<Vec<_>>()
    };
    read_until_flush(&mut stream);
    stream.write_all(request.as_bytes()).unwrap();
    read_until_flush(&mut stream)
}

pub(crate) fn git_url(node: &Server, name: &str) -> String {
    format!("git://{}/{name}", node.git.as_deref().unwrap())
}

#[test]
fn an_imported_repository_clones_from_every_node_and_exports_whole() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        let store = format!("s3://{}/repos", seaweed().new_bucket());
        let repo_url = format!("{store}/project.git");
        let out = sluice(&env, env.path(), &["store", "import", &repo_url, "source"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let nodes = nodes(&env, &store, 3);
        for (i, node) in nodes.iter().enumerate() {
            let name = format!("clone{i}");
            env.git(
                env.path(),
                &["clone", "-q", &git_url(node, "project.git"), &name],
            );
            let clone = env.path().join(&name);
            env.git(&clone, &["fsck", "--strict"]);
            let head = env.git(&clone, &["rev-parse", "HEAD", "origin/side"]);
            assert_eq!(head, env.git(&src, &["rev-parse", "main", "side"]));
        }
        let http = format!("http://{}/project.git", nodes[1].http());
        assert_eq!(
            remote_refs(&env, &http),
            remote_refs(&env, &src.to_string_lossy())
        );
        // An up-to-date fetch costs the store at most one conditional GET per HTTP request,
        // each answered "not modified".
        env.git(env.path(), &["clone", "-q", &http, "over-http"]);
        let gets = metric(&nodes[1], "sluice_store_gets_total");
        let unchanged = metric(&nodes[1], "sluice_store_not_modified_total");
        env.git(&env.path().join("over-http"), &["fetch", "-q"]);
        let fetch_gets = metric(&nodes[1], "sluice_store_gets_total") - gets;
        assert!(fetch_gets <= 2.0, "{fetch_gets}");
        let fetch_unchanged = metric(&nodes[1], "sluice_store_not_modified_total") - unchanged;
        assert_eq!(fetch_gets, fetch_unchanged);
        let ok = r#"sluice_requests_total{scheme="http",service="git-upload-pack",status="200"}"#;
        assert!(metric(&nodes[1], ok) >= 5.0);
        let out = sluice(
            &env,
            env.path(),
            &["store", "export", &repo_url, "exported.git"],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let exported = env.path().join("exported.git");
        env.git(&exported, &["fsck", "--strict"]);
        assert_eq!(refs(&env, &exported), refs(&env, &src));
        let head = env.git(&exported, &["symbolic-ref", "HEAD"]);
        assert_eq!(head, b"refs/heads/main\n");
    }
}

/// That `listed` (`git ls-remote`'s output) has each client's branch at the client's tip.
fn assert_listed(env: &Env, listed: &str, clients: &[(PathBuf, String)]) {
    for (dir, branch) in clients {
        let tip = env.git(dir, &["rev-parse", branch]);
        let tip = String::from_utf8_lossy(tip.trim_ascii()).into_owned();
        let line = format!("{tip}\trefs/heads/{branch}");
        assert!(listed.contains(&line), "{line} not in {listed}");
    }
}

/// A clone through `url` (made once) with one new commit on `branch`, made on the remote's
/// `main` as it is now, in the file `<label>.txt`: ready to push.
pub(crate) fn with_commit(env: &Env, url: &str, name: &str, branch: &str, label: &str) -> PathBuf {
    let dir = env.path().join(name);
    if !dir.exists() {
        env.git(env.path(), &["clone", "-q", url, name]);
    }
    env.git(&dir, &["fetch", "-q", "origin"]);
    env.git(&dir, &["checkout", "-q", "-B", branch, "origin/main"]);
    std::fs::write(dir.join(format!("{label}.txt")), label).unwrap();
    env.git(&dir, &["add", "."]);
    env.git(&dir, &["commit", "-q", "-m", label]);
    dir
}

#[test]
fn pushes_land_on_every_node_and_of_racing_pushes_exactly_one_wins() {
    let env = Env::new();
    let (_, store, url) = imported(&env);
    let nodes = nodes(&env, &store, 3);
    let urls: Vec<String> = nodes.iter().map(|n| git_url(n, "p.git")).collect();
    // One push through the first node: the others see it at once.
    let one = with_commit(&env, &urls[0], "one", "main", "one");
    env.git(&one, &["push", "-q", "origin", "main"]);
    let pushed = env.git(&one, &["rev-parse", "main"]);
    for url in &urls[1..] {
        let listed = remote_refs(&env, url);
        let line = format!(
            "{}\trefs/heads/main",
            String::from_utf8_lossy(pushed.trim_ascii())
        );
        assert!(listed.contains(&line), "{url}: {listed}");
    }
    // Rounds of three pushes to one branch, one through each node, at once.
    for round in 0..3 {
        let clients: Vec<PathBuf> = (0..3)
            .map(|i| {
                let label = format!("racer{i}-round{round}");
                with_commit(&env, &urls[i], &format!("racer{i}"), "main", &label)
            })
            .collect();
        let outcomes: Vec<Output> = std::thread::scope(|scope| {
            let running: Vec<_> = (clients.iter().zip(&urls))
                .map(|(dir, url)| {
                    let command = env.git_command(dir, &["push", url, "main"]);
                    scope.spawn(move || crate::util::run_with_input(command, b""))
                })
                .collect();
            running.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let won: Vec<&Output> = outcomes.iter().filter(|o| o.status.success()).collect();
        assert_eq!(
            won.len(),
            1,
            "round {round}: {:?}",
            outcomes.iter().map(stderr).collect::<Vec<_>>()
        );
        for lost in outcomes.iter().filter(|o| !o.status.success()) {
            let said = stderr(lost);
            // git's words for a push that lost a race for the ref (or, had it come later,
            // for a ref that moved).
            assert!(
                said.contains("[remote rejected] main -> main (failed to update ref)")
                    || said.contains("[rejected]"),
                "{said}"
            );
        }
        let winner = outcomes.iter().position(|o| o.status.success()).unwrap();
        let tip = env.git(&clients[winner], &["rev-parse", "main"]);
        for url in &urls {
            assert!(
                remote_refs(&env, url).contains(String::from_utf8_lossy(tip.trim_ascii()).as_ref())
            );
        }
    }
    // Twelve pushes at once to twelve branches, spread over the nodes: all land.
    let clients: Vec<(PathBuf, String)> = (0..12)
        .map(|i| {
            let branch = format!("topic{i}");
            (
                with_commit(&env, &urls[i % 3], &format!("many{i}"), &branch, &branch),
                branch,
            )
        })
        .collect();
    std::thread::scope(|scope| {
        for (i, (dir, branch)) in clients.iter().enumerate() {
            let command = env.git_command(dir, &["push", &urls[(i + 1) % 3], branch]);
            scope.spawn(move || {
                let out = crate::util::run_with_input(command, b"");
                assert!(out.status.success(), "{}", stderr(&out));
            });
        }
    });
    let listed = remote_refs(&env, &urls[2]);
    assert_listed(&env, &listed, &clients);
    // What the store holds is whole: every ref, every object, as git judges.
    let out = sluice(&env, env.path(), &["store", "export", &url, "backup.git"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let backup = env.path().join("backup.git");
    env.git(&backup, &["fsck", "--strict"]);
    assert_eq!(
        String::from_utf8(env.git(
            &backup,
            &["for-each-ref", "--format=%(objectname)\t%(refname)"]
        ))
        .unwrap(),
        listed
            .lines()
            .filter(|l| !l.ends_with("HEAD") && !l.ends_with("^{}"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
}

/// `sluice store init -b <branch>` makes an empty repository: exported, it is what
/// `git init --bare -b <branch>` makes, HEAD on that branch and no ref, whole to git's fsck.
#[test]
fn store_init_makes_an_empty_repository() {
    let env = Env::new();
    let bucket = seaweed().new_bucket();
    let url = format!("s3://{bucket}/repos/new.git");
    let out = sluice(&env, env.path(), &["store", "init", "-b", "trunk", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = sluice(&env, env.path(), &["store", "export", &url, "exported.git"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let made = env.path().join("made.git");
    let path = made.to_str().unwrap();
    env.git(env.path(), &["init", "-q", "--bare", "-b", "trunk", path]);
    for repo in [env.path().join("exported.git"), made] {
        env.git(&repo, &["fsck", "--strict"]);
        let head = env.git(&repo, &["symbolic-ref", "HEAD"]);
        assert_eq!(String::from_utf8(head).unwrap(), "refs/heads/trunk\n");
        assert_eq!(refs(&env, &repo), "");
    }
}

#[test]
fn bad_store_input_is_refused_and_changes_nothing() {
    let env = Env::new();
    let (_, store, url) = imported(&env);
    let before = sluice(&env, env.path(), &["store", "export", &url, "before.git"]);
    assert!(before.status.success(), "{}", stderr(&before));
    // Importing over an existing repository.
    let out = sluice(&env, env.path(), &["store", "import", &url, "source"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
    // Exporting into a directory that holds something: refused, left as it was.
    std::fs::create_dir(env.path().join("busy")).unwrap();
    std::fs::write(env.path().join("busy/file"), "mine").unwrap();
    let out = sluice(&env, env.path(), &["store", "export", &url, "busy"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("already exists and is not an empty directory"),
        "{}",
        stderr(&out)
    );
    assert_eq!(crate::util::list_dir(&env.path().join("busy")), ["file"]);
    // URLs that name no store, or a name that climbs out of the prefix.
    for bad in [
        "http://example.com/x.git",
        "s3:///x.git",
        "s3://bucket/../x.git",
        "s3://bucket/",
    ] {
        let out = sluice(&env, env.path(), &["store", "export", bad, "never.git"]);
        assert!(!out.status.success(), "{bad}");
        assert!(
            stderr(&out).starts_with("fatal: "),
            "{bad}: {}",
            stderr(&out)
        );
        assert!(!env.path().join("never.git").exists());
    }
    // A node asked for a repository the store does not have: git daemon's one answer.
    let nodes = nodes(&env, &store, 1);
    let missing = env.git_command(
        env.path(),
        &["ls-remote", &git_url(&nodes[0], "nothing.git")],
    );
    let out = crate::util::run_with_input(missing, b"");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("access denied or repository not exported"),
        "{}",
        stderr(&out)
    );
    let escape = env.git_command(env.path(), &["ls-remote", &git_url(&nodes[0], "../p.git")]);
    assert!(!crate::util::run_with_input(escape, b"").status.success());
    // The repository is as it was, and no temporary file was left beside the exports.
    let after = sluice(&env, env.path(), &["store", "export", &url, "after.git"]);
    assert!(after.status.success());
    assert_eq!(
        refs(&env, &env.path().join("after.git")),
        refs(&env, &env.path().join("before.git"))
    );
    let leftovers: Vec<String> = crate::util::list_dir(env.path())
        .into_iter()
        .filter(|n| n.starts_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // fsck finds the repository whole, then names the file a damaged store lost.
    let out = sluice(&env, env.path(), &["store", "fsck", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
    let bucket = store.trim_start_matches("s3://").split('/').next().unwrap();
    let manifest = manifest_text(bucket, "repos/p.git");
    let pack = (manifest.lines())
        .find_map(|l| l.strip_prefix("pack ")?.split(' ').next())
        .unwrap();
    let key = format!("repos/p.git/packs/{pack}.idx");
    delete_key(bucket, &key);
    let out = sluice(&env, env.path(), &["store", "fsck", &url]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!(
            "error: {key}: named by the manifest, not in the store"
        )),
        "{}",
        stderr(&out)
    );
    let _ = stdout;
}

#[test]
fn maintenance_and_gc_during_pushes_lose_nothing_and_clients_clone_from_the_bundle() {
    let env = Env::new();
    let (bucket, store, url) = imported(&env);
    let nodes = nodes(&env, &store, 2);
    let urls: Vec<String> = nodes.iter().map(|n| git_url(n, "p.git")).collect();
    // Pushes through both nodes while maintenance and a sweep with no grace run: the sweep
    // deletes what compaction replaced, never what a push in flight uploaded.
    let clients: Vec<(PathBuf, String)> = (0..6)
        .map(|i| {
            let branch = format!("work{i}");
            let dir = with_commit(&env, &urls[i % 2], &format!("w{i}"), &branch, &branch);
            (dir, branch)
        })
        .collect();
    std::thread::scope(|scope| {
        for (i, (dir, branch)) in clients.iter().enumerate() {
            let command = env.git_command(dir, &["push", &urls[i % 2], branch]);
            scope.spawn(move || {
                let out = crate::util::run_with_input(command, b"");
                assert!(out.status.success(), "{}", stderr(&out));
            });
        }
        scope.spawn(|| {
            for args in [
                ["store", "maintain", "-q", &url],
                ["store", "gc", "--grace=0", &url],
            ] {
                let out = sluice(&env, env.path(), &args);
                // Another run holding the lease is the only acceptable refusal.
                let said = stderr(&out);
                assert!(out.status.success() || said.contains("lease"), "{said}");
            }
        });
    });
    // A node may still be writing the increment a push made (under the lease, in the
    // background after its answer): each waits its turn.
    for args in [
        ["store", "maintain", "-q", &url],
        ["store", "gc", "--grace=0", &url],
    ] {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let out = sluice(&env, env.path(), &args);
            let said = stderr(&out);
            if out.status.success() {
                break;
            }
            assert!(
                said.contains("lease") && std::time::Instant::now() < deadline,
                "{said}"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
    let listed = remote_refs(&env, &urls[1]);
    assert_listed(&env, &listed, &clients);
    let out = sluice(&env, env.path(), &["store", "export", &url, "backup.git"]);
    assert!(out.status.success(), "{}", stderr(&out));
    env.git(&env.path().join("backup.git"), &["fsck", "--strict"]);
    // A node that advertises the bundle: git's client takes the history from the store and
    // asks the node only for what the bundle lacks.
    let base = format!("http://{}/{bucket}", seaweed().s3);
    let bundle_uri = format!("--bundle-uri={base}");
    let node = node(&env, &store, "bundle-cache", &[&bundle_uri]);
    let http = format!("http://{}/p.git", node.http());
    let newest = Env::new();
    let clone = git_bundle_clone(&newest, &http, "bundled");
    let bundled = newest.git(&clone, &["for-each-ref", "refs/bundles/"]);
    assert!(String::from_utf8_lossy(&bundled).contains("refs/bundles/work0"));
    newest.git(&clone, &["fsck", "--strict"]);
    // The same through pre-signed URLs, which a node with the store's credentials signs.
    let mut vars = seaweed().vars();
    vars.push(("AWS_ACCESS_KEY_ID", "tests".to_owned()));
    vars.push(("AWS_SECRET_ACCESS_KEY", "tests".to_owned()));
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let cache = env.path().join("signing-cache");
    let args = [
        "--store",
        &store,
        "--cache-dir",
        cache.to_str().unwrap(),
        "--bundle-uri",
    ];
    let signing = Server::start_with(&env, &args, &vars);
    let signed_url = format!("http://{}/p.git", signing.http());
    let signed = git_bundle_clone(&newest, &signed_url, "signed");
    assert_eq!(refs(&newest, &signed), refs(&newest, &clone));
    // Every node hands out the list the first one signed, however much later it is asked.
    let first = bundle_list(&signing);
    assert!(
        first.iter().any(|l| l.contains("X-Amz-Signature=")),
        "{first:?}"
    );
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let cache = env.path().join("signing-cache-2");
    let args = [&args[..3], &[cache.to_str().unwrap(), "--bundle-uri"]].concat();
    let other = Server::start_with(&env, &args, &vars);
    assert_eq!(bundle_list(&other), first);
    assert_eq!(bundle_list(&signing), first);
    // Sluice's clone takes the bundle by default, and ends as git's client did.
    let ours = newest.sluice(newest.path(), &["clone", "-q", &http, "ours"], b"");
    assert!(ours.status.success(), "{}", stderr(&ours));
    let ours = newest.path().join("ours");
    newest.git(&ours, &["fsck", "--strict"]);
    assert_eq!(refs(&newest, &ours), refs(&newest, &clone));
    assert!(newest.git(&ours, &["status", "--porcelain"]).is_empty());
    assert_eq!(
        remote_refs(&newest, &clone.to_string_lossy())
            .lines()
            .filter(|l| l.contains("refs/remotes/") && !l.ends_with("/HEAD"))
            .count(),
        listed.lines().filter(|l| l.contains("refs/heads/")).count()
    );
}

#[test]
fn a_node_killed_during_pushes_loses_no_acknowledged_push() {
    let env = Env::new();
    let (_, store, url) = imported(&env);
    let mut acknowledged = Vec::new();
    for attempt in 0..10u64 {
        let node = nodes(&env, &store, 1).pop().unwrap();
        let node_url = git_url(&node, "p.git");
        let branch = format!("killed{attempt}");
        let pusher = env.path().join("pusher");
        if pusher.exists() {
            env.git(&pusher, &["remote", "set-url", "origin", &node_url]);
        }
        let dir = with_commit(&env, &node_url, "pusher", &branch, &branch);
        // Enough data that the kill lands in the middle of some pushes.
        std::fs::write(dir.join("big.bin"), crate::util::noise(attempt, 3 << 20)).unwrap();
        env.git(&dir, &["add", "big.bin"]);
        env.git(&dir, &["commit", "-q", "-m", "big"]);
        let push = env.git_command(&dir, &["push", &node_url, &branch]);
        let pushing = std::thread::spawn(move || crate::util::run_with_input(push, b""));
        std::thread::sleep(std::time::Duration::from_millis(attempt * 40));
        drop(node); // SIGKILL
        if pushing.join().unwrap().status.success() {
            acknowledged.push((branch.clone(), env.git(&dir, &["rev-parse", &branch])));
        }
    }
    // Every push the client was told landed is there, and every ref names what it needs.
    let node = nodes(&env, &store, 1).pop().unwrap();
    let listed = remote_refs(&env, &git_url(&node, "p.git"));
    for (branch, tip) in &acknowledged {
        let line = format!(
            "{}\trefs/heads/{branch}",
            String::from_utf8_lossy(tip.trim_ascii())
        );
        assert!(listed.contains(&line), "{line} not in {listed}");
    }
    let out = sluice(
        &env,
        env.path(),
        &["store", "export", &url, "after-kills.git"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    env.git(&env.path().join("after-kills.git"), &["fsck", "--strict"]);
    eprintln!(
        "{} of 10 pushes acknowledged before the kill",
        acknowledged.len()
    );
}

/// How many objects the store holds under `prefix` of `bucket` (its S3 listing).
fn stored_keys(bucket: &str, prefix: &str) -> usize {
    use std::io::{Read, Write};
    let s3 = &seaweed().s3;
    let mut stream = std::net::TcpStream::connect(s3).unwrap();
    let request = format!(
        "GET /{bucket}?list-type=2&prefix={prefix} HTTP/1.1\r\nHost: {s3}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer.matches("<Key>").count()
}

#[test]
fn the_nodes_hooks_judge_store_pushes_and_a_refused_push_leaves_nothing() {
    let env = Env::new();
    let (bucket, store, _) = imported(&env);
    let hooks = env.path().join("hooks");
    std::fs::create_dir(&hooks).unwrap();
    let log = env.path().join("post-receive.log");
    crate::util::script(
        &hooks.join("pre-receive"),
        "#!/bin/sh\nwhile read old new name; do\n  case $name in refs/heads/blocked) echo \"no pushes to $name\" >&2; exit 1;; esac\ndone\n",
    );
    crate::util::script(
        &hooks.join("post-receive"),
        &format!("#!/bin/sh\ncat >> '{}'\n", log.display()),
    );
    let node = node(&env, &store, "cache", &["--hooks", hooks.to_str().unwrap()]);
    let url = git_url(&node, "p.git");
    let dir = with_commit(&env, &url, "client", "allowed", "allowed");
    env.git(&dir, &["push", "-q", &url, "allowed"]);
    let tip = String::from_utf8(env.git(&dir, &["rev-parse", "allowed"])).unwrap();
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.ends_with(&format!("{} refs/heads/allowed\n", tip.trim())),
        "{logged}"
    );
    let packs = stored_keys(&bucket, "repos/p.git/packs/");
    let dir = with_commit(&env, &url, "client", "blocked", "blocked");
    let push = env.git_command(&dir, &["push", &url, "blocked"]);
    let out = crate::util::run_with_input(push, b"");
    assert!(!out.status.success());
    let said = stderr(&out);
    assert!(said.contains("no pushes to refs/heads/blocked"), "{said}");
    assert!(said.contains("(pre-receive hook declined)"), "{said}");
    assert!(!remote_refs(&env, &url).contains("refs/heads/blocked"));
    assert_eq!(
        stored_keys(&bucket, "repos/p.git/packs/"),
        packs,
        "a refused push uploaded"
    );
}

/// The manifest of `repo` (`repos/<name>.git`) in `bucket`, as stored.
pub(crate) fn manifest_text(bucket: &str, repo: &str) -> String {
    use std::io::{Read, Write};
    let s3 = &seaweed().s3;
    let mut stream = std::net::TcpStream::connect(s3).unwrap();
    let request = format!(
        "GET /{bucket}/{repo}/manifest HTTP/1.1\r\nHost: {s3}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default()
}

#[test]
fn a_node_maintains_a_repository_after_pushes_leave_it_many_packs() {
    let env = Env::new();
    let (bucket, store, repo_url) = imported(&env);
    let node = node(&env, &store, "cache", &["--maintain-after-packs", "2"]);
    let url = git_url(&node, "p.git");
    for i in 0..3 {
        let dir = with_commit(&env, &url, "client", "main", &format!("push{i}"));
        env.git(&dir, &["push", "-q", &url, "main"]);
    }
    // The third push left four packs: the node rolls the three small ones into one, the
    // imported pack (and its bitmap) kept.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let packs = |manifest: &str| manifest.lines().filter(|l| l.starts_with("pack ")).count();
    let mut manifest = manifest_text(&bucket, "repos/p.git");
    while packs(&manifest) > 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no maintenance: {manifest}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
        manifest = manifest_text(&bucket, "repos/p.git");
    }
    assert!(manifest.contains(" bitmap"), "{manifest}");
    assert!(manifest.contains("\nremoved "), "{manifest}");
    assert!(
        !manifest.contains("\nbundle "),
        "a roll, not a full compaction: {manifest}"
    );
    // The roll's multi-pack-index, over both packs left, with its bitmap.
    let midx = (manifest.lines()).find_map(|l| l.strip_prefix("midx "));
    let midx = midx.unwrap_or_else(|| panic!("no multi-pack-index: {manifest}"));
    assert_eq!(midx.split(' ').count(), 3, "{manifest}");
    let client = env.path().join("client");
    let tip = env.git(&client, &["rev-parse", "main"]);
    let tip = String::from_utf8_lossy(tip.trim_ascii()).into_owned();
    assert!(remote_refs(&env, &url).contains(&tip));
    env.git(env.path(), &["clone", "-q", &url, "after"]);
    env.git(&env.path().join("after"), &["fsck", "--strict"]);
    // The generation the clone was served from has it, and git finds both sound.
    let generations = env.path().join("cache/p.git/gen");
    let newest = crate::util::list_dir(&generations)
        .into_iter()
        .max_by_key(|name| name.split('-').next().and_then(|n| n.parse::<u64>().ok()));
    let served = generations.join(newest.unwrap());
    let pack_dir = served.join("objects/pack");
    assert!(
        pack_dir.join("multi-pack-index").exists(),
        "{:?}",
        crate::util::list_dir(&pack_dir)
    );
    for git in gits() {
        let run = |args: &[&str]| {
            let out = std::process::Command::new(&git)
                .arg("--git-dir")
                .arg(&served)
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{git:?} {args:?}: {}", stderr(&out));
            String::from_utf8_lossy(&out.stderr).into_owned()
        };
        run(&["multi-pack-index", "verify"]);
        let said = run(&["rev-list", "--test-bitmap", &tip]);
        assert!(said.contains("OK!"), "{said}");
    }
    // A full compaction after it: one pack with its own bitmap, no multi-pack-index.
    let out = sluice(&env, env.path(), &["store", "maintain", "-q", &repo_url]);
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = manifest_text(&bucket, "repos/p.git");
    assert!(!manifest.contains("\nmidx "), "{manifest}");
    env.git(env.path(), &["clone", "-q", &url, "compacted"]);
    env.git(&env.path().join("compacted"), &["fsck", "--strict"]);
}

#[test]
fn a_nodes_cache_keeps_under_its_bound_what_the_current_generation_does_not_need() {
    let env = Env::new();
    let (bucket, store, url) = imported(&env);
    let args = ["--cache-size", "1", "--maintain-after-packs", "0"];
    let node = node(&env, &store, "cache", &args);
    let cache = env.path().join("cache");
    let node_url = git_url(&node, "p.git");
    let dir = with_commit(&env, &node_url, "client", "main", "one");
    env.git(&dir, &["push", "-q", &node_url, "main"]);
    let cached = |what: &str| -> Vec<String> {
        let names = crate::util::list_dir(&cache.join("p.git/packs"));
        names.into_iter().filter(|n| n.ends_with(what)).collect()
    };
    assert_eq!(
        cached(".pack").len(),
        2,
        "the imported pack and the pushed one"
    );
    let out = sluice(&env, env.path(), &["store", "maintain", "-q", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The next request pins the compacted generation; the replaced packs leave the cache.
    env.git(env.path(), &["clone", "-q", &node_url, "after"]);
    env.git(&env.path().join("after"), &["fsck", "--strict"]);
    let manifest = manifest_text(&bucket, "repos/p.git");
    let live: Vec<String> = (manifest.lines())
        .filter_map(|l| {
            Some(format!(
                "{}.pack",
                l.strip_prefix("pack ")?.split(' ').next()?
            ))
        })
        .collect();
    assert_eq!(cached(".pack"), live, "{manifest}");
}

/// Deletes one object of the store, as a damaged or mismanaged store would lose it.
fn delete_key(bucket: &str, key: &str) {
    use std::io::{Read, Write};
    let s3 = &seaweed().s3;
    let mut stream = std::net::TcpStream::connect(s3).unwrap();
    let request =
        format!("DELETE /{bucket}/{key} HTTP/1.1\r\nHost: {s3}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
}

#[test]
fn a_pack_one_node_served_twice_is_copied_by_the_others() {
    let env = Env::new();
    let (bucket, store, _) = imported(&env);
    let cache_a = env.path().join("packs-a");
    let cache_b = env.path().join("packs-b");
    let a = node(
        &env,
        &store,
        "a",
        &["--pack-cache", cache_a.to_str().unwrap()],
    );
    let b = node(
        &env,
        &store,
        "b",
        &["--pack-cache", cache_b.to_str().unwrap()],
    );
    let clone = |node: &Server, name: &str| {
        let url = format!("http://{}/p.git", node.http());
        env.git(env.path(), &["clone", "-q", "--bare", &url, name]);
        env.git(&env.path().join(name), &["fsck", "--strict"]);
    };
    clone(&a, "first");
    assert_eq!(
        stored_keys(&bucket, "repos/p.git/pack-cache/"),
        0,
        "shared after one request"
    );
    clone(&a, "second");
    // The second identical request was a hit on node a, which offers the pack to the store.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while stored_keys(&bucket, "repos/p.git/pack-cache/") == 0 {
        assert!(std::time::Instant::now() < deadline, "never shared");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    clone(&b, "third");
    assert_eq!(metric(&b, "sluice_pack_cache_hits_total"), 1.0);
    assert_eq!(metric(&b, "sluice_pack_cache_misses_total"), 0.0);
    assert_eq!(
        refs(&env, &env.path().join("third")),
        refs(&env, &env.path().join("first"))
    );
}

#[test]
fn pushes_after_a_full_bundle_become_incremental_bundles_clients_apply_in_order() {
    let env = Env::new();
    let (bucket, store, url) = imported(&env);
    let out = sluice(&env, env.path(), &["store", "maintain", "-q", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
    let base = format!("--bundle-uri=http://{}/{bucket}", seaweed().s3);
    let node = node(&env, &store, "cache", &[&base]);
    let node_url = git_url(&node, "p.git");
    // A Sluice clone from the full bundle, which later fetches take the increments into.
    let http = format!("http://{}/p.git", node.http());
    let early = env.sluice(env.path(), &["clone", "-q", &http, "early"], b"");
    assert!(early.status.success(), "{}", stderr(&early));
    let early = env.path().join("early");
    let token = |dir: &Path| env.git(dir, &["config", "fetch.bundleCreationToken"]);
    let full_token = token(&early);
    for i in 0..2 {
        let dir = with_commit(&env, &node_url, "client", "main", &format!("after{i}"));
        env.git(&dir, &["push", "-q", &node_url, "main"]);
        // Each push's increment is written in the background; the next builds on it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while manifest_text(&bucket, "repos/p.git")
            .matches("\nbundle inc-")
            .count()
            <= i
        {
            assert!(std::time::Instant::now() < deadline, "no increment");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    let tip = env.git(&env.path().join("client"), &["rev-parse", "main"]);
    let fetched = env.sluice(&early, &["fetch", "-q"], b"");
    assert!(
        fetched.status.success() && stderr(&fetched).is_empty(),
        "{}",
        stderr(&fetched)
    );
    assert_eq!(env.git(&early, &["rev-parse", "refs/bundles/main"]), tip);
    assert_ne!(token(&early), full_token, "the increments' token recorded");
    env.git(&early, &["fsck", "--strict"]);
    let newest = Env::new();
    let theirs = git_bundle_clone(&newest, &http, "theirs");
    // The newest increment's branch is what the bundles gave.
    assert_eq!(
        newest.git(&theirs, &["rev-parse", "refs/bundles/main"]),
        tip
    );
    newest.git(&theirs, &["fsck", "--strict"]);
    let ours = newest.sluice(newest.path(), &["clone", "-q", &http, "ours"], b"");
    assert!(ours.status.success(), "{}", stderr(&ours));
    assert!(stderr(&ours).is_empty(), "{}", stderr(&ours));
    let ours = newest.path().join("ours");
    assert_eq!(refs(&newest, &ours), refs(&newest, &theirs));
    newest.git(&ours, &["fsck", "--strict"]);
}

#[test]
fn clones_during_maintenance_and_the_sweep_are_whole() {
    let env = Env::new();
    let (_, store, url) = imported(&env);
    let nodes = nodes(&env, &store, 2);
    let urls: Vec<String> = nodes.iter().map(|n| git_url(n, "p.git")).collect();
    for i in 0..3 {
        let dir = with_commit(&env, &urls[i % 2], "pusher", "main", &format!("p{i}"));
        env.git(&dir, &["push", "-q", &urls[i % 2], "main"]);
    }
    std::thread::scope(|scope| {
        for (i, url) in urls.iter().cycle().take(6).enumerate() {
            let env = &env;
            scope.spawn(move || {
                let name = format!("during{i}");
                env.git(env.path(), &["clone", "-q", "--bare", url, &name]);
                env.git(&env.path().join(&name), &["fsck", "--strict"]);
            });
        }
        scope.spawn(|| {
            for args in [
                ["store", "maintain", "-q", &url],
                ["store", "gc", "-q", &url],
            ] {
                let out = sluice(&env, env.path(), &args);
                assert!(out.status.success(), "{}", stderr(&out));
            }
        });
    });
    let tip = env.git(&env.path().join("pusher"), &["rev-parse", "main"]);
    for i in 0..6 {
        let clone = env.path().join(format!("during{i}"));
        assert_eq!(env.git(&clone, &["rev-parse", "main"]), tip);
    }
}
