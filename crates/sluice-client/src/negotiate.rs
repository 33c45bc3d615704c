//! The haves of a fetch, chosen as git's default ("consecutive") negotiator chooses them:
//! every commit reachable from this side's refs, newest committer date first, skipping those
//! the server has acknowledged and their ancestors.

use sluice_object::parse::parse_commit;
use sluice_object::{IdMap, ObjectId};
use sluice_odb::{Config, ObjectDb};
use sluice_remote::Negotiator;
use std::collections::BinaryHeap;

/// `fetch.negotiationAlgorithm`: which haves a fetch offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NegotiationAlgorithm {
    /// Haves from the local history ([`HistoryNegotiator`]): git's `consecutive`, and what
    /// Sluice offers for git's `skipping` too (the same objects may come, more of them).
    History,
    /// None at all (`noop`): the server sends all the wants reach.
    Noop,
}

impl NegotiationAlgorithm {
    /// The algorithm configured; a name git does not know is refused in git's words.
    pub fn from_config(config: &Config) -> Result<NegotiationAlgorithm, UnknownNegotiation> {
        let Some(name) = config.get("fetch.negotiationalgorithm") else {
            return Ok(NegotiationAlgorithm::History);
        };
        match name.to_ascii_lowercase().as_str() {
            "consecutive" | "skipping" | "default" => Ok(NegotiationAlgorithm::History),
            "noop" => Ok(NegotiationAlgorithm::Noop),
            _ => Err(UnknownNegotiation(name.to_owned())),
        }
    }
}

/// `fetch.negotiationAlgorithm` names no algorithm git knows.
#[derive(Debug, thiserror::Error)]
#[error("unknown fetch negotiation algorithm '{0}'")]
pub struct UnknownNegotiation(pub String);

/// Flags of a commit the walk has met.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    /// Pushed by the walk (not only marked common by an acknowledgement).
    met: bool,
    common: bool,
    parents: Option<usize>,
}

/// Haves from the local history.
pub struct HistoryNegotiator<'a> {
    odb: &'a ObjectDb,
    /// Commits to offer, newest first: (time, id).
    queue: BinaryHeap<(i64, ObjectId)>,
    seen: IdMap<Seen>,
    /// The parents of every commit met (`Seen::parents` indexes them), for walking on and for
    /// marking ancestors common.
    parents: Vec<Vec<ObjectId>>,
}

impl std::fmt::Debug for HistoryNegotiator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistoryNegotiator")
            .field("queued", &self.queue.len())
            .finish()
    }
}

impl<'a> HistoryNegotiator<'a> {
    /// Starts from `tips` (ref values; tags are peeled, non-commits and missing objects are
    /// skipped, as a broken local ref must not stop a fetch).
    pub fn new(odb: &'a ObjectDb, tips: impl IntoIterator<Item = ObjectId>) -> Self {
        let mut negotiator = HistoryNegotiator {
            odb,
            queue: BinaryHeap::new(),
            seen: IdMap::default(),
            parents: Vec::new(),
        };
        for tip in tips {
            if let Some(commit) = odb.peel_to_commit(tip) {
                negotiator.push(commit);
            }
        }
        negotiator
    }

    fn push(&mut self, id: ObjectId) {
        let common = match self.seen.get(&id) {
            Some(seen) if seen.met => return,
            Some(seen) => seen.common,
            None => false,
        };
        // Only commits this side has are offered: a shallow history's cut parents are not.
        // The commit is parsed once, here; its parents wait in `parents` until it is offered.
        let commit = self
            .odb
            .read(&id)
            .ok()
            .flatten()
            .and_then(|(_, data)| parse_commit(id.kind(), &data).ok());
        let parents = commit.as_ref().map(|c| {
            self.parents.push(c.parents.clone());
            self.parents.len() - 1
        });
        self.seen.insert(
            id,
            Seen {
                met: true,
                common,
                parents,
            },
        );
        if let Some(commit) = commit {
            self.queue.push((commit.time, id));
        }
    }

    /// Marks `id` and everything below it that the walk has expanded as common.
    fn mark_common(&mut self, id: ObjectId) {
        let mut stack = vec![id];
        while let Some(id) = stack.pop() {
            let Some(seen) = self.seen.get_mut(&id) else {
                // Never met: remember it, so it is not offered when the walk reaches it.
                self.seen.insert(
                    id,
                    Seen {
                        met: false,
                        common: true,
                        parents: None,
                    },
                );
                continue;
            };
            if seen.common {
                continue;
            }
            seen.common = true;
            if let Some(index) = seen.parents {
                stack.extend(self.parents[index].iter().copied());
            }
        }
    }
}

impl Negotiator for HistoryNegotiator<'_> {
    fn next_haves(&mut self, count: usize) -> Vec<ObjectId> {
        let mut haves = Vec::new();
        while haves.len() < count {
            let Some((_, id)) = self.queue.pop() else {
                break;
            };
            let seen = self.seen.get(&id).copied().unwrap_or_default();
            let parents = seen
                .parents
                .map(|i| self.parents[i].clone())
                .unwrap_or_default();
            for parent in parents {
                self.push(parent);
                if seen.common {
                    self.mark_common(parent);
                }
            }
            let common = seen.common;
            if !common {
                haves.push(id);
            }
        }
        haves
    }

    fn acknowledged(&mut self, id: &ObjectId) {
        self.mark_common(*id);
    }
}
