//! A store's repositories over ssh: `sluice upload-pack --store` and `sluice receive-pack
//! --store`, one process per request on one shared cache, as an ssh server runs them, for
//! every installed git, protocols v0 and v2. Judged by git: `fsck --strict` of every clone and
//! of the store's export, refs compared with the source's and with what the store holds.

use crate::serve::fake_ssh;
use crate::store::{imported, refs, sluice};
use crate::util::seaweed::seaweed;
use crate::util::{gits, pkt, read_pkt, run_with_input, stderr, Env};
use std::path::Path;
use std::process::Output;

/// git, with ssh through the stand-in (made once per `env`: a script rewritten while another
/// thread runs it is busy) and the store's environment for the commands it runs.
fn git_over_ssh(env: &Env, cwd: &Path, args: &[&str]) -> Output {
    let ssh = env.path().join("fake-ssh");
    let mut command = env.git_command(cwd, args);
    command.env("GIT_SSH_COMMAND", ssh);
    command.envs(seaweed().vars());
    run_with_input(command, b"")
}

fn succeeded(out: Output) -> Output {
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// A commit of one new file in `clone`, pushed to its origin's main through `receive`.
fn commit_and_push(env: &Env, clone: &Path, receive: &str, round: usize) {
    let file = format!("pushed-{round}.txt");
    std::fs::write(clone.join(&file), format!("{round}\n")).unwrap();
    env.git(clone, &["add", &file]);
    env.git(clone, &["commit", "-q", "-m", &file]);
    let args = ["push", "-q", "--receive-pack", receive, "origin", "main"];
    succeeded(git_over_ssh(env, clone, &args));
}

/// The refs a clone got, named as the source names them.
fn cloned_refs(env: &Env, clone: &Path) -> String {
    let listed = env.git(
        clone,
        &[
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            "refs/remotes/origin",
            "refs/tags",
        ],
    );
    String::from_utf8(listed)
        .unwrap()
        .lines()
        .filter(|line| !line.ends_with("/HEAD"))
        .map(|line| line.replace("refs/remotes/origin/", "refs/heads/") + "\n")
        .collect()
}

#[test]
fn a_stores_repository_is_cloned_from_and_pushed_to_over_ssh() {
    let env = Env::new();
    let (_, store, url) = imported(&env);
    let source = refs(&env, &env.path().join("source"));
    let cache = env.path().join("ssh-cache");
    let service = |name: &str| {
        let sluice = env!("CARGO_BIN_EXE_sluice");
        format!(
            "{sluice} {name} --store {store} --cache-dir {}",
            cache.display()
        )
    };
    let (upload, receive) = (service("upload-pack"), service("receive-pack"));
    let remote = "ssh://example.invalid/p.git";
    for git in gits() {
        let env = Env::with_git(git);
        fake_ssh(&env);
        for protocol in ["protocol.version=0", "protocol.version=2"] {
            let dest = format!("clone-{protocol}");
            let args = ["-c", protocol, "clone", "-q", "-u", &upload, remote, &dest];
            succeeded(git_over_ssh(&env, env.path(), &args));
            let clone = env.path().join(&dest);
            env.git(&clone, &["fsck", "--strict"]);
            assert_eq!(cloned_refs(&env, &clone), source);
        }
        // A name the store does not hold, in git's words.
        let missing = "ssh://example.invalid/none.git";
        let out = git_over_ssh(
            &env,
            env.path(),
            &["ls-remote", "--upload-pack", &upload, missing],
        );
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains("'/none.git' does not appear to be a git repository"),
            "{}",
            stderr(&out)
        );
    }
    // Pushes land in the store, each through a process of its own, while clones run at once on
    // the same cache (each push makes a generation; older ones are removed as they go, never
    // one a clone still reads).
    fake_ssh(&env);
    let pusher = env.path().join("pusher");
    succeeded(git_over_ssh(
        &env,
        env.path(),
        &["clone", "-q", "-u", &upload, remote, "pusher"],
    ));
    std::thread::scope(|scope| {
        for i in 0..3 {
            let (env, upload) = (&env, &upload);
            scope.spawn(move || {
                for round in 0..3 {
                    let dest = format!("racing-{i}-{round}");
                    let args = ["clone", "-q", "-u", upload, remote, &dest];
                    succeeded(git_over_ssh(env, env.path(), &args));
                    env.git(&env.path().join(&dest), &["fsck", "--strict"]);
                }
            });
        }
        for round in 0..6 {
            commit_and_push(&env, &pusher, &receive, round);
        }
    });
    let pushed = String::from_utf8(env.git(&pusher, &["rev-parse", "main"])).unwrap();
    let listed = git_over_ssh(
        &env,
        env.path(),
        &["ls-remote", "--upload-pack", &upload, remote],
    );
    let listed = String::from_utf8(succeeded(listed).stdout).unwrap();
    assert!(
        listed.contains(&format!("{}\trefs/heads/main", pushed.trim())),
        "{listed}"
    );
    // What the store holds is whole, as git judges, and is what ssh lists.
    let out = sluice(&env, env.path(), &["store", "export", &url, "backup.git"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let backup = env.path().join("backup.git");
    env.git(&backup, &["fsck", "--strict"]);
    let exported = String::from_utf8(env.git(
        &backup,
        &["for-each-ref", "--format=%(objectname)\t%(refname)"],
    ))
    .unwrap();
    let advertised: String = (listed.lines())
        .filter(|l| !l.ends_with("HEAD") && !l.ends_with("^{}"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(exported, advertised);
}

/// The generation directories of the cache's one repository.
fn generations(cache: &Path) -> Vec<String> {
    let folders = crate::util::list_dir(cache);
    assert_eq!(folders.len(), 1, "{folders:?}");
    crate::util::list_dir(&cache.join(&folders[0]).join("gen"))
}

#[test]
fn a_generation_a_request_reads_stays_while_other_processes_move_on() {
    use std::io::{Read, Write};
    let env = Env::new();
    let (_, store, _) = imported(&env);
    fake_ssh(&env);
    let cache = env.path().join("ssh-cache");
    let cache_arg = cache.to_str().unwrap();
    // A fetch that has read the advertisement and waits, holding its generation.
    let args = [
        "upload-pack",
        "--store",
        &store,
        "--cache-dir",
        cache_arg,
        "p.git",
    ];
    let mut stalled = env.sluice_command(env.path(), &args);
    stalled.envs(seaweed().vars());
    stalled.stdin(std::process::Stdio::piped());
    stalled.stdout(std::process::Stdio::piped());
    let mut stalled = stalled.spawn().unwrap();
    let mut advertised = stalled.stdout.take().unwrap();
    let first = read_pkt(&mut advertised).expect("an advertisement");
    while read_pkt(&mut advertised).is_some() {}
    let want = first.split(' ').next().unwrap().to_owned();
    let held = generations(&cache);
    assert_eq!(held.len(), 1, "{held:?}");
    // Pushes, each by a process of its own on the same cache, each making a newer generation
    // and removing the old ones no one holds.
    let sluice = env!("CARGO_BIN_EXE_sluice");
    let service = |name: &str| format!("{sluice} {name} --store {store} --cache-dir {cache_arg}");
    let (upload, receive) = (service("upload-pack"), service("receive-pack"));
    let remote = "ssh://example.invalid/p.git";
    let args = ["clone", "-q", "-u", &upload, remote, "pusher"];
    succeeded(git_over_ssh(&env, env.path(), &args));
    let pusher = env.path().join("pusher");
    for round in 0..8 {
        commit_and_push(&env, &pusher, &receive, round);
    }
    let listing = ["ls-remote", "--upload-pack", &upload, remote];
    succeeded(git_over_ssh(&env, env.path(), &listing));
    let now = generations(&cache);
    assert!(now.contains(&held[0]), "{held:?} was removed: {now:?}");
    assert!(now.len() > 2, "no generation was ever removed: {now:?}");
    // The waiting fetch goes on: the pack it gets is whole.
    let mut input = stalled.stdin.take().unwrap();
    let request = [
        pkt(&format!("want {want}\n")),
        "0000".to_owned(),
        pkt("done\n"),
    ];
    input.write_all(request.concat().as_bytes()).unwrap();
    drop(input);
    assert_eq!(read_pkt(&mut advertised).as_deref(), Some("NAK\n"));
    let mut pack = Vec::new();
    advertised.read_to_end(&mut pack).unwrap();
    assert!(stalled.wait().unwrap().success());
    let receiver = env.init("receiver", true);
    let out = env.git_with_input(&receiver, &["index-pack", "--stdin"], &pack);
    assert!(out.status.success(), "{}", stderr(&out));
    // Let go of, it goes with the next generation made.
    commit_and_push(&env, &pusher, &receive, 8);
    succeeded(git_over_ssh(&env, env.path(), &listing));
    let after = generations(&cache);
    assert!(!after.contains(&held[0]), "{held:?} stayed: {after:?}");
}

/// A store out of reach is said as such, never as a missing repository: HTTP's 503 (a client
/// may try again), and `upload-pack --store` fails with the store's words.
#[test]
fn a_store_out_of_reach_is_no_missing_repository() {
    let env = Env::new();
    let dead = format!("http://127.0.0.1:{}", crate::transports::free_port());
    let vars = [
        ("AWS_ENDPOINT_URL", dead.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
    ];
    let cache = env.path().join("cache");
    let cache = cache.to_str().unwrap();
    let args = ["--store", "s3://nowhere/repos", "--cache-dir", cache];
    let node = crate::serve::Server::start_with(&env, &args, &vars);
    let url = format!("http://{}/p.git", node.http());
    let out = env.git_with_input(env.path(), &["ls-remote", &url], b"");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("error: 503"), "{}", stderr(&out));
    let args = [
        "upload-pack",
        "--store",
        "s3://nowhere/repos",
        "--cache-dir",
        cache,
        "p.git",
    ];
    let mut command = env.sluice_command(env.path(), &args);
    command.envs(vars);
    let out = run_with_input(command, b"");
    assert_eq!(out.status.code(), Some(128), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("p.git/manifest"), "{said}");
    assert!(
        !said.contains("does not appear to be a git repository"),
        "{said}"
    );
}
