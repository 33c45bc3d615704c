//! Working trees: the index file, `.gitattributes` and conversion, smudge filters, path safety,
//! and the parallel writer that checks a tree out.
//!
//! ```no_run
//! use sluice_checkout::{checkout_fresh, CheckoutOptions};
//! let repo = sluice_repo::Repository::discover(std::path::Path::new("."))?;
//! let (_, head) = repo.refs().resolve("HEAD")?;
//! let tree = sluice_checkout::commit_tree(repo.objects(), &head.expect("a commit"))?;
//! let options = CheckoutOptions::from_config(repo.config())?;
//! checkout_fresh(&repo, &tree, &options, &sluice_object::progress::Discard)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod at_dir;
pub mod attributes;
mod checkout;
pub mod choose;
pub mod command;
pub mod convert;
pub mod filter;

pub mod new_branch;
mod objects;
pub mod path_check;
mod paths;
pub mod report;
pub mod revision;
mod switch;
pub mod tree;
pub mod writer;

pub use checkout::{
    checkout_fresh, checkout_fresh_from, checkout_index, commit_tree, CheckoutIndexReport,
    CheckoutOptions, IndexCheckout,
};
pub use objects::Objects;
pub use paths::{checkout_paths, checkout_paths_from, PathsChecked};
pub use switch::{clean_state, local_changes, switch, CleanState, SwitchOutcome};

use sluice_object::ObjectId;
use std::path::PathBuf;

/// Why a checkout failed. Nothing is written when the tree itself is refused.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    /// The branch to switch to is checked out in another worktree (git 2.47's words; two
    /// worktrees on one branch would each move it under the other).
    #[error("'{branch}' is already used by worktree at '{}'", work_tree.display())]
    UsedByWorktree {
        /// The branch, by its short name.
        branch: String,
        /// The other worktree's files.
        work_tree: std::path::PathBuf,
    },
    /// The caller asked the checkout to stop.
    #[error("interrupted")]
    Cancelled(#[from] sluice_object::cancel::Cancelled),
    /// Reading an object failed.
    #[error(transparent)]
    Odb(#[from] sluice_odb::OdbError),
    /// A reference could not be read or written.
    #[error(transparent)]
    Ref(#[from] sluice_repo::RefError),
    /// A pathspec that leaves the work tree (`../x` at its top).
    #[error("{spec}: '{spec}' is outside repository at '{}'", top.display())]
    OutsideRepository {
        /// The pathspec.
        spec: String,
        /// The top of the work tree.
        top: std::path::PathBuf,
    },
    /// An object the tree names is missing.
    #[error("unable to read object {id} for '{path}'")]
    MissingObject {
        /// The object.
        id: ObjectId,
        /// Where it belongs.
        path: String,
    },
    /// A tree object is malformed.
    #[error("invalid tree {id}: {why}")]
    BadTree {
        /// The tree.
        id: ObjectId,
        /// What is wrong.
        why: String,
    },
    /// A commit object is malformed.
    #[error("invalid commit {0}: no tree")]
    BadCommit(ObjectId),
    /// A path git refuses to check out.
    #[error("invalid path '{path}': {source}")]
    UnsafePath {
        /// The path.
        path: String,
        /// Why.
        source: path_check::PathError,
    },
    /// The same path twice, or a path that is both a file and a directory.
    #[error("invalid path '{0}': conflicts with another entry of the tree")]
    Conflict(String),
    /// A leading directory is a symbolic link.
    #[error("cannot write beyond a symbolic link: '{0}'")]
    BeyondSymlink(String),
    /// An object of a pack being indexed could not be read.
    #[error("cannot read {id} from the pack being indexed: {source}")]
    Arriving {
        /// The object.
        id: ObjectId,
        /// Why.
        source: sluice_pack::LookupError,
    },
    /// A file system operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Conversion failed.
    #[error("{path}: {source}")]
    Convert {
        /// The file.
        path: String,
        /// Why.
        source: convert::ConvertError,
    },
    /// A required smudge filter failed.
    #[error(transparent)]
    Filter(#[from] filter::FilterError),
    /// The index file is corrupt.
    #[error(transparent)]
    IndexFile(#[from] sluice_index::IndexFileError),
    /// Configuration could not be read.
    #[error(transparent)]
    Config(#[from] sluice_odb::ConfigError),
    /// The sparse checkout's patterns could not be read, or are not cone mode's.
    #[error(transparent)]
    Sparse(#[from] sluice_repo::sparse::SparseError),
    /// The index is a sparse index (`index.sparse`), with whole directories as entries.
    #[error("the index holds the directory '{0}' as one entry (a sparse index, index.sparse=true), which Sluice does not support")]
    SparseIndex(String),
    /// Local changes that the checkout would overwrite.
    #[error("Your local changes to the following files would be overwritten by checkout:\n{}\nPlease commit your changes or stash them before you switch branches.\nAborting", list(.0))]
    LocalChanges(Vec<String>),
    /// Untracked files in the way: files where the target has files, and directories (holding
    /// untracked files) where the target has a file, each said as git says it.
    #[error("{}", untracked_words(files, dirs))]
    Untracked {
        /// Untracked files the switch would overwrite.
        files: Vec<String>,
        /// Directories whose untracked files the switch would lose.
        dirs: Vec<String>,
    },
    /// The destination of a fresh checkout is not empty where it must write.
    #[error("destination path '{0}' already exists")]
    Exists(String),
    /// The repository has no work tree.
    #[error("this operation must be run in a work tree")]
    Bare,
    /// A name that names no commit to check out, or a branch that cannot be made.
    #[error(transparent)]
    Revision(Box<revision::RevisionError>),
}

/// git's words for untracked files in the way of a switch: the directories first, then the
/// files, each kind an error of its own, as git's unpack-trees reports them.
fn untracked_words(files: &[String], dirs: &[String]) -> String {
    let mut blocks = Vec::new();
    if !dirs.is_empty() {
        blocks.push(format!(
            "Updating the following directories would lose untracked files in them:\n{}\n\n",
            list(dirs)
        ));
    }
    if !files.is_empty() {
        blocks.push(format!("The following untracked working tree files would be overwritten by checkout:\n{}\nPlease move or remove them before you switch branches.\n", list(files)));
    }
    blocks.join("error: ") + "Aborting"
}

fn list(paths: &[String]) -> String {
    paths
        .iter()
        .map(|p| format!("\t{p}"))
        .collect::<Vec<_>>()
        .join("\n")
}
