//! `FETCH_HEAD`: the refs a fetch fetched, for `git pull` and scripts, one line each as git
//! writes them (`<id>\t[not-for-merge]\t<kind> '<name>' of <url>`). This is its one writer; as
//! a revision it is read by [`crate::Refs::read`], which takes the first line's id, as git does.

use sluice_object::ObjectId;
use sluice_odb::LockError;

use crate::Repository;

/// One line of `FETCH_HEAD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchHeadEntry<'a> {
    /// The object fetched.
    pub id: ObjectId,
    /// The remote's name for it (a ref, `HEAD`, or the id asked for).
    pub name: &'a str,
    /// Whether `git pull` merges it (else it is listed `not-for-merge`).
    pub for_merge: bool,
}

/// Empties `FETCH_HEAD`, as git's `fetch --all` does before each remote's fetch appends to it.
pub fn clear(repo: &Repository) -> Result<(), LockError> {
    sluice_odb::write_locked(&repo.git_dir().join("FETCH_HEAD"), b"", false)
}

/// Writes `FETCH_HEAD` (or, with `append`, adds to it): `entries` in their order, fetched from
/// `url` (as [`display_url`] shows it). Added in one write to the file opened for appending,
/// as git adds: the fetches of several remotes at once (`fetch --all -j`) each add theirs,
/// none lost.
pub fn write(
    repo: &Repository,
    entries: &[FetchHeadEntry<'_>],
    url: &str,
    append: bool,
) -> Result<(), LockError> {
    let path = repo.git_dir().join("FETCH_HEAD");
    let mut text = String::new();
    for entry in entries {
        let name = entry.name;
        let what = match crate::refs::kind_of(name) {
            Some((kind, short)) => format!("{kind} '{short}' of "),
            None if name == "HEAD" => String::new(),
            None => format!("'{name}' of "),
        };
        let flag = if entry.for_merge { "" } else { "not-for-merge" };
        text.push_str(&format!("{}\t{flag}\t{what}{url}\n", entry.id));
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

/// The URL as FETCH_HEAD and a fetch's report name it: without a trailing `/` or `.git`.
pub fn display_url(url: &str) -> &str {
    let url = url.trim_end_matches('/');
    url.strip_suffix(".git").unwrap_or(url)
}
