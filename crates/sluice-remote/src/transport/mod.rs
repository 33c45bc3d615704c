//! The byte streams upload-pack (or, for a push, receive-pack) is reached through. A stream
//! link (a local or ssh process, a `git://` socket) carries every request and response of one
//! session in order; an HTTP link is stateless, one POST per request, so each request yields a
//! fresh response stream.

mod failure;
mod http;
mod idle;
mod pinned;
mod process;
mod relayed;
mod settings;
mod spill;
mod ssh;
mod tcp;
mod tls;

pub use failure::{attempts_text, Attempt};
pub use http::HttpFailure;

/// Downloads `url` (http or https) into `out`, at most `limit` bytes, with the TLS trust,
/// timeouts and IP family `options` give: a bundle a server advertised.
pub fn download(
    url: &str,
    out: &mut dyn std::io::Write,
    options: &crate::ConnectOptions,
    limit: u64,
) -> Result<u64, crate::FetchError> {
    http::download(url, out, options, limit)
}
pub use process::stop_servers;
pub use settings::{server_options, SettingsError};

use crate::{FetchError, RemoteUrl};
use sluice_object::cancel::Cancel;
use std::io::{Read, Write};
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

/// The service a connection asks the server for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Service {
    /// upload-pack: fetches and clones.
    #[default]
    UploadPack,
    /// receive-pack: pushes (always protocol v0: git speaks v2 only to upload-pack).
    ReceivePack,
}

impl Service {
    /// git's name for it, as a program and in URLs: `git-upload-pack`, `git-receive-pack`.
    pub fn name(self) -> &'static str {
        match self {
            Service::UploadPack => "git-upload-pack",
            Service::ReceivePack => "git-receive-pack",
        }
    }
}

/// How to reach the server, from the command line and configuration.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// The service asked for.
    pub service: Service,
    /// The shell command that runs upload-pack on the other side (`--upload-pack`).
    pub upload_pack: String,
    /// The shell command that runs receive-pack on the other side (`--receive-pack`).
    pub receive_pack: String,
    /// The version asked for.
    pub protocol: ProtocolVersion,
    /// `GIT_SSH_COMMAND` or `core.sshCommand`: run through the shell with the arguments after.
    pub ssh_command: Option<String>,
    /// `GIT_SSH`: a program run directly.
    pub ssh_program: Option<String>,
    /// `ssh.variant` / `GIT_SSH_VARIANT`: whether the program takes OpenSSH's `-o` and `-p`.
    pub ssh_variant: Option<String>,
    /// The `http.*` settings, or the refusal of one: git reads them only to talk HTTP, so a
    /// bad one fails only a transfer over HTTP.
    pub http: Result<HttpSettings, std::sync::Arc<sluice_odb::ConfigError>>,
    /// How long the server may stay silent before the fetch fails.
    pub idle_timeout: Option<Duration>,
    /// `-4` / `-6`: which addresses to connect to.
    pub ip_version: IpVersion,
    /// `-o` / `--server-option` (else `remote.<name>.serverOption`): protocol v2's
    /// `server-option` lines.
    pub server_options: Vec<String>,
    /// `transfer.advertiseSID`: send this session's id to a server that advertises its own.
    pub advertise_sid: bool,
    /// Stops the transfer at the next buffer read from the server.
    pub cancel: Cancel,
    /// Which transports may be used; checked before any connection is made.
    pub protocols: crate::ProtocolPolicy,
    /// git's `--stateless-rpc`: the program that started this one relays the conversation
    /// through standard input and output (git's HTTP helper starting `send-pack`); the URL
    /// only names the repository.
    pub stateless_rpc: bool,
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

/// What the `http.*` settings say.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// `http.extraHeader` values, `Name: value`.
    pub extra_headers: Vec<String>,
    /// `http.postBuffer`: a push's request up to this size is sent whole, with its length.
    pub post_buffer: usize,
    /// Which https servers are trusted.
    pub tls_trust: TlsTrust,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            extra_headers: Vec::new(),
            post_buffer: DEFAULT_POST_BUFFER,
            tls_trust: TlsTrust::Default,
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
            service: Service::UploadPack,
            upload_pack: "git-upload-pack".to_owned(),
            receive_pack: "git-receive-pack".to_owned(),
            protocol: ProtocolVersion::V2,
            ssh_command: None,
            ssh_program: None,
            ssh_variant: None,
            http: Ok(HttpSettings::default()),
            idle_timeout: None,
            ip_version: IpVersion::Any,
            server_options: Vec::new(),
            advertise_sid: false,
            cancel: Cancel::default(),
            protocols: crate::ProtocolPolicy::default(),
            stateless_rpc: false,
        }
    }
}

impl ConnectOptions {
    /// The shell command that runs the service on the other side.
    pub(crate) fn program(&self) -> &str {
        match self.service {
            Service::UploadPack => &self.upload_pack,
            Service::ReceivePack => &self.receive_pack,
        }
    }
}

/// git's default `http.postBuffer`: 1 MiB.
pub(crate) const DEFAULT_POST_BUFFER: usize = 1 << 20;

/// The response stream of a link.
pub type Response = Box<dyn Read + Send>;

/// Writes a request as it is produced (a push's commands and pack).
pub type Producer<'a> = &'a mut (dyn FnMut(&mut dyn Write) -> std::io::Result<()> + Send);

/// One session's channel to upload-pack.
pub(crate) trait Link: Send {
    /// Sends a whole request. A stateless link returns the response's stream; a stream link
    /// returns `None` and the answer follows on the stream it opened with.
    fn send(&mut self, request: &[u8]) -> Result<Option<Response>, FetchError>;
    /// Sends a request that `produce` writes as it goes, never held whole; answers as `send`.
    fn send_streamed(&mut self, produce: Producer<'_>) -> Result<Option<Response>, FetchError>;
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
    let pushing;
    let options = match options.service {
        Service::UploadPack => options,
        Service::ReceivePack => {
            // As git: protocol v2 has no push, so a push speaks v0 whatever was configured.
            pushing = ConnectOptions {
                protocol: ProtocolVersion::V0,
                ..options.clone()
            };
            &pushing
        }
    };
    if options.stateless_rpc {
        return Ok(relayed::open());
    }
    options.protocols.check(url)?;
    match url {
        RemoteUrl::Local(path) => process::local(path, options),
        RemoteUrl::Ssh {
            user,
            host,
            port,
            path,
        } => ssh::connect(user.as_deref(), host, *port, path, options),
        RemoteUrl::Git { host, port, path } => tcp::connect(host, *port, path, options),
        RemoteUrl::Http(url) => http::connect(url, options),
        RemoteUrl::Helper { transport } => Err(FetchError::NoHelper {
            name: transport.clone(),
        }),
    }
}
