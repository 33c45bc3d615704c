//! What clone, fetch and fetch-pack share: reaching a remote with the settings git reads
//! (`protocol.version`, ssh commands, `http.extraHeader`), receiving a pack into the
//! repository and checking that it holds what was asked for.

use super::index_pack::receive_into;
use super::Context;
use anyhow::{anyhow, bail, Context as _};
use sluice_fetch::{
    anonymized, ConnectOptions, Connection, FetchRequest, Negotiator, ProtocolVersion, RemoteUrl,
    TlsTrust,
};
use sluice_object::{ObjectId, ObjectKind};
use sluice_odb::pack_store::Alongside;
use sluice_odb::{Config, LooseObjects, ObjectDb, Pack, Repository};
use sluice_pack::{LinkCheck, ObjectLookup};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// How long a server may stay silent (keepalives count) before a fetch gives up, unless
/// `sluice.fetchTimeout` says otherwise (0: wait forever, as git does). Git's upload-pack sends
/// a keepalive every 5 seconds while it prepares a pack, so a live server is never this quiet.
const DEFAULT_TIMEOUT_SECS: i64 = 120;

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

/// The connection settings of `config` and the environment, as git reads them.
pub(crate) fn connect_options(
    config: &Config,
    upload_pack: Option<&str>,
) -> anyhow::Result<ConnectOptions> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let protocol = match config.get("protocol.version") {
        None | Some("2") => ProtocolVersion::V2,
        Some("0" | "1") => ProtocolVersion::V0,
        Some(other) => bail!("unknown value for config 'protocol.version': {other}"),
    };
    // As git: GIT_SSL_NO_VERIFY set at all (even empty) turns verification off, and
    // GIT_SSL_CAINFO overrides http.sslCAInfo.
    let verify = std::env::var_os("GIT_SSL_NO_VERIFY").is_none()
        && config.get_bool("http.sslVerify")?.unwrap_or(true);
    let ca_file = env("GIT_SSL_CAINFO")
        .map(PathBuf::from)
        .or_else(|| config.get_path("http.sslCAInfo"));
    let tls_trust = match (verify, ca_file) {
        (false, _) => TlsTrust::Anyone,
        (true, Some(path)) => TlsTrust::CaFile(path),
        (true, None) => TlsTrust::Default,
    };
    let timeout = config
        .get_int("sluice.fetchTimeout")?
        .unwrap_or(DEFAULT_TIMEOUT_SECS);
    Ok(ConnectOptions {
        upload_pack: upload_pack.unwrap_or("git-upload-pack").to_owned(),
        protocol,
        ssh_command: env("GIT_SSH_COMMAND")
            .or_else(|| config.get("core.sshCommand").map(str::to_owned)),
        ssh_program: env("GIT_SSH"),
        ssh_variant: env("GIT_SSH_VARIANT")
            .or_else(|| config.get("ssh.variant").map(str::to_owned)),
        http_extra_headers: extra_headers(config.get_all("http.extraHeader")),
        tls_trust,
        idle_timeout: (timeout > 0).then(|| Duration::from_secs(timeout as u64)),
    })
}

/// `http.extraHeader`'s values in order; as in git, an empty one drops those before it (so a
/// repository's config can undo a global header).
fn extra_headers(values: Vec<&str>) -> Vec<String> {
    let mut headers = Vec::new();
    for value in values {
        if value.is_empty() {
            headers.clear();
        } else {
            headers.push(value.to_owned());
        }
    }
    headers
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

/// A pack received into the repository.
#[derive(Debug)]
pub(crate) struct Received {
    /// The `.pack` file (its `.idx`, `.rev` and `.keep` beside it).
    pub pack: PathBuf,
    /// index-pack's report line.
    pub report: String,
    /// Commits the server made shallow, and those it made whole.
    pub shallow: Vec<ObjectId>,
    pub unshallow: Vec<ObjectId>,
    /// Where the server's own history is cut (see `remote_shallow`).
    pub remote_shallow: Vec<ObjectId>,
}

impl Received {
    /// Removes the pack and everything written beside it.
    pub fn remove(&self) {
        for extension in ["pack", "idx", "rev", "keep", "promisor"] {
            let _ = std::fs::remove_file(self.pack.with_extension(extension));
        }
    }
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

/// How a fetched pack is stored.
#[derive(Default)]
pub(crate) struct Receiving<'a> {
    pub(crate) show_progress: bool,
    /// Keep the pack with a `.keep` file holding this message.
    pub(crate) keep: Option<String>,
    /// Work that reads the objects while the deltas are resolved; the pack must then not be
    /// thin (no haves were offered).
    pub(crate) alongside: Option<&'a Alongside<'a>>,
    /// Where fix-thin finds the delta bases a thin pack leaves out, when not simply in the
    /// repository (a partial clone fetches those it lacks: see `Promised`).
    pub(crate) objects: Option<&'a dyn ObjectLookup>,
    /// Refuse the pack, before it is put in place, unless it and the repository hold all that
    /// these tips reach.
    pub(crate) connectivity: Option<LinkCheck>,
}

/// Fetches `request` (haves from `negotiator`) into `repo` as `index-pack --stdin --fix-thin`
/// stores it, then checks that every wanted object arrived; a pack that lacks one is removed.
pub(crate) fn fetch_into(
    connection: &mut Connection,
    repo: &Repository,
    request: &FetchRequest,
    negotiator: &mut dyn Negotiator,
    mut receiving: Receiving<'_>,
) -> anyhow::Result<Received> {
    if request.filter.is_some() && !connection.filters() {
        eprintln!("warning: filtering not recognized by server, ignoring");
    }
    let fetched = connection.fetch(request, negotiator, remote_progress())?;
    let (shallow, unshallow, remote_shallow) =
        (fetched.shallow, fetched.unshallow, fetched.remote_shallow);
    // As git: every tip must be complete. The objects a filtered (promisor) pack leaves out are
    // the promisor remote's to give later, so only its tips must be there.
    if request.filter.is_none() {
        let mut cut: Vec<ObjectId> = repo.shallow_commits()?;
        cut.extend(&request.shallow);
        cut.extend(&shallow);
        // A shallow server's own cut: its commits there come without parents.
        cut.extend(&remote_shallow);
        cut.retain(|id| !unshallow.contains(id));
        receiving.connectivity = Some(LinkCheck {
            tips: request.wants.clone(),
            shallow: cut,
        });
    }
    let mut pack = fetched.pack;
    let stored = receive_into(&mut pack, repo, receiving)?;
    drop(pack);
    let received = Received {
        report: stored.to_string(),
        pack: stored.pack,
        shallow,
        unshallow,
        remote_shallow,
    };
    let odb = ObjectDb::open(repo.objects().dir(), repo.hash())?;
    if let Some(missing) = request.wants.iter().find(|id| !odb.contains(id)) {
        received.remove();
        bail!("remote did not send all necessary objects ({missing} is missing)");
    }
    Ok(received)
}

/// Writes a small received pack's objects as loose objects and removes the pack, as git does
/// for fetches of fewer than `transfer.unpackLimit` objects, but for those `had` holds already
/// (the repository's, or delta bases a partial clone fetched for this pack). Returns whether it
/// did.
pub(crate) fn unpack_if_small(
    received: &Received,
    repo: &Repository,
    had: &dyn ObjectLookup,
) -> anyhow::Result<bool> {
    let config = repo.config();
    let limit = match config.get_int("fetch.unpackLimit")? {
        Some(limit) => limit,
        None => config.get_int("transfer.unpackLimit")?.unwrap_or(100),
    };
    let pack = Pack::open(&received.pack.with_extension("idx"), repo.hash())?;
    let count = pack.index().len();
    if limit <= 0 || count as i64 >= limit {
        return Ok(false);
    }
    let loose = LooseObjects::new(repo.objects().dir(), repo.hash());
    let level = config
        .get_int("core.looseCompression")?
        .unwrap_or(1)
        .clamp(0, 9) as u32;
    // What the repository had before this pack is not written again, as git's unpack-objects
    // does not write it. Only objects opened before the pack arrived can say so.
    let opened_before = repo
        .objects()
        .packs()
        .iter()
        .all(|p| p.path() != received.pack);
    for position in 0..count {
        if opened_before && had.contains(&pack.index().id(position)) {
            continue;
        }
        let (kind, data): (ObjectKind, Vec<u8>) = pack.read_position(position)?;
        loose.write(kind, &data, level)?;
    }
    drop(pack);
    received.remove();
    Ok(true)
}
