//! `ahead_behind` counts what `git rev-list --left-right --count a...b` counts, on a history
//! with branches, merges, commits of one date and a clock skewed backwards.

use super::ahead_behind;
use sluice_object::{HashKind, ObjectId};
use sluice_odb::ObjectDb;
use std::path::Path;
use std::process::Command;

/// `git <args>` in `dir`, committing at `date` (seconds); its standard output.
fn git_at(dir: &Path, date: i64, args: &[&str]) -> String {
    let stamp = format!("{} +0000", 1_700_000_000 + date);
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=T", "-c", "user.email=t@t"])
        .args(args)
        .env("GIT_COMMITTER_DATE", &stamp)
        .env("GIT_AUTHOR_DATE", &stamp)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn commit(dir: &Path, date: i64, name: &str) -> ObjectId {
    std::fs::write(dir.join(name), name).unwrap();
    git_at(dir, date, &["add", name]);
    git_at(dir, date, &["commit", "-q", "-m", name]);
    let hex = git_at(dir, date, &["rev-parse", "HEAD"]);
    ObjectId::from_hex(HashKind::Sha1, hex.trim().as_bytes()).unwrap()
}

#[test]
fn counts_are_gits() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    git_at(dir, 0, &["init", "-q", "-b", "main", "."]);
    let mut tips = Vec::new();
    for i in 0..4 {
        tips.push(commit(dir, 1_000 + i * 10, &format!("m{i}")));
    }
    git_at(dir, 0, &["checkout", "-q", "-b", "side", "main~2"]);
    for i in 0..3 {
        // The second side commit has the date of its parent: one date for two commits.
        tips.push(commit(dir, 1_015 + (i / 2) * 20, &format!("s{i}")));
    }
    git_at(dir, 0, &["checkout", "-q", "main"]);
    git_at(dir, 1_100, &["merge", "-q", "--no-edit", "side"]);
    let merge = git_at(dir, 0, &["rev-parse", "HEAD"]);
    tips.push(ObjectId::from_hex(HashKind::Sha1, merge.trim().as_bytes()).unwrap());
    // A commit dated before its parent (a skewed clock), then one more.
    tips.push(commit(dir, 900, "skewed"));
    tips.push(commit(dir, 1_200, "after"));
    git_at(dir, 0, &["checkout", "-q", "side"]);
    tips.push(commit(dir, 1_300, "late side"));

    let odb = ObjectDb::open(&dir.join(".git/objects"), HashKind::Sha1).unwrap();
    for a in &tips {
        for b in &tips {
            let range = format!("{a}...{b}");
            let said = git_at(dir, 0, &["rev-list", "--left-right", "--count", &range]);
            let (ahead, behind) = said.trim().split_once('\t').unwrap();
            let expected = (ahead.parse().unwrap(), behind.parse().unwrap());
            assert_eq!(ahead_behind(&odb, a, b), Some(expected), "{range}");
        }
    }
}
