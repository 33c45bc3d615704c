//! Whether a clone copies the source's object files itself, as git does for a path (not a
//! `file://` URL) to a repository that is not shallow, unless `--no-local`.

use super::run::LocalSource;
use crate::local_clone::ObjectTransfer;
use sluice_remote::{Remote, RemoteUrl};
use sluice_repo::Repository;

/// The command line's say in a clone from a path.
#[derive(Debug, Clone, Default)]
pub struct LocalChoice<'a> {
    /// The repository as given (a `file://` URL is never cloned as files).
    pub given: &'a str,
    /// `--no-local`.
    pub no_local: bool,
    /// `--local`: links, or an error where one fails.
    pub local: bool,
    /// `--shared`: an alternate, no files.
    pub shared: bool,
    /// `--no-hardlinks`: copies.
    pub no_hardlinks: bool,
    /// The options given that a clone from files cannot honour (`--depth`, `--filter`, …).
    pub unusable: Vec<&'static str>,
}

/// Where the clone takes its objects from as files, and how; with git's warnings for the
/// options that leaves without effect.
pub fn local_source(remote: &Remote, choice: &LocalChoice) -> (Option<LocalSource>, Vec<String>) {
    let mut warnings = Vec::new();
    // Only where the repository is: its objects are copied as files, never read.
    let source = match &remote.url {
        RemoteUrl::Local(path) if !choice.no_local && !choice.given.starts_with("file://") => {
            Repository::find_served(path, false).map(|git_dir| Repository::common_dir_of(&git_dir))
        }
        _ => None,
    };
    let source = source.filter(|common_dir| {
        let shallow = sluice_repo::shallow::is_shallow(common_dir);
        if shallow && choice.local {
            warnings.push("source repository is shallow, ignoring --local".to_owned());
        }
        !shallow
    });
    let Some(source) = source else {
        if choice.local {
            warnings.push("--local is ignored".to_owned());
        }
        return (None, warnings);
    };
    for option in &choice.unusable {
        warnings.push(format!(
            "{option} is ignored in local clones; use file:// instead."
        ));
    }
    let transfer = if choice.shared {
        ObjectTransfer::Shared
    } else if choice.no_hardlinks {
        ObjectTransfer::Copy
    } else if choice.local {
        ObjectTransfer::LinkOnly
    } else {
        ObjectTransfer::LinkOrCopy
    };
    let objects = std::path::absolute(source.join("objects")).ok();
    let local = objects.map(|objects| LocalSource { objects, transfer });
    (local, warnings)
}
