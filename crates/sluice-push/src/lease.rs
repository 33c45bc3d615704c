//! `--force-with-lease` and `--force-if-includes`: what a push expects each remote ref to be,
//! from the value given or from the remote-tracking ref, and whether the remote's work the
//! tracking ref saw was integrated here before it is overwritten.

use super::spec::{self, Paired};
use super::PushError;
use sluice_object::ObjectId;
use sluice_repo::upstream::{fetch_specs, tracking_ref};
use sluice_repo::Repository;

/// `--force-with-lease`: the ref moves only if the remote has it at `expected` (absent: `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The remote ref it protects (a short name is matched as git matches one); `None` for all.
    pub name: Option<String>,
    /// The value it must have.
    pub expected: Option<ObjectId>,
    /// The value is the remote-tracking ref's (absent if there is none): `expected` is unused.
    pub tracking: bool,
}

impl Lease {
    /// A `--force-with-lease` value: `<ref>:<expect>` (an object name; empty: the ref must
    /// not exist), `<ref>` (its remote-tracking ref's value), or empty (every ref, each
    /// against its remote-tracking ref).
    pub fn parse(repo: &Repository, text: &str) -> Result<Lease, PushError> {
        let (name, expect) = match text.split_once(':') {
            Some((name, expect)) => (name, Some(expect)),
            None => (text, None),
        };
        let expected = match expect {
            None | Some("") => None,
            // A full id need not be here (it is what the remote is expected to have).
            Some(expect) => Some(
                (ObjectId::from_hex(repo.hash(), expect.as_bytes()).ok())
                    .or_else(|| spec::resolve_source(repo, expect).map(|s| s.id))
                    .ok_or_else(|| PushError::BadLeaseValue(expect.to_owned()))?,
            ),
        };
        Ok(Lease {
            name: (!name.is_empty()).then(|| name.to_owned()),
            expected,
            tracking: expect.is_none(),
        })
    }

    /// Whether the lease protects the remote ref `dst`.
    fn applies_to(&self, dst: &str) -> bool {
        match &self.name {
            None => true,
            Some(name) => ["", "refs/", "refs/tags/", "refs/heads/", "refs/remotes/"]
                .iter()
                .any(|place| format!("{place}{name}") == dst),
        }
    }
}

/// The leases of one push, judged against the refs here.
pub(crate) struct LeaseCheck<'a> {
    pub(crate) repo: &'a Repository,
    pub(crate) leases: &'a [Lease],
    /// The remote's name: a lease on a remote-tracking ref needs one.
    pub(crate) remote: Option<&'a str>,
    /// `--force-if-includes`.
    pub(crate) if_includes: bool,
}

/// What the leases say of one update: the value the remote ref must have, and whether the
/// remote's work its remote-tracking ref saw is in the local history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Leased {
    /// The value expected (`None`: the ref must not exist).
    pub(crate) expected: Option<ObjectId>,
    /// `--force-if-includes` holds (always, where it was not asked for or does not apply).
    pub(crate) includes_remote_work: bool,
}

impl LeaseCheck<'_> {
    /// What a lease says of `paired`; `None` where no lease protects its remote ref.
    pub(crate) fn of(&self, paired: &Paired) -> Option<Leased> {
        Some(Leased {
            expected: self.expected(&paired.dst)?,
            includes_remote_work: self.included(paired),
        })
    }

    /// The value a lease expects the remote ref `dst` to have (`Some(None)`: absent); `None`
    /// where no lease protects it.
    fn expected(&self, dst: &str) -> Option<Option<ObjectId>> {
        let lease = self.leases.iter().find(|l| l.applies_to(dst))?;
        Some(match (lease.tracking, self.remote) {
            (false, _) => lease.expected,
            (true, Some(remote)) => tracking_value(self.repo, remote, dst),
            (true, None) => None,
        })
    }

    /// Whether `paired` may go on under `--force-if-includes`: its lease is not on the
    /// remote-tracking ref, or that ref's value is in the history of the local ref pushed.
    fn included(&self, paired: &Paired) -> bool {
        if !self.if_includes {
            return true;
        }
        let tracking_lease = (self.leases.iter()).any(|l| l.tracking && l.applies_to(&paired.dst));
        let (true, Some(remote)) = (tracking_lease, self.remote) else {
            return true;
        };
        let Some(seen) = tracking_value(self.repo, remote, &paired.dst) else {
            return true;
        };
        let Some(local) = paired.src.as_ref().and_then(|s| s.ref_name.as_deref()) else {
            return true;
        };
        in_history_of(self.repo, local, &seen)
    }
}

/// The value of the remote-tracking ref of the remote's `name`: what `--force-with-lease`
/// expects the remote to have.
fn tracking_value(repo: &Repository, remote: &str, name: &str) -> Option<ObjectId> {
    let tracking = tracking_ref(&fetch_specs(repo, remote), name)?;
    repo.refs().resolve(&tracking).ok()?.1
}

/// Whether `seen` (a remote-tracking ref's value) is in the history of the local ref `local`:
/// reachable from its value now or from any value its reflog records (`--force-if-includes`:
/// the remote's work was integrated here at some point, even if rewritten since).
fn in_history_of(repo: &Repository, local: &str, seen: &ObjectId) -> bool {
    let objects = repo.objects();
    let now = repo.refs().resolve(local).ok().and_then(|(_, id)| id);
    let mut values = repo.refs().logged_values(local);
    values.extend(now);
    values.dedup();
    // Newest first: a rebase onto the remote's tip is usually the latest entry.
    (values.iter().rev())
        .any(|v| v == seen || sluice_graph::ancestry::is_ancestor(objects, seen, v))
}
