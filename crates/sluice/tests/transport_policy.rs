//! Which transports may be used, as git decides it before connecting: `protocol.allow`,
//! `protocol.<name>.allow` (`always`, `never`, `user`), `GIT_ALLOW_PROTOCOL` (overriding the
//! configuration) and `GIT_PROTOCOL_FROM_USER=0` (what git sets for a submodule's URL), for
//! clone, fetch and push over the local transport. Compared beside git 2.39 and 2.47: exit
//! code, stderr, whether the clone was left behind, and the refs of every repository.

use crate::util::{gits, stderr, Env};
use std::path::Path;

fn refs(env: &Env, repo: &Path) -> String {
    String::from_utf8(env.git(repo, &["for-each-ref"])).unwrap()
}

#[test]
fn transports_are_allowed_and_refused_as_git_allows_them() {
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)]);
    let clones: &[Case<'_>] = &[
        (&["-c", "protocol.file.allow=never"], &[]),
        (&["-c", "protocol.allow=never"], &[]),
        (
            &[
                "-c",
                "protocol.allow=never",
                "-c",
                "protocol.file.allow=always",
            ],
            &[],
        ),
        (&["-c", "protocol.file.allow=user"], &[]),
        (&[], &[("GIT_ALLOW_PROTOCOL", "ssh:https")]),
        (
            &["-c", "protocol.file.allow=never"],
            &[("GIT_ALLOW_PROTOCOL", "file")],
        ),
        (&[], &[("GIT_PROTOCOL_FROM_USER", "0")]),
        (
            &["-c", "protocol.file.allow=always"],
            &[("GIT_PROTOCOL_FROM_USER", "0")],
        ),
        (&["-c", "protocol.allow=bogus"], &[]),
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        env.git(&src, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let file_url = format!("file://{}", src.display());
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let mut said = Vec::new();
            for (i, (config, vars)) in clones.iter().enumerate() {
                for (j, url) in ["src", file_url.as_str()].into_iter().enumerate() {
                    let name = format!("clone-{sluice}-{i}-{j}");
                    let mut args = config.to_vec();
                    args.extend(["clone", "-q", url, &name]);
                    let mut command = env.sluice_or_git_command(sluice, env.path(), &args);
                    command.envs(vars.iter().copied());
                    let out = crate::util::run_with_input(command, b"");
                    let left = env.path().join(&name).exists();
                    said.push((i, j, out.status.code(), stderr(&out), left));
                }
            }
            // `ext::`, git's transport that runs the command its URL names: refused by default.
            let marker = env.path().join("ran");
            let ext = format!("ext::sh -c touch% {}", marker.display());
            let name = format!("ext-{sluice}");
            let out = env.sluice_or_git(sluice, env.path(), &["clone", "-q", &ext, &name]);
            assert!(!marker.exists());
            let left = env.path().join(&name).exists();
            said.push((99, 0, out.status.code(), stderr(&out), left));
            // A fetch and a push from a clone, each refused.
            let clone = env.path().join(format!("work-{sluice}"));
            env.git(env.path(), &["clone", "-q", "src", clone.to_str().unwrap()]);
            env.git(&clone, &["commit", "-q", "--allow-empty", "-m", "two"]);
            for args in [
                &["-c", "protocol.file.allow=never", "fetch", "-q", "origin"][..],
                &[
                    "-c",
                    "protocol.allow=never",
                    "push",
                    "-q",
                    "origin",
                    "HEAD:refs/heads/new",
                ],
            ] {
                let out = env.sluice_or_git(sluice, &clone, args);
                said.push((0, 0, out.status.code(), stderr(&out), false));
            }
            seen.push((said, refs(&env, &src), refs(&env, &clone)));
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}
