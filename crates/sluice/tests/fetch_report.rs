//! The lines of a fetch's report laid out as git lays them out: the remote names' column as
//! wide as the longest name whose line fits the terminal (`COLUMNS`, else 80), in the full and
//! the compact (`fetch.output`) formats. Each fetch runs in twin clones, one by git; their
//! exit codes and messages must be the same.

use crate::util::{gits, stderr, Env};

#[test]
fn names_column_fits_the_terminal_as_gits() {
    // Remote names of these lengths: both sides of the full format's limit (a line whose two
    // names take 55 columns or more is left out) and of the compact one's.
    let lengths = [12, 20, 23, 24, 25, 29, 30, 40];
    let layouts: [(&[&str], Option<&str>); 4] = [
        (&[], None),
        (&[], Some("200")),
        (&["-c", "fetch.output=compact"], None),
        (&["-c", "fetch.output=compact"], Some("60")),
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        env.git(&src, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let url = src.to_str().unwrap();
        for (settings, columns) in layouts {
            for length in lengths {
                let branch = "b".repeat(length);
                let twin = |sluice: bool| env.path().join(format!("twin-{length}-{sluice}"));
                for sluice in [false, true] {
                    let _ = std::fs::remove_dir_all(twin(sluice));
                    env.git(
                        env.path(),
                        &["clone", "-q", url, twin(sluice).to_str().unwrap()],
                    );
                }
                // main moves too: its line is the one the column's width shows in.
                env.git(&src, &["commit", "-q", "--allow-empty", "-m", "more"]);
                env.git(&src, &["branch", "-f", &branch]);
                let mut said = Vec::new();
                for sluice in [false, true] {
                    let mut args = settings.to_vec();
                    args.push("fetch");
                    let mut command = env.sluice_or_git_command(sluice, &twin(sluice), &args);
                    if let Some(columns) = columns {
                        command.env("COLUMNS", columns);
                    }
                    let out = crate::util::run_with_input(command, b"");
                    said.push((out.status.code(), stderr(&out)));
                }
                env.git(&src, &["branch", "-D", &branch]);
                assert_eq!(
                    said[1],
                    said[0],
                    "{settings:?} COLUMNS={columns:?}, a name of {length} with {}",
                    git.display()
                );
            }
        }
    }
}

/// A shallow fetch judges its updates as git does, within the cut: a branch that moved on and
/// is fetched `--depth=1` has a new tip without parents, so the old tip is no ancestor (a
/// forced update); deepened, the history is whole again where the cut moved.
#[test]
fn a_shallow_fetch_judges_updates_within_the_cut_as_git() {
    let fetches: [&[&str]; 4] = [
        &["fetch", "--depth=1"],
        &["fetch", "--depth=1", "--dry-run"],
        &["fetch", "--depth=2"],
        &["fetch"],
    ];
    for git in gits() {
        let env = Env::with_git(git.clone());
        let src = env.init("src", false);
        env.git(&src, &["commit", "-q", "--allow-empty", "-m", "one"]);
        let url = format!("file://{}", src.display());
        for args in fetches {
            let twins = [false, true].map(|sluice| env.path().join(format!("twin-{sluice}")));
            for twin in &twins {
                let _ = std::fs::remove_dir_all(twin);
                env.git(env.path(), &["clone", "-q", &url, twin.to_str().unwrap()]);
            }
            env.git(&src, &["commit", "-q", "--allow-empty", "-m", "more"]);
            let mut said = Vec::new();
            for (sluice, twin) in [false, true].into_iter().zip(&twins) {
                let out = env.sluice_or_git(sluice, twin, args);
                said.push((out.status.code(), stderr(&out)));
            }
            assert_eq!(said[1], said[0], "{args:?} with {}", git.display());
        }
    }
}
