//! Which transports may be used (`protocol.allow`, `protocol.<name>.allow`,
//! `GIT_ALLOW_PROTOCOL`, `GIT_PROTOCOL_FROM_USER`), as git decides before it connects: a
//! hardened machine turns transports off, and a submodule's URL, which the repository chose
//! rather than the user, may not reach local files unless configured so.

use crate::{FetchError, RemoteUrl};
use sluice_odb::Config;

/// A transport's policy, as `protocol.<name>.allow` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Always allowed.
    Always,
    /// Never allowed.
    Never,
    /// Allowed when the user asked for it (`GIT_PROTOCOL_FROM_USER` unset or 1), not when a
    /// repository did (a submodule's URL).
    User,
}

impl Policy {
    fn named(value: &str) -> Option<Policy> {
        match value {
            "always" => Some(Policy::Always),
            "never" => Some(Policy::Never),
            "user" => Some(Policy::User),
            _ => None,
        }
    }
}

/// The transports allowed here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolPolicy {
    /// `GIT_ALLOW_PROTOCOL`: only these, whatever the configuration says.
    only: Option<Vec<String>>,
    /// `protocol.allow`.
    default: Option<Policy>,
    /// `protocol.<name>.allow`, the last of each name winning.
    named: Vec<(String, Policy)>,
    /// `GIT_PROTOCOL_FROM_USER` unset or true.
    from_user: bool,
}

impl Default for ProtocolPolicy {
    /// git's defaults, asked for by the user.
    fn default() -> Self {
        ProtocolPolicy {
            only: None,
            default: None,
            named: Vec::new(),
            from_user: true,
        }
    }
}

/// A policy setting naming none of git's policies (git's words).
#[derive(Debug, thiserror::Error)]
#[error("unknown value for config '{key}': {value}")]
pub struct BadPolicy {
    /// The setting.
    pub key: String,
    /// Its value.
    pub value: String,
}

impl ProtocolPolicy {
    /// The policy of `config` and the environment.
    pub fn from_config(config: &Config) -> Result<ProtocolPolicy, BadPolicy> {
        let policy = |key: &str, value: &str| {
            Policy::named(value).ok_or_else(|| BadPolicy {
                key: key.to_owned(),
                value: value.to_owned(),
            })
        };
        let default = match config.get("protocol.allow") {
            Some(value) => Some(policy("protocol.allow", value)?),
            None => None,
        };
        let mut named = Vec::new();
        for (name, value) in config.subsection_values("protocol", "allow") {
            named.push((
                name.to_owned(),
                policy(&format!("protocol.{name}.allow"), value)?,
            ));
        }
        let only = std::env::var("GIT_ALLOW_PROTOCOL")
            .ok()
            .map(|list| list.split(':').map(str::to_owned).collect());
        let from_user = match std::env::var("GIT_PROTOCOL_FROM_USER") {
            Ok(value) => matches!(
                value.to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            ),
            Err(_) => true,
        };
        Ok(ProtocolPolicy {
            only,
            default,
            named,
            from_user,
        })
    }

    /// The same policy, for what a repository asked for rather than the user (git sets
    /// `GIT_PROTOCOL_FROM_USER=0` for a submodule's clone).
    pub fn not_from_user(mut self) -> ProtocolPolicy {
        self.from_user = false;
        self
    }

    /// Whether the transport `name` (`file`, `ssh`, `git`, `http`, `https`) may be used.
    pub fn allows(&self, name: &str) -> bool {
        if let Some(only) = &self.only {
            return only.iter().any(|allowed| allowed == name);
        }
        let configured = (self.named.iter().rev())
            .find(|(named, _)| named == name)
            .map(|(_, policy)| *policy);
        let policy = configured.or(self.default).unwrap_or(match name {
            "http" | "https" | "git" | "ssh" => Policy::Always,
            // git's known-dangerous transport: it runs a command the URL names.
            "ext" => Policy::Never,
            _ => Policy::User,
        });
        match policy {
            Policy::Always => true,
            Policy::Never => false,
            Policy::User => self.from_user,
        }
    }

    /// Refuses `url` when its transport is not allowed, with git's words.
    pub fn check(&self, url: &RemoteUrl) -> Result<(), FetchError> {
        let name = url.transport_name();
        match self.allows(name) {
            true => Ok(()),
            false => Err(FetchError::TransportNotAllowed {
                name: name.to_owned(),
            }),
        }
    }
}
