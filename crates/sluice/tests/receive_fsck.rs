//! receive-pack's fsck settings as git's: `receive.fsck.<msg-id>` (`ignore`, `warn`, a bad
//! type refused before anything is advertised), `receive.fsck.skipList` (the object skipped;
//! a list that cannot be read or holds a bad name fails the unpacker), through unpack-objects
//! and index-pack alike. A commit without an email is pushed by git's client to git's
//! receive-pack and to Sluice's: the same exit code, client output, refs and objects after.

use crate::util::{gits, stderr, Env};

#[test]
fn receive_fsck_settings_are_taken_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let client = env.init("client", false);
        let tree = String::from_utf8(env.git(&client, &["write-tree"])).unwrap();
        let text = format!(
            "tree {}\nauthor A 1 +0000\ncommitter C <c@x> 1 +0000\n\nbad\n",
            tree.trim()
        );
        let hash = [
            "hash-object",
            "--literally",
            "-t",
            "commit",
            "-w",
            "--stdin",
        ];
        let out = crate::util::run_with_input(env.git_command(&client, &hash), text.as_bytes());
        let bad = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        env.git(&client, &["update-ref", "refs/heads/main", &bad]);
        let skip = env.path().join("skip");
        std::fs::write(&skip, format!("{bad}\n")).unwrap();
        let bad_skip = env.path().join("bad-skip");
        std::fs::write(&bad_skip, "zzz\n").unwrap();
        let settings: [(&str, String); 7] = [
            ("receive.fsckObjects", "true".to_owned()),
            ("receive.fsck.missingEmail", "ignore".to_owned()),
            ("receive.fsck.missingEmail", "warn".to_owned()),
            ("receive.fsck.missingEmail", "info".to_owned()),
            ("receive.fsck.skipList", skip.display().to_string()),
            ("receive.fsck.skipList", "/nonexistent".to_owned()),
            ("receive.fsck.skipList", bad_skip.display().to_string()),
        ];
        let server = env.path().join("server.git");
        for (key, value) in &settings {
            for unpack_limit in ["100", "1"] {
                let mut seen = Vec::new();
                for sluice in [false, true] {
                    let _ = std::fs::remove_dir_all(&server);
                    env.git(
                        env.path(),
                        &["init", "-q", "--bare", server.to_str().unwrap()],
                    );
                    env.git(&server, &["config", "receive.fsckObjects", "true"]);
                    env.git(&server, &["config", "receive.unpackLimit", unpack_limit]);
                    env.git(&server, &["config", key, value]);
                    let receive_pack = match sluice {
                        true => format!(
                            "--receive-pack={} receive-pack",
                            env!("CARGO_BIN_EXE_sluice")
                        ),
                        false => format!("--receive-pack={} receive-pack", git.display()),
                    };
                    let push = ["push", &receive_pack, server.to_str().unwrap(), "main"];
                    let out = crate::util::run_with_input(env.git_command(&client, &push), b"");
                    let refs = String::from_utf8(env.git(&server, &["for-each-ref"])).unwrap();
                    let objects = String::from_utf8(env.git(&server, &["count-objects", "-v"]));
                    let counts: Vec<String> = (objects.unwrap().lines())
                        .filter(|l| l.starts_with("count:") || l.starts_with("in-pack:"))
                        .map(str::to_owned)
                        .collect();
                    seen.push((out.status.code(), stderr(&out), refs, counts));
                }
                assert_eq!(
                    seen[1],
                    seen[0],
                    "{} {key}={value} unpackLimit {unpack_limit}",
                    git.display()
                );
            }
        }
    }
}
