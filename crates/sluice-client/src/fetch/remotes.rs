//! Which remotes one `git fetch` fetches: `--all` (less those with `skipFetchAll`),
//! `--multiple` names and groups, a group (`remotes.<group>`) named alone, or none at all
//! where nothing is named and the default remote is none git knows.

use sluice_odb::ConfigError;
use sluice_repo::{upstream, RefTarget, Repository};

/// Why the remotes to fetch cannot be decided.
#[derive(Debug, thiserror::Error)]
pub enum SelectionError {
    /// A setting has a value of the wrong type.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `--all` with a repository.
    #[error("fetch --all does not take a repository argument")]
    AllWithRepository,
    /// A name that is no remote and no group.
    #[error("no such remote or remote group: {name}")]
    NoSuchRemote {
        /// The name.
        name: String,
    },
    /// A group with refspecs.
    #[error("fetching a group and specifying refspecs does not make sense")]
    GroupWithRefspecs,
}

/// The command line's choice of remotes.
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    /// `--all`.
    pub all: bool,
    /// `--multiple`: every word names a remote or a group.
    pub multiple: bool,
    /// The repository argument.
    pub repository: Option<&'a String>,
    /// The words after it (refspecs, or more names under `--multiple`).
    pub refspecs: &'a [String],
}

/// What one `git fetch` fetches, as git decides it from the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Remotes {
    /// The usual fetch: the repository argument (a remote or a URL) with the refspecs after
    /// it, or the default remote where none is named (`--multiple` naming nothing, too).
    Given,
    /// The one remote `--all` finds, fetched as if named alone: git runs no fetch per remote
    /// for a list of one.
    Only(String),
    /// Each of these in turn, each as `fetch --append <name>`, announced as `Fetching <name>`:
    /// `--all` over several remotes, a group of several, and `--multiple` whatever it names,
    /// one remote too. Empty where the default remote is none git knows: nothing is fetched.
    Each(Vec<String>),
}

/// The remotes `--all`, `--multiple` or a group name (`remotes.<group>`) stand for, in order.
pub fn remotes_to_fetch(repo: &Repository, args: &Selection) -> Result<Remotes, SelectionError> {
    let config = repo.config();
    let group = |name: &str| -> Vec<String> {
        match config.get(&format!("remotes.{name}")) {
            Some(members) => members.split_whitespace().map(str::to_owned).collect(),
            None => Vec::new(),
        }
    };
    let configured = config.subsection_names("remote");
    if args.all {
        if args.repository.is_some() {
            return Err(SelectionError::AllWithRepository);
        }
        let mut names = Vec::new();
        for name in configured {
            let key = format!("remote.{name}.skipFetchAll");
            if !config.get_bool(&key)?.unwrap_or(false) {
                names.push(name);
            }
        }
        return Ok(match <[String; 1]>::try_from(names) {
            Ok([only]) => Remotes::Only(only),
            Err(names) => Remotes::Each(names),
        });
    }
    // `--multiple` with no words is the fetch of the default remote, as git's.
    if args.multiple && args.repository.is_some() {
        let mut names: Vec<String> = Vec::new();
        for word in args.repository.into_iter().chain(args.refspecs) {
            let mut members = group(word);
            if members.is_empty() && configured.contains(word) {
                members.push(word.clone());
            }
            if members.is_empty() {
                return Err(SelectionError::NoSuchRemote { name: word.clone() });
            }
            for member in members {
                if !names.contains(&member) {
                    names.push(member);
                }
            }
        }
        return Ok(Remotes::Each(names));
    }
    if args.repository.is_none() && !default_remote_known(repo) {
        return Ok(Remotes::Each(Vec::new()));
    }
    let members = args.repository.map(|name| group(name)).unwrap_or_default();
    if members.len() < 2 {
        return Ok(Remotes::Given);
    }
    if !args.refspecs.is_empty() {
        return Err(SelectionError::GroupWithRefspecs);
    }
    Ok(Remotes::Each(members))
}

/// Whether the remote a fetch that names none falls back to is one git knows: named by the
/// branch checked out (else it is taken as a URL), or with a URL set, or defined by a file of
/// `.git/remotes` or `.git/branches`. Where it is not, git fetches nothing and succeeds.
fn default_remote_known(repo: &Repository) -> bool {
    let config = repo.config();
    let branch = match repo.refs().read("HEAD") {
        Ok(Some(RefTarget::Symbolic(head))) => head.strip_prefix("refs/heads/").map(str::to_owned),
        _ => None,
    };
    let branch = branch.as_deref();
    if branch.is_some_and(|b| config.get(&format!("branch.{b}.remote")).is_some()) {
        return true;
    }
    let name = upstream::default_remote(config, branch);
    config.get(&format!("remote.{name}.url")).is_some()
        || super::legacy_remotes::read(repo.common_dir(), &name, config).is_some()
}
