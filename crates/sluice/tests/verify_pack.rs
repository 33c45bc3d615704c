//! `sluice verify-pack` prints what `git verify-pack` prints, and fails where it fails.

use crate::util::{assert_says_each_cause_once, gits, stderr, text, Env, FastImport};

fn packed_repo(env: &Env) -> std::path::PathBuf {
    let repo = env.init("r", true);
    let mut fi = FastImport::new();
    for i in 0..40 {
        let a = text(i, 100);
        fi.commit(
            "main",
            "c",
            &[("a", "100644", &a), ("b", "100644", b"same\n")],
        );
    }
    env.fast_import(&repo, fi.finish());
    env.git(&repo, &["repack", "-adq"]);
    repo
}

/// The index of the repository's (only) pack.
fn pack_idx(repo: &std::path::Path) -> std::path::PathBuf {
    let pack_dir = repo.join("objects/pack");
    let idx = crate::util::list_dir(&pack_dir)
        .into_iter()
        .find(|n| n.ends_with(".idx"))
        .expect("a pack index");
    pack_dir.join(idx)
}

#[test]
fn listing_matches_git() {
    for git in gits() {
        let env = Env::with_git(git);
        let repo = packed_repo(&env);
        let idx = pack_idx(&repo);
        let idx = idx.to_str().unwrap();
        for flag in ["-v", "-s"] {
            let theirs = env.git(&repo, &["verify-pack", flag, idx]);
            let ours = env.sluice(&repo, &["verify-pack", flag, idx], b"");
            assert!(ours.status.success(), "{}", stderr(&ours));
            assert_eq!(
                String::from_utf8_lossy(&ours.stdout),
                String::from_utf8_lossy(&theirs)
            );
        }
        let ours = env.sluice(&repo, &["verify-pack", idx], b"");
        assert!(ours.status.success() && ours.stdout.is_empty());
    }
}

#[test]
fn damaged_index_is_reported() {
    let env = Env::new();
    let repo = packed_repo(&env);
    let idx = pack_idx(&repo);
    let mut bytes = std::fs::read(&idx).unwrap();
    // Flip a bit in the first CRC32.
    let count = bytes[8 + 1020..8 + 1024].to_vec();
    let count = u32::from_be_bytes(count.try_into().unwrap()) as usize;
    bytes[8 + 1024 + 20 * count] ^= 1;
    let mut perms = std::fs::metadata(&idx).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&idx, perms).unwrap();
    std::fs::write(&idx, &bytes).unwrap();
    let idx = idx.to_str().unwrap();
    assert!(!env
        .git_command(&repo, &["verify-pack", idx])
        .output()
        .unwrap()
        .status
        .success());
    let ours = env.sluice(&repo, &["verify-pack", "-v", idx], b"");
    assert_eq!(ours.status.code(), Some(1));
    assert!(
        stderr(&ours).contains("does not match"),
        "{}",
        stderr(&ours)
    );
    assert_says_each_cause_once(&stderr(&ours));
    assert!(String::from_utf8_lossy(&ours.stdout).ends_with(": bad\n"));
}

/// A pack or an index that is not there, `--max-input-size` exceeded and `index-pack` without
/// a pack: the exit code, standard output and the first line of the message are git's (git
/// says no cause after it, where Sluice names the system's).
#[test]
fn missing_files_and_limits_are_refused_as_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let repo = packed_repo(&env);
        let idx = pack_idx(&repo);
        let pack = idx.with_extension("pack");
        let lone = env.path().join("lone.pack");
        std::fs::copy(&pack, &lone).unwrap();
        let (lone, pack) = (lone.to_str().unwrap(), pack.to_str().unwrap());
        let cases: [&[&str]; 7] = [
            &["verify-pack", "nosuch.idx"],
            &["verify-pack", "-v", "nosuch.idx"],
            &["verify-pack", lone],
            &["index-pack", "--verify", lone],
            &["index-pack", "--verify", "nosuch.pack"],
            &["index-pack", "--max-input-size=10", "-o", "out.idx", pack],
            &["index-pack"],
        ];
        for args in cases {
            let [ours, theirs] = [true, false].map(|sluice| {
                let out = env.sluice_or_git(sluice, &repo, args);
                let said = stderr(&out).replace("sluice", "git");
                let first = said.lines().next().unwrap_or_default();
                // Usage lines differ between git's versions after the command's name.
                let first = match first.starts_with("usage:") {
                    true => first.split(" [").next().unwrap_or_default(),
                    false => first,
                };
                let first = first.to_owned();
                (out.status.code(), out.stdout, first)
            });
            let (code, stdout, first) = ours;
            assert_eq!(
                (code, &stdout),
                (theirs.0, &theirs.1),
                "{args:?} with {git:?}"
            );
            assert!(
                first.starts_with(&theirs.2),
                "{args:?} with {git:?}: {first}"
            );
            assert!(!repo.join("out.idx").exists());
        }
    }
}
