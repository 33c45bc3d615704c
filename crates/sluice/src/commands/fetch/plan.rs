//! What a fetch asks for: the remote and the refspecs in force, from the command line, the
//! remote's configuration and `fetch.*`; and the ref updates they make of what the remote
//! advertises (followed tags, refs updated in passing, duplicates settled as git settles them).

use super::{fetch_filter, short, FetchArgs, One, TAG_REFSPEC};
use crate::commands::remote::{resolve, Remote};
use crate::commands::Context;
use anyhow::bail;
use sluice_fetch::refspec::Refspec;
use sluice_fetch::{Connection, RemoteRef};
use sluice_object::{IdSet, ObjectId};
use sluice_odb::{RefTarget, Repository};
use std::collections::HashMap;

/// One ref update this fetch will make.
#[derive(Debug)]
pub(super) struct Update {
    pub(super) remote: RemoteRef,
    pub(super) local: Option<String>,
    pub(super) force: bool,
    pub(super) listed: Listed,
}

/// How an update appears in `FETCH_HEAD`, in the order git takes them: it lists, updates and
/// reports merge candidates first, then the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Listed {
    /// A candidate for `git pull` to merge.
    ForMerge,
    /// Listed `not-for-merge`.
    NotForMerge,
    /// Not listed: a remote-tracking ref updated in passing (see [`track_in_passing`]).
    No,
    /// Neither listed nor updated: from a shallow remote, its history reaches where the
    /// remote's is cut (see [`RemoteCut`](super::update::RemoteCut)).
    CutOff,
}

impl Listed {
    /// Where the update is made and reported: git goes through the refs once for merge
    /// candidates, where it also warns of refs cut off, once for the rest listed, and once for
    /// those not listed.
    pub(super) fn pass(self) -> u8 {
        match self {
            Listed::ForMerge | Listed::CutOff => 0,
            Listed::NotForMerge => 1,
            Listed::No => 2,
        }
    }
}

/// What one fetch asks for: the remote, the refspecs in force and the settings that shape
/// them, from the command line, the remote's configuration and `fetch.*`, in that order.
pub(super) struct Plan {
    pub(super) remote_name: String,
    pub(super) remote: Remote,
    /// The branch checked out, if any.
    pub(super) current_branch: Option<String>,
    pub(super) filter: Option<String>,
    /// The remote's own refspecs.
    pub(super) configured: Vec<Refspec>,
    /// The refspecs in force: the command line's, else the remote's.
    pub(super) specs: Vec<Refspec>,
    /// Whether the command line gave refspecs.
    pub(super) explicit: bool,
    /// The refspecs whose destinations `--prune` cleans: tags fetched only because of
    /// `--tags` (or followed) are not pruned, as in git; tags a refspec names (a mirror's) are.
    pub(super) pruned_by: Vec<Refspec>,
    pub(super) prune: bool,
    /// Tags are followed only when some refspec stores what it fetches, as in git.
    pub(super) follow_tags: bool,
}

/// The ref updates a fetch makes, or the object a refspec names by id that the server will not
/// give.
pub(super) enum Mapping {
    Updates(Vec<Update>),
    Unadvertised(ObjectId),
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
                .and_then(|b| config.get(&format!("branch.{}.remote", short(b))))
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
        let filter = fetch_filter(args, repo, &remote_name)?;
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
        Ok(Plan {
            remote_name,
            remote,
            current_branch,
            filter,
            configured,
            explicit,
            pruned_by,
            prune,
            follow_tags: stores && !no_tags && !all_tags,
            specs,
        })
    }

    /// The prefixes of the refs to list (ls-refs' `ref-prefix`).
    pub(super) fn ref_prefixes(&self) -> Vec<String> {
        let mut prefixes: Vec<String> = Vec::new();
        for spec in self.specs.iter().filter(|s| !s.negative) {
            prefixes.extend(spec.ref_prefixes());
        }
        if self.specs.is_empty() {
            prefixes.push("HEAD".into());
        }
        if self.follow_tags {
            prefixes.push("refs/tags/".into());
        }
        prefixes
    }

    /// Which remote refs go where, in the order of the refspecs, as git lists them (and within
    /// a pattern, the remote's).
    pub(super) fn map_refs(
        &self,
        args: &FetchArgs,
        repo: &Repository,
        advertised: &[RemoteRef],
        connection: &Connection,
    ) -> anyhow::Result<Mapping> {
        let config = repo.config();
        let merge_branch = self.current_branch.as_deref().and_then(|b| {
            let remote_of = config.get(&format!("branch.{}.remote", short(b)))?;
            (remote_of == self.remote_name)
                .then(|| config.get(&format!("branch.{}.merge", short(b))))
                .flatten()
        });
        let specs = &self.specs;
        let mut updates: Vec<Update> = Vec::new();
        if specs.is_empty() {
            if let Some(head) = advertised.iter().find(|r| r.name == "HEAD") {
                updates.push(Update {
                    remote: head.clone(),
                    local: None,
                    force: false,
                    listed: Listed::ForMerge,
                });
            }
        }
        let excluded = |name: &str| {
            specs
                .iter()
                .any(|s| s.negative && s.matches(name).is_some())
        };
        for spec in specs.iter().filter(|s| !s.negative) {
            let candidates = advertised.iter().filter(|r| !excluded(&r.name));
            // A plain name fetches the one ref it names best, as git resolves a short name.
            let matched: Vec<&RemoteRef> = match spec.is_exact() {
                true => spec
                    .best_match(candidates, |r| &r.name)
                    .into_iter()
                    .collect(),
                false => candidates.collect(),
            };
            for remote_ref in matched {
                let Some(star) = spec.matches(&remote_ref.name) else {
                    continue;
                };
                let for_merge = self.explicit || merge_branch == Some(remote_ref.name.as_str());
                updates.push(Update {
                    remote: remote_ref.clone(),
                    local: spec.destination(&star),
                    force: spec.force || args.force,
                    listed: if for_merge {
                        Listed::ForMerge
                    } else {
                        Listed::NotForMerge
                    },
                });
            }
            if !spec.is_exact() || advertised.iter().any(|r| spec.matches(&r.name).is_some()) {
                continue;
            }
            // A full object id names that object, whether or not a ref points at it: the
            // server decides whether it gives it (protocol v2 and `uploadpack.allow*SHA1InWant`
            // do).
            let Ok(id) = ObjectId::from_hex(repo.hash(), spec.src.as_bytes()) else {
                bail!("couldn't find remote ref {}", spec.src);
            };
            if !connection.takes_want(&id) {
                return Ok(Mapping::Unadvertised(id));
            }
            updates.push(Update {
                remote: RemoteRef {
                    name: spec.src.clone(),
                    id,
                    symref_target: None,
                    peeled: None,
                },
                local: spec.destination(""),
                force: spec.force || args.force,
                listed: Listed::ForMerge,
            });
        }
        Ok(Mapping::Updates(updates))
    }

    /// Refuses, before anything is fetched or moved, as git does, a destination that is no
    /// valid ref name or that is the branch checked out (unless `--update-head-ok`).
    pub(super) fn check_destinations(
        &self,
        args: &FetchArgs,
        repo: &Repository,
        updates: &[Update],
    ) -> anyhow::Result<()> {
        for local in updates.iter().filter_map(|u| u.local.as_deref()) {
            if !sluice_odb::refs::is_valid_ref_name(local) {
                bail!("refusing to create funny ref '{local}' locally");
            }
            if let (Some(work_tree), false) = (repo.work_tree(), args.update_head_ok) {
                if self.current_branch.as_deref() == Some(local) {
                    bail!(
                        "refusing to fetch into branch '{local}' checked out at '{}'",
                        work_tree.display()
                    );
                }
            }
        }
        Ok(())
    }
}

/// Tags to follow, as git follows them: a tag not here yet whose object (or what it peels to)
/// is here or among the tips fetched comes along with them, listed right after them; the
/// others are returned, to be taken after the fetch if it brought what they point to.
pub(super) fn follow_known_tags(
    repo: &Repository,
    advertised: &[RemoteRef],
    updates: &mut Vec<Update>,
) -> anyhow::Result<Vec<RemoteRef>> {
    let tips: IdSet = updates.iter().map(|u| u.remote.id).collect();
    let mut later = Vec::new();
    for tag in advertised
        .iter()
        .filter(|r| r.name.starts_with("refs/tags/"))
    {
        let fetched = updates.iter().any(|u| u.local.as_ref() == Some(&tag.name));
        if fetched || repo.refs().read(&tag.name)?.is_some() {
            continue;
        }
        let target = tag.peeled.unwrap_or(tag.id);
        if tips.contains(&target) || repo.objects().contains(&target) {
            updates.push(Update {
                remote: tag.clone(),
                local: Some(tag.name.clone()),
                force: false,
                listed: Listed::NotForMerge,
            });
        } else {
            later.push(tag.clone());
        }
    }
    Ok(later)
}

/// Refs fetched by refspecs of the command line also update the remote-tracking refs the
/// remote's configured refspecs map them to, as git has done since 1.8.4, so that
/// `fetch origin main` moves `origin/main` too. These updates are not listed in FETCH_HEAD.
pub(super) fn track_in_passing(updates: &mut Vec<Update>, configured: &[Refspec], force: bool) {
    let fetched: Vec<RemoteRef> = updates.iter().map(|u| u.remote.clone()).collect();
    let excluded = |name: &str| {
        configured
            .iter()
            .any(|s| s.negative && s.matches(name).is_some())
    };
    for spec in configured.iter().filter(|s| !s.negative) {
        for remote_ref in fetched.iter().filter(|r| !excluded(&r.name)) {
            let Some(local) = spec
                .matches(&remote_ref.name)
                .and_then(|star| spec.destination(&star))
            else {
                continue;
            };
            updates.push(Update {
                remote: remote_ref.clone(),
                local: Some(local),
                force: spec.force || force,
                listed: Listed::No,
            });
        }
    }
}

/// Updates that would land on the same local ref, settled as git settles them: the first
/// stays, and a later one of the same remote ref goes. Two remote refs for one local ref are
/// an error, unless the later was only in passing: it goes with a warning.
pub(super) fn drop_duplicates(updates: Vec<Update>) -> anyhow::Result<Vec<Update>> {
    let mut kept: Vec<Update> = Vec::with_capacity(updates.len());
    let mut first_for: HashMap<String, usize> = HashMap::new();
    for update in updates {
        let Some(local) = update.local.clone() else {
            kept.push(update);
            continue;
        };
        let Some(&at) = first_for.get(&local) else {
            first_for.insert(local, kept.len());
            kept.push(update);
            continue;
        };
        let earlier = &kept[at];
        let (first, later) = (&earlier.remote.name, &update.remote.name);
        if first == later {
            continue;
        }
        match (earlier.listed, update.listed) {
            (Listed::No, _) => bail!("{local} tracks both {first} and {later}"),
            (_, Listed::No) => eprintln!("warning: {local} usually tracks {later}, not {first}"),
            _ => bail!("Cannot fetch both {first} and {later} to {local}"),
        }
    }
    Ok(kept)
}
