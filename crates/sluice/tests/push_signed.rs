//! `sluice push --signed` beside `git push --signed`, into git's receive-pack asking for push
//! certificates (`receive.certNonceSeed`): a key made with gpg for the committer, twin work
//! repositories and servers, and a `pre-receive` hook that says what git's receive-pack made
//! of the certificate (signature status, nonce status, signer, the certificate's text without
//! its time and nonce, which differ from push to push). Everything printed, the exit codes and
//! the servers' refs must be the same; a server that asks for no certificate refuses `--signed`
//! alike and takes `--signed=if-asked` unsigned. The same, the other way round: git pushing
//! signed into `sluice receive-pack` beside git's receive-pack.

use crate::util::{copy_tree, gits, said_by_push, script, Env};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Makes a signing key for the committer the tests' environment names, in `env`'s home.
fn make_key(env: &Env) {
    let gnupg = env.path().join("home/.gnupg");
    std::fs::create_dir_all(&gnupg).unwrap();
    Command::new("chmod")
        .arg("700")
        .arg(&gnupg)
        .status()
        .unwrap();
    let made = Command::new("gpg")
        .env("HOME", env.path().join("home"))
        .args(["--batch", "--passphrase", "", "--quick-gen-key"])
        .args([
            "C O Mitter <committer@example.com>",
            "default",
            "default",
            "never",
        ])
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
}

/// Stops the gpg agent the key's making started.
fn stop_agent(env: &Env) {
    let _ = Command::new("gpgconf")
        .env("HOME", env.path().join("home"))
        .args(["--kill", "gpg-agent"])
        .status();
}

/// `git/` and `sluice/`, each with `work` (one commit) and two servers: `signed.git` asks for
/// certificates, `plain.git` does not.
fn twins(env: &Env) -> [PathBuf; 2] {
    let seed = env.init("seed", false);
    env.git(&seed, &["commit", "-q", "--allow-empty", "-m", "one"]);
    let hook = "#!/bin/sh\n\
        echo \"status=$GIT_PUSH_CERT_STATUS nonce=$GIT_PUSH_CERT_NONCE_STATUS signer=$GIT_PUSH_CERT_SIGNER\"\n\
        git cat-file blob \"$GIT_PUSH_CERT\" | sed -e '/BEGIN PGP/,$d' -e 's/^nonce .*/nonce N/' \
        -e 's/^\\(pusher .*>\\) [0-9]* [-+][0-9]*$/\\1 T/'\n";
    ["git", "sluice"].map(|side| {
        let dir = env.path().join(side);
        std::fs::create_dir(&dir).unwrap();
        copy_tree(&seed, &dir.join("work"));
        for server in ["signed.git", "plain.git"] {
            env.git(&dir, &["init", "-q", "--bare", server]);
        }
        let signed = dir.join("signed.git");
        env.git(&signed, &["config", "receive.certNonceSeed", "a secret"]);
        script(&signed.join("hooks/pre-receive"), hook);
        dir
    })
}

/// Exit code, stdout and stderr of a push from one side's work repository, without the line
/// git's transport adds when it abandons a connection ("the remote end hung up unexpectedly").
fn push(env: &Env, side: &Path, sluice: bool, args: &[&str]) -> SideRan {
    said_by_push(&env.sluice_or_git(sluice, &side.join("work"), &[&["push"], args].concat()))
}

fn refs(env: &Env, side: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for server in ["signed.git", "plain.git"] {
        all.extend(env.git(&side.join(server), &["for-each-ref"]));
    }
    all
}

/// Exit code, stdout and stderr of one side's command.
type SideRan = (Option<i32>, String, String);

/// The pushes both tests make: signed into the server that asks, `if-asked` there, signed
/// into the one that does not ask (refused), `if-asked` there (unsigned, with a warning).
const STEPS: [&[&str]; 4] = [
    &["--signed", "../signed.git", "HEAD:refs/heads/main"],
    &[
        "--signed=if-asked",
        "../signed.git",
        "HEAD:refs/heads/other",
    ],
    &["--signed", "../plain.git", "HEAD:refs/heads/main"],
    &["--signed=if-asked", "../plain.git", "HEAD:refs/heads/main"],
];

/// With each git, a key and twins, then each step run on both sides by `run` (`true`: the
/// side Sluice takes part in): the same output, exit code and refs, and a first push whose
/// certificate the server checked good, with the nonce it gave.
fn compare(steps: &[&[&str]], run: impl Fn(&Env, &Path, bool, &[&str]) -> SideRan) {
    compare_with(steps, run, true);
}

/// [`compare`] for steps that all fail.
fn compare_failing(steps: &[&[&str]], run: impl Fn(&Env, &Path, bool, &[&str]) -> SideRan) {
    compare_with(steps, run, false);
}

fn compare_with(
    steps: &[&[&str]],
    run: impl Fn(&Env, &Path, bool, &[&str]) -> SideRan,
    first_signed: bool,
) {
    if Command::new("gpg").arg("--version").output().is_err() {
        panic!("gpg is needed (Debian's gnupg package; .ci/run installs it)");
    }
    for git in gits() {
        let env = Env::with_git(git.clone());
        make_key(&env);
        let sides = twins(&env);
        for (i, step) in steps.iter().enumerate() {
            let theirs = run(&env, &sides[0], false, step);
            let ours = run(&env, &sides[1], true, step);
            assert_eq!(ours, theirs, "{step:?} with {git:?}");
            assert_eq!(refs(&env, &sides[1]), refs(&env, &sides[0]), "{step:?}");
            match first_signed {
                true => assert!(i > 0 || ours.2.contains("status=G nonce=OK"), "{ours:?}"),
                false => assert_eq!(ours.0, Some(128), "{ours:?}"),
            }
        }
        env.git(&sides[1].join("signed.git"), &["fsck", "--strict"]);
        stop_agent(&env);
    }
}

#[test]
fn signed_pushes_carry_certificates_git_accepts() {
    compare(&STEPS, push);
}

#[test]
fn a_key_gpg_lacks_fails_the_push_as_in_git() {
    // A key gpg has no secret for: gpg's words relayed (git 2.39 leaves them out: compared
    // without them there), 128, nothing pushed.
    let without_key = |env: &Env, side: &Path, sluice: bool, step: &[&str]| {
        let work = side.join("work");
        env.git(&work, &["config", "user.signingKey", "nobody@nowhere"]);
        let (code, stdout, stderr) = push(env, side, sluice, step);
        let newest = env.git_command(&work, &[]).get_program() == "/usr/local/bin/git";
        let stderr = match newest {
            true => stderr,
            false => (stderr.lines())
                .filter(|l| l.starts_with("fatal:") || l.starts_with("error:"))
                .map(|l| format!("{}\n", l.trim_end_matches(':')))
                .collect(),
        };
        (code, stdout, stderr)
    };
    compare_failing(&STEPS[..1], without_key);
}

#[test]
fn sluice_receive_pack_asks_for_and_checks_certificates_as_git() {
    let option = format!(
        "--receive-pack={} receive-pack",
        env!("CARGO_BIN_EXE_sluice")
    );
    // git pushes on both sides; on Sluice's, into Sluice's receive-pack.
    compare(&STEPS[..3], |env, side, sluice, step| {
        let mut args = vec!["push"];
        if sluice {
            args.push(&option);
        }
        args.extend(step);
        said_by_push(&env.git_with_input(&side.join("work"), &args, b""))
    });
}
