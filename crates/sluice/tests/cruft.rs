//! Cruft packs (`repack --cruft -d`, gc): what no ref reaches kept in one pack with each
//! object's date in `.mtimes`, twinned with git's: the same objects kept, and each tool reads
//! the other's dates (an expiration between two dates drops exactly the older objects).

use crate::util::{gits, pack_files, stderr, Env};
use std::path::Path;

fn all_objects(env: &Env, repo: &Path) -> String {
    let args = [
        "cat-file",
        "--batch-all-objects",
        "--batch-check=%(objectname)",
    ];
    String::from_utf8(env.git(repo, &args)).unwrap()
}

/// Bare twins of a history with a deleted branch and an old loose blob no ref reaches.
fn twins(env: &Env) -> (Vec<std::path::PathBuf>, String) {
    let work = env.init("work", false);
    for i in 0..6 {
        std::fs::write(work.join("f"), format!("{i}\n")).unwrap();
        env.git(&work, &["add", "."]);
        env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    env.git(&work, &["checkout", "-q", "-b", "doomed"]);
    std::fs::write(work.join("only-on-doomed"), "gone soon\n").unwrap();
    env.git(&work, &["add", "."]);
    env.git(&work, &["commit", "-q", "-m", "doomed"]);
    env.git(&work, &["checkout", "-q", "master"]);
    let mut blob = String::new();
    let repos = ["theirs.git", "ours.git"]
        .iter()
        .map(|name| {
            let bare = env.path().join(name);
            let target = bare.to_str().unwrap();
            env.git(
                env.path(),
                &["clone", "-q", "--bare", "--no-local", "work", target],
            );
            env.git(&bare, &["update-ref", "-d", "refs/heads/doomed"]);
            let out = env
                .git_command(&bare, &["hash-object", "-w", "--stdin"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .and_then(|mut child| {
                    use std::io::Write;
                    child
                        .stdin
                        .take()
                        .unwrap()
                        .write_all(b"an old loose blob\n")?;
                    child.wait_with_output()
                })
                .unwrap();
            blob = String::from_utf8(out.stdout).unwrap().trim().to_owned();
            let path = bare.join("objects").join(&blob[..2]).join(&blob[2..]);
            let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_500_000_000);
            std::fs::File::open(path)
                .unwrap()
                .set_modified(old)
                .unwrap();
            bare
        })
        .collect();
    (repos, blob)
}

#[test]
fn cruft_packs_keep_what_gits_keep_and_each_reads_the_others_dates() {
    for git in gits() {
        let env = Env::with_git(git);
        let (repos, blob) = twins(&env);
        let (theirs, ours) = (&repos[0], &repos[1]);
        env.git(theirs, &["repack", "--cruft", "-d", "-q"]);
        let out = env.sluice(ours, &["repack", "--cruft", "-d", "-q"], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(all_objects(&env, ours), all_objects(&env, theirs));
        assert!(all_objects(&env, ours).contains(&blob));
        assert_eq!(pack_files(ours, "mtimes"), 1);
        assert_eq!(pack_files(ours, "pack"), pack_files(theirs, "pack"));
        env.git(ours, &["fsck", "--strict"]);
        // An expiration between the blob's date and the others': each drops the blob from
        // the other's cruft pack, and keeps the rest.
        let expire = "--cruft-expiration=2019-01-01";
        env.git(ours, &["repack", "--cruft", "-d", "-q", expire]);
        let out = env.sluice(theirs, &["repack", "--cruft", "-d", "-q", expire], b"");
        assert!(out.status.success(), "{}", stderr(&out));
        for repo in [ours, theirs] {
            let kept = all_objects(&env, repo);
            assert!(!kept.contains(&blob), "{}", repo.display());
            env.git(repo, &["fsck", "--strict"]);
        }
        assert_eq!(all_objects(&env, ours), all_objects(&env, theirs));
    }
}

/// gc with `gc.cruftPacks` on (git's default since 2.40, Sluice's) and off.
#[test]
fn gc_puts_unreachable_objects_in_a_cruft_pack_as_gits_gc_does() {
    for git in gits() {
        for cruft in ["true", "false"] {
            let env = Env::with_git(git.clone());
            let (repos, blob) = twins(&env);
            let (theirs, ours) = (&repos[0], &repos[1]);
            for repo in [theirs, ours] {
                env.git(repo, &["config", "gc.cruftPacks", cruft]);
            }
            env.git(theirs, &["gc", "-q"]);
            let out = env.sluice(ours, &["gc", "-q"], b"");
            assert!(out.status.success(), "{}", stderr(&out));
            // The blob is older than two weeks: pruned by both; the deleted branch's objects
            // are kept, in a cruft pack or loose as git keeps them.
            assert_eq!(all_objects(&env, ours), all_objects(&env, theirs));
            assert!(!all_objects(&env, ours).contains(&blob));
            assert_eq!(
                pack_files(ours, "mtimes"),
                pack_files(theirs, "mtimes"),
                "{cruft}"
            );
            let loose = |repo: &Path| {
                let counted = String::from_utf8(env.git(repo, &["count-objects"])).unwrap();
                counted.split(' ').next().unwrap().to_owned()
            };
            assert_eq!(loose(ours), loose(theirs), "{cruft}");
            env.git(ours, &["fsck", "--strict"]);
            let out = env.sluice(ours, &["gc", "-q", "--prune=now"], b"");
            assert!(out.status.success(), "{}", stderr(&out));
            env.git(theirs, &["gc", "-q", "--prune=now"]);
            assert_eq!(all_objects(&env, ours), all_objects(&env, theirs));
            env.git(ours, &["fsck", "--strict"]);
        }
    }
}
