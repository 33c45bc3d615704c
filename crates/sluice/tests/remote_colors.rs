//! The server's messages coloured as git colours them (`color.remote`, `color.ui`,
//! `color.remote.<keyword>`): a keyword that starts a piece of a line, after blanks, as a whole
//! word in any case. A pre-receive hook speaks; git's and Sluice's push show it byte for byte
//! alike, through git's receive-pack (which relays hook output 128 bytes at a time, so a keyword
//! cut by that boundary is left plain) and each through its own.

use crate::util::{gits, stderr, Env};

/// Keywords that are coloured and words that only look like them, under 128 bytes.
const SHORT: &str = "error: bad thing\n  Warning: x\nhint: y\nsuccess! done\nerrorless\n\
ERROR z\nhints no\nwarning\n\tsuccess\n";

/// Lines long enough to cross git's 128-byte relay: `success` is cut at that boundary, and the
/// last line has no end (git shows it with no suffix).
fn long() -> String {
    format!("{}\n\tsuccess\nerror", "x".repeat(120))
}

#[test]
fn remote_messages_are_coloured_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let client = env.init("client", false);
        env.git(&client, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let server = env.path().join("server.git");
        let git_receive_pack = format!("--receive-pack={} receive-pack", git.display());
        let custom = [
            "-c",
            "color.remote=always",
            "-c",
            "color.remote.error=blue reverse",
            "-c",
            "color.remote.hint=#ff0080 ul",
            "-c",
            "color.remote.success=normal",
            "-c",
            "color.remote.warning=brightred 17 nobold",
        ];
        let settings: [&[&str]; 6] = [
            &[],
            &["-c", "color.remote=always"],
            &["-c", "color.remote=never", "-c", "color.ui=always"],
            &["-c", "color.ui=always"],
            &["-c", "color.ui=true"],
            &custom,
        ];
        let long = long();
        for setting in settings {
            for (said, receive_pack) in [
                (SHORT, None),
                (SHORT, Some(&git_receive_pack)),
                (long.as_str(), Some(&git_receive_pack)),
            ] {
                let mut shown = Vec::new();
                for sluice in [false, true] {
                    let _ = std::fs::remove_dir_all(&server);
                    env.git(
                        env.path(),
                        &["init", "-q", "--bare", server.to_str().unwrap()],
                    );
                    let text = said.replace('\n', "\\n").replace('\t', "\\t");
                    let hook = format!("#!/bin/sh\nprintf '{text}' >&2\n");
                    crate::util::script(&server.join("hooks/pre-receive"), &hook);
                    let mut args = setting.to_vec();
                    args.push("push");
                    args.extend(receive_pack.map(String::as_str));
                    args.extend([server.to_str().unwrap(), "HEAD:refs/heads/main"]);
                    let out = env.sluice_or_git(sluice, &client, &args);
                    shown.push((out.status.code(), stderr(&out)));
                }
                let case = format!("{} {setting:?} {said:?} {receive_pack:?}", git.display());
                assert_eq!(shown[1], shown[0], "{case}");
            }
        }
    }
}
