//! Running real git in the unit tests' temporary repositories.

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
