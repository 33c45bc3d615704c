//! gc and maintenance beside other runs of themselves, as git's: `gc.pid` (a gc of a live
//! process holds off another, `--force` runs anyway, a dead one's is taken over), gc in the
//! background (`--auto` with `gc.autoDetach`, `--detach`) with its `gc.log` kept when it said
//! anything and the next automatic gc then refused in git's words, `gc.logExpiry` checked,
//! and `objects/maintenance.lock`. Twinned with git 2.39 and 2.47 (`--detach` is 2.47's).

use crate::util::{copy_tree, gits, list_dir, stderr, Env};
use std::path::Path;
use std::time::{Duration, Instant};

/// A repository with a few commits and 1,500 loose objects no ref reaches, enough that
/// `gc --auto` with `gc.auto=1` finds some in the directory it samples.
fn crowded_repo(env: &Env, name: &str) -> std::path::PathBuf {
    let repo = env.init(name, false);
    env.commit_versions(&repo, "f", 3);
    crate::util::unreachable_blobs(env, &repo, 1500);
    repo
}

/// This machine's host name, as git's gc writes it into `gc.pid`.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// How many loose objects `repo` holds.
fn loose_objects(repo: &Path) -> usize {
    (std::fs::read_dir(repo.join(".git/objects"))
        .unwrap()
        .flatten())
    .filter(|e| e.file_name().len() == 2)
    .map(|e| list_dir(&e.path()).len())
    .sum()
}

/// Waits (at most a minute) until `done` holds for `repo`.
fn wait_for(repo: &Path, done: impl Fn(&Path) -> bool) {
    let start = Instant::now();
    while !done(repo) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{}",
            repo.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `gc.pid` naming a live process of this machine: `gc` refuses in git's words (128), `gc
/// --auto` does nothing and says nothing more, `gc --force` runs and removes the file; one
/// naming a process gone, or older than 12 hours, is taken over. Exit codes, stderr, whether
/// the refs were packed and whether `gc.pid` is left, against git's.
#[test]
fn gc_pid_holds_off_a_second_gc_as_in_git() {
    let mut sleeper = std::process::Command::new("sleep")
        .arg("120")
        .spawn()
        .unwrap();
    let live = format!("{} {}", sleeper.id(), host_name());
    // A process that has ended: its pid names no process (for the few seconds this runs).
    let mut ended = std::process::Command::new("true").spawn().unwrap();
    ended.wait().unwrap();
    let dead = format!("{} {}", ended.id(), host_name());
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = crowded_repo(&env, "seed");
        let cases: [(&str, &[&str]); 5] = [
            (live.as_str(), &["gc", "-q"]),
            (
                live.as_str(),
                &[
                    "-c",
                    "gc.auto=1",
                    "-c",
                    "gc.autoDetach=false",
                    "gc",
                    "--auto",
                ],
            ),
            (live.as_str(), &["gc", "-q", "--force"]),
            (dead.as_str(), &["gc", "-q"]),
            ("", &["gc", "-q"]),
        ];
        for (pid, args) in cases {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("pid-{sluice}"));
                let _ = std::fs::remove_dir_all(&repo);
                copy_tree(&seed, &repo);
                if !pid.is_empty() {
                    std::fs::write(repo.join(".git/gc.pid"), pid).unwrap();
                }
                if pid.is_empty() {
                    // Written long ago: no longer believed.
                    std::fs::write(repo.join(".git/gc.pid"), &live).unwrap();
                    let old = std::time::SystemTime::now() - Duration::from_secs(13 * 3600);
                    let file = std::fs::File::options()
                        .write(true)
                        .open(repo.join(".git/gc.pid"))
                        .unwrap();
                    file.set_modified(old).unwrap();
                }
                let out = env.sluice_or_git(sluice, &repo, args);
                env.git(&repo, &["fsck", "--no-progress"]);
                // Whether gc ran: its refs packed (the packs it writes are 2.47's in both).
                seen.push((
                    out.status.code(),
                    stderr(&out),
                    repo.join(".git/packed-refs").exists(),
                    repo.join(".git/gc.pid").exists(),
                ));
            }
            assert_eq!(seen[1], seen[0], "{} {pid:?} {args:?}", git.display());
        }
    }
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

/// `gc --auto` in the background (`gc.autoDetach`'s default) and 2.47's `gc --detach`: the
/// command returns at once with git's words; the gc in the background packs the repository and
/// keeps what it said ("too many unreachable loose objects") in `gc.log`; the next `gc --auto`
/// shows it in git's words and does nothing; a bad `gc.logExpiry` is refused. Against git.
#[test]
fn detached_gc_runs_in_the_background_and_keeps_its_log_as_git_does() {
    let settled = |repo: &Path| {
        let git_dir = repo.join(".git");
        git_dir.join("gc.log").exists()
            && !git_dir.join("gc.log.lock").exists()
            && !git_dir.join("gc.pid").exists()
    };
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = crowded_repo(&env, "seed");
        let detach: &[&str] = &["-c", "gc.auto=1", "gc", "--detach", "-q"];
        let mut runs: Vec<&[&str]> = vec![&["-c", "gc.auto=1", "gc", "--auto"]];
        // git 2.39 has no --detach.
        if !git.to_string_lossy().starts_with("/usr/bin") {
            runs.push(detach);
        }
        for args in runs {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("detached-{sluice}"));
                let _ = std::fs::remove_dir_all(&repo);
                copy_tree(&seed, &repo);
                let first = env.sluice_or_git(sluice, &repo, args);
                let first = (first.status.code(), stderr(&first));
                // `--detach` without `--auto` warns of nothing: its log goes at once.
                let plain = !args.contains(&"--auto");
                match plain {
                    true => wait_for(&repo, |repo| {
                        loose_objects(repo) == 0
                            && !repo.join(".git/gc.pid").exists()
                            && !repo.join(".git/gc.log.lock").exists()
                    }),
                    false => wait_for(&repo, settled),
                }
                env.git(&repo, &["fsck", "--strict", "--no-progress"]);
                let log = std::fs::read_to_string(repo.join(".git/gc.log")).ok();
                let again = ["-c", "gc.auto=1", "gc", "--auto"];
                let second = env.sluice_or_git(sluice, &repo, &again);
                let second = (second.status.code(), stderr(&second));
                let bad = ["-c", "gc.logExpiry=bogus", "gc", "--auto"];
                let refused = env.sluice_or_git(sluice, &repo, &bad);
                let refused = (refused.status.code(), stderr(&refused));
                let packs = (list_dir(&repo.join(".git/objects/pack")).iter())
                    .filter(|name| name.ends_with(".pack"))
                    .count();
                seen.push((first, log, second, refused, packs));
            }
            assert_eq!(seen[1], seen[0], "{} {args:?}", git.display());
        }
    }
}

/// `objects/maintenance.lock` held: `maintenance run` says git's warning and does nothing
/// (quiet with `--auto` or `-q`); 2.47's `maintenance run --detach` returns at once and its
/// task is done in the background. Against git.
#[test]
fn maintenance_runs_one_at_a_time_and_in_the_background_as_git() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = env.init("seed", false);
        env.commit_versions(&seed, "f", 3);
        let cases: [&[&str]; 3] = [
            &["maintenance", "run", "--task=pack-refs"],
            &["maintenance", "run", "--task=pack-refs", "--auto"],
            &["maintenance", "run", "--task=pack-refs", "--quiet"],
        ];
        for args in cases {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("locked-{sluice}"));
                let _ = std::fs::remove_dir_all(&repo);
                copy_tree(&seed, &repo);
                std::fs::write(repo.join(".git/objects/maintenance.lock"), "").unwrap();
                let out = env.sluice_or_git(sluice, &repo, args);
                let packed = repo.join(".git/packed-refs").exists();
                seen.push((out.status.code(), stderr(&out), packed));
            }
            assert_eq!(seen[1], seen[0], "{} {args:?}", git.display());
        }
        if git.to_string_lossy().starts_with("/usr/bin") {
            continue;
        }
        let mut seen = Vec::new();
        for sluice in [false, true] {
            let repo = env.path().join(format!("background-{sluice}"));
            copy_tree(&seed, &repo);
            let args = ["maintenance", "run", "--task=pack-refs", "--detach"];
            let out = env.sluice_or_git(sluice, &repo, &args);
            wait_for(&repo, |repo| {
                repo.join(".git/packed-refs").exists()
                    && !repo.join(".git/objects/maintenance.lock").exists()
            });
            let packed = std::fs::read_to_string(repo.join(".git/packed-refs")).unwrap();
            seen.push((out.status.code(), stderr(&out), packed));
        }
        assert_eq!(seen[1], seen[0], "{}", git.display());
    }
}

/// Expiry settings that are no date in the past (`gc.pruneExpire`, `gc.logExpiry`), and
/// numbers that are none (`pack.window`, `pack.depth` out of range), set on the command line
/// or in the repository's config file: refused in git's words (the value, and where it was set
/// when a file: for a number, as git 2.47 says it), exit 128, nothing changed.
#[test]
fn bad_settings_are_refused_as_git_refuses_them() {
    for git in gits() {
        let env = Env::with_git(git.clone());
        let seed = env.init("seed", false);
        env.commit_versions(&seed, "f", 2);
        // A setting written to the repository's config file, and the command.
        type Case<'a> = (Option<(&'a str, &'a str)>, &'a [&'a str]);
        let cases: [Case; 7] = [
            (None, &["-c", "gc.pruneExpire=garbage", "gc", "-q"]),
            (None, &["-c", "gc.logExpiry=bogus", "gc", "--auto"]),
            (Some(("gc.pruneExpire", "tomorrow")), &["gc", "-q"]),
            (
                Some(("gc.logExpiry", "garbage")),
                &["gc", "-q", "--prune=now"],
            ),
            (None, &["-c", "pack.window=xyz", "repack", "-a", "-d", "-q"]),
            (Some(("pack.window", "xyz")), &["repack", "-a", "-d", "-q"]),
            (Some(("pack.depth", "99999999999999999999")), &["gc", "-q"]),
        ];
        for (setting, args) in cases {
            let mut seen = Vec::new();
            for sluice in [false, true] {
                let repo = env.path().join(format!("bad-{sluice}"));
                let _ = std::fs::remove_dir_all(&repo);
                copy_tree(&seed, &repo);
                if let Some((key, value)) = setting {
                    env.git(&repo, &["config", key, value]);
                }
                let out = env.sluice_or_git(sluice, &repo, args);
                let packed = repo.join(".git/packed-refs").exists();
                seen.push((out.status.code(), stderr(&out), packed));
            }
            // git 2.39 names no file for a bad number (2.47 does, and Sluice follows it).
            let numeric = format!("{setting:?} {args:?}").contains("pack.");
            if numeric && git.to_string_lossy().starts_with("/usr/bin") {
                continue;
            }
            assert_eq!(seen[1], seen[0], "{} {setting:?} {args:?}", git.display());
        }
    }
}
