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
