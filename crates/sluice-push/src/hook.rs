//! The `pre-push` hook (githooks): run before anything is sent, with the remote's name (or its
//! URL when it has none) and URL as arguments and a line per ref about to move on its standard
//! input; a failure stops the push. What it prints goes where git sends it: the push's own
//! standard output and error.

use super::{PushError, PushedRef, RefStatus};
use sluice_repo::Repository;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs the hook if the repository has one; `Err(PrePushDeclined)` if it fails.
pub(crate) fn pre_push(
    repo: &Repository,
    name: &str,
    url: &str,
    refs: &[PushedRef],
) -> Result<(), PushError> {
    let Some((hook, run_in)) = sluice_repo::hooks::find(repo, "pre-push") else {
        return Ok(());
    };
    let null = repo.hash().null_id();
    let mut input = String::new();
    for r in refs.iter().filter(|r| r.status == RefStatus::Pending) {
        let (local, new) = match (&r.src, r.new) {
            (Some(src), Some(new)) => (src.as_str(), new),
            _ => ("(delete)", null),
        };
        let old = r.old.unwrap_or(null);
        input.push_str(&format!("{local} {new} {} {old}\n", r.dst));
    }
    let mut child = Command::new(&hook)
        .args([name, url])
        .current_dir(run_in)
        .stdin(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that does not read its input must not fail the push for it.
        let _ = stdin.write_all(input.as_bytes());
    }
    match child.wait()?.success() {
        true => Ok(()),
        false => Err(PushError::PrePushDeclined),
    }
}
