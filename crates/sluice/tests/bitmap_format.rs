//! The optional sections of a `.bitmap` file, as `pack.writeBitmapHashCache` and
//! `pack.writeBitmapLookupTable` choose them: Sluice's repack and multi-pack-index write them
//! where git's do (the header's flags as git's for the same settings), and git's
//! `rev-list --test-bitmap` reads each (through the lookup table, when there is one: git then
//! says `(N entries)`, not `(N entries loaded)`).

use crate::util::{gits, stderr, Env};
use std::path::{Path, PathBuf};

/// The settings tried, each as `-c` words.
const SETTINGS: [&[&str]; 4] = [
    &[],
    &["-c", "pack.writeBitmapLookupTable=true"],
    &["-c", "pack.writeBitmapHashCache=false"],
    &[
        "-c",
        "pack.writeBitmapLookupTable=true",
        "-c",
        "pack.writeBitmapHashCache=false",
    ],
];

#[test]
fn bitmap_sections_follow_the_settings_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let work = env.init("work", false);
        for i in 0..30 {
            std::fs::write(work.join(format!("f{}", i % 4)), format!("{i}\n")).unwrap();
            env.git(&work, &["add", "."]);
            env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
            if i == 12 {
                env.git(&work, &["branch", "older"]);
            }
        }
        for (n, settings) in SETTINGS.iter().enumerate() {
            let mut said = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("pack-{n}-{sluice}.git"));
                let target = repo.to_str().unwrap();
                let clone = ["clone", "-q", "--bare", "--no-local", "work", target];
                env.git(env.path(), &clone);
                let args = [*settings, &["repack", "-a", "-d", "-b", "-q"]].concat();
                let out = env.sluice_or_git_command(sluice, &repo, &args).output();
                let out = out.unwrap();
                assert!(out.status.success(), "{args:?}: {}", stderr(&out));
                let flags = bitmap_flags(&repo.join("objects/pack"), "pack-");
                said.push((flags, tested(&env, &repo, &["HEAD", "older"])));
            }
            assert_eq!(said[1], said[0], "{} repack {settings:?}", git.display());
        }
    }
}

#[test]
fn midx_bitmap_sections_follow_the_settings_as_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let work = env.init("work", false);
        for i in 0..4 {
            std::fs::write(work.join(format!("f{i}")), format!("{i}\n")).unwrap();
            env.git(&work, &["add", "."]);
            env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
            env.git(&work, &["repack", "-d", "-q"]);
        }
        for (n, settings) in SETTINGS.iter().enumerate() {
            let mut said = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("midx-{n}-{sluice}"));
                crate::util::copy_tree(&work, &repo);
                let args = [*settings, &["multi-pack-index", "write", "--bitmap"]].concat();
                let out = env.sluice_or_git_command(sluice, &repo, &args).output();
                let out = out.unwrap();
                assert!(out.status.success(), "{args:?}: {}", stderr(&out));
                let flags = bitmap_flags(&repo.join(".git/objects/pack"), "multi-pack-index-");
                said.push((flags, tested(&env, &repo, &["HEAD"])));
            }
            assert_eq!(said[1], said[0], "{} midx {settings:?}", git.display());
        }
    }
}

/// The header flags of the one bitmap in `pack_dir` whose name starts with `prefix`.
fn bitmap_flags(pack_dir: &Path, prefix: &str) -> u16 {
    let found: Vec<PathBuf> = std::fs::read_dir(pack_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(prefix) && name.ends_with(".bitmap")
        })
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    let bytes = std::fs::read(&found[0]).unwrap();
    u16::from_be_bytes([bytes[6], bytes[7]])
}

/// What git's `rev-list --test-bitmap` says of each of `tips` in `repo`, the entry count
/// left out (the commits chosen may differ); it must pass.
fn tested(env: &Env, repo: &Path, tips: &[&str]) -> Vec<String> {
    tips.iter()
        .map(|tip| {
            let out = env.git_command(repo, &["rev-list", "--test-bitmap", tip]);
            let out = crate::util::run_with_input(out, b"");
            let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
            assert!(
                out.status.success() && said.contains("OK!"),
                "{tip}: {said}"
            );
            let header = said.lines().find(|l| l.starts_with("Bitmap v1 test"));
            let header = header.unwrap_or_default();
            header.replace(|c: char| c.is_ascii_digit(), "")
        })
        .collect()
}

/// The phases of writing a bitmap, as git's pack-objects shows them with `--progress`: "Selecting
/// bitmap commits" counts how far the spacing of the selected commits went, and is not shown
/// for fewer than a hundred commits (every one taken); "Building bitmaps" counts those
/// selected. With every other phase's final line, for 40 and 150 commits.
#[test]
fn bitmap_phases_are_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        for commits in [40, 150] {
            let work = env.init(&format!("work{commits}"), false);
            for i in 0..commits {
                std::fs::write(work.join(format!("f{}", i % 5)), format!("{i}\n")).unwrap();
                env.git(&work, &["add", "."]);
                env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
            }
            let mut said = Vec::new();
            for sluice in [false, true] {
                let base = env.path().join(format!("pack-{commits}-{sluice}"));
                let args = ["pack-objects", "--revs", "--all", "--progress"];
                let args = [&args[..], &["--write-bitmap-index", base.to_str().unwrap()]].concat();
                let command = env.sluice_or_git_command(sluice, &work, &args);
                let out = crate::util::run_with_input(command, b"");
                assert!(out.status.success(), "{}", stderr(&out));
                let done = (stderr(&out).split(['\r', '\n']))
                    .filter(|line| line.ends_with(", done."))
                    .map(str::to_owned)
                    .collect::<Vec<_>>();
                assert!(done.iter().any(|l| l.starts_with("Building bitmaps")));
                said.push(done);
            }
            assert_eq!(said[1], said[0], "{commits} commits with {}", git.display());
        }
    }
}
