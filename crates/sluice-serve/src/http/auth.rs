//! Who may push over HTTP: HTTP Basic credentials checked against an htpasswd file of bcrypt
//! entries (`user:$2y$...`, what `htpasswd -B` writes), and git http-backend's rule for when
//! receive-pack is served at all (`http.receivepack`).

use base64::Engine as _;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Why an htpasswd file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AuthFileError {
    /// The file could not be read.
    #[error("cannot read '{}'", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A line is not `user:hash`, or its hash is not bcrypt (MD5, SHA-1 and crypt entries are
    /// refused rather than accepted weakly).
    #[error("{}:{line}: not a 'user:bcrypt-hash' entry (write it with 'htpasswd -B')", path.display())]
    BadEntry {
        /// The file.
        path: PathBuf,
        /// The line's number, from 1.
        line: usize,
    },
}

/// The users of an htpasswd file and their bcrypt hashes.
#[derive(Debug, Default)]
pub struct Credentials {
    users: HashMap<String, String>,
}

impl Credentials {
    /// Reads an htpasswd file; every entry must be bcrypt.
    pub fn load(path: &Path) -> Result<Credentials, AuthFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| AuthFileError::Read {
            path: path.to_owned(),
            source,
        })?;
        let mut users = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end_matches('\r');
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = || AuthFileError::BadEntry {
                path: path.to_owned(),
                line: i + 1,
            };
            let (user, hash) = line.split_once(':').ok_or_else(bad)?;
            let bcrypt = ["$2a$", "$2b$", "$2x$", "$2y$"];
            if user.is_empty() || !bcrypt.iter().any(|p| hash.starts_with(p)) {
                return Err(bad());
            }
            users.insert(user.to_owned(), hash.to_owned());
        }
        Ok(Credentials { users })
    }

    /// The user an `Authorization` header's value authenticates, if it names one with the
    /// right password.
    pub(crate) fn authenticate(&self, authorization: Option<&str>) -> Option<String> {
        let (scheme, encoded) = authorization?.trim().split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("basic") {
            return None;
        }
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .ok()?;
        let decoded = String::from_utf8(decoded).ok()?;
        let (user, password) = decoded.split_once(':')?;
        // bcrypt refuses passwords over 72 bytes; so does htpasswd.
        let hash = self.users.get(user)?;
        bcrypt::verify(password, hash)
            .unwrap_or(false)
            .then(|| user.to_owned())
    }
}

/// Whether receive-pack is served for a request, as git http-backend decides it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PushAccess {
    /// Served; the pusher's name when they authenticated.
    Allowed(Option<String>),
    /// Credentials are needed and were missing or wrong: 401, so that the client asks for them.
    Unauthenticated,
    /// Not served for this repository.
    Disabled,
}

/// `http.receivepack` true serves anyone; false no one; unset, only authenticated users (git
/// http-backend's rule, with the htpasswd file standing in for the web server's
/// authentication).
pub(crate) fn push_access(
    receivepack: Option<bool>,
    credentials: Option<&Credentials>,
    authorization: Option<&str>,
) -> PushAccess {
    let user = credentials.and_then(|c| c.authenticate(authorization));
    match (receivepack, credentials) {
        (Some(false), _) => PushAccess::Disabled,
        (Some(true), _) => PushAccess::Allowed(user),
        (None, None) => PushAccess::Disabled,
        (None, Some(_)) => match user {
            Some(user) => PushAccess::Allowed(Some(user)),
            None => PushAccess::Unauthenticated,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(user_password: &str) -> String {
        let encoded = base64::engine::general_purpose::STANDARD.encode(user_password);
        format!("Basic {encoded}")
    }

    fn credentials() -> Credentials {
        let hash = bcrypt::hash("secret", 4).unwrap();
        let mut users = HashMap::new();
        users.insert("alice".to_owned(), hash);
        Credentials { users }
    }

    #[test]
    fn only_the_right_password_authenticates() {
        let c = credentials();
        assert_eq!(
            c.authenticate(Some(&basic("alice:secret"))).as_deref(),
            Some("alice")
        );
        assert_eq!(c.authenticate(Some(&basic("alice:wrong"))), None);
        assert_eq!(c.authenticate(Some(&basic("bob:secret"))), None);
        assert_eq!(c.authenticate(Some("Bearer x")), None);
        assert_eq!(c.authenticate(Some("Basic !!!")), None);
        assert_eq!(c.authenticate(None), None);
    }

    #[test]
    fn receivepack_config_decides_as_http_backend() {
        let c = credentials();
        let good = basic("alice:secret");
        assert_eq!(push_access(None, None, Some(&good)), PushAccess::Disabled);
        assert_eq!(
            push_access(None, Some(&c), None),
            PushAccess::Unauthenticated
        );
        assert_eq!(
            push_access(None, Some(&c), Some(&good)),
            PushAccess::Allowed(Some("alice".to_owned()))
        );
        assert_eq!(
            push_access(Some(true), None, None),
            PushAccess::Allowed(None)
        );
        assert_eq!(
            push_access(Some(false), Some(&c), Some(&good)),
            PushAccess::Disabled
        );
    }

    #[test]
    fn entries_that_are_not_bcrypt_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("htpasswd");
        std::fs::write(&path, "alice:$apr1$abc$def\n").unwrap();
        assert!(matches!(
            Credentials::load(&path),
            Err(AuthFileError::BadEntry { line: 1, .. })
        ));
        std::fs::write(&path, "# users\n\nalice:$2y$05$abcdefghijklmnopqrstuu\n").unwrap();
        assert!(Credentials::load(&path).is_ok());
    }
}
