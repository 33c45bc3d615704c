//! What a clone fetches and under which names, decided from the remote's advertised refs
//! before anything is asked for: the refs written to `packed-refs`, the branch HEAD names (or
//! the tag checked out detached) and the fetch refspec recorded in the configuration, as
//! `git clone` decides them for `--branch`, `--single-branch`, `--mirror`, `--bare`,
//! `--no-tags` and the refspecs `--config remote.<name>.fetch=…` adds.

use crate::refspec::Refspec;
use sluice_object::ObjectId;
use sluice_remote::RemoteRef;

/// Why the remote's refs cannot be cloned as asked.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// `--branch` names neither a branch nor a tag of the remote.
    #[error("Remote branch {branch} not found in upstream {remote}")]
    BranchNotFound {
        /// The name `--branch` gave.
        branch: String,
        /// The remote's name.
        remote: String,
    },
    /// Two refspecs give the same local name; one ref transaction cannot update a ref twice.
    #[error("multiple updates for ref '{local}' not allowed")]
    MappedTwice {
        /// The local ref named twice.
        local: String,
    },
}

/// The clone's choices that decide which refs it takes and how it names them.
#[derive(Debug, Clone, Default)]
pub struct CloneShape {
    /// `--branch`: the branch (or tag) HEAD takes instead of the remote's HEAD.
    pub branch: Option<String>,
    /// `--bare` or `--mirror`: branches keep their own names, nothing is checked out.
    pub bare: bool,
    /// `--mirror`: every ref as it is.
    pub mirror: bool,
    /// `--single-branch` (also implied by `--depth`): one branch and the tags in it.
    pub single_branch: bool,
    /// `--no-tags`.
    pub no_tags: bool,
    /// `--sparse`: a sparse checkout of the files at the top.
    pub sparse: bool,
}

impl CloneShape {
    /// The cone the clone checks out: the files at the top under `--sparse`, else all.
    pub fn cone(&self) -> Option<sluice_repo::sparse::SparseCone> {
        self.sparse.then(sluice_repo::sparse::SparseCone::top_level)
    }
}

/// The remote's name and the fetch refspecs `--config` gave it, which the clone follows
/// besides its own.
#[derive(Debug, Clone)]
pub struct Origin {
    /// `origin` unless `--origin` or `clone.defaultRemoteName` says otherwise.
    pub name: String,
    /// The `remote.<name>.fetch` refspecs of `--config`.
    pub extra: Vec<Refspec>,
}

/// Why the remote's name or its configured refspecs cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OriginError {
    /// A name no remote-tracking ref could have.
    #[error("'{name}' is not a valid remote name")]
    InvalidName {
        /// The name.
        name: String,
    },
    /// A `remote.<name>.fetch` refspec git would refuse.
    #[error(transparent)]
    Refspec(#[from] crate::refspec::InvalidRefspec),
}

impl Origin {
    /// The remote's name (`given`, else `clone.defaultRemoteName`, else `origin`) and the fetch
    /// refspecs the configuration (`--config`) gave it.
    pub fn from_config(
        config: &sluice_odb::Config,
        given: Option<&str>,
    ) -> Result<Origin, OriginError> {
        let name = given
            .or_else(|| config.get("clone.defaultRemoteName"))
            .unwrap_or("origin")
            .to_owned();
        if !sluice_repo::refs::is_valid_ref_name(&format!("refs/remotes/{name}/test")) {
            return Err(OriginError::InvalidName { name });
        }
        let extra = config
            .get_all(&format!("remote.{name}.fetch"))
            .into_iter()
            .map(Refspec::parse)
            .collect::<Result<_, _>>()?;
        Ok(Origin { name, extra })
    }

    /// Where a branch of the remote is kept: `refs/remotes/<name>/<branch>`.
    pub fn tracking(&self, branch: &str) -> String {
        format!(
            "refs/remotes/{}/{}",
            self.name,
            branch.trim_start_matches("refs/heads/")
        )
    }

    /// The refspec that keeps every branch of the remote under its name.
    pub fn default_refspec(&self) -> String {
        format!("+refs/heads/*:{}", self.tracking("*"))
    }

    /// Where the extra refspecs put `remote`, in their order.
    fn extra_names(&self, remote: &str) -> Vec<String> {
        self.extra
            .iter()
            .filter(|spec| !spec.negative)
            .filter_map(|spec| spec.destination(&spec.matches(remote)?))
            .collect()
    }

    /// The ref prefixes to ask the remote for: a mirror asks for everything (none), else HEAD,
    /// branches, tags and what the extra refspecs name.
    pub fn ref_prefixes(&self, shape: &CloneShape) -> Vec<String> {
        if shape.mirror {
            return Vec::new();
        }
        let extra = self
            .extra
            .iter()
            .filter(|spec| !spec.negative)
            .flat_map(Refspec::ref_prefixes);
        ["HEAD", "refs/heads/", "refs/tags/"]
            .map(str::to_owned)
            .into_iter()
            .chain(extra)
            .collect()
    }
}

/// A ref of the remote and the name it gets here.
#[derive(Debug, Clone)]
pub struct Mapped<'a> {
    /// The name written here.
    pub local: String,
    /// The remote's ref.
    pub remote: &'a RemoteRef,
}

/// What the clone fetches, and under which names, from the remote's refs.
#[derive(Debug, Clone)]
pub struct ClonePlan<'a> {
    /// Refs written to `packed-refs`.
    pub refs: Vec<Mapped<'a>>,
    /// The branch HEAD will point to (`refs/heads/…`), if any.
    pub head_branch: Option<String>,
    /// A tag to check out detached (`-b <tag>`).
    pub detached: Option<ObjectId>,
    /// The fetch refspec recorded in the configuration (none for a plain bare clone).
    pub refspec: Option<String>,
    /// A bare clone (or mirror): no branch of its own, no reflogs, no remote HEAD.
    pub bare: bool,
}

impl<'a> ClonePlan<'a> {
    /// Decides the plan for `advertised`, the refs the remote listed for
    /// [`Origin::ref_prefixes`].
    pub fn new(
        shape: &CloneShape,
        origin: &Origin,
        advertised: &'a [RemoteRef],
    ) -> Result<ClonePlan<'a>, PlanError> {
        let (head_branch, detached) = head(shape, origin, advertised)?;
        let (refs, refspec) = if shape.mirror {
            (
                mirror_refs(origin, advertised),
                Some("+refs/*:refs/*".into()),
            )
        } else if shape.single_branch {
            let (refs, refspec) = single_branch_refs(shape, origin, advertised, &head_branch);
            (refs, (!shape.bare).then_some(refspec))
        } else {
            let refs = all_branch_refs(shape, origin, advertised);
            (refs, (!shape.bare).then(|| origin.default_refspec()))
        };
        refuse_twice_mapped(&refs)?;
        Ok(ClonePlan {
            refs,
            head_branch,
            detached,
            refspec,
            bare: shape.bare,
        })
    }

    /// The objects to ask for: every mapped ref's and the detached commit, once each.
    pub fn wants(&self) -> Vec<ObjectId> {
        let mut wants: Vec<ObjectId> = self.refs.iter().map(|m| m.remote.id).collect();
        wants.extend(self.detached);
        wants.sort_unstable();
        wants.dedup();
        wants
    }

    /// The commit that will be checked out, known before the pack arrives.
    pub fn checkout_id(&self, advertised: &[RemoteRef]) -> Option<ObjectId> {
        match (&self.head_branch, self.detached) {
            (_, Some(id)) => Some(id),
            (Some(branch), None) => advertised.iter().find(|r| &r.name == branch).map(|r| r.id),
            (None, None) => None,
        }
    }

    /// The tags outside the plan that point into what arrived (`contains` says so), which a
    /// clone of part of the remote takes along as git does.
    pub fn followed_tags(
        &self,
        advertised: &'a [RemoteRef],
        contains: impl Fn(&ObjectId) -> bool,
    ) -> Vec<&'a RemoteRef> {
        advertised
            .iter()
            .filter(|r| r.name.starts_with("refs/tags/"))
            .filter(|tag| !self.refs.iter().any(|m| m.remote.name == tag.name))
            .filter(|tag| contains(&tag.id) && contains(&tag.peeled.unwrap_or(tag.id)))
            .collect()
    }
}

/// Where a remote's detached HEAD (no symref target) is taken to point, as git guesses: the
/// branch of the default name (`init.defaultBranch`, given) if it is at the same commit, else
/// the first branch that is; with none, HEAD stays detached.
pub fn guess_remote_head(advertised: &mut [RemoteRef], default_branch: &str) {
    let Some(head) = advertised.iter().find(|r| r.name == "HEAD") else {
        return;
    };
    if head.symref_target.is_some() {
        return;
    }
    let default = format!("refs/heads/{default_branch}");
    let at_head = |r: &&RemoteRef| r.id == head.id && r.name.starts_with("refs/heads/");
    let guess = (advertised.iter().filter(at_head))
        .find(|r| r.name == default)
        .or_else(|| advertised.iter().find(at_head))
        .map(|r| r.name.clone());
    if let Some(head) = advertised.iter_mut().find(|r| r.name == "HEAD") {
        head.symref_target = guess;
    }
}

/// The branch HEAD names and the detached commit, from the remote's HEAD or `--branch`.
fn head(
    shape: &CloneShape,
    origin: &Origin,
    advertised: &[RemoteRef],
) -> Result<(Option<String>, Option<ObjectId>), PlanError> {
    let remote_head = advertised
        .iter()
        .find(|r| r.name == "HEAD")
        .and_then(|h| h.symref_target.clone());
    let Some(name) = &shape.branch else {
        // A HEAD that names no branch is the remote's detached HEAD: so is ours.
        let detached = advertised.iter().find(|r| r.name == "HEAD");
        let detached = detached.filter(|_| remote_head.is_none()).map(|h| h.id);
        return Ok((remote_head, detached));
    };
    let branch = format!("refs/heads/{name}");
    let tag = format!("refs/tags/{name}");
    if advertised.iter().any(|r| r.name == branch) {
        Ok((Some(branch), None))
    } else if let Some(tag) = advertised.iter().find(|r| r.name == tag) {
        Ok((None, Some(tag.peeled.unwrap_or(tag.id))))
    } else {
        Err(PlanError::BranchNotFound {
            branch: name.clone(),
            remote: origin.name.clone(),
        })
    }
}

/// `--mirror`: every ref under `refs/` as it is, and where the extra refspecs put them.
fn mirror_refs<'a>(origin: &Origin, advertised: &'a [RemoteRef]) -> Vec<Mapped<'a>> {
    let mut refs = Vec::new();
    for remote in advertised {
        for local in origin.extra_names(&remote.name) {
            refs.push(Mapped { local, remote });
        }
        if remote.name.starts_with("refs/") {
            let local = remote.name.clone();
            refs.push(Mapped { local, remote });
        }
    }
    refs
}

/// Where a branch of the remote goes: its own name in a bare clone, else the tracking ref.
fn local_branch(shape: &CloneShape, origin: &Origin, name: &str) -> String {
    if shape.bare {
        name.to_owned()
    } else {
        origin.tracking(name)
    }
}

/// One branch: HEAD's (or `--branch`'s); a tag given to `-b` fetches the tag alone. Returns
/// the refs and the refspec that keeps fetching just that.
fn single_branch_refs<'a>(
    shape: &CloneShape,
    origin: &Origin,
    advertised: &'a [RemoteRef],
    head_branch: &Option<String>,
) -> (Vec<Mapped<'a>>, String) {
    let chosen = match (&shape.branch, head_branch) {
        (Some(name), None) => Some(format!("refs/tags/{name}")),
        (_, Some(branch)) => Some(branch.clone()),
        (None, None) => None,
    };
    let mut refs = Vec::new();
    if let Some(remote) = chosen
        .as_ref()
        .and_then(|c| advertised.iter().find(|r| &r.name == c))
    {
        let local = if remote.name.starts_with("refs/heads/") {
            local_branch(shape, origin, &remote.name)
        } else {
            remote.name.clone()
        };
        refs.push(Mapped { local, remote });
        for local in origin.extra_names(&remote.name) {
            refs.push(Mapped { local, remote });
        }
    }
    let refspec = match chosen.as_deref() {
        Some(branch) if branch.starts_with("refs/heads/") => {
            format!("+{branch}:{}", local_branch(shape, origin, branch))
        }
        Some(tag) => format!("+{tag}:{tag}"),
        None => origin.default_refspec(),
    };
    (refs, refspec)
}

/// Every branch (and, unless `--no-tags`, every tag) with what the extra refspecs add.
fn all_branch_refs<'a>(
    shape: &CloneShape,
    origin: &Origin,
    advertised: &'a [RemoteRef],
) -> Vec<Mapped<'a>> {
    let mut refs = Vec::new();
    for remote in advertised {
        for local in origin.extra_names(&remote.name) {
            refs.push(Mapped { local, remote });
        }
        if remote.name.starts_with("refs/heads/") {
            let local = local_branch(shape, origin, &remote.name);
            refs.push(Mapped { local, remote });
        }
    }
    if !shape.no_tags {
        let tags = advertised
            .iter()
            .filter(|r| r.name.starts_with("refs/tags/"));
        for remote in tags {
            let local = remote.name.clone();
            refs.push(Mapped { local, remote });
        }
    }
    refs
}

/// Two refspecs that give the same local name (the same ref twice, or two refs) are an error.
fn refuse_twice_mapped(refs: &[Mapped]) -> Result<(), PlanError> {
    let mut seen = std::collections::HashSet::new();
    match refs.iter().find(|mapped| !seen.insert(&mapped.local)) {
        Some(twice) => Err(PlanError::MappedTwice {
            local: twice.local.clone(),
        }),
        None => Ok(()),
    }
}

/// The directory git clones `repository` into when none is named: its last path component
/// without `.git` (or `/.git`), with `.git` added back for a bare clone.
pub fn directory_name(repository: &str, bare: bool) -> String {
    let trimmed = repository.trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/.git").unwrap_or(trimmed);
    let last = trimmed.rsplit(['/', ':']).next().unwrap_or(trimmed);
    let name = last.strip_suffix(".git").unwrap_or(last);
    if bare {
        format!("{name}.git")
    } else {
        name.to_owned()
    }
}
