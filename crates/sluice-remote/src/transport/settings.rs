//! The connection settings git reads from the configuration and the environment:
//! `protocol.version`, the ssh program and its variant, `http.extraHeader`, TLS verification,
//! and how long a server may stay silent.

use super::{ConnectOptions, HttpSettings, ProtocolVersion, TlsTrust};
use sluice_odb::{Config, ConfigError};
use std::path::PathBuf;
use std::time::Duration;

/// How long a server may stay silent (keepalives count) before a fetch gives up, unless
/// `sluice.fetchTimeout` says otherwise (0: wait forever, as git does). Git's upload-pack sends
/// a keepalive every 5 seconds while it prepares a pack, so a live server is never this quiet.
const DEFAULT_TIMEOUT_SECS: i64 = 120;

/// Why the connection settings cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A setting has a value of the wrong type.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A `protocol.allow` setting names no policy.
    #[error(transparent)]
    Policy(#[from] crate::BadPolicy),
    /// `protocol.version` is none of 0, 1 and 2.
    #[error("unknown value for config 'protocol.version': {value}")]
    ProtocolVersion {
        /// The value given.
        value: String,
    },
}

impl ConnectOptions {
    /// The settings of `config` and the environment, as git reads them; `upload_pack` is
    /// `--upload-pack` or `remote.<name>.uploadpack`.
    pub fn from_config(
        config: &Config,
        upload_pack: Option<&str>,
    ) -> Result<ConnectOptions, SettingsError> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let protocol = match config.get("protocol.version") {
            None | Some("2") => ProtocolVersion::V2,
            Some("0" | "1") => ProtocolVersion::V0,
            Some(other) => {
                return Err(SettingsError::ProtocolVersion {
                    value: other.to_owned(),
                })
            }
        };
        let timeout = config
            .get_int("sluice.fetchTimeout")?
            .unwrap_or(DEFAULT_TIMEOUT_SECS);
        Ok(ConnectOptions {
            service: super::Service::UploadPack,
            upload_pack: upload_pack.unwrap_or("git-upload-pack").to_owned(),
            receive_pack: "git-receive-pack".to_owned(),
            protocol,
            ssh_command: env("GIT_SSH_COMMAND")
                .or_else(|| config.get("core.sshCommand").map(str::to_owned)),
            ssh_program: env("GIT_SSH"),
            // Set even to nothing, it overrides (and, naming no variant, means OpenSSH).
            ssh_variant: std::env::var("GIT_SSH_VARIANT")
                .ok()
                .or_else(|| config.get("ssh.variant").map(str::to_owned)),
            http: http_settings(config).map_err(std::sync::Arc::new),
            idle_timeout: (timeout > 0).then(|| Duration::from_secs(timeout as u64)),
            ip_version: super::IpVersion::Any,
            server_options: Vec::new(),
            advertise_sid: config.get_bool("transfer.advertisesid")?.unwrap_or(false),
            cancel: sluice_object::cancel::Cancel::default(),
            stateless_rpc: false,
            protocols: crate::ProtocolPolicy::from_config(config)?,
        })
    }
}

/// The `http.*` settings, read as git reads them when it talks HTTP.
fn http_settings(config: &Config) -> Result<HttpSettings, ConfigError> {
    Ok(HttpSettings {
        extra_headers: reset_list(config.get_all("http.extraHeader")),
        post_buffer: (config.get_int("http.postbuffer")?)
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n > 0)
            .unwrap_or(super::DEFAULT_POST_BUFFER),
        tls_trust: tls_trust(config)?,
    })
}

/// Which https servers are trusted. As git: `GIT_SSL_NO_VERIFY` set at all (even empty) turns
/// verification off, and `GIT_SSL_CAINFO` overrides `http.sslCAInfo`.
fn tls_trust(config: &Config) -> Result<TlsTrust, ConfigError> {
    let verify = std::env::var_os("GIT_SSL_NO_VERIFY").is_none()
        && config.get_bool("http.sslverify")?.unwrap_or(true);
    let ca_file = std::env::var("GIT_SSL_CAINFO")
        .ok()
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| config.get_path("http.sslCAInfo"));
    Ok(match (verify, ca_file) {
        (false, _) => TlsTrust::Anyone,
        (true, Some(path)) => TlsTrust::CaFile(path),
        (true, None) => TlsTrust::Default,
    })
}

/// The server options a fetch from `remote` sends: those given (`-o`), else
/// `remote.<name>.serverOption`'s values in order, an empty one dropping those before it (git
/// 2.49's setting).
pub fn server_options(given: &[String], config: &Config, remote: &str) -> Vec<String> {
    match given.is_empty() {
        false => given.to_vec(),
        true => reset_list(config.get_all(&format!("remote.{remote}.serveroption"))),
    }
}

/// A multi-valued setting's values in order; as in git, an empty one drops those before it (so
/// a repository's config can undo a global value).
fn reset_list(values: Vec<&str>) -> Vec<String> {
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
