//! What a fetch asks for, as git decides it: the remote (named, or the current branch's, or
//! `origin`; or a URL), the refspecs in force (the command line's, else the remote's), and
//! pruning, tag following and the filter, from the command line, then the remote's
//! configuration, then `fetch.*`.

use super::legacy_remotes;
use super::mapping::{RefPlan, TAG_REFSPEC};
use super::report::short_name;
use crate::negotiate::{NegotiationAlgorithm, UnknownNegotiation};
use crate::partial::fetch_filter;
use crate::refspec::{InvalidRefspec, Refspec};
use sluice_odb::ConfigError;
use sluice_remote::{FetchError, Remote};
use sluice_repo::{upstream, RefError, RefTarget, Repository};
use std::path::Path;

/// Why a fetch cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum FetchPlanError {
    /// No remote of that name, and it was not named (the default remote).
    #[error("'{name}' does not appear to be a git repository")]
    NoSuchRemote {
        /// The remote's name.
        name: String,
    },
    /// The remote's URL cannot be used.
    // Not transparent: the FetchError stays in the chain of causes, where the binary
    // finds what the server said.
    #[error("{0}")]
    Url(#[from] FetchError),
    /// A configured refspec git would refuse.
    #[error(transparent)]
    Refspec(#[from] InvalidRefspec),
    /// HEAD could not be read.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// A setting has a value of the wrong type, or the promisor settings could not be written.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `fetch.negotiationAlgorithm` names none git knows.
    #[error(transparent)]
    NegotiationAlgorithm(#[from] UnknownNegotiation),
}

/// What the command line says of one fetch; `None` leaves a choice to the configuration.
#[derive(Debug, Clone, Default)]
pub struct FetchChoice<'a> {
    /// A remote's name or a URL (the current branch's remote, or `origin`, when `None`).
    pub repository: Option<&'a str>,
    /// The command line's refspecs.
    pub refspecs: Vec<Refspec>,
    /// `--prune` or `--no-prune`.
    pub prune: Option<bool>,
    /// `--prune-tags` or `--no-prune-tags`.
    pub prune_tags: Option<bool>,
    /// `--tags` (every tag) or `--no-tags` (none followed).
    pub tags: Option<bool>,
    /// `--force`.
    pub force: bool,
    /// `--update-head-ok`.
    pub update_head_ok: bool,
    /// `--filter`.
    pub filter: Option<&'a str>,
    /// `--no-filter`.
    pub no_filter: bool,
    /// `--refmap`: what maps the command line's refs to remote-tracking refs in passing,
    /// instead of the remote's refspecs (an empty one: nothing); none given, the remote's.
    pub refmap: &'a [String],
    /// `--prefetch`: every ref stored under `refs/prefetch/`, tags left out.
    pub prefetch: bool,
}

/// One fetch, planned.
#[derive(Debug, Clone)]
pub struct FetchPlan {
    /// The remote.
    pub remote: Remote,
    /// The refspecs in force and what shapes them.
    pub refs: RefPlan,
    /// The filter sent.
    pub filter: Option<String>,
    /// Under `--prune` (or its settings): the refspecs whose destinations it cleans. Tags
    /// fetched only because of `--tags` (or followed) are not pruned, as in git; tags a
    /// refspec names (a mirror's) are.
    pub prune: Option<Vec<Refspec>>,
    /// `remote.<name>.uploadpack`, if set: the command run for upload-pack unless the command
    /// line names one.
    pub upload_pack: Option<String>,
    /// `fetch.negotiationAlgorithm`: which haves are offered.
    pub negotiation: NegotiationAlgorithm,
}

impl FetchPlan {
    /// Plans a fetch in `repo` (a relative URL is taken from `cwd`).
    pub fn from_config(
        repo: &Repository,
        cwd: &Path,
        choice: &FetchChoice,
    ) -> Result<FetchPlan, FetchPlanError> {
        let config = repo.config();
        // git reads every remote's fetch refspecs with the configuration, and stops at one it
        // cannot read before anything else.
        for name in config.subsection_names("remote") {
            for spec in config.get_all(&format!("remote.{name}.fetch")) {
                Refspec::parse(spec)?;
            }
        }
        let current_branch = match repo.refs().read("HEAD")? {
            Some(RefTarget::Symbolic(branch)) => Some(branch),
            _ => None,
        };
        let remote_name = match choice.repository {
            Some(name) => name.to_owned(),
            None => upstream::default_remote(config, current_branch.as_deref().map(short_name)),
        };
        let configured_url = config.get(&format!("remote.{remote_name}.url"));
        let legacy = match configured_url {
            Some(_) => None,
            None => legacy_remotes::read(repo.common_dir(), &remote_name, config),
        };
        let (url_text, named) = match (configured_url, &legacy) {
            (Some(url), _) => (url.to_owned(), true),
            (None, Some(legacy)) => (legacy.url.clone(), true),
            (None, None) if choice.repository.is_some() => (remote_name.clone(), false),
            (None, None) => return Err(FetchPlanError::NoSuchRemote { name: remote_name }),
        };
        let remote = Remote::resolve(cwd, &sluice_remote::fetch_url(config, &url_text))?;
        let mut configured: Vec<Refspec> = match (&legacy, named) {
            (Some(legacy), _) => (legacy.fetch.iter())
                .map(|spec| Refspec::parse(spec))
                .collect::<Result<_, _>>()?,
            (None, true) => (config.get_all(&format!("remote.{remote_name}.fetch")))
                .into_iter()
                .map(Refspec::parse)
                .collect::<Result<_, _>>()?,
            (None, false) => Vec::new(),
        };
        let mut command_line = choice.refspecs.clone();
        if choice.prefetch {
            command_line = prefetch_refspecs(command_line);
            configured = prefetch_refspecs(configured);
        }
        let filter = fetch_filter(repo, &remote_name, choice.filter, choice.no_filter)?;
        // The command line first, then the remote's setting, then `fetch.*`.
        let setting = |key: &str, given: Option<bool>| -> Result<bool, ConfigError> {
            if let Some(given) = given {
                return Ok(given);
            }
            let of_remote = match named {
                true => config.get_bool(&format!("remote.{remote_name}.{key}"))?,
                false => None,
            };
            Ok(of_remote
                .or(config.get_bool(&format!("fetch.{key}"))?)
                .unwrap_or(false))
        };
        // Both read, and a bad value refused, whether or not pruning happens, as git's.
        let prune = setting("prune", choice.prune)?;
        let prune_tags = setting("prunetags", choice.prune_tags)? && prune;
        // Pruning tags is fetching `refs/tags/*:refs/tags/*` with `--prune`, when no refspec is
        // given: added to a remote's own refspecs, or the one refspec of a URL, as in git.
        if prune_tags && choice.refspecs.is_empty() {
            let tags = Refspec::parse(TAG_REFSPEC)?;
            match named {
                true => configured.push(tags),
                false => command_line.push(tags),
            }
        }
        let explicit = !command_line.is_empty();
        // With no refspec at all (`--tags` aside), the remote's HEAD is fetched, for merge.
        let head = !explicit && configured.is_empty();
        let mut specs: Vec<Refspec> = if explicit {
            command_line
        } else {
            configured.clone()
        };
        let pruned_by: Vec<Refspec> = specs.clone();
        let tagopt = named
            .then(|| config.get(&format!("remote.{remote_name}.tagopt")))
            .flatten();
        let all_tags = choice.tags.unwrap_or(tagopt == Some("--tags"));
        let no_tags = !choice.tags.unwrap_or(tagopt != Some("--no-tags"));
        if all_tags {
            specs.push(Refspec::parse(TAG_REFSPEC)?);
        }
        let stores = specs.iter().any(|s| !s.negative && s.dst.is_some());
        // The branch's merge values count when its remote is this one.
        let merge_branches = match current_branch.as_deref().map(short_name) {
            Some(b) if config.get(&format!("branch.{b}.remote")) == Some(&remote_name) => (config
                .get_all(&format!("branch.{b}.merge")))
            .into_iter()
            .map(str::to_owned)
            .collect(),
            _ => Vec::new(),
        };
        let refs = RefPlan {
            remote_name,
            current_branch,
            configured,
            explicit,
            force: choice.force,
            update_head_ok: choice.update_head_ok,
            merge_branches,
            head,
            refmap: match choice.refmap.is_empty() {
                true => None,
                false => Some(
                    (choice.refmap.iter())
                        .filter(|spec| !spec.is_empty())
                        .map(|spec| Refspec::parse(spec))
                        .collect::<Result<_, _>>()?,
                ),
            },
            follow_tags: stores && !no_tags && !all_tags,
            specs,
        };
        let upload_pack = config.get(&format!("remote.{}.uploadpack", refs.remote_name));
        Ok(FetchPlan {
            // Read before anything connects, as git's.
            negotiation: NegotiationAlgorithm::from_config(config)?,
            upload_pack: upload_pack.map(str::to_owned),
            remote,
            refs,
            filter,
            prune: prune.then_some(pruned_by),
        })
    }
}

/// `--prefetch`'s refspecs, as git rewrites them: a refspec that stores nothing or fetches
/// tags is dropped; the others store under `refs/prefetch/` (`refs/remotes/origin/*` becomes
/// `refs/prefetch/remotes/origin/*`), always forced. Negative refspecs stay as they are.
fn prefetch_refspecs(specs: Vec<Refspec>) -> Vec<Refspec> {
    (specs.into_iter())
        .filter(|s| s.negative || (s.dst.is_some() && !s.src.starts_with("refs/tags/")))
        .map(|mut spec| {
            if let Some(dst) = spec.dst.take().filter(|_| !spec.negative) {
                let rest = dst.strip_prefix("refs/").unwrap_or(&dst);
                spec.dst = Some(format!("refs/prefetch/{rest}"));
                spec.force = true;
            }
            spec
        })
        .collect()
}
