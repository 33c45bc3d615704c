//! `uploadpack.packObjectsHook`: git's clients cloning and fetching from git's upload-pack and
//! from Sluice's with the same hook (which logs what it is given, then runs the real
//! pack-objects): the same command line and the same revisions on its stdin, the same refs;
//! and a hook set in the served repository's own configuration is never run.

use crate::upload_pack::source;
use crate::util::{gits, stderr, Env};
use std::path::Path;

fn hook(env: &Env, log: &Path) -> String {
    let path = env.path().join("hook.sh");
    let script = format!(
        "#!/bin/sh\necho \"ARGS: $*\" >> '{0}'\ntee -a '{0}' | \"$@\"\n",
        log.display()
    );
    crate::util::script(&path, &script);
    path.display().to_string()
}

/// The log's lines, the haves (after `--not`) sorted: which common commits a server found is
/// its negotiation's business, compared as a set.
fn logged(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut lines: Vec<String> = Vec::new();
    let mut haves: Vec<String> = Vec::new();
    let mut after_not = false;
    for line in text.lines() {
        match line {
            "--not" => after_not = true,
            "" => {
                haves.sort();
                lines.append(&mut haves);
                after_not = false;
            }
            _ if after_not => haves.push(line.to_owned()),
            _ if line.starts_with("ARGS: ") => lines.push(line.to_owned()),
            _ => lines.push(line.to_owned()),
        }
    }
    lines
}

#[test]
fn pack_objects_hook_is_run_as_gits_upload_pack_runs_it() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = source(&env);
        let log = env.path().join("hook.log");
        let hook = hook(&env, &log);
        let servers = [
            git.display().to_string(),
            env!("CARGO_BIN_EXE_sluice").to_owned(),
        ];
        for version in ["0", "2"] {
            for (e, extra) in [
                &[][..],
                &["--depth=1"],
                &["--filter=blob:none", "--no-checkout"],
                &["--no-checkout", "--progress"],
            ]
            .iter()
            .enumerate()
            {
                let mut outcomes = Vec::new();
                for (s, server) in servers.iter().enumerate() {
                    let _ = std::fs::remove_file(&log);
                    let upload_pack = format!("{server} -c uploadpack.packObjectsHook={hook} -c uploadpack.allowFilter=true upload-pack");
                    let dir = env.path().join(format!("c{version}-{e}-{s}"));
                    let _ = std::fs::remove_dir_all(&dir);
                    let mut args = vec![
                        "-c".to_owned(),
                        format!("protocol.version={version}"),
                        "clone".into(),
                        "-q".into(),
                        "--no-local".into(),
                    ];
                    args.extend(extra.iter().map(|a| a.to_string()));
                    args.extend([
                        "-u".into(),
                        upload_pack.clone(),
                        src.display().to_string(),
                        dir.display().to_string(),
                    ]);
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let out = env.git_with_input(env.path(), &args, b"");
                    assert!(
                        out.status.success(),
                        "{server} v{version} {extra:?}: {}",
                        stderr(&out)
                    );
                    let cloned = logged(&log);
                    // A fetch of a new commit, with haves.
                    let more = env.git(
                        &src,
                        &["commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "more"],
                    );
                    env.git(
                        &src,
                        &[
                            "update-ref",
                            "HEAD",
                            String::from_utf8(more).unwrap().trim(),
                        ],
                    );
                    let _ = std::fs::remove_file(&log);
                    let fetch = [
                        "-c",
                        &format!("protocol.version={version}"),
                        "fetch",
                        "-q",
                        "--upload-pack",
                        &upload_pack,
                        "origin",
                    ];
                    let out = env.git_with_input(&dir, &fetch, b"");
                    assert!(out.status.success(), "{server} fetch: {}", stderr(&out));
                    env.git(&src, &["update-ref", "HEAD", "HEAD~1"]);
                    let refs = String::from_utf8(env.git(&dir, &["for-each-ref"])).unwrap();
                    outcomes.push((cloned, logged(&log), refs));
                }
                assert!(!outcomes[0].0.is_empty(), "git's hook ran");
                assert_eq!(
                    outcomes[1],
                    outcomes[0],
                    "{} v{version} {extra:?}",
                    git.display()
                );
            }
        }
        // The served repository's own setting is not protected: never run.
        env.git(&src, &["config", "uploadpack.packObjectsHook", &hook]);
        let _ = std::fs::remove_file(&log);
        let upload_pack = format!("{} upload-pack", servers[1]);
        let out = env.git_with_input(
            env.path(),
            &[
                "clone",
                "-q",
                "--no-local",
                "-u",
                &upload_pack,
                src.to_str().unwrap(),
                "local",
            ],
            b"",
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!log.exists(), "a repository's own hook ran");
    }
}
