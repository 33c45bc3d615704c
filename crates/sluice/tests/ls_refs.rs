//! v2's ls-refs as git's upload-pack answers it under `lsrefs.unborn`: a HEAD naming a branch
//! that does not exist yet, beside branches that do, is named (`unborn HEAD`) when the setting
//! allows it, and the capability says so only when it advertises it.

use crate::upload_pack::{pkt, source};
use crate::util::{gits, run_with_input, stderr, Env};

/// What the server says: its capability advertisement's `ls-refs` line, and its answer to an
/// ls-refs that asks for unborn HEADs.
fn ls_refs(env: &Env, sluice: bool, repo: &str) -> (String, String) {
    let advertise = ["upload-pack", "--stateless-rpc", "--advertise-refs", repo];
    let mut command = env.sluice_or_git_command(sluice, env.path(), &advertise);
    command.env("GIT_PROTOCOL", "version=2");
    let out = run_with_input(command, b"");
    assert!(out.status.success(), "{sluice}: {}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let capability = text
        .split('\n')
        .find_map(|line| line.find("ls-refs").map(|at| line[at..].to_owned()))
        .expect("an ls-refs capability");
    let request = [
        pkt("command=ls-refs\n"),
        b"0001".to_vec(),
        pkt("symrefs\n"),
        pkt("unborn\n"),
        pkt("ref-prefix HEAD\n"),
        pkt("ref-prefix refs/heads/\n"),
        b"0000".to_vec(),
    ]
    .concat();
    let mut command = env.sluice_or_git_command(
        sluice,
        env.path(),
        &["upload-pack", "--stateless-rpc", repo],
    );
    command.env("GIT_PROTOCOL", "version=2");
    let out = run_with_input(command, &request);
    assert!(out.status.success(), "{sluice}: {}", stderr(&out));
    (
        capability,
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn lsrefs_unborn_settings_answer_as_gits_do() {
    for git in gits() {
        let env = Env::with_git(git);
        let repo = source(&env);
        env.git(&repo, &["symbolic-ref", "HEAD", "refs/heads/not-yet"]);
        let path = repo.to_str().unwrap();
        for setting in [None, Some("advertise"), Some("allow"), Some("ignore")] {
            match setting {
                Some(value) => env.git(&repo, &["config", "lsrefs.unborn", value]),
                None => Vec::new(),
            };
            let theirs = ls_refs(&env, false, path);
            let ours = ls_refs(&env, true, path);
            assert_eq!(ours, theirs, "lsrefs.unborn={setting:?}");
        }
        // A value git does not know is refused by both.
        env.git(&repo, &["config", "lsrefs.unborn", "sometimes"]);
        for sluice in [false, true] {
            let args = ["upload-pack", "--stateless-rpc", "--advertise-refs", path];
            let mut command = env.sluice_or_git_command(sluice, env.path(), &args);
            command.env("GIT_PROTOCOL", "version=2");
            let out = run_with_input(command, b"");
            assert!(
                !out.status.success(),
                "{sluice}: took lsrefs.unborn=sometimes"
            );
            assert!(
                stderr(&out).contains("lsrefs.unborn"),
                "{sluice}: {}",
                stderr(&out)
            );
        }
    }
}
