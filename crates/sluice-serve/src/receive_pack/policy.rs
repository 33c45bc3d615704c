//! What `receive.*` lets a push do, checked for each command before any ref moves, in git's
//! order and with git's words: `receive.denyCurrentBranch` (a non-bare repository's checked-out
//! branch), `receive.denyDeleteCurrent`, `receive.denyDeletes`,
//! `receive.denyNonFastForwards`; and which refs keep a reflog (`core.logAllRefUpdates`).

use super::Command;
use sluice_odb::ConfigError;
use sluice_repo::refs::namespace::Namespace;
use sluice_repo::refs::reflog::LogRefs;
use sluice_repo::{RefTarget, Repository};

/// One of git's `receive.deny*` actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deny {
    Ignore,
    Warn,
    Refuse,
    /// `updateInstead`: not done by Sluice yet, so refused.
    UpdateInstead,
}

impl Deny {
    /// A `receive.deny*` value as git reads it (`ignore`, `warn`, `refuse`, `updateInstead`,
    /// or a boolean); `default` when unset.
    fn read(repo: &Repository, key: &str, default: Deny) -> Result<Deny, ConfigError> {
        let config = repo.config();
        Ok(
            match config.get(key).map(str::to_ascii_lowercase).as_deref() {
                None => default,
                Some("ignore") => Deny::Ignore,
                Some("warn") => Deny::Warn,
                Some("refuse") => Deny::Refuse,
                Some("updateinstead") => Deny::UpdateInstead,
                Some(_) => match config.get_bool(key)? {
                    Some(true) => Deny::Refuse,
                    _ => Deny::Ignore,
                },
            },
        )
    }
}

/// A command's verdict: why it is refused (git's word for the client, and the message for its
/// standard error), and the warnings to show either way.
#[derive(Debug, Default)]
pub(super) struct Verdict {
    pub(super) refused: Option<(&'static str, String)>,
    pub(super) warnings: Vec<String>,
    /// `updateInstead`: the work tree moves with the branch checked out.
    pub(super) deploy: bool,
}

/// The branches the linked worktrees of `repo` have checked out (`worktrees/*/HEAD`).
fn linked_branches(repo: &Repository) -> Vec<String> {
    (repo.worktrees().unwrap_or_default().iter())
        .filter(|worktree| worktree.is_linked())
        .filter_map(|worktree| worktree.branch())
        .collect()
}

/// What git adds when it refuses to update a checked-out branch and
/// `receive.denyCurrentBranch` is not set (git's words).
const CURRENT_BRANCH_ADVICE: &str = "\
By default, updating the current branch in a non-bare repository
is denied, because it will make the index and work tree inconsistent
with what you pushed, and will require 'git reset --hard' to match
the work tree to HEAD.

You can set the 'receive.denyCurrentBranch' configuration variable
to 'ignore' or 'warn' in the remote repository to allow pushing into
its current branch; however, this is not recommended unless you
arranged to update its work tree to match what you pushed in some
other way.

To squelch this message and still keep the default behaviour, set
'receive.denyCurrentBranch' configuration variable to 'refuse'.";

/// The repository's `receive.*` settings.
#[derive(Debug)]
pub(super) struct Policy {
    current_branch: Deny,
    /// Whether `receive.denyCurrentBranch` is set (unset, a refusal comes with git's advice).
    current_branch_set: bool,
    delete_current: Deny,
    deletes: bool,
    non_fast_forwards: bool,
    /// The branch HEAD names, if any.
    head: Option<String>,
    /// Whether a branch is checked out at all (a repository with a work tree).
    checked_out: bool,
    /// The branches the linked worktrees have checked out (a bare repository may have them
    /// too).
    linked: Vec<String>,
    /// `core.logAllRefUpdates`.
    log_refs: LogRefs,
    /// `receive.shallowUpdate`: a push may add to the repository's cut.
    pub(super) shallow_update: bool,
}

impl Policy {
    pub(super) fn of(repo: &Repository) -> Result<Policy, ConfigError> {
        let config = repo.config();
        // In a namespace, commands name refs inside it: HEAD's branch is the current one only
        // when HEAD points in there, as git compares them.
        let namespace = Namespace::from_env();
        let head = match repo.refs().read("HEAD") {
            Ok(Some(RefTarget::Symbolic(target))) => match &namespace {
                Some(namespace) => namespace.strip(&target).map(str::to_owned),
                None => Some(target),
            },
            _ => None,
        };
        // Served repositories are opened by their git directory: whether one has a work tree is
        // `core.bare`, else (as git guesses) whether the directory is a `.git`.
        let checked_out = match config.get_bool("core.bare")? {
            Some(bare) => !bare,
            None => repo.git_dir().file_name() == Some(std::ffi::OsStr::new(".git")),
        };
        let log_refs = LogRefs::from_config(config, !checked_out)?;
        Ok(Policy {
            current_branch: Deny::read(repo, "receive.denycurrentbranch", Deny::Refuse)?,
            current_branch_set: config.get("receive.denycurrentbranch").is_some(),
            delete_current: Deny::read(repo, "receive.denydeletecurrent", Deny::Refuse)?,
            deletes: config.get_bool("receive.denydeletes")?.unwrap_or(false),
            non_fast_forwards: config
                .get_bool("receive.denynonfastforwards")?
                .unwrap_or(false),
            head,
            checked_out,
            linked: linked_branches(repo),
            log_refs,
            shallow_update: config.get_bool("receive.shallowupdate")?.unwrap_or(false),
        })
    }

    /// Whether `name` keeps a reflog after an update (or already has one).
    pub(super) fn logs(&self, repo: &Repository, name: &str) -> bool {
        repo.refs().logs(self.log_refs, name)
    }

    /// What `receive.*` says of `command`.
    /// `objects` holds the pushed objects (the quarantine, with the repository as alternate).
    pub(super) fn judge(&self, objects: &sluice_odb::ObjectDb, command: &Command) -> Verdict {
        let mut verdict = Verdict::default();
        let name = command.name.as_str();
        let current = self.head.as_deref() == Some(name);
        let refuse = |reason, message: String| Verdict {
            refused: Some((reason, message)),
            warnings: Vec::new(),
            deploy: false,
        };
        let in_linked = self.linked.iter().any(|branch| branch == name);
        if (current && self.checked_out) || in_linked {
            match self.current_branch {
                Deny::Ignore => {}
                Deny::Warn => verdict.warnings.push("updating the current branch".into()),
                Deny::Refuse => {
                    let mut message = format!("refusing to update checked out branch: {name}");
                    if !self.current_branch_set {
                        message.push_str(&format!("\nerror: {CURRENT_BRANCH_ADVICE}"));
                    }
                    return refuse("branch is currently checked out", message);
                }
                // A linked worktree is not moved here: refused rather than left behind.
                Deny::UpdateInstead if in_linked && !current => {
                    let message = format!("refusing to update checked out branch: {name}");
                    return refuse("branch is currently checked out", message);
                }
                // Checked after the others, once the update hook has agreed (as git).
                Deny::UpdateInstead => verdict.deploy = !command.new.is_null(),
            }
        }
        if command.new.is_null() {
            if self.deletes && name.starts_with("refs/heads/") {
                return refuse(
                    "deletion prohibited",
                    format!("denying ref deletion for {name}"),
                );
            }
            if current {
                match self.delete_current {
                    Deny::Ignore => {}
                    Deny::Warn => verdict.warnings.push("deleting the current branch".into()),
                    Deny::Refuse | Deny::UpdateInstead => {
                        let message = format!("refusing to delete the current branch: {name}");
                        return refuse("deletion of the current branch prohibited", message);
                    }
                }
            }
        }
        if self.non_fast_forwards
            && name.starts_with("refs/heads/")
            && !command.old.is_null()
            && !command.new.is_null()
            && !sluice_graph::ancestry::is_ancestor(objects, &command.old, &command.new)
        {
            let message = format!("denying non-fast-forward {name} (you should pull first)");
            return refuse("non-fast-forward", message);
        }
        verdict
    }
}
