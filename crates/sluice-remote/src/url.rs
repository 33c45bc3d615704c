//! Where a repository lives, from the forms git accepts (`git help fetch`, "GIT URLS"): local
//! paths and `file://`, `ssh://[user@]host[:port]/path` and scp-like `[user@]host:path`,
//! `git://host[:port]/path`, `http[s]://…`.

use crate::FetchError;
use std::path::PathBuf;

/// A parsed repository location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteUrl {
    /// A repository on this machine (a path, or a `file://` URL).
    Local(PathBuf),
    /// A repository reached by running upload-pack through ssh.
    Ssh {
        /// The login name, when given.
        user: Option<String>,
        /// The host name (IPv6 literals without their brackets).
        host: String,
        /// The port, when given.
        port: Option<u16>,
        /// The path as the remote shell should see it.
        path: String,
    },
    /// A `git://` daemon.
    Git {
        /// The host name.
        host: String,
        /// The port (9418 when not given).
        port: u16,
        /// The path requested from the daemon.
        path: String,
    },
    /// A smart HTTP server; the URL as given.
    Http(String),
    /// `<transport>::<address>`: git's remote helper `git-remote-<transport>`, which Sluice
    /// does not run (`ext::` among them, which git refuses unless allowed).
    Helper {
        /// The helper's name.
        transport: String,
    },
}

impl RemoteUrl {
    /// git's name for the transport that reaches it, as `protocol.<name>.allow` names it.
    pub fn transport_name(&self) -> &str {
        match self {
            RemoteUrl::Local(_) => "file",
            RemoteUrl::Ssh { .. } => "ssh",
            RemoteUrl::Git { .. } => "git",
            RemoteUrl::Http(url) if url.starts_with("https:") => "https",
            RemoteUrl::Http(_) => "http",
            RemoteUrl::Helper { transport } => transport,
        }
    }
}

fn bad(url: &str, why: impl Into<std::borrow::Cow<'static, str>>) -> FetchError {
    FetchError::Url {
        url: url.to_owned(),
        why: why.into(),
    }
}

/// Splits `host[:port]` (with `[v6]` brackets allowed).
fn host_and_port(url: &str, text: &str) -> Result<(String, Option<u16>), FetchError> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or_else(|| bad(url, "unclosed '[' in the host"))?;
        (host, after.strip_prefix(':'))
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    if host.is_empty() {
        return Err(bad(url, "no host"));
    }
    // A host starting with '-' would be taken by ssh for an option.
    if host.starts_with('-') {
        return Err(bad(url, "strange host name"));
    }
    let port = match port {
        None | Some("") => None,
        Some(digits) => Some(digits.parse().map_err(|_| bad(url, "bad port"))?),
    };
    Ok((host.to_owned(), port))
}

/// Decodes `%xx` escapes in a URL's path, as git does for `file://` and `ssh://` paths (an
/// escape that is none stays as written).
fn percent_decode(url: &str, text: &str) -> Result<String, FetchError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        // As git's: what is no escape (`%zz`, a `%` at the end) stays as it is.
        let escaped = (bytes.get(i + 1..i + 3))
            .filter(|_| bytes[i] == b'%')
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        if let Some(byte) = escaped {
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad(url, "path is not UTF-8"))
}

impl RemoteUrl {
    /// Parses `url`; relative local paths are left relative (the caller knows the directory).
    pub fn parse(url: &str) -> Result<RemoteUrl, FetchError> {
        if url.is_empty() {
            return Err(bad(url, "empty repository name"));
        }
        // git's `<transport>::<address>`: a letter, then letters, digits, `+`, `-` or `.`.
        if let Some((transport, _)) = url.split_once("::") {
            let mut chars = transport.chars();
            let scheme_like = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
            if scheme_like {
                let transport = transport.to_owned();
                return Ok(RemoteUrl::Helper { transport });
            }
        }
        if let Some((scheme, rest)) = url.split_once("://") {
            let (authority, path) = match rest.find('/') {
                Some(slash) => rest.split_at(slash),
                None => (rest, ""),
            };
            return match scheme {
                // git reads no host in a `file://` URL (`file://localhost/srv/r` is /srv/r).
                "file" if path.is_empty() => Err(FetchError::NoPath),
                "file" => Ok(RemoteUrl::Local(PathBuf::from(percent_decode(url, path)?))),
                "http" | "https" => Ok(RemoteUrl::Http(url.to_owned())),
                "ssh" | "git+ssh" | "ssh+git" => {
                    // git decodes the whole URL, the host included (`[fe80::1%25eth0]`).
                    let authority = percent_decode(url, authority)?;
                    let (user, host_port) = match authority.rsplit_once('@') {
                        Some((user, hp)) => (Some(user.to_owned()), hp),
                        None => (None, authority.as_str()),
                    };
                    let (host, port) = host_and_port(url, host_port)?;
                    let mut path = percent_decode(url, path)?;
                    if path.is_empty() {
                        return Err(bad(url, "no path"));
                    }
                    // `ssh://host/~user/repo` names a path in a home directory.
                    if path.starts_with("/~") {
                        path.remove(0);
                    }
                    Ok(RemoteUrl::Ssh {
                        user,
                        host,
                        port,
                        path,
                    })
                }
                "git" => {
                    let (host, port) = host_and_port(url, authority)?;
                    if path.is_empty() {
                        return Err(bad(url, "no path"));
                    }
                    Ok(RemoteUrl::Git {
                        host,
                        port: port.unwrap_or(9418),
                        path: percent_decode(url, path)?,
                    })
                }
                other => Err(bad(url, format!("unsupported protocol '{other}'"))),
            };
        }
        // scp-like: a colon before any slash.
        match url.find(':') {
            Some(colon) if !url[..colon].contains('/') => scp_like(url),
            _ => Ok(RemoteUrl::Local(PathBuf::from(url))),
        }
    }
}

/// `[user@]host:path`, where the host may be bracketed (`[host:port]:path`,
/// `[user@host:port]:path`, `user@[::1]:path`): the path starts after the first colon past the
/// brackets, and a port is what follows the host's first colon when it is all digits.
fn scp_like(url: &str) -> Result<RemoteUrl, FetchError> {
    let open = match url.find("@[") {
        Some(at) => Some(at + 1),
        None => url.starts_with('[').then_some(0),
    };
    let close = open.and_then(|open| url[open..].find(']').map(|c| open + c));
    let (host_part, rest) = match (open, close) {
        (Some(open), Some(close)) => (
            format!("{}{}", &url[..open], &url[open + 1..close]),
            &url[close + 1..],
        ),
        _ => (String::new(), url),
    };
    let colon = rest.find(':').ok_or_else(|| bad(url, "no path"))?;
    let host_part = format!("{host_part}{}", &rest[..colon]);
    let path = &rest[colon + 1..];
    let (user, host_port) = match host_part.rsplit_once('@') {
        Some((user, host)) => (Some(user.to_owned()), host),
        None => (None, host_part.as_str()),
    };
    let (host, port) = match host_port.split_once(':') {
        Some((host, digits))
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) =>
        {
            match digits.parse::<u16>() {
                Ok(port) => (host, Some(port)),
                Err(_) => (host_port, None),
            }
        }
        // Anything else stays in the host, as git leaves it (`[foo:]:path` asks ssh for `foo:`).
        _ => (host_port, None),
    };
    if host.is_empty() || host.starts_with('-') {
        return Err(bad(url, "strange host name"));
    }
    if path.is_empty() {
        return Err(bad(url, "no path"));
    }
    Ok(RemoteUrl::Ssh {
        user,
        host: host.to_owned(),
        port,
        path: path.to_owned(),
    })
}

/// Splits the `user[:password]` of a `scheme://user[:password]@host/path` URL from the rest,
/// returning it and the URL without it; `None` when there is none.
pub(crate) fn split_userinfo(url: &str) -> Option<(&str, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let sane_scheme = !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b));
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    let (userinfo, host) = authority.rsplit_once('@').filter(|_| sane_scheme)?;
    Some((
        userinfo,
        format!("{scheme}://{host}{}", &rest[authority.len()..]),
    ))
}

/// `url` as git shows it in messages, `FETCH_HEAD` and reflogs: without the user name and
/// password, which belong in the configuration and nowhere else. `scheme://user:pw@host/path`
/// becomes `scheme://host/path` and scp-like `user@host:path` becomes `host:path`; local paths,
/// and anything whose `@` is not in a host part, stay as they are.
pub fn anonymized(url: &str) -> String {
    if url.contains("://") {
        return match split_userinfo(url) {
            Some((_, stripped)) => stripped,
            None => url.to_owned(),
        };
    }
    match RemoteUrl::parse(url) {
        Ok(RemoteUrl::Ssh { .. }) => match url.split_once('@') {
            Some((user, host_path)) if !user.contains(':') => host_path.to_owned(),
            _ => url.to_owned(),
        },
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{anonymized, RemoteUrl};
    use std::path::PathBuf;

    #[test]
    fn anonymized_urls_lose_their_credentials_only() {
        let cases = [
            (
                "https://me:secret@example.org/r.git",
                "https://example.org/r.git",
            ),
            (
                "https://me@example.org:8443/r",
                "https://example.org:8443/r",
            ),
            ("ssh://me@host:22/srv/r", "ssh://host:22/srv/r"),
            ("me@host:r.git", "host:r.git"),
            ("https://example.org/a@b", "https://example.org/a@b"),
            ("../me@home/repo", "../me@home/repo"),
            ("/srv/r.git", "/srv/r.git"),
            ("file:///srv/r.git", "file:///srv/r.git"),
        ];
        for (url, shown) in cases {
            assert_eq!(anonymized(url), shown, "{url}");
        }
    }

    fn ssh(user: Option<&str>, host: &str, port: Option<u16>, path: &str) -> RemoteUrl {
        RemoteUrl::Ssh {
            user: user.map(str::to_owned),
            host: host.to_owned(),
            port,
            path: path.to_owned(),
        }
    }

    #[test]
    fn every_form_git_documents_parses() {
        let cases = [
            (
                "/srv/repo.git",
                RemoteUrl::Local(PathBuf::from("/srv/repo.git")),
            ),
            ("../repo", RemoteUrl::Local(PathBuf::from("../repo"))),
            ("./a:b", RemoteUrl::Local(PathBuf::from("./a:b"))),
            (
                "file:///srv/a%20b.git",
                RemoteUrl::Local(PathBuf::from("/srv/a b.git")),
            ),
            (
                "ssh://me@host:2222/srv/r.git",
                ssh(Some("me"), "host", Some(2222), "/srv/r.git"),
            ),
            ("ssh://host/~me/r.git", ssh(None, "host", None, "~me/r.git")),
            ("ssh://[::1]:22/r", ssh(None, "::1", Some(22), "/r")),
            ("me@host:r.git", ssh(Some("me"), "host", None, "r.git")),
            ("host:/srv/r.git", ssh(None, "host", None, "/srv/r.git")),
            (
                "git://example.org/r.git",
                RemoteUrl::Git {
                    host: "example.org".into(),
                    port: 9418,
                    path: "/r.git".into(),
                },
            ),
            (
                "https://example.org/r.git",
                RemoteUrl::Http("https://example.org/r.git".into()),
            ),
        ];
        for (url, expected) in cases {
            assert_eq!(RemoteUrl::parse(url).unwrap(), expected, "{url}");
        }
    }

    #[test]
    fn hosts_that_would_be_ssh_options_and_unknown_schemes_are_refused() {
        for url in [
            "ssh://-oProxyCommand=x/r",
            "-oProxyCommand=x:r",
            "ftp://host/r",
            "ssh://host:port/r",
            "git://host",
            "",
        ] {
            assert!(RemoteUrl::parse(url).is_err(), "{url}");
        }
    }
}
