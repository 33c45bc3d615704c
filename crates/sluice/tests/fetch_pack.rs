//! `sluice fetch-pack` receives what git's `fetch-pack` receives: the same refs printed, the
//! same objects stored (judged by `git fsck --strict` once the refs are set), from git's
//! upload-pack and from Sluice's; a bad server leaves the repository as it was.

use crate::upload_pack::{add_loose_commit, fsck, snapshot, source, upload_pack};
use crate::util::{gits, stderr, stdout, Env};
use std::path::Path;

/// Sets the refs `fetch-pack` printed (`<id> <name>` lines), so that fsck judges reachability.
fn set_refs(env: &Env, repo: &Path, printed: &str) {
    for line in printed.lines() {
        let Some((id, name)) = line.split_once(' ') else {
            continue;
        };
        if name.starts_with("refs/") {
            env.git(repo, &["update-ref", name, id]);
        }
    }
}

#[test]
fn fetch_pack_receives_what_git_fetch_pack_receives() {
    for git in gits() {
        let env = Env::with_git(git);
        let src = source(&env);
        add_loose_commit(&env, &src, 1);
        let src_str = src.to_str().unwrap();
        for (name, server, refs) in [
            ("all", None, &["--all"][..]),
            ("all-sluice", Some(upload_pack()), &["--all"][..]),
            (
                "named",
                None,
                &["refs/heads/main", "refs/tags/v1.0", "refs/tags/light"][..],
            ),
        ] {
            let ours = env.init(&format!("ours-{name}"), true);
            let theirs = env.init(&format!("theirs-{name}"), true);
            let option = server.map(|s| format!("--upload-pack={s}"));
            // Options, then the repository, then the refs, as git's fetch-pack takes them.
            let mut ordered = vec!["fetch-pack", "-q", "-k"];
            ordered.extend(option.as_deref());
            ordered.extend(refs.iter().copied().filter(|r| r.starts_with('-')));
            ordered.push(src_str);
            ordered.extend(refs.iter().copied().filter(|r| !r.starts_with('-')));
            let out = env.sluice(&ours, &ordered, b"");
            assert!(out.status.success(), "{name}: {}", stderr(&out));
            let theirs_out = env.git_with_input(&theirs, &ordered, b"");
            assert!(
                theirs_out.status.success(),
                "{name}: {}",
                stderr(&theirs_out)
            );
            let refs_of = |printed: &str| -> Vec<String> {
                printed
                    .lines()
                    .filter(|l| !l.starts_with("keep\t"))
                    .map(str::to_owned)
                    .collect()
            };
            assert_eq!(
                refs_of(&stdout(&out)),
                refs_of(&stdout(&theirs_out)),
                "{name}"
            );
            set_refs(&env, &ours, &stdout(&out));
            fsck(&env, &ours);
        }
    }
}

#[test]
fn bad_servers_leave_the_repository_as_it_was() {
    let env = Env::new();
    let src = source(&env);
    let repo = env.init("receiver.git", true);
    let before = snapshot(&repo);
    let id = "1".repeat(40);
    let advertisement = "printf '000eversion 2\\n0012fetch=shallow\\n0000'";
    let line = format!("{id} refs/heads/../x");
    let bad_name = format!(
        "{advertisement}; printf '%04x%s\\n' {} '{line}'; printf 0000; sleep 1; true",
        line.len() + 5
    );
    for (name, server, message) in [
        (
            "garbage",
            "printf garbage; true".to_owned(),
            "protocol error: bad line length character: garb",
        ),
        (
            "neither v2 nor v0",
            "printf '000anot v2'; true".to_owned(),
            "bad object id",
        ),
        ("bad ref name", bad_name, "bad name"),
        ("hangs up", format!("{advertisement}; true"), ""),
    ] {
        let option = format!("--upload-pack={server}");
        let out = env.sluice(
            &repo,
            &["fetch-pack", "--all", &option, src.to_str().unwrap()],
            b"",
        );
        assert_eq!(out.status.code(), Some(128), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{name}: {}", stderr(&out));
        assert!(snapshot(&repo) == before, "{name} changed the repository");
    }
}
