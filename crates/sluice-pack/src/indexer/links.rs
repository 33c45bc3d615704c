//! What a pack's commits, trees and tags refer to, learned while their data is in hand: the
//! half of a fetch's connectivity check that is in proportion to what arrived (git's `index-pack
//! --check-self-contained-and-connected`). Every link that leads outside the pack is returned;
//! the caller then only asks the repository whether it has those, instead of walking its
//! history as git's `rev-list --objects --not --all` does.
//!
//! Each resolver thread records into a set of its own (found by rayon's thread index, so the
//! lock is never contended on the hot path); the sets are joined once at the end. Distinct
//! links number about as many as objects (git/git: ~850k ids, ~17 MB per set at its fullest).

use sluice_object::parse::{parse_commit, parse_tag, tree_entries, ParseError};
use sluice_object::tree_diff::for_each_changed;
use sluice_object::{HashKind, IdSet, ObjectId, ObjectKind};
use std::sync::Mutex;

/// Asks the indexer for the links of the pack's objects (see [`super::IndexedPack::outside_links`]).
#[derive(Debug, Clone, Default)]
pub struct LinkCheck {
    /// Objects the pack must hold or lead to, as if linked from outside it: the tips a fetch
    /// asked for.
    pub tips: Vec<ObjectId>,
    /// Commits whose parents are cut off (`.git/shallow` and the server's `shallow` lines): their
    /// parents are not links.
    pub shallow: Vec<ObjectId>,
}

/// Judges each object of an arriving pack (git's fsck, in `sluice-odb`): commits, trees and
/// tags as they are resolved, then the blobs it asks for once resolution is over.
pub trait ObjectCheck: Sync {
    /// Whether the object `id` of `kind`, holding `data`, is acceptable.
    fn check(&self, kind: ObjectKind, id: &ObjectId, data: &[u8]) -> bool;
    /// The blobs the objects seen so far ask to be judged (a tree's `.gitmodules`).
    fn wanted_blobs(&self) -> Vec<ObjectId>;
    /// Whether a wanted object, which turned out to be of `kind`, is acceptable.
    fn check_blob(&self, id: &ObjectId, kind: ObjectKind, data: &[u8]) -> bool;
}

/// Why an object's links could not be recorded.
#[derive(Debug)]
pub(crate) enum Unrecorded {
    /// It cannot be read.
    Malformed(ParseError),
    /// The check refused it.
    Refused,
}

/// The sets links are recorded into during resolution.
pub(crate) struct Links<'a> {
    hash: HashKind,
    shallow: IdSet,
    check: Option<&'a dyn ObjectCheck>,
    /// One per pool thread, and a last one for any other thread; none when only the check
    /// walks the objects (their links are not wanted).
    sets: Vec<Mutex<Recorded>>,
}

/// The links one thread recorded, and the last ones it met.
#[derive(Default)]
struct Recorded {
    set: IdSet,
    /// A direct-mapped cache of ids recorded lately (each in `set`): the next version of a
    /// tree repeats most of the last one's entries, and finding them here (a few hundred KiB,
    /// in the core's cache) saves a probe of `set` (tens of MiB) that mostly misses the
    /// cache. An id is looked up by its first bytes and compared whole, so a hit is exact.
    /// Empty slots are `None`: no id (the null id of a hostile tree included) is taken for
    /// recorded unless it was.
    recent: Vec<Option<ObjectId>>,
}

/// Slots of [`Recorded::recent`]: 2^15 ids, 640 KiB.
const RECENT_BITS: u32 = 15;

impl Recorded {
    fn with(ids: impl Iterator<Item = ObjectId>) -> Recorded {
        Recorded {
            set: ids.collect(),
            recent: Vec::new(),
        }
    }

    fn insert(&mut self, id: ObjectId) {
        if self.recent.is_empty() {
            self.recent = vec![None; 1 << RECENT_BITS];
        }
        let mut word = [0u8; 8];
        word.copy_from_slice(&id.as_bytes()[..8]);
        let slot = (u64::from_le_bytes(word) >> (64 - RECENT_BITS)) as usize;
        if self.recent[slot] != Some(id) {
            self.set.insert(id);
            self.recent[slot] = Some(id);
        }
    }
}

impl<'a> Links<'a> {
    /// Records links as `links` asks (nothing when `None`), and has `check` judge each object.
    pub(crate) fn new(
        hash: HashKind,
        links: Option<&LinkCheck>,
        threads: usize,
        check: Option<&'a dyn ObjectCheck>,
    ) -> Links<'a> {
        let Some(links) = links else {
            return Links {
                hash,
                check,
                shallow: IdSet::default(),
                sets: Vec::new(),
            };
        };
        Links {
            hash,
            check,
            shallow: links.shallow.iter().copied().collect(),
            sets: (0..=threads)
                .map(|slot| {
                    let tips = if slot == threads {
                        &links.tips[..]
                    } else {
                        &[]
                    };
                    Mutex::new(Recorded::with(tips.iter().copied()))
                })
                .collect(),
        }
    }

    /// Records what the object `id` of `kind`, holding `data`, refers to. `base` is the
    /// object it was rebuilt from (a delta's base, of the same kind), whose links are recorded
    /// too (or, for a thin pack's base, are in the repository): of a tree, only the entries
    /// that differ from its base's are recorded. A tree is mostly its previous version, so
    /// this leaves out most of the parsing and set probes of a whole pack's trees.
    pub(crate) fn record(
        &self,
        kind: ObjectKind,
        id: &ObjectId,
        data: &[u8],
        base: Option<&[u8]>,
    ) -> Result<(), Unrecorded> {
        if kind == ObjectKind::Blob {
            return Ok(());
        }
        if self.check.is_some_and(|check| !check.check(kind, id, data)) {
            return Err(Unrecorded::Refused);
        }
        if self.sets.is_empty() {
            return Ok(());
        }
        self.record_links(kind, id, data, base)
            .map_err(Unrecorded::Malformed)
    }

    fn record_links(
        &self,
        kind: ObjectKind,
        id: &ObjectId,
        data: &[u8],
        base: Option<&[u8]>,
    ) -> Result<(), ParseError> {
        let slot = rayon::current_thread_index()
            .unwrap_or(usize::MAX)
            .min(self.sets.len() - 1);
        let mut set = self.sets[slot]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match kind {
            ObjectKind::Commit => {
                let commit = parse_commit(self.hash, data)?;
                set.insert(commit.tree);
                if !self.shallow.contains(id) {
                    for parent in commit.parents {
                        set.insert(parent);
                    }
                }
            }
            ObjectKind::Tree if base.is_some() => for_each_changed(
                self.hash,
                data,
                base.unwrap_or_default(),
                |entry, _| {
                    set.insert(entry.id);
                    Ok(())
                },
                ParseError::TreeEntry,
            )?,
            ObjectKind::Tree => {
                for entry in tree_entries(self.hash, data) {
                    let entry = entry?;
                    // A submodule's commit belongs to another repository.
                    if !entry.is_gitlink() {
                        set.insert(entry.id);
                    }
                }
            }
            ObjectKind::Tag => {
                set.insert(parse_tag(self.hash, data)?.object);
            }
            ObjectKind::Blob => {}
        }
        Ok(())
    }

    /// The links that `in_pack` does not hold, sorted.
    pub(crate) fn outside(self, in_pack: impl Fn(&ObjectId) -> bool) -> Vec<ObjectId> {
        let mut outside: Vec<ObjectId> = self
            .sets
            .into_iter()
            .flat_map(|set| set.into_inner().unwrap_or_else(|p| p.into_inner()).set)
            .filter(|id| !in_pack(id))
            .collect();
        outside.sort_unstable();
        outside.dedup();
        outside
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_object::hash_object;

    fn id(n: u8) -> ObjectId {
        hash_object(HashKind::Sha1, ObjectKind::Blob, &[n]).unwrap()
    }

    #[test]
    fn links_of_each_kind_and_shallow_cuts() {
        let (tree, parent, blob, module) = (id(1), id(2), id(3), id(4));
        let commit = format!("tree {tree}\nparent {parent}\nauthor A <a> 1 +0000\n\nmsg\n");
        let cut = format!("tree {tree}\nparent {}\n\nmsg\n", id(5));
        let cut_id = id(9);
        let mut tree_data = b"100644 a\0".to_vec();
        tree_data.extend_from_slice(blob.as_bytes());
        tree_data.extend_from_slice(b"160000 m\0");
        tree_data.extend_from_slice(module.as_bytes());
        let tag = format!("object {}\ntype blob\ntag t\n\n", id(6));
        let links = Links::new(
            HashKind::Sha1,
            Some(&LinkCheck {
                tips: vec![id(12)],
                shallow: vec![cut_id],
            }),
            2,
            None,
        );
        links
            .record(ObjectKind::Commit, &id(7), commit.as_bytes(), None)
            .unwrap();
        links
            .record(ObjectKind::Commit, &cut_id, cut.as_bytes(), None)
            .unwrap();
        links
            .record(ObjectKind::Tree, &id(8), &tree_data, None)
            .unwrap();
        links
            .record(ObjectKind::Tag, &id(10), tag.as_bytes(), None)
            .unwrap();
        assert!(matches!(
            links.record(ObjectKind::Tree, &id(11), b"junk", None),
            Err(Unrecorded::Malformed(_))
        ));
        let outside = links.outside(|found| *found == parent);
        let mut expected = vec![tree, blob, id(6), id(12)];
        expected.sort_unstable();
        assert_eq!(outside, expected);
    }

    #[test]
    fn a_tree_rebuilt_from_a_base_adds_what_differs() {
        let entry = |name: &str, n: u8| {
            let mut e = format!("100644 {name}\0").into_bytes();
            e.extend_from_slice(id(n).as_bytes());
            e
        };
        let base = [entry("a", 1), entry("b", 2), entry("c", 3)].concat();
        let new = [entry("a", 1), entry("b", 4), entry("c", 3), entry("d", 5)].concat();
        let links = Links::new(HashKind::Sha1, Some(&LinkCheck::default()), 1, None);
        links
            .record(ObjectKind::Tree, &id(10), &base, None)
            .unwrap();
        links
            .record(ObjectKind::Tree, &id(11), &new, Some(&base))
            .unwrap();
        let mut expected: Vec<ObjectId> = [1, 2, 3, 4, 5].map(id).to_vec();
        expected.sort_unstable();
        assert_eq!(links.outside(|_| false), expected);
        let links = Links::new(HashKind::Sha1, Some(&LinkCheck::default()), 1, None);
        let broken = [entry("a", 1), b"100644 b".to_vec()].concat();
        assert!(matches!(
            links.record(ObjectKind::Tree, &id(12), &broken, Some(&base)),
            Err(Unrecorded::Malformed(_))
        ));
    }

    #[test]
    fn a_null_id_is_a_link_like_any_other() {
        let null = HashKind::Sha1.null_id();
        let mut tree = b"100644 a\0".to_vec();
        tree.extend_from_slice(null.as_bytes());
        let links = Links::new(HashKind::Sha1, Some(&LinkCheck::default()), 1, None);
        links.record(ObjectKind::Tree, &id(1), &tree, None).unwrap();
        links.record(ObjectKind::Tree, &id(2), &tree, None).unwrap();
        assert_eq!(links.outside(|_| false), vec![null]);
    }
}
