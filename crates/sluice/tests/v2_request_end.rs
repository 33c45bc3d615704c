//! How upload-pack takes the end of a protocol v2 conversation, as git's does: a stream that
//! ends between requests, even inside a packet's length or payload, ends it well; one that
//! ends inside a request is a hang-up; a malformed length is a protocol error (in v0 too).
//! Nothing is sent back but what answers the requests (no `ERR` packet for a broken stream).

use crate::upload_pack::source;
use crate::util::{gits, run_with_input, stderr, Env};

/// What follows the capability advertisement (which names each program differently).
fn after_advertisement(out: &[u8]) -> Vec<u8> {
    let at = out
        .windows(4)
        .position(|w| w == b"0000")
        .map_or(0, |at| at + 4);
    out[at..].to_vec()
}

#[test]
fn v2_streams_end_as_gits_do() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let repo = source(&env);
        let request = "0014command=ls-refs\n00010009peel\n0000";
        for tail in [
            "",
            "0",
            "00",
            "000",
            "0009",
            "0009pe",
            "0003",
            "zzzz",
            "0014command=ls-re",
        ] {
            let input = format!("{request}{tail}");
            let mut outcomes = Vec::new();
            for sluice in [false, true] {
                let args = ["upload-pack", repo.to_str().unwrap()];
                let mut command = env.sluice_or_git_command(sluice, env.path(), &args);
                command.env("GIT_PROTOCOL", "version=2");
                let out = run_with_input(command, input.as_bytes());
                outcomes.push((
                    out.status.code(),
                    stderr(&out),
                    after_advertisement(&out.stdout),
                ));
            }
            assert_eq!(outcomes[1], outcomes[0], "{} tail {tail:?}", git.display());
        }
        // Protocol v0: a malformed length, or a stream ending inside the first request.
        for input in ["zzzzwant", "ffff", "0032want 1234"] {
            let mut outcomes = Vec::new();
            for sluice in [false, true] {
                let args = ["upload-pack", repo.to_str().unwrap()];
                let command = env.sluice_or_git_command(sluice, env.path(), &args);
                let out = run_with_input(command, input.as_bytes());
                outcomes.push((out.status.code(), stderr(&out)));
            }
            assert_eq!(outcomes[1], outcomes[0], "{} v0 {input:?}", git.display());
        }
    }
}
