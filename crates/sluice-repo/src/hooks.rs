//! Where a repository's hooks are (githooks): `core.hooksPath`, a relative one taken from the
//! directory the hooks run in (the work tree's top for a command run there, the git directory
//! for receive-pack), else `hooks/` of the common directory. A hook is an executable file
//! there; a file without the execute bit is not run (git ignores it).

use crate::Repository;
use std::path::{Path, PathBuf};

/// The hooks directory of `repo`, for hooks that run in `run_in`.
pub fn dir(repo: &Repository, run_in: &Path) -> PathBuf {
    match repo.config().get_path("core.hookspath") {
        Some(path) if path.is_absolute() => path,
        Some(path) => run_in.join(path),
        None => repo.common_dir().join("hooks"),
    }
}

/// Whether `path` is a hook that can run: an executable file.
pub fn runnable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// The hook `name` of a command run in the work tree (or, in a bare repository, the git
/// directory), if there is one that can run; with the directory it runs in.
pub fn find(repo: &Repository, name: &str) -> Option<(PathBuf, PathBuf)> {
    let run_in = repo.work_tree().unwrap_or(repo.git_dir()).to_owned();
    let hook = dir(repo, &run_in).join(name);
    runnable(&hook).then_some((hook, run_in))
}

/// The `reference-transaction` hook's input for `updates` (old, new, ref), as git gives it:
/// `<old> <new> <ref>` a line, the null id for a ref created or deleted.
pub fn transaction_lines<'a>(
    updates: impl IntoIterator<Item = (sluice_object::ObjectId, sluice_object::ObjectId, &'a str)>,
) -> String {
    (updates.into_iter())
        .map(|(old, new, name)| format!("{old} {new} {name}\n"))
        .collect()
}

/// Runs hook `name` of a command run in `repo`'s work tree (or git directory), if it has one,
/// with `args` and `input` on its standard input; what it prints goes to standard error, as a
/// git hook's output does. `None` when there is no such hook, else whether it succeeded.
pub fn run(repo: &Repository, name: &str, args: &[&str], input: &[u8]) -> Option<bool> {
    use std::io::Write as _;
    let (hook, run_in) = find(repo, name)?;
    let started = std::process::Command::new(&hook)
        .args(args)
        .current_dir(run_in)
        .stdin(std::process::Stdio::piped())
        .stdout(std::io::stderr())
        .spawn();
    let Ok(mut child) = started else {
        return Some(false);
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that does not read its input must not fail for it.
        let _ = stdin.write_all(input);
    }
    Some(child.wait().is_ok_and(|status| status.success()))
}

/// Runs `reference-transaction <state>` with `lines` ([`transaction_lines`]) on its input:
/// whether it agreed (true when there is no hook); only a `prepared` transaction heeds the
/// answer.
pub fn reference_transaction(repo: &Repository, state: &str, lines: &str) -> bool {
    run(repo, "reference-transaction", &[state], lines.as_bytes()).unwrap_or(true)
}
