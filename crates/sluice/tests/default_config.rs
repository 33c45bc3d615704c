//! The settings every git command reads with its configuration (`core.*`, `branch.*`,
//! `push.default`): a value git refuses stops each Sluice command that works in a repository,
//! before it does anything, in git's words; the values git takes are taken. Twin repositories,
//! one command each by git and by Sluice: exit code and messages compared. (git 2.39 took some
//! values later gits refuse; those are compared with the later gits.)

use crate::util::{gits, stderr, Env};

#[test]
fn default_settings_are_refused_as_gits() {
    let settings = [
        "core.fileMode=bogus",
        "core.trustctime=bogus",
        "core.autocrlf=bogus",
        "core.autocrlf=Input",
        "core.safecrlf=warn",
        "core.logAllRefUpdates=always",
        "branch.autoSetupMerge=inherit",
        "branch.autoSetupMerge=bogus",
        "branch.autoSetupRebase=bogus",
        "core.checkStat=bogus",
        "core.createObject=bogus",
        "core.compression=12",
        "core.looseCompression=-2",
        "core.bigFileThreshold=-1",
        "core.bigFileThreshold=10m",
        "core.abbrev=3",
        "core.abbrev=true",
        "core.abbrev=no",
        "core.abbrev=12",
        "push.default=bogus",
    ];
    let commands: [&[&str]; 4] = [
        &["fetch", "-q", "origin"],
        &["push", "-q", "origin", "main"],
        &["gc", "-q"],
        &["checkout", "-q", "-b", "other"],
    ];
    // What git 2.39 took and later gits refuse, as Sluice does: compared with the later ones.
    let newer_refusals = ["core.checkStat=bogus"];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let older = env.git_version() < (2, 40);
        let up = env.init("up", false);
        env.git(&up, &["commit", "-q", "--allow-empty", "-m", "one"]);
        env.git(&up, &["branch", "-M", "main"]);
        for setting in settings {
            if older && newer_refusals.contains(&setting) {
                continue;
            }
            for command in commands {
                let mut said = Vec::new();
                for sluice in [false, true] {
                    let dir = env.path().join(format!("twin-{sluice}"));
                    let _ = std::fs::remove_dir_all(&dir);
                    let dest = dir.to_str().unwrap();
                    env.git(env.path(), &["clone", "-q", up.to_str().unwrap(), dest]);
                    // In the repository's file, as a user sets it (the file and line are named).
                    let (key, value) = setting.split_once('=').unwrap();
                    env.git(&dir, &["config", key, value]);
                    let out = env.sluice_or_git(sluice, &dir, command);
                    let mut text = stderr(&out);
                    if older {
                        // 2.39 names no file for some numbers; 2.47 does, as Sluice.
                        text = text.replace(" in file .git/config", "");
                    }
                    said.push((out.status.code(), text));
                }
                assert_eq!(
                    said[1],
                    said[0],
                    "{setting} {command:?} with {}",
                    git.display()
                );
            }
        }
    }
}
