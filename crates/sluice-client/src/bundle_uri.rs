//! Bundles a server advertises (protocol v2's `bundle-uri`): downloaded from where they are
//! (object storage, a CDN) before the fetch, so that the server sends only what they lack.
//! Each bundle's header is read (git's bundle format v2: prerequisites, refs, then a pack),
//! its pack stored with a connectivity check on its refs, and its branches written as
//! `refs/bundles/*`, as git's client writes them; its tips become the fetch's haves.
//!
//! Anything wrong with a bundle (a download that fails, a header that is not a bundle's, a
//! prerequisite missing, a pack that does not hold what its refs reach) only means the server
//! sends those objects: the clone goes on and the caller is told why.

use sluice_object::ObjectId;
use sluice_odb::config::ConfigKey;
use sluice_remote::{ConnectOptions, Connection, FetchError};
use sluice_repo::receive::{receive_into, Receiving};
use sluice_repo::{RefTarget, Repository};
use std::io::{BufRead, Read, Seek};

/// The most bytes one bundle may have.
const MAX_BUNDLE: u64 = 64 << 30;

/// Whether a clone or fetch takes the bundles a server advertises: `transfer.bundleURI`,
/// which git's client must be given; Sluice takes them unless told not to.
pub fn wanted(config: &sluice_odb::Config) -> Result<bool, sluice_odb::ConfigError> {
    Ok(config.get_bool("transfer.bundleuri")?.unwrap_or(true))
}

/// Why a bundle's header cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    /// Reading it failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The first line is not the signature.
    #[error("no '# v2 git bundle' line")]
    Signature,
    /// No empty line ends it (within the bound on a line).
    #[error("the header does not end")]
    Unended,
    /// A prerequisite or ref names no valid object id.
    #[error("bad object id '{0}'")]
    BadId(String),
    /// A ref line has an id and nothing else.
    #[error("a ref line without a name")]
    NoName,
    /// A ref's name is not one git takes.
    #[error("bad ref name '{0}'")]
    BadRefName(String),
}

/// Why the bundles were not (all) used.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The server or the download failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The list is not one this client reads.
    #[error("the bundle list is not version 1")]
    Version,
    /// A downloaded file is not a bundle.
    #[error("'{uri}' is not a git bundle (v2): {why}")]
    NotABundle {
        /// Where it came from.
        uri: String,
        /// What is wrong.
        why: HeaderError,
    },
    /// A bundle needs a commit the repository does not have.
    #[error("'{uri}' needs {missing}, which this repository lacks")]
    Prerequisite {
        /// The bundle.
        uri: String,
        /// The commit.
        missing: ObjectId,
    },
    /// Its pack could not be stored (or does not hold what its refs reach).
    #[error("'{uri}': {source}")]
    Store {
        /// The bundle.
        uri: String,
        /// Why.
        source: sluice_odb::pack_store::StoreError,
    },
    /// A temporary file or a ref could not be written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A ref could not be written.
    #[error(transparent)]
    Ref(#[from] sluice_repo::RefError),
    /// The creation token taken could not be recorded.
    #[error(transparent)]
    Config(#[from] sluice_odb::config::ConfigError),
}

impl BundleError {
    /// git's warnings for the bundle at `uri` that gave nothing: why, then that no object came
    /// from it.
    pub fn warnings(&self, uri: &str) -> [String; 2] {
        let why = match self {
            BundleError::Fetch(_) | BundleError::Io(_) => {
                format!("failed to download bundle from URI '{uri}'")
            }
            BundleError::NotABundle { .. } | BundleError::Version => {
                format!("file at URI '{uri}' is not a bundle or bundle list")
            }
            other => other.to_string(),
        };
        [
            why,
            format!("failed to fetch objects from bundle URI '{uri}'"),
        ]
    }
}

/// A bundle's header: the commits it needs, and its refs.
struct Header {
    prerequisites: Vec<ObjectId>,
    refs: Vec<(String, ObjectId)>,
}

/// One bundle of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listed {
    uri: String,
    token: u64,
}

/// Reads the list's `bundle.*` pairs: the bundles, in the order to apply them (creation
/// tokens increasing, as git applies them).
fn bundles(pairs: &[(String, String)]) -> Result<Vec<Listed>, BundleError> {
    let version = pairs.iter().find(|(k, _)| k == "bundle.version");
    if version.map(|(_, v)| v.as_str()) != Some("1") {
        return Err(BundleError::Version);
    }
    let mut listed: Vec<(String, Listed)> = Vec::new();
    for (key, value) in pairs {
        let Some((id, field)) = key.strip_prefix("bundle.").and_then(|k| k.rsplit_once('.')) else {
            continue;
        };
        let index = match listed.iter().position(|(known, _)| known == id) {
            Some(index) => index,
            None => {
                let empty = Listed {
                    uri: String::new(),
                    token: 0,
                };
                listed.push((id.to_owned(), empty));
                listed.len() - 1
            }
        };
        match field.to_ascii_lowercase().as_str() {
            "uri" => listed[index].1.uri.clone_from(value),
            "creationtoken" => listed[index].1.token = value.parse().unwrap_or(0),
            _ => {}
        }
    }
    let mut bundles: Vec<Listed> = (listed.into_iter())
        .map(|(_, bundle)| bundle)
        .filter(|b| b.uri.starts_with("http://") || b.uri.starts_with("https://"))
        .collect();
    bundles.sort_by_key(|b| b.token);
    Ok(bundles)
}

/// Asks the server for its bundles and brings into `repo` those newer than the last it took
/// (`fetch.bundleCreationToken`, which is then moved on, as git's client records it); returns
/// the tips they gave (empty when the server offers none, or none newer).
pub fn fetch_bundles(
    connection: &mut Connection,
    repo: &Repository,
    options: &ConnectOptions,
) -> Result<Vec<ObjectId>, BundleError> {
    let Some(pairs) = connection.bundle_list()? else {
        return Ok(Vec::new());
    };
    let taken = repo
        .config()
        .get_int("fetch.bundlecreationtoken")
        .ok()
        .flatten();
    let taken = taken.and_then(|t| u64::try_from(t).ok()).unwrap_or(0);
    let mut tips = Vec::new();
    let mut newest = None;
    for bundle in bundles(&pairs)?.into_iter().filter(|b| b.token > taken) {
        // The next bundle's prerequisites are in the last one's pack, which the repository's
        // objects show once it is stored.
        tips.extend(apply(repo, &bundle.uri, options)?);
        newest = Some(bundle.token);
    }
    if let Some(token) = newest.filter(|t| *t > 0) {
        let mut config = repo.config_file()?;
        config.set(
            &ConfigKey::new("fetch", None, "bundleCreationToken"),
            &token.to_string(),
        )?;
        config.write()?;
    }
    Ok(tips)
}

/// Brings the bundle at `uri` (a URL or a path: `clone --bundle-uri`) into `repo`; returns
/// its tips.
pub fn fetch_bundle(
    repo: &Repository,
    uri: &str,
    options: &ConnectOptions,
) -> Result<Vec<ObjectId>, BundleError> {
    apply(repo, uri, options)
}

/// Downloads one bundle, stores its pack and writes its refs; returns their ids.
fn apply(
    repo: &Repository,
    uri: &str,
    options: &ConnectOptions,
) -> Result<Vec<ObjectId>, BundleError> {
    let dir = repo.objects().pack_dir();
    let mut file = tempfile_in(&dir)?;
    match uri.starts_with("http://") || uri.starts_with("https://") {
        true => {
            sluice_remote::download(uri, &mut file, options, MAX_BUNDLE)?;
        }
        // A path (`--bundle-uri=<path>`, `file://<path>`), as git takes one too.
        false => {
            let path = uri.strip_prefix("file://").unwrap_or(uri);
            let source = std::fs::File::open(path)?;
            std::io::copy(&mut source.take(MAX_BUNDLE), &mut file)?;
        }
    }
    file.rewind()?;
    let mut reader = std::io::BufReader::new(file);
    let Header {
        prerequisites,
        refs,
    } = read_header(&mut reader).map_err(|why| BundleError::NotABundle {
        uri: uri.to_owned(),
        why,
    })?;
    if let Some(missing) = prerequisites.iter().find(|id| !repo.objects().contains(id)) {
        return Err(BundleError::Prerequisite {
            uri: uri.to_owned(),
            missing: *missing,
        });
    }
    let receiving = Receiving {
        connectivity: Some(sluice_pack::LinkCheck {
            tips: refs.iter().map(|(_, id)| *id).collect(),
            shallow: Vec::new(),
        }),
        cancel: options.cancel.clone(),
        ..Receiving::default()
    };
    receive_into(&mut reader as &mut dyn Read, repo, receiving).map_err(|source| {
        BundleError::Store {
            uri: uri.to_owned(),
            source,
        }
    })?;
    // A branch refs/heads/main is refs/bundles/main, as git's client writes them (its
    // other refs are not written).
    for (name, id) in &refs {
        if let Some(branch) = name.strip_prefix("refs/heads/") {
            let bundled = format!("refs/bundles/{branch}");
            repo.refs().write(&bundled, &RefTarget::Id(*id))?;
        }
    }
    Ok(refs.into_iter().map(|(_, id)| id).collect())
}

/// A file in `dir` that is gone when dropped.
fn tempfile_in(dir: &std::path::Path) -> std::io::Result<std::fs::File> {
    let path = dir.join(format!("tmp_bundle_{}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)?;
    // Unlinked at once: the open file is all that is needed, and nothing is left behind.
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// The header of a bundle: its prerequisites and refs; `reader` is left at the pack.
fn read_header(reader: &mut impl BufRead) -> Result<Header, HeaderError> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    if line != "# v2 git bundle\n" {
        return Err(HeaderError::Signature);
    }
    let (mut prerequisites, mut refs) = (Vec::new(), Vec::new());
    let id = |hex: &str| {
        ObjectId::from_hex(sluice_object::HashKind::Sha1, hex.as_bytes())
            .map_err(|_| HeaderError::BadId(hex.to_owned()))
    };
    loop {
        line.clear();
        // A header line is short; a bundle that sends a huge one is not read whole.
        let read = (reader.by_ref().take(4096)).read_line(&mut line);
        if read? == 0 {
            return Err(HeaderError::Unended);
        }
        let text = line.trim_end_matches('\n');
        if text.is_empty() {
            return Ok(Header {
                prerequisites,
                refs,
            });
        }
        if let Some(rest) = text.strip_prefix('-') {
            prerequisites.push(id(rest.split(' ').next().unwrap_or_default())?);
            continue;
        }
        let (hex, name) = text.split_once(' ').ok_or(HeaderError::NoName)?;
        // `git bundle create --all` names HEAD too.
        let valid = name == "HEAD"
            || (name.starts_with("refs/") && sluice_object::ref_name::is_valid_ref_name(name));
        if !valid {
            return Err(HeaderError::BadRefName(name.to_owned()));
        }
        refs.push((name.to_owned(), id(hex)?));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_read_in_creation_order_and_other_keys_are_skipped() {
        let pairs: Vec<(String, String)> = [
            ("bundle.version", "1"),
            ("bundle.mode", "all"),
            ("bundle.b.uri", "https://cdn/b.bundle"),
            ("bundle.b.creationtoken", "9"),
            ("bundle.a.uri", "https://cdn/a.bundle"),
            ("bundle.a.creationToken", "3"),
            ("bundle.c.uri", "file:///etc/passwd"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let uris: Vec<String> = bundles(&pairs)
            .unwrap()
            .into_iter()
            .map(|b| b.uri)
            .collect();
        assert_eq!(uris, ["https://cdn/a.bundle", "https://cdn/b.bundle"]);
        let old = [("bundle.version".to_owned(), "2".to_owned())];
        assert!(matches!(bundles(&old), Err(BundleError::Version)));
    }

    #[test]
    fn a_header_that_is_not_a_bundles_is_refused() {
        let good = format!(
            "# v2 git bundle\n-{0} c\n{0} refs/heads/main\n\nPACK",
            "ab".repeat(20)
        );
        let mut reader = std::io::BufReader::new(good.as_bytes());
        let header = read_header(&mut reader).unwrap();
        assert_eq!((header.prerequisites.len(), header.refs.len()), (1, 1));
        let mut rest = String::new();
        reader.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "PACK");
        for bad in [
            "# v3 git bundle\n\n",
            "# v2 git bundle\nzz refs/heads/x\n\n",
            "# v2 git bundle\n",
        ] {
            assert!(
                read_header(&mut std::io::BufReader::new(bad.as_bytes())).is_err(),
                "{bad}"
            );
        }
        let escape = format!("# v2 git bundle\n{} refs/../x\n\n", "ab".repeat(20));
        assert!(read_header(&mut std::io::BufReader::new(escape.as_bytes())).is_err());
    }
}
