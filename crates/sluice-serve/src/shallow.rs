//! Shallow boundaries (`deepen`, `deepen-since`, `deepen-not`, `deepen-relative`): which
//! commits the client must record as shallow, which of its shallow commits it may now complete,
//! and where the pack's walk stops. A shallow repository's own cut bounds every walk, and the
//! commits of it a request reaches are the client's to record, as git's upload-pack tells them.

use crate::advertise::peel;
use crate::request_error::RequestError;
use crate::ServeError;
use sluice_object::parse::parse_commit;
use sluice_object::{IdMap, IdSet, ObjectId, ObjectKind};
use sluice_repo::Repository;
use std::collections::VecDeque;

/// What a request asks about depth.
#[derive(Debug)]
pub(crate) struct Deepen<'a> {
    pub wants: &'a [ObjectId],
    pub client_shallow: &'a [ObjectId],
    /// The served repository's own shallow commits, whose parents it lacks.
    pub own_shallow: &'a IdSet,
    pub depth: Option<u32>,
    pub relative: bool,
    pub since: Option<i64>,
    /// Commits (resolved from `deepen-not` refs) whose history is left out.
    pub not: &'a [ObjectId],
}

impl Deepen<'_> {
    /// Whether the client asked for a new depth at all.
    pub fn deepens(&self) -> bool {
        self.depth.is_some() || self.since.is_some() || !self.not.is_empty()
    }
}

/// The shallow boundary of a request.
#[derive(Debug, Default)]
pub(crate) struct ShallowInfo {
    /// Commits the client must now record as shallow.
    pub shallow: Vec<ObjectId>,
    /// Commits the client had as shallow and now gets the parents of.
    pub unshallow: Vec<ObjectId>,
    /// Commits whose parents the pack leaves out.
    pub cut: IdSet,
    /// Extra tips to send: the parents of unshallowed commits.
    pub extra_wants: Vec<ObjectId>,
}

/// A commit's parents (none for one the repository is cut at) and time.
fn commit(
    repo: &Repository,
    own_shallow: &IdSet,
    id: &ObjectId,
) -> Result<Option<(Vec<ObjectId>, i64)>, ServeError> {
    Ok(match repo.objects().read(id)? {
        Some((ObjectKind::Commit, data)) => {
            let mut commit = parse_commit(repo.hash(), &data)
                .map_err(|e| ServeError::BadCommit { id: *id, source: e })?;
            if own_shallow.contains(id) {
                commit.parents.clear();
            }
            Some((commit.parents, commit.time))
        }
        _ => None,
    })
}

/// Computes the boundary. Without deepening, the client's own shallow commits bound the walk.
pub(crate) fn shallow_info(
    repo: &Repository,
    request: &Deepen<'_>,
) -> Result<ShallowInfo, ServeError> {
    let client: IdSet = request.client_shallow.iter().copied().collect();
    let own = request.own_shallow;
    let commit = |id: &ObjectId| commit(repo, own, id);
    // History is measured from the commits wanted tags point at, as git measures it.
    let wanted_commits = || {
        request
            .wants
            .iter()
            .map(|id| Ok(peel(repo, id)?.unwrap_or(*id)))
            .collect::<Result<Vec<ObjectId>, ServeError>>()
    };
    let mut info = ShallowInfo {
        cut: client.iter().chain(own).copied().collect(),
        ..ShallowInfo::default()
    };
    if !request.deepens() {
        // The client records where this repository is cut, where its wants reach it.
        if !own.is_empty() {
            let reached = ancestry(repo, own, &wanted_commits()?, &client)?;
            let mut shallow: Vec<ObjectId> = own
                .iter()
                .filter(|id| reached.contains(id) && !client.contains(id))
                .copied()
                .collect();
            shallow.sort_unstable();
            info.shallow = shallow;
        }
        return Ok(info);
    }
    // `keep(commit)` says whether a commit's parents are sent; `boundary` collects the commits
    // whose parents are not.
    let wants = wanted_commits()?;
    let mut not_shallow = IdSet::default();
    let mut boundary = IdSet::default();
    if let Some(depth) = request.depth {
        if request.since.is_some() || !request.not.is_empty() {
            return Err(RequestError::DeepenConflict.into());
        }
        // Breadth first, so each commit gets its smallest depth; the tips are at depth 1.
        let (starts, limit) = if request.relative {
            (request.client_shallow, depth.saturating_add(1))
        } else {
            (&wants[..], depth)
        };
        let mut depths: IdMap<u32> = IdMap::default();
        let mut queue = VecDeque::new();
        for id in starts {
            if depths.insert(*id, 1).is_none() {
                queue.push_back(*id);
            }
        }
        while let Some(id) = queue.pop_front() {
            let level = depths[&id];
            let Some((parents, _)) = commit(&id)? else {
                continue;
            };
            // Where this repository is cut, the client's history is cut too.
            if level >= limit || own.contains(&id) {
                boundary.insert(id);
                continue;
            }
            not_shallow.insert(id);
            for parent in parents {
                if let std::collections::hash_map::Entry::Vacant(slot) = depths.entry(parent) {
                    slot.insert(level + 1);
                    queue.push_back(parent);
                }
            }
        }
        boundary.retain(|id| !not_shallow.contains(id));
    } else {
        let excluded = ancestry(repo, own, request.not, &IdSet::default())?;
        let keep = |id: &ObjectId, time: i64| {
            request.since.is_none_or(|since| time >= since) && !excluded.contains(id)
        };
        let mut seen = IdSet::default();
        // The tips are judged as every other commit: a date after them all, or an exclusion
        // of them all, selects nothing, which git refuses.
        let mut queue: VecDeque<ObjectId> = VecDeque::new();
        for id in wants.iter() {
            if matches!(commit(id)?, Some((_, time)) if keep(id, time)) {
                queue.push_back(*id);
            }
        }
        while let Some(id) = queue.pop_front() {
            if !seen.insert(id) {
                continue;
            }
            let Some((parents, _)) = commit(&id)? else {
                continue;
            };
            not_shallow.insert(id);
            if own.contains(&id) {
                boundary.insert(id);
            }
            for parent in parents {
                match commit(&parent)? {
                    Some((_, time)) if keep(&parent, time) => queue.push_back(parent),
                    _ => {
                        boundary.insert(id);
                    }
                }
            }
        }
        if not_shallow.is_empty() {
            return Err(RequestError::NoShallowCommits.into());
        }
    }
    let mut shallow: Vec<ObjectId> = boundary
        .iter()
        .filter(|id| !client.contains(id))
        .copied()
        .collect();
    shallow.sort();
    info.shallow = shallow;
    for id in request.client_shallow {
        if not_shallow.contains(id) && !boundary.contains(id) {
            info.unshallow.push(*id);
            if let Some((parents, _)) = commit(id)? {
                info.extra_wants.extend(parents);
            }
        }
    }
    info.cut.extend(boundary);
    Ok(info)
}

/// Every commit reachable from `tips`, not going past `stop`.
fn ancestry(
    repo: &Repository,
    own_shallow: &IdSet,
    tips: &[ObjectId],
    stop: &IdSet,
) -> Result<IdSet, ServeError> {
    let mut seen = IdSet::default();
    let mut stack: Vec<ObjectId> = tips.to_vec();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) || stop.contains(&id) {
            continue;
        }
        if let Some((parents, _)) = commit(repo, own_shallow, &id)? {
            stack.extend(parents);
        }
    }
    Ok(seen)
}
