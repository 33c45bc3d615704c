//! The server's half of negotiation: which of the client's haves are common, and whether it
//! has heard enough to stop ("ready"): every wanted commit reaches a commit the client has,
//! looking no further back than the oldest have (git's `ok_to_give_up`).

use crate::ServeError;
use sluice_object::parse::parse_commit;
use sluice_object::{IdMap, IdSet, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;

/// What the server makes of one `have`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Have {
    /// The server has it: a common object.
    Common,
    /// The server does not know it.
    Unknown,
}

struct CommitInfo {
    parents: Vec<ObjectId>,
    time: i64,
}

/// Negotiation state of one request (or, over a stateful connection, of the whole exchange).
pub(crate) struct Negotiator<'a> {
    odb: &'a ObjectDb,
    /// Objects the client has: each common have, and the parents of common commits.
    they_have: IdSet,
    /// The common haves, in the order received: what the pack may leave out.
    common: Vec<ObjectId>,
    oldest_have: Option<i64>,
    commits: IdMap<Option<CommitInfo>>,
    /// Commits known to reach something the client has.
    reaches: IdSet,
}

impl<'a> Negotiator<'a> {
    pub fn new(odb: &'a ObjectDb) -> Self {
        Negotiator {
            odb,
            they_have: IdSet::default(),
            common: Vec::new(),
            oldest_have: None,
            commits: IdMap::default(),
            reaches: IdSet::default(),
        }
    }

    /// The common objects so far.
    pub fn common(&self) -> &[ObjectId] {
        &self.common
    }

    fn commit(&mut self, id: &ObjectId) -> Result<Option<&CommitInfo>, ServeError> {
        if !self.commits.contains_key(id) {
            let info =
                match self.odb.read(id)? {
                    Some((ObjectKind::Commit, data)) => parse_commit(self.odb.hash(), &data)
                        .ok()
                        .map(|c| CommitInfo {
                            parents: c.parents,
                            time: c.time,
                        }),
                    _ => None,
                };
            self.commits.insert(*id, info);
        }
        Ok(self.commits[id].as_ref())
    }

    /// Records a `have` line.
    pub fn have(&mut self, id: &ObjectId) -> Result<Have, ServeError> {
        if !self.odb.contains(id) {
            return Ok(Have::Unknown);
        }
        if let Some((time, parents)) = self.commit(id)?.map(|c| (c.time, c.parents.clone())) {
            if self.they_have.contains(id) {
                return Ok(Have::Common);
            }
            self.oldest_have = Some(self.oldest_have.map_or(time, |t| t.min(time)));
            self.they_have.extend(parents);
        }
        if self.they_have.insert(*id) {
            self.common.push(*id);
        }
        Ok(Have::Common)
    }

    /// Whether every want reaches something the client has (so more haves would not make the
    /// pack smaller).
    pub fn ok_to_give_up(&mut self, wants: &[ObjectId]) -> Result<bool, ServeError> {
        if self.common.is_empty() {
            return Ok(false);
        }
        let oldest = self.oldest_have.unwrap_or(i64::MIN);
        for want in wants {
            if self.commit(want)?.is_none() {
                // Not a commit: ancestry cannot tell, so it does not hold negotiation up.
                continue;
            }
            if !self.reaches_client(want, oldest)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn reaches_client(&mut self, start: &ObjectId, oldest: i64) -> Result<bool, ServeError> {
        let mut stack = vec![*start];
        let mut visited = IdSet::default();
        while let Some(id) = stack.pop() {
            if self.they_have.contains(&id) || self.reaches.contains(&id) {
                self.reaches.insert(*start);
                return Ok(true);
            }
            if !visited.insert(id) {
                continue;
            }
            let Some(commit) = self.commit(&id)? else {
                continue;
            };
            if commit.time < oldest {
                continue;
            }
            stack.extend(commit.parents.iter().copied());
        }
        Ok(false)
    }
}
