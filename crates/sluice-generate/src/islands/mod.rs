//! Delta islands (`pack-objects --delta-islands`, `repack -i`, `repack.useDeltaIslands`; the
//! islands themselves from `pack.island` and `pack.islandCore`).
//!
//! A host keeping many forks in one object store, or refs clients never fetch
//! (`refs/pull/*`), packs best against everything; but a stored delta whose base only another
//! fork reaches cannot be served as it is to a client of this one, and the server must rebuild
//! it on every fetch. Islands group refs by the regexes' names; every object packed is marked
//! with the islands whose refs reach it, and a delta is made (or a stored one kept) only against
//! a base that is in every island of its target. The core island's objects are written first,
//! so that a pack served of the island most cloned is one front slice of the stored pack.

mod marks;

use sluice_object::{IdMap, ObjectId};

pub use marks::mark;

/// Why the island configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum IslandError {
    /// `repack.useDeltaIslands` is no boolean.
    #[error(transparent)]
    Config(#[from] sluice_odb::ConfigError),
    /// A `pack.island` value is no regular expression (git's words).
    #[error("failed to load island regex for 'pack.island': {pattern}")]
    BadRegex {
        /// The expression as compiled, anchored at the start.
        pattern: String,
        /// Why it does not compile (left unsaid, as git says nothing of it).
        reason: String,
    },
}

/// The capture groups a rule may use, as git's (more draw its warning).
pub const MAX_CAPTURES: usize = 14;

/// The `pack.island` regexes, in config order (the last that matches a ref decides), and the
/// `pack.islandCore` name.
#[derive(Debug, Clone, Default)]
pub struct IslandRules {
    rules: Vec<regex::Regex>,
    core: Option<String>,
}

impl IslandRules {
    /// The rules `config` holds; each left-anchored as git anchors it.
    pub fn from_config(config: &sluice_odb::Config) -> Result<IslandRules, IslandError> {
        let rules = (config.get_all("pack.island").into_iter())
            .map(|value| {
                let pattern = match value.starts_with('^') {
                    true => value.to_owned(),
                    false => format!("^{value}"),
                };
                regex::Regex::new(&pattern).map_err(|error| IslandError::BadRegex {
                    pattern,
                    reason: error.to_string(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(IslandRules {
            rules,
            core: config.get("pack.islandcore").map(str::to_owned),
        })
    }

    /// The rules of a repack, when islands are on: `given` (`-i`, `--no-delta-islands`),
    /// else `repack.useDeltaIslands`.
    pub fn for_repack(
        config: &sluice_odb::Config,
        given: Option<bool>,
    ) -> Result<Option<IslandRules>, IslandError> {
        let on = match given {
            Some(on) => on,
            None => config.get_bool("repack.usedeltaislands")?.unwrap_or(false),
        };
        on.then(|| IslandRules::from_config(config)).transpose()
    }

    /// The island `refname` belongs to: the capture groups of the last rule that matches it,
    /// joined by '-' (the empty name for a rule without groups), and whether that rule has
    /// more groups than [`MAX_CAPTURES`]; `None` for a ref of no island.
    pub fn island_of(&self, refname: &str) -> Option<(String, bool)> {
        let captures = self.rules.iter().rev().find_map(|r| r.captures(refname))?;
        let over = captures.len() - 1 > MAX_CAPTURES;
        let parts: Vec<&str> = (captures.iter().skip(1).flatten())
            .map(|m| m.as_str())
            .collect();
        Some((parts.join("-"), over))
    }
}

/// What marking found, for git's words: how many islands (those of the same tips counted
/// once), and how many refs matched a rule of more than [`MAX_CAPTURES`] capture groups.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Marked {
    /// Islands marked: git's "Marked N islands".
    pub islands: usize,
    /// Refs matched by a rule of too many capture groups, each of which git warns of.
    pub over_captured: usize,
}

/// Which islands reach each object packed, and the rule that follows from it.
#[derive(Debug, Default)]
pub struct Islands {
    /// Islands marked (those of the same tips counted once).
    count: usize,
    /// The core island's number.
    core: Option<usize>,
    /// The set of islands of each object some island reaches, as a number into `sets`.
    marks: IdMap<u32>,
    /// Every distinct set of islands, one bit per island.
    sets: Vec<Box<[u64]>>,
    /// Refs matched by a rule with more capture groups than [`MAX_CAPTURES`].
    over_captured: usize,
}

impl Islands {
    /// What marking found.
    pub fn marked(&self) -> Marked {
        Marked {
            islands: self.count,
            over_captured: self.over_captured,
        }
    }

    /// Whether `target` may be a delta against `base`: an object of no island against
    /// anything; any other only against a base in every one of its islands (so never against
    /// a base of no island).
    pub(crate) fn allows(&self, target: &ObjectId, base: &ObjectId) -> bool {
        let Some(&of_target) = self.marks.get(target) else {
            return true;
        };
        let Some(&of_base) = self.marks.get(base) else {
            return false;
        };
        let (t, b) = (&self.sets[of_target as usize], &self.sets[of_base as usize]);
        t.iter().zip(b.iter()).all(|(t, b)| t & !b == 0)
    }

    /// How many islands reach `id`: the delta search sorts the objects of many islands first,
    /// so that those of fewer find them as bases.
    pub(crate) fn breadth(&self, id: &ObjectId) -> u32 {
        (self.marks.get(id)).map_or(0, |&set| {
            self.sets[set as usize].iter().map(|w| w.count_ones()).sum()
        })
    }

    /// Whether `id` is in the core island (`pack.islandCore`), whose objects are written first.
    pub(crate) fn in_core(&self, id: &ObjectId) -> bool {
        let Some(core) = self.core else {
            return false;
        };
        (self.marks.get(id))
            .is_some_and(|&set| self.sets[set as usize][core / 64] >> (core % 64) & 1 == 1)
    }

    /// Whether objects are written core island first.
    pub(crate) fn has_core(&self) -> bool {
        self.core.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::IslandRules;

    fn rules(text: &str) -> IslandRules {
        let mut config = sluice_odb::Config::default();
        config.parse(text, std::path::Path::new("config")).unwrap();
        IslandRules::from_config(&config).unwrap()
    }

    /// The documentation's example: a fork's heads and tags in its own island, its pull refs
    /// in another, named by the capture groups joined with '-'; the last rule that matches
    /// decides, and the rules are anchored at the start.
    #[test]
    fn refs_fall_into_islands_named_by_their_captures() {
        let rules = rules(
            "[pack]\n\
             island = refs/virtual/([0-9]+)/heads/\n\
             island = refs/virtual/([0-9]+)/tags/\n\
             island = refs/virtual/([0-9]+)/(pull)/\n\
             island = refs/heads/\n",
        );
        let name = |r: &str| rules.island_of(r).map(|(name, _)| name);
        assert_eq!(
            name("refs/virtual/1234/heads/main").as_deref(),
            Some("1234")
        );
        assert_eq!(name("refs/virtual/1234/tags/v1").as_deref(), Some("1234"));
        assert_eq!(
            name("refs/virtual/1234/pull/7").as_deref(),
            Some("1234-pull")
        );
        assert_eq!(name("refs/heads/main").as_deref(), Some(""));
        assert_eq!(name("refs/remotes/refs/heads/x"), None);
        assert_eq!(name("refs/pull/1/head"), None);
    }
}
