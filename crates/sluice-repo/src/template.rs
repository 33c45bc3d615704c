//! The template directory `git init` and `git clone` copy into a new repository (`git help
//! init`, "TEMPLATE DIRECTORY"): `--template=<dir>`, else `GIT_TEMPLATE_DIR`, else
//! `init.templateDir`; an empty name means none. Teams hand out hooks this way. Everything in
//! it is copied, directories, files with their permissions and symbolic links, but names
//! starting with a dot, and nothing already there is replaced.

use crate::init::InitError;
use sluice_odb::Config;
use std::path::{Path, PathBuf};

/// The template directory a new repository takes, if any: `given` (`--template`), else the
/// environment's, else the configuration's.
pub fn template_dir(given: Option<&Path>, config: &Config) -> Option<PathBuf> {
    let chosen = given
        .map(Path::to_owned)
        .or_else(|| std::env::var_os("GIT_TEMPLATE_DIR").map(PathBuf::from))
        .or_else(|| config.get_path("init.templatedir"))?;
    (!chosen.as_os_str().is_empty()).then_some(chosen)
}

/// Copies `template` into `git_dir`, as git does. A template that does not exist is no
/// template (git warns of it; so does the caller).
pub(crate) fn copy_template(template: &Path, git_dir: &Path) -> Result<(), InitError> {
    use std::io::ErrorKind;
    let create = |path: &Path| {
        let path = path.to_owned();
        move |source| InitError::Create { path, source }
    };
    let mut pending = vec![(template.to_owned(), git_dir.to_owned())];
    while let Some((from, to)) = pending.pop() {
        let entries = match std::fs::read_dir(&from) {
            Ok(entries) => entries,
            // As git's: a template that is not there, or no directory, is no template.
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                continue
            }
            Err(source) => return Err(InitError::Create { path: from, source }),
        };
        for entry in entries {
            let entry = entry.map_err(create(&from))?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let (source, target) = (entry.path(), to.join(entry.file_name()));
            let kind = entry.file_type().map_err(create(&source))?;
            if kind.is_dir() {
                std::fs::create_dir_all(&target).map_err(create(&target))?;
                pending.push((source, target));
            } else if std::fs::symlink_metadata(&target).is_ok() {
                // Already there (the repository's own files win).
            } else if kind.is_symlink() {
                let link = std::fs::read_link(&source).map_err(create(&source))?;
                std::os::unix::fs::symlink(link, &target).map_err(create(&target))?;
            } else {
                std::fs::copy(&source, &target).map_err(create(&target))?;
            }
        }
    }
    Ok(())
}
