//! `FETCH_HEAD`: the refs a fetch fetched, for `git pull` and scripts, one line each as git
//! writes them.

use super::mapping::{Listed, Update};
use super::report::kind_of;
use sluice_odb::LockError;
use sluice_repo::Repository;

/// Empties `FETCH_HEAD`, as git's `fetch --all` does before each remote's fetch appends to it.
pub fn clear_fetch_head(repo: &Repository) -> Result<(), LockError> {
    sluice_odb::write_locked(&repo.git_dir().join("FETCH_HEAD"), b"", false)
}

/// Writes `FETCH_HEAD` (or, with `append`, adds to it): the refs fetched, merge candidates
/// first, each as `<id>\t[not-for-merge]\t<kind> '<name>' of <url>`. Added in one write to
/// the file opened for appending, as git adds: the fetches of several remotes at once
/// (`fetch --all -j`) each add theirs, none lost.
pub fn write_fetch_head(
    repo: &Repository,
    updates: &[Update],
    url: &str,
    append: bool,
) -> Result<(), LockError> {
    let path = repo.git_dir().join("FETCH_HEAD");
    let mut text = String::new();
    for listed in [Listed::ForMerge, Listed::NotForMerge] {
        for update in updates.iter().filter(|u| u.listed == listed) {
            let name = &update.remote.name;
            let what = match kind_of(name) {
                Some((kind, short)) => format!("{kind} '{short}' of "),
                None if name == "HEAD" => String::new(),
                None => format!("'{name}' of "),
            };
            let flag = match listed {
                Listed::ForMerge => "",
                _ => "not-for-merge",
            };
            text.push_str(&format!("{}\t{flag}\t{what}{url}\n", update.remote.id));
        }
    }
    if !append {
        return sluice_odb::write_locked(&path, text.as_bytes(), false);
    }
    let io = |source| LockError::Io {
        path: path.clone(),
        source,
    };
    let mut file = (std::fs::OpenOptions::new().append(true).create(true))
        .open(&path)
        .map_err(io)?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(io)
}

/// The URL as FETCH_HEAD and the report name it: without a trailing `/` or `.git`.
pub fn display_url(url: &str) -> &str {
    let url = url.trim_end_matches('/');
    url.strip_suffix(".git").unwrap_or(url)
}
