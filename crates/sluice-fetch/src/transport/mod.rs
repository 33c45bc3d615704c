//! The byte streams upload-pack is reached through. A stream link (a local or ssh process, a
//! `git://` socket) carries every request and response of one session in order; an HTTP link
//! is stateless, one POST per request, so each request yields a fresh response stream.

mod http;
mod idle;
mod process;
mod settings;
mod tcp;

pub use http::HttpFailure;
pub use process::stop_servers;
pub use settings::SettingsError;

use crate::{FetchError, RemoteUrl};
use std::io::Read;
use std::time::Duration;

pub(crate) use idle::IdleTimeout;

/// The protocol version the client asks for (`protocol.version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProtocolVersion {
    /// Version 0 (or 1): the server advertises its refs at once.
    V0,
    /// Version 2: commands, `ls-refs` and `fetch` (git's default since 2.26).
    #[default]
    V2,
}

/// How to reach the server, from the command line and configuration.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// The shell command that runs upload-pack on the other side (`--upload-pack`).
    pub upload_pack: String,
    /// The version asked for.
    pub protocol: ProtocolVersion,
    /// `GIT_SSH_COMMAND` or `core.sshCommand`: run through the shell with the arguments after.
    pub ssh_command: Option<String>,
    /// `GIT_SSH`: a program run directly.
    pub ssh_program: Option<String>,
    /// `ssh.variant` / `GIT_SSH_VARIANT`: whether the program takes OpenSSH's `-o` and `-p`.
    pub ssh_variant: Option<String>,
    /// `http.extraHeader` values, `Name: value`.
    pub http_extra_headers: Vec<String>,
    /// Which https servers are trusted.
    pub tls_trust: TlsTrust,
    /// How long the server may stay silent before the fetch fails.
    pub idle_timeout: Option<Duration>,
    /// `-4` / `-6`: which addresses to connect to.
    pub ip_version: IpVersion,
    /// `-o` / `--server-option` (else `remote.<name>.serverOption`): protocol v2's
    /// `server-option` lines.
    pub server_options: Vec<String>,
    /// `transfer.advertiseSID`: send this session's id to a server that advertises its own.
    pub advertise_sid: bool,
}

/// Which addresses a connection may use (`-4`, `-6`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IpVersion {
    /// Either.
    #[default]
    Any,
    /// IPv4 only.
    V4,
    /// IPv6 only.
    V6,
}

impl IpVersion {
    /// From `-4` and `-6` (the last given wins, which the command line decides).
    pub fn from_flags(ipv4: bool, ipv6: bool) -> IpVersion {
        match (ipv4, ipv6) {
            (true, _) => IpVersion::V4,
            (_, true) => IpVersion::V6,
            _ => IpVersion::Any,
        }
    }

    /// Whether `address` may be used.
    pub fn allows(self, address: &std::net::SocketAddr) -> bool {
        match self {
            IpVersion::Any => true,
            IpVersion::V4 => address.is_ipv4(),
            IpVersion::V6 => address.is_ipv6(),
        }
    }
}

/// Which servers an https connection trusts, as git's `http.ssl*` settings choose.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TlsTrust {
    /// Servers whose certificate chains to one of Mozilla's root certificates.
    #[default]
    Default,
    /// Servers whose certificate chains to one in this PEM file, and no others
    /// (`http.sslCAInfo`, `GIT_SSL_CAINFO`).
    CaFile(std::path::PathBuf),
    /// Any server, unverified (`http.sslVerify=false`, `GIT_SSL_NO_VERIFY`).
    Anyone,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            upload_pack: "git-upload-pack".to_owned(),
            protocol: ProtocolVersion::V2,
            ssh_command: None,
            ssh_program: None,
            ssh_variant: None,
            http_extra_headers: Vec::new(),
            tls_trust: TlsTrust::Default,
            idle_timeout: None,
            ip_version: IpVersion::Any,
            server_options: Vec::new(),
            advertise_sid: false,
        }
    }
}

/// The response stream of a link.
pub(crate) type Response = Box<dyn Read + Send>;

/// One session's channel to upload-pack.
pub(crate) trait Link: Send {
    /// Sends a whole request. A stateless link returns the response's stream; a stream link
    /// returns `None` and the answer follows on the stream it opened with.
    fn send(&mut self, request: &[u8]) -> Result<Option<Response>, FetchError>;
    /// Whether every request must carry the whole state of the conversation.
    fn stateless(&self) -> bool;
    /// Ends the session: closes the request side and waits for the server to exit cleanly.
    fn finish(self: Box<Self>) -> Result<(), FetchError>;
    /// Where the server redirected the repository on connecting, if it did (smart HTTP).
    fn redirected_to(&self) -> Option<&str> {
        None
    }
}

/// Opens a link to the repository at `url`; returns it with the stream the server's first
/// words (its advertisement) arrive on.
pub(crate) fn open(
    url: &RemoteUrl,
    options: &ConnectOptions,
) -> Result<(Box<dyn Link>, Response), FetchError> {
    match url {
        RemoteUrl::Local(path) => process::local(path, options),
        RemoteUrl::Ssh {
            user,
            host,
            port,
            path,
        } => process::ssh(user.as_deref(), host, *port, path, options),
        RemoteUrl::Git { host, port, path } => tcp::connect(host, *port, path, options),
        RemoteUrl::Http(url) => http::connect(url, options),
    }
}
