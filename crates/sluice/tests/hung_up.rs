//! A server that hangs up in the middle of its answer: the fetch says it in git's words (which
//! scripts that retry a fetch look for), exits as git exits, and changes nothing.

use crate::util::{gits, stderr, Env};
use std::path::Path;

/// A stand-in for upload-pack that advertises as git's does (in `version`), then leaves.
fn advertise_and_leave(env: &Env, version: u8) -> String {
    let script = env.path().join(format!("leaves-v{version}.sh"));
    let body = format!(
        "#!/bin/sh\nGIT_PROTOCOL=version={version} '{}' upload-pack --advertise-refs \"$1\" 2>/dev/null\nexit 0\n",
        env.git.display()
    );
    std::fs::write(&script, body).unwrap();
    let mut permissions = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions).unwrap();
    script.display().to_string()
}

fn refs(env: &Env, repo: &Path) -> Vec<u8> {
    env.git(repo, &["for-each-ref"])
}

#[test]
fn a_server_that_hangs_up_is_said_as_git_says_it() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let source = env.init("source", false);
        env.git(&source, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let source = source.to_str().unwrap().to_owned();
        for version in [0u8, 2] {
            let upload = format!("--upload-pack={}", advertise_and_leave(&env, version));
            let protocol = format!("protocol.version={version}");
            let args = ["-c", &protocol, "fetch", &upload, &source];
            let [ours, theirs] = [true, false].map(|sluice| {
                let repo = env.init(&format!("fetching-v{version}-{sluice}"), false);
                let out = env.sluice_or_git(sluice, &repo, &args);
                assert!(
                    refs(&env, &repo).is_empty(),
                    "{git:?} v{version}: a ref moved"
                );
                (out.status.code(), stderr(&out))
            });
            // git may find the pipe closed first when it writes its request, a race of its
            // own: it says "unable to write to remote: Broken pipe", or SIGPIPE ends it
            // silently. Then only Sluice's words are checked: git's for a hang-up, or for a
            // ref listing cut short.
            if theirs.0.is_none() || theirs.1.contains("Broken pipe") {
                assert_eq!(ours.0, Some(128), "{git:?} v{version}");
                let said = ["hung up unexpectedly", "expected flush after ref listing"];
                assert!(said.iter().any(|s| ours.1.contains(s)), "{}", ours.1);
                continue;
            }
            assert_eq!(ours, theirs, "{git:?} v{version}");
        }
    }
}
