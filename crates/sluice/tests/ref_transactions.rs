//! Ref transactions (the ground of push): each ref moves only from the value its caller saw,
//! all refs of a transaction or none, racing writers never both win, and the refusals say what
//! git's say. Judged against `git update-ref --stdin` on a twin repository.

use crate::util::Env;
use sluice_object::ObjectId;
use sluice_repo::{Expected, RefUpdate, Repository, Transaction, TransactionError};
use std::path::Path;

/// A repository with commits `a`, `b` and `c`, `main` at `c`, a packed `refs/tags/old` at
/// `a` and a loose `refs/heads/topic` at `b`; returns it with the three ids.
fn repository(env: &Env, name: &str) -> (std::path::PathBuf, [ObjectId; 3]) {
    let repo = env.init(name, false);
    let mut ids = Vec::new();
    for message in ["a", "b", "c"] {
        env.git(&repo, &["commit", "-q", "--allow-empty", "-m", message]);
        let hex = String::from_utf8(env.git(&repo, &["rev-parse", "HEAD"])).unwrap();
        ids.push(ObjectId::from_hex(sluice_object::HashKind::Sha1, hex.trim().as_bytes()).unwrap());
    }
    env.git(&repo, &["branch", "-M", "main"]);
    env.git(&repo, &["tag", "old", &ids[0].to_string()]);
    env.git(&repo, &["pack-refs", "--all"]);
    env.git(&repo, &["branch", "topic", &ids[1].to_string()]);
    (repo, [ids[0], ids[1], ids[2]])
}

fn refs_of(env: &Env, repo: &Path) -> String {
    String::from_utf8(env.git(repo, &["for-each-ref", "--format=%(refname) %(objectname)"]))
        .unwrap()
}

fn update(name: &str, expected: Expected, new: Option<ObjectId>) -> RefUpdate {
    RefUpdate {
        name: name.into(),
        expected,
        new,
        log: None,
    }
}

/// The same transaction through git: `update-ref --stdin` with start/commit. Returns git's
/// message after "fatal: commit: " when it refuses.
fn git_transaction(env: &Env, repo: &Path, updates: &[RefUpdate]) -> Option<String> {
    let zero = "0".repeat(40);
    let mut script = String::from("start\n");
    for u in updates {
        // No old value at all (not even the space before it) means any.
        let old = match u.expected {
            Expected::Any => String::new(),
            Expected::Absent => format!(" {zero}"),
            Expected::Id(id) => format!(" {id}"),
        };
        match u.new {
            Some(new) => script.push_str(&format!("update {} {new}{old}\n", u.name)),
            None => script.push_str(&format!("delete {}{old}\n", u.name)),
        }
    }
    script.push_str("commit\n");
    let out = env.git_with_input(repo, &["update-ref", "--stdin"], script.as_bytes());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (!out.status.success()).then(|| {
        let line = stderr
            .lines()
            .find(|l| l.starts_with("fatal:"))
            .unwrap_or("");
        line.trim_start_matches("fatal: ")
            .trim_start_matches("commit: ")
            .to_owned()
    })
}

fn sluice_transaction(repo: &Path, updates: &[RefUpdate]) -> Option<String> {
    let repository = Repository::discover(repo).unwrap();
    let mut transaction = Transaction::new();
    for u in updates {
        transaction.update(u.clone());
    }
    transaction
        .commit(&repository.refs())
        .err()
        .map(|e| e.to_string())
}

fn no_locks_left(repo: &Path) {
    let out = std::process::Command::new("find")
        .args([repo.join(".git").to_str().unwrap(), "-name", "*.lock"])
        .output()
        .unwrap();
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn transactions_move_refs_and_refuse_as_git_does() {
    let env = Env::new();
    let (ours, [a, b, c]) = repository(&env, "ours");
    let (theirs, _) = repository(&env, "theirs");
    let cases: Vec<Vec<RefUpdate>> = vec![
        // Each ref from the value seen: a fast-forward, a new ref, a packed ref deleted.
        vec![
            update("refs/heads/topic", Expected::Id(b), Some(c)),
            update("refs/heads/new", Expected::Absent, Some(a)),
            update("refs/tags/old", Expected::Id(a), None),
        ],
        // Stale: nothing moves, though the first update alone would go ahead.
        vec![
            update("refs/heads/aaa", Expected::Absent, Some(a)),
            update("refs/heads/main", Expected::Id(a), Some(b)),
        ],
        // Expected absent, but it exists.
        vec![update("refs/heads/main", Expected::Absent, Some(a))],
        // Expected a value, but it does not exist.
        vec![update("refs/heads/none", Expected::Id(a), Some(b))],
        // Any value, then a delete of a loose ref.
        vec![
            update("refs/heads/main", Expected::Any, Some(a)),
            update("refs/heads/new", Expected::Id(a), None),
        ],
    ];
    for updates in &cases {
        let theirs_said = git_transaction(&env, &theirs, updates);
        let ours_said = sluice_transaction(&ours, updates);
        assert_eq!(ours_said, theirs_said, "{updates:?}");
        assert_eq!(refs_of(&env, &ours), refs_of(&env, &theirs), "{updates:?}");
        no_locks_left(&ours);
    }
    env.git(&ours, &["fsck", "--strict"]);
}

#[test]
fn a_held_lock_refuses_with_gits_message_and_changes_nothing() {
    let env = Env::new();
    let (repo, [a, _, c]) = repository(&env, "locked");
    let lock = repo.join(".git/refs/heads/topic.lock");
    std::fs::write(&lock, "").unwrap();
    let updates = [
        update("refs/heads/main", Expected::Id(c), Some(a)),
        update("refs/heads/topic", Expected::Any, Some(a)),
    ];
    let before = refs_of(&env, &repo);
    let said = sluice_transaction(&repo, &updates).expect("refused");
    let git_said = git_transaction(&env, &repo, &updates).expect("git refuses too");
    assert_eq!(said, git_said);
    assert_eq!(refs_of(&env, &repo), before);
    std::fs::remove_file(&lock).unwrap();
    no_locks_left(&repo);
}

#[test]
fn racing_transactions_never_both_win() {
    let env = Env::new();
    let (repo, [a, b, c]) = repository(&env, "race");
    for round in 0..50 {
        let start = if round % 2 == 0 { c } else { a };
        let (one, two) = if round % 2 == 0 { (a, b) } else { (c, b) };
        let results: Vec<Result<(), TransactionError>> = std::thread::scope(|s| {
            [one, two]
                .map(|new| {
                    let repo = repo.clone();
                    s.spawn(move || {
                        let repository = Repository::discover(&repo).unwrap();
                        let mut transaction = Transaction::new();
                        transaction.update(update(
                            "refs/heads/main",
                            Expected::Id(start),
                            Some(new),
                        ));
                        transaction.commit(&repository.refs())
                    })
                })
                .map(|h| h.join().unwrap())
                .into_iter()
                .collect()
        });
        let won: Vec<usize> = (0..2).filter(|&i| results[i].is_ok()).collect();
        assert!(won.len() <= 1, "round {round}: both won");
        let now = String::from_utf8(env.git(&repo, &["rev-parse", "refs/heads/main"])).unwrap();
        let expected = match won.first() {
            Some(&0) => one,
            Some(_) => two,
            None => start,
        };
        assert_eq!(now.trim(), expected.to_string(), "round {round}");
        for result in &results {
            if let Err(e) = result {
                assert!(
                    matches!(
                        e,
                        TransactionError::Locked { .. } | TransactionError::Stale { .. }
                    ),
                    "{e}"
                );
            }
        }
        // Where the next round starts (both may have lost, each to the other's lock).
        let next = if round % 2 == 0 { a } else { c };
        env.git(&repo, &["update-ref", "refs/heads/main", &next.to_string()]);
        no_locks_left(&repo);
    }
}

/// Deletions of packed refs racing one another and `pack-refs`, as pushes deleting branches
/// race while maintenance packs refs: `packed-refs` is read under its lock before it is
/// rewritten, so no deleted ref comes back and no kept one is lost (a read before the lock let
/// one writer's rewrite undo the other's). Judged by git's for-each-ref.
#[test]
fn racing_deletions_of_packed_refs_lose_nothing() {
    let env = Env::new();
    let (repo, [a, ..]) = repository(&env, "deletions");
    let names: Vec<String> = (0..40).map(|i| format!("refs/heads/b{i:02}")).collect();
    for name in &names {
        env.git(&repo, &["update-ref", name, &a.to_string()]);
    }
    env.git(&repo, &["pack-refs", "--all"]);
    std::thread::scope(|s| {
        for half in names.chunks(20) {
            let repo = &repo;
            s.spawn(move || {
                let repository = Repository::discover(repo).unwrap();
                for name in half.iter().step_by(2) {
                    let mut transaction = Transaction::new();
                    transaction.update(update(name, Expected::Any, None));
                    transaction.commit(&repository.refs()).unwrap();
                }
            });
        }
        s.spawn(|| {
            let repository = Repository::discover(&repo).unwrap();
            let options = sluice_repo::refs::PackRefsOptions::every_ref();
            for _ in 0..10 {
                let packed = repository.refs().pack(&options, repository.objects());
                // Another writer's lock held past the wait is a refusal, not a loss.
                assert!(matches!(
                    packed,
                    Ok(()) | Err(sluice_repo::RefError::Locked(_))
                ));
            }
        });
    });
    let listed = refs_of(&env, &repo);
    for (i, name) in names.iter().enumerate() {
        let deleted = i % 2 == 0;
        assert_eq!(
            listed.contains(&format!("{name} ")),
            !deleted,
            "{name}:\n{listed}"
        );
    }
    env.git(&repo, &["fsck", "--strict"]);
    no_locks_left(&repo);
}
