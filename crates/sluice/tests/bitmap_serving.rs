//! Clones and fetches counted with a reachability bitmap: through `sluice upload-pack` they
//! end with the refs git's own upload-pack gives, after a repack with bitmaps, with history
//! pushed since (objects stored beside the bitmapped pack), and with a damaged bitmap.

use crate::upload_pack::{
    add_loose_commit, bare_clones_agree, clone, fsck, refs, source, upload_pack,
};
use crate::util::{gits, Env};
use std::os::unix::fs::PermissionsExt;

/// A bare clone of `url` into `dest` through `sluice upload-pack`, which git finds sound.
fn bare_clone_through_sluice(env: &Env, url: &str, dest: &std::path::Path, protocol: &str) {
    clone(env, url, dest, protocol, Some(&upload_pack()), &["--bare"]);
    fsck(env, dest);
}

#[test]
fn clones_and_fetches_through_bitmaps_match_git() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        env.git(&src, &["repack", "-q", "-a", "-d", "-b"]);
        let url = format!("file://{}", src.display());
        for protocol in ["protocol.version=0", "protocol.version=2"] {
            for (name, extra) in [
                ("full", &["--bare"][..]),
                ("single", &["--single-branch", "-b", "topic"][..]),
            ] {
                let ours = env.path().join(format!("ours-{name}-{protocol}"));
                let theirs = env.path().join(format!("theirs-{name}-{protocol}"));
                clone(&env, &url, &ours, protocol, Some(&upload_pack()), extra);
                clone(&env, &url, &theirs, protocol, None, extra);
                assert_eq!(refs(&env, &ours), refs(&env, &theirs), "{name} {protocol}");
                fsck(&env, &ours);
            }
        }
        // New history, repacked with bitmaps: fetches count through them (and walk from the
        // new tips, which may have none of their own, down to bitmapped ancestors).
        add_loose_commit(&env, &src, 1);
        add_loose_commit(&env, &src, 2);
        env.git(&src, &["repack", "-q", "-a", "-d", "-b"]);
        fetches_agree(&env, "fetch");
        // History pushed since the repack, stored beside the bitmapped pack (a small pack,
        // loose objects, a tag): counted with the bitmap and a walk of only what is new.
        add_loose_commit(&env, &src, 3);
        env.git(&src, &["repack", "-q", "-d"]);
        add_loose_commit(&env, &src, 4);
        env.git(
            &src,
            &["tag", "-a", "-m", "new", "beside-the-bitmap", "HEAD"],
        );
        fetches_agree(&env, "fetch beside");
        bare_clones_agree(&env, &url, "beside");
        // A damaged bitmap is not used: the walk answers, and the clone is the same.
        let pack_dir = src.join("objects/pack");
        for entry in std::fs::read_dir(&pack_dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "bitmap") {
                let mut data = std::fs::read(&path).unwrap();
                let middle = data.len() / 2;
                data.truncate(middle);
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
                std::fs::write(&path, data).unwrap();
            }
        }
        bare_clones_agree(&env, &url, "damaged");
    }
}

/// Fetches of every ref into the clones `ours-full-<protocol>` (through Sluice's upload-pack)
/// and `theirs-full-<protocol>` (through git's), in protocols 0 and 2: the same refs, and
/// Sluice's passes fsck.
fn fetches_agree(env: &Env, label: &str) {
    for protocol in ["protocol.version=0", "protocol.version=2"] {
        let ours = env.path().join(format!("ours-full-{protocol}"));
        let theirs = env.path().join(format!("theirs-full-{protocol}"));
        let option = format!("--upload-pack={}", upload_pack());
        let fetch = [
            "-c",
            protocol,
            "fetch",
            "-q",
            &option,
            "origin",
            "+refs/*:refs/*",
        ];
        env.git(&ours, &fetch);
        env.git(
            &theirs,
            &["-c", protocol, "fetch", "-q", "origin", "+refs/*:refs/*"],
        );
        assert_eq!(refs(env, &ours), refs(env, &theirs), "{label} {protocol}");
        fsck(env, &ours);
    }
}

/// Full clones from `sluice serve` of a repository that took pushes since its repack (the
/// bitmapped pack copied whole, the pushed packs entry by entry): the second and third are
/// written with the checksum the first computed, and every one is the same pack, indexed by
/// git and complete; a push in between makes a different pack, checksummed anew; and after
/// pushes through the server (loose objects, which it checksums in the background), the
/// clone is complete too.
#[test]
fn repeated_clones_reuse_the_checksum_of_a_copied_pack() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        env.git(&src, &["repack", "-q", "-a", "-d", "-b"]);
        std::fs::create_dir(env.path().join("served")).unwrap();
        let served = env.path().join("served/repo.git");
        std::fs::rename(&src, &served).unwrap();
        for i in 1..=2 {
            add_loose_commit(&env, &served, i);
            env.git(&served, &["repack", "-q", "-d"]);
        }
        let server = crate::serve::Server::start(&env, "served", &[]);
        let url = format!("http://{}/repo.git", server.http());
        let mut checksums = Vec::new();
        env.git(&served, &["config", "http.receivepack", "true"]);
        for round in 0..5 {
            if round == 3 {
                add_loose_commit(&env, &served, 3);
                env.git(&served, &["repack", "-q", "-d"]);
            }
            if round == 4 {
                // Pushed through the server, which then computes the checksum of the next
                // clone's pack in the background (loose objects and new deltas included).
                let work = env.path().join("pusher");
                if !work.exists() {
                    env.git(env.path(), &["clone", "-q", &url, "pusher"]);
                }
                for i in 0..3 {
                    std::fs::write(work.join(format!("pushed{i}")), format!("{i}\n")).unwrap();
                    env.git(&work, &["add", "."]);
                    env.git(&work, &["commit", "-q", "-m", &format!("pushed {i}")]);
                    env.git(&work, &["push", "-q", "origin", "HEAD"]);
                }
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
            let ours = env.path().join(format!("clone-{round}"));
            clone(&env, &url, &ours, "protocol.version=2", None, &["--bare"]);
            fsck(&env, &ours);
            assert_eq!(refs(&env, &ours), refs(&env, &served), "round {round}");
            let packs: Vec<String> = std::fs::read_dir(ours.join("objects/pack"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".pack"))
                .collect();
            assert_eq!(packs.len(), 1, "round {round}: {packs:?}");
            checksums.push(packs[0].clone());
        }
        assert_eq!(checksums[0], checksums[1]);
        assert_eq!(checksums[1], checksums[2]);
        assert_ne!(checksums[2], checksums[3]);
        assert_ne!(checksums[3], checksums[4]);
    }
}

/// Counting with a multi-pack-index bitmap (the packs' own bitmaps removed), Sluice's and
/// then git's: clones, and fetches of history pushed since (outside the file), end with the
/// refs git's upload-pack gives.
#[test]
fn clones_and_fetches_through_a_multi_pack_index_bitmap_match_git() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        env.git(&src, &["repack", "-q", "-a", "-d", "-b"]);
        for i in 1..=2 {
            add_loose_commit(&env, &src, i);
            env.git(&src, &["repack", "-q", "-d"]);
        }
        let out = env.sluice(&src, &["multi-pack-index", "write", "--bitmap"], b"");
        assert!(out.status.success(), "{}", crate::util::stderr(&out));
        let pack_dir = src.join("objects/pack");
        for entry in std::fs::read_dir(&pack_dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("pack-") && name.ends_with(".bitmap") {
                std::fs::remove_file(&path).unwrap();
            }
        }
        let url = format!("file://{}", src.display());
        for protocol in ["protocol.version=0", "protocol.version=2"] {
            let ours = env.path().join(format!("ours-full-{protocol}"));
            let theirs = env.path().join(format!("theirs-full-{protocol}"));
            bare_clone_through_sluice(&env, &url, &ours, protocol);
            clone(&env, &url, &theirs, protocol, None, &["--bare"]);
            assert_eq!(refs(&env, &ours), refs(&env, &theirs), "{protocol}");
        }
        add_loose_commit(&env, &src, 3);
        env.git(&src, &["repack", "-q", "-d"]);
        fetches_agree(&env, "fetch beside the multi-pack-index");
        // git's own multi-pack-index bitmap, of the same packs.
        env.git(&src, &["multi-pack-index", "write", "--bitmap"]);
        bare_clones_agree(&env, &url, "git's multi-pack-index bitmap");
        add_loose_commit(&env, &src, 4);
        fetches_agree(&env, "fetch beside git's multi-pack-index");
    }
}

/// A commit of `tree` with `parents` in `repo`, committed `when` seconds into a fixed day.
fn dated_commit(
    env: &Env,
    repo: &std::path::Path,
    tree: &str,
    parents: &[&str],
    when: u64,
) -> String {
    let mut args = vec!["commit-tree", tree, "-m", "c"];
    for parent in parents {
        args.extend(["-p", parent]);
    }
    let mut command = env.git_command(repo, &args);
    command.env(
        "GIT_COMMITTER_DATE",
        format!("{} +0000", 1_700_000_000 + when),
    );
    let out = crate::util::run_with_input(command, b"");
    assert!(out.status.success(), "{}", crate::util::stderr(&out));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// History pushed since the bitmapped pack in which a tree comes back (a revert) and a merge
/// with an old commit makes the count meet the commits out of their order: every object is
/// still sent (a count that trusted a commit's parent to bring what their trees share lost
/// a directory, and the clone failed "did not receive expected object").
#[test]
fn a_tree_that_comes_back_after_the_bitmap_is_sent_whole() {
    for git in gits() {
        let env = Env::with_git(git);
        let work = env.path().join("work");
        env.git(env.path(), &["init", "-q", "-b", "main", "work"]);
        let write_tree = |files: &[(&str, &str)]| {
            for (path, text) in files {
                let path = work.join(path);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            env.git(&work, &["add", "-A"]);
            String::from_utf8(env.git(&work, &["write-tree"]))
                .unwrap()
                .trim()
                .to_owned()
        };
        let base = write_tree(&[("g", "0\n")]);
        let p = dated_commit(&env, &work, &base, &[], 1000);
        env.git(&work, &["update-ref", "refs/heads/main", &p]);
        env.git(&work, &["repack", "-q", "-a", "-d", "-b"]);
        let t = write_tree(&[("d/f", "new\n")]);
        let a = dated_commit(&env, &work, &t, &[&p], 1200);
        let x = write_tree(&[("g", "1\n")]);
        let b = dated_commit(&env, &work, &x, &[&a], 1300);
        assert_eq!(write_tree(&[("g", "0\n")]), t);
        let c = dated_commit(&env, &work, &t, &[&b], 1400);
        let h = write_tree(&[("h", "h\n")]);
        let d = dated_commit(&env, &work, &h, &[&c], 1500);
        let tip = dated_commit(&env, &work, &h, &[&d, &a], 9000);
        env.git(&work, &["update-ref", "refs/heads/main", &tip]);
        let url = format!("file://{}", work.display());
        for protocol in ["protocol.version=0", "protocol.version=2"] {
            let ours = env.path().join(format!("ours-{protocol}"));
            bare_clone_through_sluice(&env, &url, &ours, protocol);
            assert_eq!(refs(&env, &ours), refs(&env, &work.join(".git")));
        }
    }
}
