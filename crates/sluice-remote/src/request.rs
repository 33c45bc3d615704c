//! What a fetch asks for and what comes back, whichever protocol version carries it.

use sluice_object::ObjectId;
use std::io::Read;

/// A ref the server advertised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRef {
    /// Its full name (`refs/heads/main`, `HEAD`).
    pub name: String,
    /// What it points at.
    pub id: ObjectId,
    /// For a symbolic ref, the ref it points to.
    pub symref_target: Option<String>,
    /// For an annotated tag, the object it peels to.
    pub peeled: Option<ObjectId>,
}

/// How far to cut history (`--depth`, `--shallow-since`, `--shallow-exclude`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Deepen {
    /// Commits to keep from each wanted tip.
    pub depth: Option<u32>,
    /// Keep commits newer than this time (seconds since the epoch).
    pub since: Option<i64>,
    /// Stop at commits reachable from these refs.
    pub not: Vec<String>,
    /// `--deepen`: the depth counts from the current shallow boundary.
    pub relative: bool,
}

impl Deepen {
    /// Whether anything is asked for.
    pub fn is_set(&self) -> bool {
        self.depth.is_some() || self.since.is_some() || !self.not.is_empty()
    }
}

/// What to ask `fetch` for.
#[derive(Debug, Clone, Default)]
pub struct FetchRequest {
    /// Objects wanted.
    pub wants: Vec<ObjectId>,
    /// This side's shallow commits (from `.git/shallow`).
    pub shallow: Vec<ObjectId>,
    /// How to cut history.
    pub deepen: Deepen,
    /// A partial clone's filter (`blob:none`, `blob:limit=1m`, …).
    pub filter: Option<String>,
    /// Also send the tags that point into what is sent.
    pub include_tag: bool,
    /// Ask for progress on band 2.
    pub progress: bool,
    /// Fail before the pack when the server's own history is shallow (`clone
    /// --reject-shallow`).
    pub reject_shallow_remote: bool,
}

/// The haves of a negotiation, offered in the order they should be sent.
pub trait Negotiator {
    /// Up to `count` more haves; empty when there are none left.
    fn next_haves(&mut self, count: usize) -> Vec<ObjectId>;
    /// The server has `id`: it and its ancestors need not be offered again.
    fn acknowledged(&mut self, id: &ObjectId);
}

/// A negotiator with nothing to offer (a clone).
#[derive(Debug, Default)]
pub struct NoHaves;

impl Negotiator for NoHaves {
    fn next_haves(&mut self, _: usize) -> Vec<ObjectId> {
        Vec::new()
    }

    fn acknowledged(&mut self, _: &ObjectId) {}
}

/// A fetch's answer: the shallow boundary's changes, then the pack as a byte stream.
pub struct Fetched<'a> {
    /// Commits that are now shallow on this side: the answer to a request that cut the history.
    pub shallow: Vec<ObjectId>,
    /// Commits that are shallow no more.
    pub unshallow: Vec<ObjectId>,
    /// Where the server's own history is cut, when the server is a shallow repository and the
    /// request cut nothing. What they mean here (a clone takes them; a fetch takes them only
    /// with `--update-shallow`) is for the receiver to work out once the pack is in.
    pub remote_shallow: Vec<ObjectId>,
    /// The pack (band 1 of the side band, or the raw stream).
    pub pack: Box<dyn Read + 'a>,
}

impl Fetched<'_> {
    /// An answer with nothing read yet.
    pub(crate) fn empty() -> Self {
        Fetched {
            shallow: Vec::new(),
            unshallow: Vec::new(),
            remote_shallow: Vec::new(),
            pack: Box::new(std::io::empty()),
        }
    }

    /// Records a `shallow <id>` or `unshallow <id>` line; false for any other line.
    pub(crate) fn record_boundary(&mut self, line: &str) -> Result<bool, crate::FetchError> {
        if let Some(hex) = line.strip_prefix("shallow ") {
            self.shallow.push(crate::connection::parse_id(hex)?);
        } else if let Some(hex) = line.strip_prefix("unshallow ") {
            self.unshallow.push(crate::connection::parse_id(hex)?);
        } else {
            return Ok(false);
        }
        Ok(true)
    }
}

impl std::fmt::Debug for Fetched<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetched")
            .field("shallow", &self.shallow)
            .field("unshallow", &self.unshallow)
            .field("remote_shallow", &self.remote_shallow)
            .finish()
    }
}
