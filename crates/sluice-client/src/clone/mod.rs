//! Clone's engine: [`clone_into`] fills an empty repository from a remote, in its steps, the
//! plan from the remote's refs ([`ClonePlan`]), the pack received with the checkout running
//! while its deltas resolve ([`EarlyCheckout`]), and the refs and configuration written
//! ([`write_refs`], [`write_config`]). The command line makes the repository, decides the
//! options from its flags and the configuration, and shows messages and progress.

mod command;
mod config;
mod early;
mod layout;
mod local;
mod partial;
mod plan;
mod refs;
mod run;

pub use command::{run_clone, CloneCommandError, CloneHost, CloneMade, CloneRequest};
pub use config::{write_config, write_settings, Recorded, SettingError};
pub use early::EarlyCheckout;
pub use layout::{check_ref_format, Layout, LayoutError};
pub use local::{local_source, LocalChoice};
pub use plan::{
    directory_name, guess_remote_head, ClonePlan, CloneShape, Mapped, Origin, OriginError,
    PlanError,
};
pub use refs::{write_refs, RefLog};
pub use run::{clone_into, CloneMessages, CloneNotice, CloneOptions, Cloned, LocalSource};

use crate::local_clone::LocalCloneError;
use crate::receive::ReceiveError;
use sluice_checkout::CheckoutError;
use sluice_odb::{ConfigError, OdbError};
use sluice_remote::FetchError;
use sluice_repo::{RefError, RepoError};

/// Why a clone failed.
#[derive(Debug, thiserror::Error)]
pub enum CloneError {
    /// The server failed or broke the protocol.
    // Not transparent: the FetchError stays in the chain of causes, where the binary
    // finds what the server said.
    #[error("{0}")]
    Fetch(#[from] FetchError),
    /// The remote's refs cannot be cloned as asked.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The pack could not be stored.
    #[error(transparent)]
    Receive(#[from] ReceiveError),
    /// The source's object files could not be brought over.
    #[error(transparent)]
    LocalClone(#[from] LocalCloneError),
    /// The work tree could not be checked out.
    #[error(transparent)]
    Checkout(#[from] CheckoutError),
    /// A ref could not be written.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// The shallow file could not be written.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// The configuration could not be read or written.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The sparse checkout's settings could not be written.
    #[error(transparent)]
    Sparse(#[from] sluice_repo::sparse::SparseError),
    /// `--sparse` in a bare clone, refused as git's `sparse-checkout` refuses it once the
    /// objects are in: there is no work tree.
    #[error("this operation must be run in a work tree")]
    SparseWithoutWorkTree,
    /// The object database could not be opened.
    #[error(transparent)]
    Odb(#[from] OdbError),
}
