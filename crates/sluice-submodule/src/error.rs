//! Why submodules could not be found, registered, cloned or fetched.

use sluice_object::ObjectId;
use sluice_odb::ConfigError;
use sluice_repo::RepoError;
use std::path::PathBuf;

/// Why the submodules cannot be found, registered, cloned, checked out or fetched; the words
/// are git's where git has some.
#[derive(Debug, thiserror::Error)]
pub enum SubmoduleError {
    /// A signal stopped the work.
    #[error(transparent)]
    Cancelled(#[from] sluice_object::cancel::Cancelled),
    /// The index could not be read.
    #[error("cannot read the index '{}'", path.display())]
    Index {
        /// The index file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// `.gitmodules` or a configuration file could not be read or written.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A submodule's repository (or the superproject's) could not be opened.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// A gitlink `.gitmodules` gives no URL for (git's words).
    #[error("No url found for submodule path '{0}' in .gitmodules")]
    NoUrl(String),
    /// A name that could escape `modules/` (git refuses such names).
    #[error("ignoring suspicious submodule name: {0}")]
    SuspiciousName(String),
    /// A file tying the submodule to its repository could not be written.
    #[error("cannot write '{}'", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Sluice could not be started inside a submodule.
    #[error("cannot run sluice in '{}'", cwd.display())]
    Run {
        /// Where it was to run.
        cwd: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The checkout of a submodule's commit failed (git's words).
    #[error("Unable to checkout '{commit}' in submodule path '{path}'")]
    Checkout {
        /// The commit.
        commit: String,
        /// The submodule's path as shown.
        path: String,
    },
    /// The recorded commit is on no branch of the submodule's remote, and fetching it by id
    /// failed (git's words).
    #[error("Fetched in submodule path '{path}', but it did not contain {commit}. Direct fetching of that commit failed.")]
    NotFetched {
        /// The submodule's path as shown.
        path: String,
        /// The recorded commit.
        commit: ObjectId,
    },
    /// `--remote-submodules` found no remote-tracking ref to check out (git's words).
    #[error("Unable to find current {remote}/{branch} revision in submodule path '{path}'")]
    NoRemoteTip {
        /// The submodule's default remote.
        remote: String,
        /// The branch followed.
        branch: String,
        /// The submodule's path as shown.
        path: String,
    },
    /// `submodule.alternateLocation` has a value git does not know.
    #[error("Value '{0}' for submodule.alternateLocation is not recognized")]
    AlternateLocation(String),
    /// `submodule.alternateErrorStrategy` has a value git does not know.
    #[error("Value '{0}' for submodule.alternateErrorStrategy is not recognized")]
    AlternateErrorStrategy(String),
    /// A recursion mode git does not know: of `option` (`recurse-submodules` on the command
    /// line, else the setting's key as git names it).
    #[error("bad {option} argument: {value}")]
    BadRecursion {
        /// The option or setting.
        option: String,
        /// Its value.
        value: String,
    },
    /// A setting of how many jobs run at once is negative (git's words for each):
    /// `fetch.parallel` or `submodule.fetchjobs`.
    #[error("{}", match .0.as_str() {
        "fetch.parallel" => "fetch.parallel cannot be negative",
        _ => "negative values not allowed for submodule.fetchJobs",
    })]
    NegativeJobs(String),
}
