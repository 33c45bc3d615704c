//! Where a push goes and what it pushes when the command line does not say: the remote
//! (`branch.<name>.pushRemote`, `remote.pushDefault`, `branch.<name>.remote`, `origin`) and its
//! `pushurl`, then the refspecs: `--mirror` (or `remote.<name>.mirror`), `--all`, `--tags`,
//! `--delete`, else `remote.<name>.push`, else `push.default` (`simple` unless set).

use super::settings::PushDefault;
use super::spec::PushRefspec;
use super::PushError;
use sluice_odb::config::Config;
use sluice_remote::Remote;
use sluice_repo::{upstream, RefTarget, Repository};
use std::path::Path;

/// What the command line chose, and the settings that decide where it does not.
#[derive(Debug, Clone, Default)]
pub struct PushChoice<'a> {
    /// `push.default` (`None`: unset), for a push with no refspec: see [`super::Settings`].
    pub push_default: Option<PushDefault>,
    /// `push.autoSetupRemote`.
    pub auto_setup_remote: bool,
    /// A remote's name or a URL; `None` for the default.
    pub repository: Option<&'a str>,
    /// The refspecs given.
    pub refspecs: &'a [String],
    /// `--all`/`--branches`: every branch.
    pub all: bool,
    /// `--tags`: every tag, beside the refspecs.
    pub tags: bool,
    /// `--mirror`: every ref, forced, and the remote's others deleted.
    pub mirror: bool,
    /// `--delete`: the refspecs are refs to delete.
    pub delete: bool,
}

impl PushChoice<'_> {
    /// The choices git refuses together, in its order and words.
    fn check(&self) -> Result<(), PushError> {
        let given = [
            (self.delete, "--delete"),
            (self.tags, "--tags"),
            (self.all, "--all/--branches"),
            (self.mirror, "--mirror"),
        ];
        let mut named = given.iter().filter(|(on, _)| *on).map(|(_, name)| *name);
        if let (Some(first), Some(second)) = (named.next(), named.next()) {
            return Err(PushError::Incompatible(first, second));
        }
        if self.delete && self.refspecs.is_empty() {
            return Err(PushError::DeleteWithoutRefs);
        }
        match (self.all, self.mirror, self.refspecs.is_empty()) {
            (true, _, false) => Err(PushError::CombinedWithRefspecs("--all")),
            (_, true, false) => Err(PushError::CombinedWithRefspecs("--mirror")),
            _ => Ok(()),
        }
    }
}

/// One push, planned.
#[derive(Debug, Clone)]
pub struct PushPlan {
    /// Where it goes.
    pub remote: Remote,
    /// The remote's name when it is a configured one (its tracking refs are updated).
    pub remote_name: Option<String>,
    /// The remote as the command named it: a configured remote's name, or the URL as given
    /// (the `pre-push` hook's first argument).
    pub named: String,
    /// What the report calls it (`To <shown>`): the URL pushed to, without credentials.
    pub shown: String,
    /// The URL pushed to, as configured or given and rewritten by `url.<base>.pushInsteadOf`
    /// or `insteadOf` (the `pre-push` hook's second argument).
    pub url: String,
    /// The refspecs in force.
    pub specs: Vec<PushRefspec>,
    /// Remote refs no local ref matches are deleted (`--mirror`, `--prune`).
    pub prune: bool,
    /// `remote.<name>.receivepack`, if set.
    pub receive_pack: Option<String>,
    /// `push.autoSetupRemote` has this push set the branch's upstream, as `--set-upstream`.
    pub set_upstream: bool,
}

impl PushPlan {
    /// Plans a push from `repo` (a relative URL is taken from `cwd`) to the remote's first
    /// push URL.
    pub fn from_config(
        repo: &Repository,
        cwd: &Path,
        choice: &PushChoice,
    ) -> Result<PushPlan, PushError> {
        let mut plans = Self::all_from_config(repo, cwd, choice)?;
        Ok(plans.swap_remove(0))
    }

    /// Plans a push from `repo` to every URL of the remote, in order, as git pushes: each
    /// `pushurl` if it has any, else each `url` (a remote may name several mirrors).
    pub fn all_from_config(
        repo: &Repository,
        cwd: &Path,
        choice: &PushChoice,
    ) -> Result<Vec<PushPlan>, PushError> {
        choice.check()?;
        let config = repo.config();
        let branch = current_branch(repo)?;
        let short = branch
            .as_deref()
            .and_then(|b| b.strip_prefix("refs/heads/"));
        let named =
            (choice.repository.map(str::to_owned)).or_else(|| upstream::push_remote(config, short));
        let name = named.clone().unwrap_or_else(|| "origin".to_owned());
        let pushurls = config.get_all(&format!("remote.{name}.pushurl"));
        let configured = config.get_all(&format!("remote.{name}.url"));
        // A name given (on the command line or by a setting) that is no remote is a URL,
        // rewritten as a remote's `url` is; only the `origin` of last resort must exist.
        let (urls, remote_name) = match (pushurls.is_empty(), configured.is_empty()) {
            (true, true) if named.is_some() => (vec![name.as_str()], None),
            (true, true) => return Err(PushError::NoDestination),
            _ => (configured, Some(name.clone())),
        };
        let urls = sluice_remote::push_urls(config, &pushurls, &urls);
        let receive_pack = (remote_name.as_ref())
            .and_then(|n| config.get(&format!("remote.{n}.receivepack")))
            .map(str::to_owned);
        // `remote.<name>.mirror` is `--mirror` for that remote, refused with refspecs as git
        // refuses it (`--tags` beside it is left as `--tags` alone).
        let configured_mirror = match &remote_name {
            Some(n) if !choice.tags => config.get_bool(&format!("remote.{n}.mirror"))?,
            _ => None,
        };
        let mirror = choice.mirror || configured_mirror == Some(true);
        if mirror && !choice.refspecs.is_empty() {
            return Err(PushError::CombinedWithRefspecs("--mirror"));
        }
        let mut specs: Vec<PushRefspec> = (choice.refspecs.iter())
            .map(|text| match choice.delete {
                true => PushRefspec::parse(&format!(":{text}")),
                false => PushRefspec::parse(text),
            })
            .collect::<Result<_, _>>()?;
        let pattern = |text: &str| PushRefspec::parse(text);
        if mirror {
            specs.push(pattern("+refs/*:refs/*")?);
        } else if choice.all {
            specs.push(pattern("refs/heads/*:refs/heads/*")?);
        }
        if choice.tags {
            specs.push(pattern("refs/tags/*:refs/tags/*")?);
        }
        let mut set_upstream = false;
        if specs.is_empty() {
            let configured = (remote_name.as_ref())
                .map(|n| config.get_all(&format!("remote.{n}.push")))
                .unwrap_or_default();
            specs = match configured.is_empty() {
                false => (configured.into_iter())
                    .map(PushRefspec::parse)
                    .collect::<Result<_, _>>()?,
                true => {
                    let (specs, auto) = default_specs(
                        repo,
                        choice,
                        branch.as_deref(),
                        (remote_name.as_deref(), &name),
                    )?;
                    set_upstream = auto;
                    specs
                }
            };
        }
        (urls.into_iter())
            .map(|url| {
                let remote = Remote::resolve(cwd, &url)?;
                Ok(PushPlan {
                    named: name.clone(),
                    shown: remote.shown.clone(),
                    url,
                    remote,
                    remote_name: remote_name.clone(),
                    specs: specs.clone(),
                    prune: mirror,
                    receive_pack: receive_pack.clone(),
                    set_upstream,
                })
            })
            .collect()
    }
}

/// The branch `HEAD` names, if it names one.
fn current_branch(repo: &Repository) -> Result<Option<String>, PushError> {
    Ok(match repo.refs().read("HEAD")? {
        Some(RefTarget::Symbolic(branch)) => Some(branch),
        _ => None,
    })
}

/// What `push.default` pushes, when neither the command nor the remote names refspecs, and
/// whether `push.autoSetupRemote` has the push set the branch's upstream (a branch without
/// one). `simple` (the default) and `current` push the branch checked out to its own name
/// (`simple` insists on an upstream of that name when pushing to the remote the branch
/// fetches from), `upstream` to its upstream on that remote only, `matching` every branch
/// both sides have.
fn default_specs(
    repo: &Repository,
    choice: &PushChoice,
    branch: Option<&str>,
    (remote_name, given): (Option<&str>, &str),
) -> Result<(Vec<PushRefspec>, bool), PushError> {
    let config = repo.config();
    let mode = choice.push_default.unwrap_or(PushDefault::Simple);
    match mode {
        PushDefault::Matching => return Ok((vec![PushRefspec::parse(":")?], false)),
        PushDefault::Nothing => return Err(PushError::PushDefaultNothing),
        PushDefault::Simple | PushDefault::Upstream | PushDefault::Current => {}
    }
    let Some(branch) = branch.and_then(|b| b.strip_prefix("refs/heads/")) else {
        return Err(PushError::Detached);
    };
    let remote = remote_name.unwrap_or(given);
    let upstream_remote = config.get(&format!("branch.{branch}.remote"));
    let merges = config.get_all(&format!("branch.{branch}.merge"));
    let auto = merges.is_empty() && choice.auto_setup_remote;
    // Pushing where the branch is fetched from (else git's "triangular" workflow).
    let same_remote = remote == upstream::default_remote(config, Some(branch));
    let head = format!("refs/heads/{branch}");
    let upstream = || -> Result<String, PushError> {
        match (&merges[..], upstream_remote) {
            // To be set up by this push, under the branch's own name.
            ([], _) if auto => Ok(head.clone()),
            ([], _) | (_, None) => Err(PushError::NoUpstream {
                branch: branch.to_owned(),
                remote: remote.to_owned(),
            }),
            ([merge], Some(_)) => Ok((*merge).to_owned()),
            _ => Err(PushError::SeveralUpstreams(branch.to_owned())),
        }
    };
    let destination = match mode {
        PushDefault::Upstream if !same_remote => {
            return Err(PushError::NotTheUpstreamRemote {
                remote: remote.to_owned(),
                branch: branch.to_owned(),
            })
        }
        PushDefault::Upstream => upstream()?,
        PushDefault::Simple if same_remote => match upstream()? {
            merge if merge == head => merge,
            merge => {
                let unset = choice.push_default.is_none();
                return Err(simple_refused(config, unset, remote, &merge));
            }
        },
        _ => head.clone(),
    };
    let spec = PushRefspec::parse(&format!("{head}:{destination}"))?;
    Ok((vec![spec], auto))
}

/// `simple`'s refusal of an upstream of another name, with git's advice: how to choose for
/// good where `push.default` is not set, how to stop such upstreams where
/// `branch.autoSetupMerge` is not `simple`.
fn simple_refused(config: &Config, unset: bool, remote: &str, merge: &str) -> PushError {
    let mut advice = String::new();
    if unset {
        advice += "\nTo choose either option permanently, see push.default in 'git help config'.\n";
    }
    if config.get("branch.autosetupmerge") != Some("simple") {
        advice += "\nTo avoid automatically configuring an upstream branch when its name\nwon't match the local branch, see option 'simple' of branch.autoSetupMerge\nin 'git help config'.\n";
    }
    PushError::UpstreamNameDiffers {
        remote: remote.to_owned(),
        upstream: merge
            .strip_prefix("refs/heads/")
            .unwrap_or(merge)
            .to_owned(),
        advice,
    }
}
