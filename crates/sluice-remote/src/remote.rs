//! A remote repository as a fetch or clone names it: where it is, how git records it in
//! `remote.<name>.url`, and how messages and `FETCH_HEAD` show it.

use crate::{anonymized, fetch_url, ConnectOptions, Connection, FetchError, RemoteUrl};
use sluice_odb::config::Config;
use std::path::Path;

/// A remote repository.
#[derive(Debug, Clone)]
pub struct Remote {
    /// Where it is.
    pub url: RemoteUrl,
    /// The URL as git records it (a local path made absolute).
    pub recorded: String,
    /// The URL as given, without credentials (git's "anonymized" URL).
    pub shown: String,
}

impl Remote {
    /// Parses `text` as git does; a local path becomes absolute (from `cwd`), as `git clone`
    /// records it.
    pub fn resolve(cwd: &Path, text: &str) -> Result<Remote, FetchError> {
        Ok(match RemoteUrl::parse(text)? {
            RemoteUrl::Local(path) => {
                let absolute =
                    std::path::absolute(cwd.join(&path)).map_err(|source| FetchError::Url {
                        url: text.to_owned(),
                        why: source.to_string().into(),
                    })?;
                let recorded = if text.starts_with("file://") {
                    text.to_owned()
                } else {
                    absolute.to_string_lossy().trim_end_matches('/').to_owned()
                };
                Remote {
                    url: RemoteUrl::Local(absolute),
                    recorded,
                    shown: text.to_owned(),
                }
            }
            other => Remote {
                url: other,
                recorded: text.to_owned(),
                shown: anonymized(text),
            },
        })
    }

    /// The repository a clone of `text` reaches: `text` rewritten by `url.<base>.insteadOf`,
    /// but recorded as given, as `git clone` writes `remote.origin.url`.
    pub fn to_clone(cwd: &Path, config: &Config, text: &str) -> Result<Remote, FetchError> {
        let rewritten = fetch_url(config, text);
        if rewritten == text {
            return Self::resolve(cwd, text);
        }
        let recorded = Self::resolve(cwd, text).map_or_else(|_| text.to_owned(), |r| r.recorded);
        Ok(Remote {
            recorded,
            ..Self::resolve(cwd, &rewritten)?
        })
    }

    /// Connects, with git's messages: for a local repository that is not there, and naming
    /// the remote that could not be read.
    pub fn connect(&self, options: &ConnectOptions) -> Result<Connection, FetchError> {
        if let RemoteUrl::Local(path) = &self.url {
            if !path.exists() {
                // git names a `file://` URL by its path, anything else as given.
                let shown = match self.shown.starts_with("file://") {
                    true => path.display().to_string(),
                    false => self.shown.clone(),
                };
                return Err(FetchError::NoRepository { shown });
            }
        }
        Connection::open(&self.url, options).map_err(|source| match source {
            // git says these alone: each names the server or the URL itself.
            FetchError::Authentication { .. }
            | FetchError::NotFound { .. }
            | FetchError::Http { .. }
            | FetchError::Unreachable { .. }
            | FetchError::Lookup { .. }
            | FetchError::Remote(_)
            | FetchError::SshPort
            | FetchError::SshIpVersion { .. }
            | FetchError::TransportNotAllowed { .. }
            | FetchError::NoHelper { .. }
            | FetchError::HttpSetting(_)
            | FetchError::NoContact => source,
            source => FetchError::Unreadable {
                shown: self.shown.clone(),
                source: Box::new(source),
            },
        })
    }
}
