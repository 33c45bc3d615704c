//! Which remote refs a fetch takes and where it stores them: the refspecs in force applied to
//! what the remote advertises, in git's order, with the tags it follows, the remote-tracking
//! refs it updates in passing and duplicates settled as git settles them.

use crate::refspec::Refspec;
use sluice_object::{IdSet, ObjectId};
use sluice_remote::{Connection, RemoteRef};
use sluice_repo::{RefError, Repository};
use std::collections::HashMap;
use std::path::PathBuf;

/// The refspec of every tag (`--tags`, `--prune-tags`).
pub const TAG_REFSPEC: &str = "refs/tags/*:refs/tags/*";

/// Why the refs cannot be fetched as the refspecs say.
#[derive(Debug, thiserror::Error)]
pub enum MappingError {
    /// Reading a ref failed.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// A refspec names a ref the remote lacks, and is no object id either.
    #[error("couldn't find remote ref {name}")]
    NoSuchRemoteRef {
        /// The refspec's source.
        name: String,
    },
    /// Two remote refs would land on one local ref that the remote's refspecs track.
    #[error("{local} tracks both {first} and {later}")]
    TracksBoth {
        /// The local ref.
        local: String,
        /// The remote ref mapped first.
        first: String,
        /// The other.
        later: String,
    },
    /// Two remote refs would land on one local ref.
    #[error("Cannot fetch both {first} and {later} to {local}")]
    FetchBoth {
        /// The local ref.
        local: String,
        /// The remote ref mapped first.
        first: String,
        /// The other.
        later: String,
    },
    /// A destination is no valid ref name.
    #[error("refusing to create funny ref '{local}' locally")]
    FunnyRef {
        /// The destination.
        local: String,
    },
    /// A destination is the branch checked out.
    #[error("refusing to fetch into branch '{local}' checked out at '{}'", work_tree.display())]
    CheckedOut {
        /// The branch.
        local: String,
        /// The work tree it is checked out in.
        work_tree: PathBuf,
    },
}

/// One ref update a fetch will make.
#[derive(Debug, Clone)]
pub struct Update {
    /// The remote's ref (or, for an object fetched by id, the id as its name).
    pub remote: RemoteRef,
    /// Where it is stored here; `None` for FETCH_HEAD alone.
    pub local: Option<String>,
    /// Whether it may move other than by fast-forward (`+`, `--force`).
    pub force: bool,
    /// How it appears in FETCH_HEAD.
    pub listed: Listed,
}

/// How an update appears in `FETCH_HEAD`, in the order git takes them: it lists, updates and
/// reports merge candidates first, then the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Listed {
    /// A candidate for `git pull` to merge.
    ForMerge,
    /// Listed `not-for-merge`.
    NotForMerge,
    /// Not listed: a remote-tracking ref updated in passing (see [`track_in_passing`]).
    No,
    /// Neither listed nor updated: from a shallow remote, its history reaches where the
    /// remote's is cut (see [`RemoteCut`](super::RemoteCut)).
    CutOff,
}

impl Listed {
    /// Where the update is made and reported: git goes through the refs once for merge
    /// candidates, where it also warns of refs cut off, once for the rest listed, and once for
    /// those not listed.
    pub fn pass(self) -> u8 {
        match self {
            Listed::ForMerge | Listed::CutOff => 0,
            Listed::NotForMerge => 1,
            Listed::No => 2,
        }
    }
}

/// What one fetch asks for: the refspecs in force and the settings that shape them, as the
/// command line, the remote's configuration and `fetch.*` decide them.
#[derive(Debug, Clone)]
pub struct RefPlan {
    /// The remote's name, or the URL when the fetch names no configured remote.
    pub remote_name: String,
    /// The branch checked out, if any.
    pub current_branch: Option<String>,
    /// The remote's own refspecs.
    pub configured: Vec<Refspec>,
    /// The refspecs in force: the command line's, else the remote's.
    pub specs: Vec<Refspec>,
    /// Whether the command line gave refspecs.
    pub explicit: bool,
    /// `--force`: every update may move other than by fast-forward.
    pub force: bool,
    /// `--update-head-ok`: the branch checked out may be a destination.
    pub update_head_ok: bool,
    /// The values of `branch.<current>.merge` when the current branch's remote is this one.
    pub merge_branches: Vec<String>,
    /// No refspec (but `--tags`'s) names what to fetch: the remote's HEAD is fetched.
    pub head: bool,
    /// `--refmap`: used instead of `configured` to track the command line's refs in passing.
    pub refmap: Option<Vec<Refspec>>,
    /// Tags are followed only when some refspec stores what it fetches, as in git.
    pub follow_tags: bool,
}

/// The ref updates a fetch makes, or the object a refspec names by id that the server will not
/// give.
#[derive(Debug)]
pub enum Mapping {
    /// The updates, in the order of the refspecs.
    Updates(Vec<Update>),
    /// A refspec names this object, and the server does not allow asking for it.
    Unadvertised(ObjectId),
}

impl RefPlan {
    /// The prefixes of the refs to list (ls-refs' `ref-prefix`).
    pub fn ref_prefixes(&self) -> Vec<String> {
        let mut prefixes: Vec<String> = Vec::new();
        for spec in self.specs.iter().filter(|s| !s.negative) {
            prefixes.extend(spec.ref_prefixes());
        }
        if self.head {
            prefixes.push("HEAD".into());
        }
        if !self.explicit {
            prefixes.extend(self.merge_branches.iter().cloned());
        }
        if self.follow_tags {
            prefixes.push("refs/tags/".into());
        }
        prefixes
    }

    /// Which remote refs go where, in the order of the refspecs, as git lists them (and within
    /// a pattern, the remote's).
    pub fn map_refs(
        &self,
        repo: &Repository,
        advertised: &[RemoteRef],
        connection: &Connection,
    ) -> Result<Mapping, MappingError> {
        let specs = &self.specs;
        let mut updates: Vec<Update> = Vec::new();
        if self.head {
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
        for (n, spec) in specs.iter().enumerate().filter(|(_, s)| !s.negative) {
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
                let for_merge = self.for_merge(n, spec, &remote_ref.name);
                updates.push(Update {
                    remote: remote_ref.clone(),
                    local: spec.destination(&star),
                    force: spec.force || self.force,
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
                return Err(MappingError::NoSuchRemoteRef {
                    name: spec.src.clone(),
                });
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
                force: spec.force || self.force,
                listed: Listed::ForMerge,
            });
        }
        self.add_merge_refs(advertised, &mut updates);
        Ok(Mapping::Updates(updates))
    }

    /// Whether `name`, fetched by the `n`th refspec `spec`, is a candidate for `git pull`:
    /// everything the command line names; else the branch's merge values; else, without
    /// those, what the first configured refspec fetches unless it is a glob.
    fn for_merge(&self, n: usize, spec: &Refspec, name: &str) -> bool {
        if self.explicit {
            return true;
        }
        match self.merge_branches.is_empty() {
            false => self.merge_branches.iter().any(|m| m == name),
            true => n == 0 && spec.is_exact(),
        }
    }

    /// A merge value no refspec fetches is fetched all the same, into FETCH_HEAD alone, as
    /// git's fetch does so that `git pull` finds it.
    fn add_merge_refs(&self, advertised: &[RemoteRef], updates: &mut Vec<Update>) {
        if self.explicit {
            return;
        }
        for merge in &self.merge_branches {
            if updates.iter().any(|u| u.remote.name == *merge) {
                continue;
            }
            if let Some(remote_ref) = advertised.iter().find(|r| r.name == *merge) {
                updates.push(Update {
                    remote: remote_ref.clone(),
                    local: None,
                    force: false,
                    listed: Listed::ForMerge,
                });
            }
        }
    }

    /// Refuses, before anything is fetched or moved, as git does, a destination that is no
    /// valid ref name or that is the branch checked out (unless `--update-head-ok`).
    pub fn check_destinations(
        &self,
        repo: &Repository,
        updates: &[Update],
    ) -> Result<(), MappingError> {
        for local in updates.iter().filter_map(|u| u.local.as_deref()) {
            if !sluice_repo::refs::is_valid_ref_name(local) {
                return Err(MappingError::FunnyRef {
                    local: local.to_owned(),
                });
            }
            if let (Some(work_tree), false) = (repo.work_tree(), self.update_head_ok) {
                if self.current_branch.as_deref() == Some(local) {
                    return Err(MappingError::CheckedOut {
                        local: local.to_owned(),
                        work_tree: work_tree.to_owned(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Tags to follow, as git follows them: a tag not here yet whose object (or what it peels to)
/// is here or among the tips fetched comes along with them, listed right after them; the
/// others are returned, to be taken after the fetch if it brought what they point to.
pub fn follow_known_tags(
    repo: &Repository,
    advertised: &[RemoteRef],
    updates: &mut Vec<Update>,
) -> Result<Vec<RemoteRef>, MappingError> {
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
pub fn track_in_passing(updates: &mut Vec<Update>, configured: &[Refspec], force: bool) {
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
/// an error, unless the later was only in passing: it goes, and the warning git gives is
/// returned with the updates kept.
pub fn drop_duplicates(updates: Vec<Update>) -> Result<(Vec<Update>, Vec<String>), MappingError> {
    let mut kept: Vec<Update> = Vec::with_capacity(updates.len());
    let mut warnings = Vec::new();
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
        let (first, later) = (earlier.remote.name.clone(), update.remote.name.clone());
        if first == later {
            continue;
        }
        match (earlier.listed, update.listed) {
            (Listed::No, _) => {
                return Err(MappingError::TracksBoth {
                    local,
                    first,
                    later,
                })
            }
            (_, Listed::No) => {
                warnings.push(format!("{local} usually tracks {later}, not {first}"))
            }
            _ => {
                return Err(MappingError::FetchBoth {
                    local,
                    first,
                    later,
                })
            }
        }
    }
    Ok((kept, warnings))
}
