//! A git repository on disk (`gitrepository-layout`) around its object database: finding it,
//! its configuration, refs and reflogs, `HEAD` and worktrees, the shallow file, `FETCH_HEAD`,
//! the roots that keep objects alive, revisions as git names them, receiving a pack with the
//! repository's own settings, and the storage seam a server opens repositories through
//! (`storage`).
//!
//! ```no_run
//! let repo = sluice_repo::Repository::discover(std::path::Path::new("."))?;
//! let head_tree_exists = repo.objects().contains(&repo.hash().null_id());
//! # Ok::<(), sluice_repo::RepoError>(())
//! ```
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod abbrev;
pub mod date;
pub mod default_config;
pub mod fetch_head;
pub mod hooks;
pub mod init;
mod object_views;
pub mod receive;
pub mod refs;
pub mod refspec;
mod repository;
pub mod revision;
pub mod roots;
pub mod server_info;
pub mod shallow;
pub mod sparse;
pub mod storage;
pub mod template;
pub mod upstream;
pub mod worktrees;

pub use refs::{
    Expected, Peeled, RefError, RefTarget, RefUpdate, Refs, Transaction, TransactionError,
};
pub use repository::{RepoError, Repository, LOCAL_REPO_ENV};
pub use roots::{Roots, RootsError};
pub use worktrees::{Reflog, Worktree};
