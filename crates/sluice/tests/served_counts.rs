//! What Sluice's upload-pack says of the pack it sends, beside git's upload-pack for the same
//! repository, as a git client's clone shows it (`remote: ...`): a pack copied whole from a
//! bitmapped repository is git's pack reuse (not counted, not called reused), objects
//! outside it are counted; `pack.allowPackReuse=false` and `pack.useBitmaps=false` make every
//! object counted and reused one by one, as with git.

use crate::util::{gits, stderr, Env};
use std::path::Path;

#[test]
fn served_counts_and_pack_reuse_are_gits() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let work = env.init("work", false);
        for i in 0..12 {
            std::fs::write(
                work.join(format!("f{}", i % 3)),
                format!("{i}\n").repeat(20),
            )
            .unwrap();
            env.git(&work, &["add", "."]);
            env.git(&work, &["commit", "-q", "-m", &format!("c{i}")]);
        }
        let served = env.path().join("served.git");
        let target = served.to_str().unwrap();
        env.git(
            env.path(),
            &["clone", "-q", "--bare", "--no-local", "work", target],
        );
        env.git(&served, &["repack", "-q", "-a", "-d", "-b"]);
        // Whole: every object in the bitmapped pack.
        compare(&env, &served, "repacked", Lines::All);
        // Then pushes: loose objects beside it.
        for i in 0..2 {
            std::fs::write(work.join("f0"), format!("pushed {i}\n")).unwrap();
            env.git(&work, &["commit", "-q", "-a", "-m", &format!("p{i}")]);
        }
        env.git(&work, &["push", "-q", target, "HEAD:refs/heads/master"]);
        compare(&env, &served, "pushed", Lines::All);
        for setting in ["pack.allowPackReuse", "pack.useBitmaps"] {
            env.git(&served, &["config", setting, "false"]);
            // The delta searches differ: the counts and what is reused whole are compared.
            compare(&env, &served, setting, Lines::Counts);
            env.git(&served, &["config", "--unset", setting]);
        }
    }
}

/// Which of the server's lines are compared.
#[derive(Clone, Copy, PartialEq)]
enum Lines {
    /// Every final line (the `Total` line without git 2.47's `(from N)`, which 2.39 lacks).
    All,
    /// The enumerating and counting lines, and how many objects went as a reused pack.
    Counts,
}

/// Clones `served` with git's client from git's upload-pack and from Sluice's, and compares
/// the server's final lines as `lines` says.
fn compare(env: &Env, served: &Path, label: &str, lines: Lines) {
    let mut said = Vec::new();
    for upload in [
        env.git.display().to_string(),
        env!("CARGO_BIN_EXE_sluice").into(),
    ] {
        let dest = env.path().join(format!("{label}-{}", said.len()));
        let url = format!("file://{}", served.display());
        let upload = format!("--upload-pack={upload} upload-pack");
        let args = [
            "clone",
            "--bare",
            "--progress",
            &upload,
            &url,
            dest.to_str().unwrap(),
        ];
        let out = crate::util::run_with_input(env.git_command(env.path(), &args), b"");
        assert!(out.status.success(), "{label}: {}", stderr(&out));
        env.git(&dest, &["fsck", "--strict"]);
        said.push(final_lines(&stderr(&out), lines));
    }
    assert_eq!(said[1], said[0], "{label} with {}", env.git.display());
}

/// The server's lines that end a phase (or say the total) in a clone's `stderr`, as `lines`
/// compares them.
fn final_lines(stderr: &str, lines: Lines) -> Vec<String> {
    (stderr.split(['\n', '\r']))
        .filter_map(|line| line.strip_prefix("remote: "))
        .map(str::trim_end)
        .filter(|line| line.ends_with(", done.") || line.starts_with("Total "))
        .filter_map(|line| {
            let line = match line.find(" (from ") {
                Some(at) => &line[..at],
                None => line,
            };
            match (lines, line.starts_with("Total ")) {
                (Lines::All, _) => Some(line.to_owned()),
                (Lines::Counts, true) => line.find("pack-reused").map(|at| line[at..].to_owned()),
                (Lines::Counts, false) => (!line.starts_with("Compressing")).then(|| line.into()),
            }
        })
        .collect()
}
