//! What a fetch asks for: the remote and the refspecs in force, from the command line, the
//! remote's configuration and `fetch.*`, merged into the library's [`RefPlan`].

use super::{FetchArgs, One};
use crate::commands::remote::resolve;
use crate::commands::Context;
use anyhow::bail;
use sluice_fetch::fetch::{short_name, RefPlan, TAG_REFSPEC};
use sluice_fetch::partial::fetch_filter;
use sluice_fetch::refspec::Refspec;
use sluice_fetch::Remote;
use sluice_odb::{RefTarget, Repository};

/// What one fetch asks for: the remote, the refspecs in force and the settings that shape
/// them, from the command line, the remote's configuration and `fetch.*`, in that order.
pub(super) struct Plan {
    pub(super) remote: Remote,
    /// The refspecs and what shapes them, for the library.
    pub(super) refs: RefPlan,
    pub(super) filter: Option<String>,
    /// The refspecs whose destinations `--prune` cleans: tags fetched only because of
    /// `--tags` (or followed) are not pruned, as in git; tags a refspec names (a mirror's) are.
    pub(super) pruned_by: Vec<Refspec>,
    pub(super) prune: bool,
}

impl Plan {
    pub(super) fn new(
        args: &FetchArgs,
        context: &Context,
        repo: &Repository,
        one: &One,
    ) -> anyhow::Result<Plan> {
        let config = repo.config();
        let current_branch = match repo.refs().read("HEAD")? {
            Some(RefTarget::Symbolic(branch)) => Some(branch),
            _ => None,
        };
        let remote_name = match &one.repository {
            Some(name) => name.clone(),
            None => current_branch
                .as_deref()
                .and_then(|b| config.get(&format!("branch.{}.remote", short_name(b))))
                .unwrap_or("origin")
                .to_owned(),
        };
        let configured_url = config.get(&format!("remote.{remote_name}.url"));
        let (url_text, named) = match configured_url {
            Some(url) => (url.to_owned(), true),
            None if one.repository.is_some() => (remote_name.clone(), false),
            None => bail!("'{remote_name}' does not appear to be a git repository"),
        };
        let remote = resolve(context, &url_text)?;
        let filter = fetch_filter(repo, &remote_name, args.filter.as_deref(), args.no_filter)?;
        let mut configured: Vec<Refspec> = if named {
            config
                .get_all(&format!("remote.{remote_name}.fetch"))
                .into_iter()
                .map(Refspec::parse)
                .collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        let mut command_line = one.refspecs.clone();
        // The command line first, then the remote's setting, then `fetch.*`.
        let setting = |key: &str, on: bool, off: bool| -> anyhow::Result<bool> {
            if on || off {
                return Ok(on);
            }
            let of_remote = match named {
                true => config.get_bool(&format!("remote.{remote_name}.{key}"))?,
                false => None,
            };
            Ok(of_remote
                .or(config.get_bool(&format!("fetch.{key}"))?)
                .unwrap_or(false))
        };
        let prune = setting("prune", args.prune, args.no_prune)?;
        let prune_tags = prune && setting("pruneTags", args.prune_tags, args.no_prune_tags)?;
        // Pruning tags is fetching `refs/tags/*:refs/tags/*` with `--prune`, when no refspec is
        // given: added to a remote's own refspecs, or the one refspec of a URL, as in git.
        if prune_tags && one.refspecs.is_empty() {
            let tags = Refspec::parse(TAG_REFSPEC)?;
            match named {
                true => configured.push(tags),
                false => command_line.push(tags),
            }
        }
        let explicit = !command_line.is_empty();
        let mut specs: Vec<Refspec> = if explicit {
            command_line
        } else {
            configured.clone()
        };
        let pruned_by: Vec<Refspec> = specs.clone();
        let tagopt = named
            .then(|| config.get(&format!("remote.{remote_name}.tagopt")))
            .flatten();
        let all_tags = args.tags || (!args.no_tags && tagopt == Some("--tags"));
        let no_tags = args.no_tags || (!args.tags && tagopt == Some("--no-tags"));
        if all_tags {
            specs.push(Refspec::parse(TAG_REFSPEC)?);
        }
        let stores = specs.iter().any(|s| !s.negative && s.dst.is_some());
        let merge_branch = current_branch.as_deref().and_then(|b| {
            let remote_of = config.get(&format!("branch.{}.remote", short_name(b)))?;
            (remote_of == remote_name)
                .then(|| config.get(&format!("branch.{}.merge", short_name(b))))
                .flatten()
                .map(str::to_owned)
        });
        let refs = RefPlan {
            remote_name,
            current_branch,
            configured,
            explicit,
            force: args.force,
            update_head_ok: args.update_head_ok,
            merge_branch,
            follow_tags: stores && !no_tags && !all_tags,
            specs,
        };
        Ok(Plan {
            remote,
            refs,
            filter,
            pruned_by,
            prune,
        })
    }
}
