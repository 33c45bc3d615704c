//! Cancellation reaches every stage of a repack: the walk, the delta search and the writing
//! each stop at their next check, and the repository is left as it was.

use crate::{repack_all_with, RepackOptions, SearchLimits};
use sluice_object::cancel::{Cancel, Cancelled};
use sluice_odb::testing::{git, CancelAt};
use sluice_repo::Repository;
use std::path::Path;

/// A repository of a few hundred objects in two packs, files that delta against each other.
fn repository(dir: &Path) -> Repository {
    git(dir, &["init", "-q", "."]);
    for round in 0..3 {
        for file in 0..40 {
            let text = format!(
                "{}round {round}\n",
                "the same line of text\n".repeat(50 + file)
            );
            std::fs::write(dir.join(format!("f{file}.txt")), text).unwrap();
        }
        git(dir, &["add", "."]);
        git(dir, &["commit", "-q", "-m", &format!("round {round}")]);
        git(dir, &["repack", "-q"]);
    }
    Repository::discover(dir).unwrap()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join(".git/objects/pack"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_cancelled_repack_stops_at_every_stage_and_changes_nothing() {
    for at in [
        "Enumerating objects",
        "Compressing objects",
        "Writing objects",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let repo = repository(dir.path());
        let before = listing(dir.path());
        let cancel = Cancel::new();
        let options = RepackOptions {
            window_search: Some(SearchLimits::default()),
            cancel: cancel.clone(),
            ..RepackOptions::default()
        };
        let progress = CancelAt { at, cancel };
        let error = repack_all_with(&repo, &options, &progress).unwrap_err();
        assert!(Cancelled::is_cause_of(&error), "{at}: {error}");
        assert_eq!(listing(dir.path()), before, "{at}: the packs changed");
        git(dir.path(), &["fsck", "--strict", "--no-progress"]);
    }
}
