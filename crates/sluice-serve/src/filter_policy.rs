//! Which object filters upload-pack grants, as git's configuration says (`uploadpackfilter.allow`,
//! `uploadpackfilter.<filter>.allow`, `uploadpackfilter.tree.maxDepth`): hosts turn off the
//! filters that cost them most to compute, and bound `tree:<depth>`.

use crate::request_error::RequestError;
use sluice_graph::ObjectFilter;
use sluice_odb::{Config, ConfigError};

/// The filters git knows, by the name its settings use.
const KINDS: [&str; 6] = [
    "blob:none",
    "blob:limit",
    "tree",
    "sparse:oid",
    "object:type",
    "combine",
];

/// What the repository's settings grant.
#[derive(Debug, Clone)]
pub(crate) struct FilterPolicy {
    /// `uploadpackfilter.allow`: filters not named below (default true).
    allow: bool,
    /// `uploadpackfilter.<filter>.allow`, for the filters that set it.
    by_kind: Vec<(&'static str, bool)>,
    /// `uploadpackfilter.tree.maxDepth`.
    tree_max_depth: Option<u64>,
}

impl FilterPolicy {
    /// Reads the settings; a malformed value is an error before anything is served, as git's.
    pub(crate) fn from_config(config: &Config) -> Result<FilterPolicy, ConfigError> {
        let allow = config.get_bool("uploadpackfilter.allow")?.unwrap_or(true);
        let mut by_kind = Vec::new();
        for kind in KINDS {
            if let Some(on) = config.get_bool(&format!("uploadpackfilter.{kind}.allow"))? {
                by_kind.push((kind, on));
            }
        }
        let tree_max_depth = config
            .get_int("uploadpackfilter.tree.maxdepth")?
            .map(|n| n.max(0) as u64);
        Ok(FilterPolicy {
            allow,
            by_kind,
            tree_max_depth,
        })
    }

    /// Judges the spec of a `filter` line: the filter to apply, or git's refusal.
    pub(crate) fn judge(&self, spec: &str) -> Result<ObjectFilter, RequestError> {
        self.granted(spec)?;
        ObjectFilter::parse(spec).ok_or_else(|| match kind_of(spec) {
            // Known to git, granted here, but not computed by this server.
            Some(kind) => RequestError::FilterUnsupported { kind },
            None => RequestError::InvalidFilter {
                spec: spec.to_owned(),
            },
        })
    }

    /// Refuses what the settings do not grant; a `combine:` asks for each of its parts.
    fn granted(&self, spec: &str) -> Result<(), RequestError> {
        let Some(kind) = kind_of(spec) else {
            return Err(RequestError::InvalidFilter {
                spec: spec.to_owned(),
            });
        };
        let allowed = (self.by_kind.iter())
            .find(|(k, _)| *k == kind)
            .map_or(self.allow, |&(_, on)| on);
        if !allowed {
            return Err(RequestError::FilterNotSupported { kind });
        }
        if let (Some(max), Some(depth)) = (self.tree_max_depth, spec.strip_prefix("tree:")) {
            let depth: u64 = depth.parse().map_err(|_| RequestError::InvalidFilter {
                spec: spec.to_owned(),
            })?;
            if depth > max {
                return Err(RequestError::TreeDepthTooDeep { max, depth });
            }
        }
        if let Some(parts) = spec.strip_prefix("combine:") {
            for part in parts.split('+') {
                self.granted(&percent_decode(part))?;
            }
        }
        Ok(())
    }
}

/// The name git's settings give the filter of `spec`.
fn kind_of(spec: &str) -> Option<&'static str> {
    KINDS.into_iter().find(|kind| match *kind {
        "blob:none" => spec == "blob:none",
        "tree" | "combine" => spec.starts_with(&format!("{kind}:")),
        _ => spec.starts_with(&format!("{kind}=")),
    })
}

/// `combine:` parts escape their reserved characters as `%xx`.
fn percent_decode(text: &str) -> String {
    String::from_utf8_lossy(&sluice_object::percent::decode(text)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_named_as_git_names_them() {
        assert_eq!(kind_of("blob:none"), Some("blob:none"));
        assert_eq!(kind_of("blob:limit=1k"), Some("blob:limit"));
        assert_eq!(kind_of("tree:0"), Some("tree"));
        assert_eq!(kind_of("object:type=blob"), Some("object:type"));
        assert_eq!(kind_of("sparse:oid=main:.sparse"), Some("sparse:oid"));
        assert_eq!(kind_of("combine:blob:none+tree:1"), Some("combine"));
        assert_eq!(kind_of("blob:nothing"), None);
        assert_eq!(percent_decode("sparse:oid=a%2Bb"), "sparse:oid=a+b");
    }
}
