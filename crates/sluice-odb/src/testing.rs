//! What the unit tests of several crates share: real git run in their temporary repositories,
//! and a progress that cancels at a chosen phase.

use std::path::Path;
use std::process::Command;

/// `git <args>` in `dir` with a fixed identity; its standard output. Panics if git fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=T", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A progress that asks `cancel` to stop as soon as the phase `at` begins, as a signal
/// arriving at that moment would: the tests of cancellation stop work at a chosen stage.
pub struct CancelAt {
    /// The phase's title.
    pub at: &'static str,
    /// What it sets.
    pub cancel: sluice_object::cancel::Cancel,
}

impl sluice_object::progress::Progress for CancelAt {
    fn phase(&self, title: &str, _total: Option<u64>) {
        if title == self.at {
            self.cancel.cancel();
        }
    }
    fn add(&self, _count: u64) {}
    fn add_bytes(&self, _bytes: u64) {}
    fn finish(&self) {}
}
