//! The checkout during delta resolution, a clone's headline: the commit to check out is known
//! from the advertisement before the pack arrives, so its files are written from the arriving
//! pack, each as soon as its blob is resolved, while the other deltas are still being resolved.

use sluice_checkout::{checkout_fresh_from, commit_tree, CheckoutError, CheckoutOptions};
use sluice_object::progress::Progress;
use sluice_object::ObjectId;
use sluice_pack::ArrivingPack;
use sluice_repo::Repository;
use std::sync::Mutex;

/// A checkout of one commit, run by the indexer once the pack's objects can be read; give
/// [`EarlyCheckout::check_out`] as the `alongside` work of
/// [`Receiving`](crate::receive::Receiving).
pub struct EarlyCheckout<'r> {
    repo: &'r Repository,
    commit: ObjectId,
    options: CheckoutOptions,
    progress: &'r dyn Progress,
    /// The checkout's warnings (or its failure), once it ran.
    outcome: Mutex<Option<Result<Vec<String>, CheckoutError>>>,
}

impl<'r> EarlyCheckout<'r> {
    /// The checkout of `commit` into `repo`'s work tree. Only for a pack that holds every file
    /// of the commit: not for a partial clone (it lacks blobs) nor one that borrows objects
    /// from a reference repository (the pack leaves those out).
    pub fn new(
        repo: &'r Repository,
        commit: ObjectId,
        options: CheckoutOptions,
        progress: &'r dyn Progress,
    ) -> EarlyCheckout<'r> {
        EarlyCheckout {
            repo,
            commit,
            options,
            progress,
            outcome: Mutex::new(None),
        }
    }

    /// Checks the commit out from `pack`.
    pub fn check_out(&self, pack: &ArrivingPack<'_>) {
        let outcome = commit_tree(pack, &self.commit).and_then(|tree| {
            checkout_fresh_from(self.repo, pack, &tree, &self.options, self.progress)
        });
        *self.outcome.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
    }

    /// The checkout's warnings, or why it failed; `None` if it never ran (no pack came), which
    /// leaves the checkout to be done afterwards.
    pub fn finish(self) -> Option<Result<Vec<String>, CheckoutError>> {
        self.outcome.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}
