//! The files a dumb HTTP client reads (`git update-server-info`): `info/refs`, a line
//! `<id>\t<name>` per ref (and `<id>\t<name>^{}` for what an annotated tag names), and
//! `objects/info/packs`, a line `P <pack>` per pack of this repository's own (not its
//! alternates'), then an empty line. Packs listed before keep their place; new ones follow,
//! newest first, as git orders them.
//!
//! Each is written as git writes them, under a temporary name (`refs_XXXXXX`) renamed into
//! place, not through a lock file: a `repack` killed while it held `info/refs.lock` left the
//! lock behind, and every later repack failed on it.

use crate::refs::RefError;
use crate::Repository;
use sluice_odb::pack_store::{Staged, StoreError};
use std::path::{Path, PathBuf};

/// Why the files could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ServerInfoError {
    /// The refs could not be read.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// A file could not be written.
    #[error(transparent)]
    Write(#[from] StoreError),
    /// The object database could not be opened.
    #[error(transparent)]
    Odb(#[from] sluice_odb::OdbError),
    /// A directory could not be read or made.
    #[error("cannot {action} '{}'", path.display())]
    Dir {
        /// What was done to it.
        action: &'static str,
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Writes `info/refs` and `objects/info/packs` for `repo`.
pub fn update_server_info(repo: &Repository) -> Result<(), ServerInfoError> {
    let info = repo.common_dir().join("info");
    create_dir(&info)?;
    replace(&info, "refs", info_refs(repo)?.as_bytes())?;
    let objects = repo.objects().dir();
    let listing = info_packs(objects)?;
    let dir = objects.join("info");
    create_dir(&dir)?;
    replace(&dir, "packs", listing.as_bytes())?;
    Ok(())
}

/// Replaces `dir/name` with `bytes`, through `dir/name_XXXXXX`.
fn replace(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
    let staged = Staged::write(dir, &format!("{name}_"), |out| out.write_all(bytes))?;
    staged.commit_rewritable(&dir.join(name))
}

fn create_dir(dir: &Path) -> Result<(), ServerInfoError> {
    std::fs::create_dir_all(dir).map_err(|source| ServerInfoError::Dir {
        action: "create",
        path: dir.to_owned(),
        source,
    })
}

/// `info/refs`: every ref in name order, an annotated tag followed by what it names.
fn info_refs(repo: &Repository) -> Result<String, ServerInfoError> {
    let mut refs = repo.refs().list()?;
    refs.sort();
    // Opened afresh: the repository's own view predates the objects a push just brought.
    let objects = repo.objects();
    let mut text = String::new();
    for (name, id) in refs {
        text.push_str(&format!("{id}\t{name}\n"));
        if let Some(peeled) = objects.peel_tags(id) {
            text.push_str(&format!("{peeled}\t{name}^{{}}\n"));
        }
    }
    Ok(text)
}

/// `objects/info/packs`: the packs listed before in their order, then the others newest first.
fn info_packs(objects: &Path) -> Result<String, ServerInfoError> {
    let pack_dir = sluice_odb::pack_dir(objects);
    let mut packs: Vec<(String, std::time::SystemTime)> = Vec::new();
    match std::fs::read_dir(&pack_dir) {
        Ok(entries) => {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let indexed = pack_dir.join(&name).with_extension("idx").is_file();
                if name.ends_with(".pack") && indexed {
                    let modified = entry.metadata().and_then(|m| m.modified());
                    packs.push((name, modified.unwrap_or(std::time::UNIX_EPOCH)));
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(ServerInfoError::Dir {
                action: "read",
                path: pack_dir,
                source,
            })
        }
    }
    let before = std::fs::read_to_string(objects.join("info/packs")).unwrap_or_default();
    let listed: Vec<&str> = before
        .lines()
        .filter_map(|l| l.strip_prefix("P "))
        .collect();
    packs.sort_by(|a, b| {
        let place = |name: &str| listed.iter().position(|l| *l == name);
        match (place(&a.0), place(&b.0)) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => b.1.cmp(&a.1),
        }
    });
    let mut text: String = packs
        .iter()
        .map(|(name, _)| format!("P {name}\n"))
        .collect();
    text.push('\n');
    Ok(text)
}
