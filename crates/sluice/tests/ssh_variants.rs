//! The ssh command line for every kind of ssh program git knows (`GIT_SSH_VARIANT`,
//! `ssh.variant`), against git's: the variant named, or (unset, `auto`) the program's name, or
//! for a name git does not know, the answer to `-G`; ports, `-4`, TortoisePlink's `-batch`, and
//! the "simple" variant's refusals in git's words.

use crate::util::{gits, stderr, Env};
use std::path::Path;

/// A stand-in for an ssh program called `name`: logs its arguments and fails; `okssh` also
/// answers `-G` as OpenSSH does (it succeeds), so it is taken for OpenSSH.
fn fake_ssh(env: &Env, name: &str, log: &Path) -> String {
    let path = env.path().join(name);
    let answer_g = match name {
        "okssh" => "case \"$1\" in -G) exit 0;; esac\n",
        _ => "",
    };
    let text = format!(
        "#!/bin/sh\necho \"{name}: $*\" >> '{}'\n{answer_g}exit 1\n",
        log.display()
    );
    crate::util::script(&path, &text);
    path.to_string_lossy().into_owned()
}

#[test]
fn every_ssh_variant_gets_gits_command_line() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let log = env.path().join("ssh.log");
        let programs = [
            "ssh",
            "plink",
            "putty",
            "tortoiseplink",
            "PLINK.EXE",
            "myssh",
            "okssh",
        ];
        let programs: Vec<String> = programs.iter().map(|p| fake_ssh(&env, p, &log)).collect();
        // `None`: GIT_SSH_VARIANT unset; "" and "bogus" name no variant (so OpenSSH).
        let variants = [
            None,
            Some(""),
            Some("ssh"),
            Some("simple"),
            Some("plink"),
            Some("putty"),
            Some("tortoiseplink"),
            Some("auto"),
            Some("bogus"),
        ];
        for variant in variants {
            for program in &programs {
                for url in ["ssh://u@host:2222/repo", "host:repo"] {
                    for flags in [&["-4"][..], &[]] {
                        let mut said = Vec::new();
                        for sluice in [false, true] {
                            let _ = std::fs::remove_file(&log);
                            let mut args = vec!["clone", "-q"];
                            args.extend(flags);
                            args.extend([url, "x"]);
                            let mut command = env.sluice_or_git_command(sluice, env.path(), &args);
                            command.env("GIT_SSH", program);
                            match variant {
                                Some(v) => command.env("GIT_SSH_VARIANT", v),
                                None => command.env_remove("GIT_SSH_VARIANT"),
                            };
                            let out = crate::util::run_with_input(command, b"");
                            let logged = std::fs::read_to_string(&log).unwrap_or_default();
                            let refusal: Vec<String> = (stderr(&out).lines())
                                .filter(|l| l.contains("variant"))
                                .map(str::to_owned)
                                .collect();
                            said.push((out.status.code(), logged, refusal));
                        }
                        let case =
                            format!("{} {variant:?} {program} {url} {flags:?}", git.display());
                        assert_eq!(said[1], said[0], "{case}");
                    }
                }
            }
        }
    }
}

/// `fetch -4`/`-6` and `push -4`/`-6` reach ssh as git's do.
#[test]
fn fetch_and_push_give_ssh_the_address_family() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let log = env.path().join("ssh.log");
        let ssh = fake_ssh(&env, "ssh", &log);
        let repo = env.init("repo", false);
        env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "one"]);
        env.git(&repo, &["remote", "add", "origin", "host:repo"]);
        for args in [
            &["fetch", "-4", "origin"][..],
            &["fetch", "--ipv6", "origin"],
            &["push", "-6", "origin", "HEAD:main"],
            &["push", "--ipv4", "origin", "HEAD:main"],
        ] {
            let mut said = Vec::new();
            for sluice in [false, true] {
                let _ = std::fs::remove_file(&log);
                let mut command = env.sluice_or_git_command(sluice, &repo, args);
                command.env("GIT_SSH", &ssh);
                let out = crate::util::run_with_input(command, b"");
                let logged = std::fs::read_to_string(&log).unwrap_or_default();
                said.push((out.status.code(), logged));
            }
            assert_eq!(said[1], said[0], "{} {args:?}", git.display());
        }
    }
}

/// Which host, port, user and path ssh is given for scp-like and `ssh://` URLs (bracketed
/// hosts and ports, IPv6, `%`-escapes, `~` paths), and what is said when the server says
/// nothing: as git's.
#[test]
fn ssh_urls_are_taken_apart_as_git_does() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let log = env.path().join("ssh.log");
        let ssh = fake_ssh(&env, "ssh", &log);
        for url in [
            "foo:bar",
            "./foo:bar",
            "[foo]:bar",
            "[foo:2222]:bar",
            "[u@foo:2222]:bar",
            "u@[::1]:bar",
            "u@[foo:22]:bar",
            "[::1]:bar",
            "[foo:]:bar",
            "[foo]:/abs",
            "foo:2222:bar",
            "foo:~/bar",
            "u@foo:bar",
            "ssh://[::1]:22/bar",
            "ssh://u@[fe80::1%25eth0]/bar",
            "ssh://foo:/bar",
            "ssh://[foo]:2222/bar",
            "git+ssh://foo/bar",
            "ssh+git://foo/~u/bar",
        ] {
            let mut said = Vec::new();
            for sluice in [false, true] {
                let _ = std::fs::remove_file(&log);
                let mut command =
                    env.sluice_or_git_command(sluice, env.path(), &["clone", url, "x"]);
                command.env("GIT_SSH", &ssh);
                let out = crate::util::run_with_input(command, b"");
                let logged = std::fs::read_to_string(&log).unwrap_or_default();
                said.push((out.status.code(), logged, stderr(&out)));
            }
            assert_eq!(said[1], said[0], "{} {url}", git.display());
        }
    }
}
