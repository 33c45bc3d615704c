//! What clone, fetch and fetch-pack share on the command line: naming a remote as git records
//! and shows it, git's messages for a remote that cannot be reached, and the server's progress
//! shown after `remote: `.

use super::Context;
use anyhow::{anyhow, bail, Context as _};
use sluice_fetch::receive::{self, Received, Receiving};
use sluice_fetch::{anonymized, ConnectOptions, Connection, FetchRequest, Negotiator, RemoteUrl};
use sluice_odb::Repository;
use std::io::Write;

/// A remote repository: where it is, how git would record it in `remote.<name>.url`, and how
/// messages and `FETCH_HEAD` name it.
#[derive(Debug, Clone)]
pub(crate) struct Remote {
    pub url: RemoteUrl,
    pub recorded: String,
    /// The URL as given, without credentials (git's "anonymized" URL).
    pub shown: String,
}

/// Parses `text` as git does; local paths become absolute, as `git clone` records them.
pub(crate) fn resolve(context: &Context, text: &str) -> anyhow::Result<Remote> {
    let url = RemoteUrl::parse(text)?;
    Ok(match url {
        RemoteUrl::Local(path) => {
            let absolute = std::path::absolute(context.cwd.join(&path))?;
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

/// Connects to `remote`, with git's message for a local repository that is not there.
pub(crate) fn connect(remote: &Remote, options: &ConnectOptions) -> anyhow::Result<Connection> {
    if let RemoteUrl::Local(path) = &remote.url {
        if !path.exists() {
            bail!(
                "'{}' does not appear to be a git repository\n\
                 fatal: Could not read from remote repository.\n\n\
                 Please make sure you have the correct access rights\n\
                 and the repository exists.",
                remote.shown
            );
        }
    }
    let connection = Connection::open(&remote.url, options)
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("could not read from remote repository '{}'", remote.shown))?;
    if let Some(url) = connection.redirected_to() {
        eprintln!("warning: redirecting to {url}");
    }
    Ok(connection)
}

/// Prints band 2 as git does: each line of the server's progress after `remote: `.
fn remote_progress() -> impl FnMut(&[u8]) {
    let mut at_line_start = true;
    move |text: &[u8]| {
        let mut err = std::io::stderr().lock();
        for piece in text.split_inclusive(|&b| b == b'\n' || b == b'\r') {
            if at_line_start {
                let _ = err.write_all(b"remote: ");
            }
            let _ = err.write_all(piece);
            at_line_start = piece.ends_with(b"\n") || piece.ends_with(b"\r");
        }
    }
}

/// Fetches `request` (haves from `negotiator`) into `repo` as `index-pack --stdin --fix-thin`
/// stores it, the server's progress shown as git shows it; see [`sluice_fetch::receive`].
pub(crate) fn fetch_into(
    connection: &mut Connection,
    repo: &Repository,
    request: &FetchRequest,
    negotiator: &mut dyn Negotiator,
    receiving: Receiving<'_>,
) -> anyhow::Result<Received> {
    if request.filter.is_some() && !connection.filters() {
        eprintln!("warning: filtering not recognized by server, ignoring");
    }
    let progress = remote_progress();
    Ok(receive::fetch_into(
        connection, repo, request, negotiator, receiving, progress,
    )?)
}
