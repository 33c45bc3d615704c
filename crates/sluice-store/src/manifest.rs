//! The manifest: the one object of a stored repository that changes, and the only commit
//! point. It names a generation (a number that only grows), the transaction that wrote it,
//! HEAD, the live packs, the packs removed (with when) and the refs. Every write of it is
//! conditional on the version just read, so two writers never both win.
//!
//! The format is text, one record a line, so that a person can read it with any S3 client:
//!
//! ```text
//! sluice-manifest 1
//! generation 12
//! transaction 1c9f…
//! head refs/heads/main
//! pack pack-<hex> <bytes> [rev] [bitmap] [mtimes]
//! midx <checksum> pack-<hex>…
//! removed pack-<hex> <unix seconds>
//! former <object id> <unix seconds>
//! bundle <name> <creation token>
//! snapshot <name> <refs in it>
//! ref <object id> <name>
//! ```
//!
//! Nodes of different versions share one store while a host upgrades them one by one, so a
//! record this version does not know is kept as it is and written back after the others: a
//! newer version may add records that older ones can ignore. A change that older versions must
//! not ignore comes with a new first line, which they refuse.
//!
//! A repository with many refs keeps most of them in an immutable snapshot object
//! (`refs/<name>`, written by `ref_snapshot`) that the manifest names; its `ref` lines are
//! then only what changed since (a null id: deleted), so that a push rewrites a small
//! manifest, and a new snapshot is written once the changes grow past [`INLINE_REFS`].

use sluice_object::{HashKind, ObjectId};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// How many refs (or changes since the snapshot) a manifest holds before they go into a new
/// snapshot object.
pub const INLINE_REFS: usize = 1024;

/// How long a tip that left the refs stays wantable by a stateless request (smart HTTP: the
/// refs shown by one request, their objects asked for by another, perhaps of a later
/// generation): longer than a node keeps a connection open.
pub const FORMER_TIPS_FOR: u64 = 2 * 3600;

/// The most former tips a manifest keeps (the newest), so that mass deletions of refs do not
/// grow every later manifest.
pub const FORMER_TIPS_KEPT: usize = 1024;

/// The first line of every manifest this version writes and reads.
const MAGIC: &str = "sluice-manifest 1";

/// One generation of a stored repository.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Manifest {
    /// Grows by one with every committed write.
    pub generation: u64,
    /// Who wrote this generation: a push or a maintenance run looks for its own id after a
    /// write whose answer was lost.
    pub transaction: String,
    /// What HEAD names (`refs/heads/main`).
    pub head: String,
    /// The live packs, by name (`pack-<hex>`), with their sizes.
    pub packs: Vec<PackEntry>,
    /// A multi-pack-index with its bitmap over the packs it names (a geometric roll's), used
    /// where a generation has all of them: counting stays on bitmaps without rewriting the
    /// big pack.
    pub midx: Option<MidxEntry>,
    /// Packs taken out of the list, with when: deleted only after a grace period, since
    /// requests pinned to an older generation may still read them.
    pub removed: Vec<(String, u64)>,
    /// Tips that recent generations had and this one no longer has (a ref moved or deleted),
    /// with when they left, newest last: a stateless request that saw such a generation may
    /// still want them (their objects are kept: what no ref reaches goes into a cruft pack).
    pub former: Vec<(ObjectId, u64)>,
    /// The bundles clients may download instead of asking a node for the objects
    /// (bundle-uri), each with its creation token.
    pub bundles: Vec<(String, u64)>,
    /// The snapshot most refs are in, if the repository has many.
    pub snapshot: Option<RefSnapshot>,
    /// Every ref but HEAD (with the snapshot's applied, once resolved).
    pub refs: BTreeMap<String, ObjectId>,
    /// Records of a newer version, kept as they were read and written back as they are.
    pub unknown: Vec<String>,
}

/// A snapshot object of refs, by name, with its refs once read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefSnapshot {
    /// Its name: the object is `refs/<name>` in the repository's folder.
    pub name: String,
    /// Its refs.
    pub refs: Arc<BTreeMap<String, ObjectId>>,
}

/// One live pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackEntry {
    /// `pack-<hex>`: the files are `<name>.pack`, `.idx`, and `.rev` and `.bitmap` where
    /// [`PackEntry::files`] says.
    pub name: String,
    /// The `.pack` file's size.
    pub size: u64,
    /// The extensions stored beside `.pack` and `.idx`.
    pub extras: Vec<String>,
}

impl PackEntry {
    /// Every file of the pack, by extension, `.idx` before `.pack`'s companions.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        ["idx", "pack"]
            .into_iter()
            .chain(self.extras.iter().map(String::as_str))
    }
}

/// A stored multi-pack-index: `midx/multi-pack-index-<checksum>` and its `.bitmap`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MidxEntry {
    /// Its checksum, in hexadecimal (its trailer, which its bitmap's name repeats).
    pub checksum: String,
    /// The packs it indexes, by name.
    pub packs: Vec<String>,
}

/// A manifest that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("manifest line {line}: {why}")]
pub struct ManifestError {
    /// The line (from 1).
    pub line: usize,
    /// What is wrong with it.
    pub why: String,
}

impl Manifest {
    /// The manifest of a new repository, empty, its HEAD on the branch `initial_branch`.
    pub fn new_repository(initial_branch: &str) -> Manifest {
        Manifest {
            head: format!("refs/heads/{initial_branch}"),
            ..Manifest::default()
        }
    }

    /// The text stored.
    pub fn write(&self) -> Vec<u8> {
        let mut out = String::new();
        let _ = writeln!(out, "{MAGIC}");
        let _ = writeln!(out, "generation {}", self.generation);
        let _ = writeln!(out, "transaction {}", self.transaction);
        let _ = writeln!(out, "head {}", self.head);
        for pack in &self.packs {
            let _ = write!(out, "pack {} {}", pack.name, pack.size);
            for extra in &pack.extras {
                let _ = write!(out, " {extra}");
            }
            out.push('\n');
        }
        if let Some(midx) = &self.midx {
            let _ = writeln!(out, "midx {} {}", midx.checksum, midx.packs.join(" "));
        }
        for (name, when) in &self.removed {
            let _ = writeln!(out, "removed {name} {when}");
        }
        for (id, when) in &self.former {
            let _ = writeln!(out, "former {id} {when}");
        }
        for (name, token) in &self.bundles {
            let _ = writeln!(out, "bundle {name} {token}");
        }
        for line in &self.unknown {
            let _ = writeln!(out, "{line}");
        }
        let Some(snapshot) = &self.snapshot else {
            for (name, id) in &self.refs {
                let _ = writeln!(out, "ref {id} {name}");
            }
            return out.into_bytes();
        };
        let _ = writeln!(out, "snapshot {} {}", snapshot.name, snapshot.refs.len());
        for (name, id) in self.changed_refs(&snapshot.refs) {
            let _ = writeln!(out, "ref {id} {name}");
        }
        out.into_bytes()
    }

    /// The refs that differ from `snapshot`'s: changed or new, and deleted (with the null id).
    pub fn changed_refs<'a>(
        &'a self,
        snapshot: &'a BTreeMap<String, ObjectId>,
    ) -> impl Iterator<Item = (&'a str, ObjectId)> + 'a {
        let null = self.refs.values().next().map(|id| id.kind().null_id());
        let changed = (self.refs.iter())
            .filter(|(name, id)| snapshot.get(*name) != Some(*id))
            .map(|(name, id)| (name.as_str(), *id));
        let deleted = (snapshot.iter())
            .filter(|(name, _)| !self.refs.contains_key(*name))
            .map(move |(name, id)| (name.as_str(), null.unwrap_or_else(|| id.kind().null_id())));
        changed.chain(deleted)
    }

    /// With the snapshot's refs read: every ref, the manifest's changes applied to them.
    pub fn resolve(mut self, refs: Arc<BTreeMap<String, ObjectId>>) -> Manifest {
        let mut all = (*refs).clone();
        for (name, id) in std::mem::take(&mut self.refs) {
            match id.is_null() {
                true => all.remove(&name),
                false => all.insert(name, id),
            };
        }
        if let Some(snapshot) = &mut self.snapshot {
            snapshot.refs = refs;
        }
        self.refs = all;
        self
    }

    /// Reads what [`Manifest::write`] wrote.
    pub fn parse(bytes: &[u8], hash: HashKind) -> Result<Manifest, ManifestError> {
        let text = std::str::from_utf8(bytes).map_err(|e| ManifestError {
            line: 0,
            why: format!("not UTF-8: {e}"),
        })?;
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        if lines.next().map(|(_, l)| l) != Some(MAGIC) {
            return Err(ManifestError {
                line: 1,
                why: format!("expected '{MAGIC}'"),
            });
        }
        let mut manifest = Manifest::default();
        for (line, text) in lines {
            let bad = |why: &str| ManifestError {
                line,
                why: format!("{why}: '{text}'"),
            };
            let (word, rest) = text.split_once(' ').ok_or_else(|| bad("no value"))?;
            match word {
                "generation" => {
                    manifest.generation = rest.parse().map_err(|_| bad("bad number"))?
                }
                "transaction" => manifest.transaction = rest.to_owned(),
                "head" => manifest.head = rest.to_owned(),
                "pack" => {
                    let mut words = rest.split(' ');
                    let name = words.next().filter(|n| pack_name_ok(n));
                    let name = name.ok_or_else(|| bad("bad pack name"))?;
                    let size = words.next().and_then(|s| s.parse().ok());
                    let size = size.ok_or_else(|| bad("bad pack size"))?;
                    let extras: Vec<String> = words.map(str::to_owned).collect();
                    if !extras.iter().all(|e| PACK_EXTRAS.contains(&e.as_str())) {
                        return Err(bad("unknown pack file"));
                    }
                    manifest.packs.push(PackEntry {
                        name: name.to_owned(),
                        size,
                        extras,
                    });
                }
                "midx" => {
                    let mut words = rest.split(' ');
                    let checksum = words.next().filter(|c| checksum_ok(c));
                    let checksum = checksum.ok_or_else(|| bad("bad checksum"))?.to_owned();
                    let packs: Vec<String> = words.map(str::to_owned).collect();
                    if packs.is_empty() || !packs.iter().all(|p| pack_name_ok(p)) {
                        return Err(bad("bad pack name"));
                    }
                    manifest.midx = Some(MidxEntry { checksum, packs });
                }
                "removed" => {
                    let (name, when) = rest.split_once(' ').ok_or_else(|| bad("no time"))?;
                    let when = when.parse().map_err(|_| bad("bad time"))?;
                    manifest.removed.push((name.to_owned(), when));
                }
                "former" => {
                    let (id, when) = rest.split_once(' ').ok_or_else(|| bad("no time"))?;
                    let id = ObjectId::from_hex(hash, id.as_bytes())
                        .map_err(|_| bad("bad object id"))?;
                    let when = when.parse().map_err(|_| bad("bad time"))?;
                    manifest.former.push((id, when));
                }
                "bundle" => {
                    let (name, token) = rest.split_once(' ').ok_or_else(|| bad("no token"))?;
                    if !bundle_name_ok(name) {
                        return Err(bad("bad bundle name"));
                    }
                    let token = token.parse().map_err(|_| bad("bad token"))?;
                    manifest.bundles.push((name.to_owned(), token));
                }
                "snapshot" => {
                    let name = rest.split(' ').next().filter(|n| bundle_name_ok(n));
                    let name = name.ok_or_else(|| bad("bad snapshot name"))?;
                    manifest.snapshot = Some(RefSnapshot {
                        name: name.to_owned(),
                        refs: Arc::default(),
                    });
                }
                "ref" => {
                    let (id, name) = rest.split_once(' ').ok_or_else(|| bad("no name"))?;
                    let id = ObjectId::from_hex(hash, id.as_bytes())
                        .map_err(|_| bad("bad object id"))?;
                    if !sluice_object::ref_name::is_valid_ref_name(name) {
                        return Err(bad("bad ref name"));
                    }
                    manifest.refs.insert(name.to_owned(), id);
                }
                // A newer version's: kept (a word of letters and dashes, so that nothing this
                // version reads is mistaken for one).
                _ if word.bytes().all(|b| b.is_ascii_lowercase() || b == b'-') => {
                    manifest.unknown.push(text.to_owned())
                }
                _ => return Err(bad("unknown record")),
            }
        }
        Ok(manifest)
    }

    /// Records as former tips those of `previous` this manifest's refs no longer name, as of
    /// `now` (unix seconds), and forgets those older than [`FORMER_TIPS_FOR`] or past the
    /// newest [`FORMER_TIPS_KEPT`].
    pub fn retire_tips(&mut self, previous: &Manifest, now: u64) {
        let tips: std::collections::HashSet<&ObjectId> = self.refs.values().collect();
        let mut left: Vec<ObjectId> = (previous.refs.values())
            .filter(|id| !tips.contains(id))
            .copied()
            .collect();
        left.sort();
        left.dedup();
        let cutoff = now.saturating_sub(FORMER_TIPS_FOR);
        self.former.retain(|(id, when)| {
            *when > cutoff && !tips.contains(id) && left.binary_search(id).is_err()
        });
        self.former.extend(left.into_iter().map(|id| (id, now)));
        let over = self.former.len().saturating_sub(FORMER_TIPS_KEPT);
        self.former.drain(..over);
    }

    /// Whether a pack of this name is live.
    pub fn has_pack(&self, name: &str) -> bool {
        self.packs.iter().any(|p| p.name == name)
    }
}

/// The files a pack may have beside `.pack` and `.idx`.
pub const PACK_EXTRAS: [&str; 3] = ["rev", "bitmap", "mtimes"];

/// Letters, digits and `-`: nothing that could name a path elsewhere.
pub fn bundle_name_ok(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Hexadecimal digits: nothing that could name a path elsewhere.
fn checksum_ok(checksum: &str) -> bool {
    !checksum.is_empty() && checksum.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `pack-` and hexadecimal digits: nothing that could name a path elsewhere.
pub fn pack_name_ok(name: &str) -> bool {
    name.strip_prefix("pack-")
        .is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_reads_back_as_written() {
        let id = ObjectId::from_hex(HashKind::Sha1, "ab".repeat(20).as_bytes()).unwrap();
        let mut manifest = Manifest {
            generation: 7,
            transaction: "t1".to_owned(),
            head: "refs/heads/main".to_owned(),
            packs: vec![PackEntry {
                name: format!("pack-{}", "cd".repeat(20)),
                size: 1234,
                extras: vec!["rev".to_owned(), "bitmap".to_owned()],
            }],
            midx: Some(MidxEntry {
                checksum: "12".repeat(20),
                packs: vec![format!("pack-{}", "cd".repeat(20))],
            }),
            removed: vec![(format!("pack-{}", "ef".repeat(20)), 1_700_000_000)],
            former: vec![(id, 1_700_000_001)],
            bundles: vec![("7-full".to_owned(), 7)],
            snapshot: None,
            refs: BTreeMap::new(),
            unknown: Vec::new(),
        };
        manifest.refs.insert("refs/heads/main".to_owned(), id);
        manifest.refs.insert("refs/tags/v1".to_owned(), id);
        let text = manifest.write();
        assert_eq!(Manifest::parse(&text, HashKind::Sha1).unwrap(), manifest);
        // A newer version's record is kept and written back.
        let mut newer = text.clone();
        newer.extend_from_slice(b"someday a record of a newer version\n");
        let read = Manifest::parse(&newer, HashKind::Sha1).unwrap();
        assert_eq!(read.unknown, ["someday a record of a newer version"]);
        let again = Manifest::parse(&read.write(), HashKind::Sha1).unwrap();
        assert_eq!(again, read);
    }

    #[test]
    fn tips_that_leave_the_refs_are_kept_for_a_while_and_not_without_bound() {
        let id = |n: usize| {
            let hex = format!("{n:040x}");
            ObjectId::from_hex(HashKind::Sha1, hex.as_bytes()).unwrap()
        };
        let with = |refs: &[(&str, usize)]| Manifest {
            refs: (refs.iter())
                .map(|(name, n)| (format!("refs/heads/{name}"), id(*n)))
                .collect(),
            ..Manifest::default()
        };
        let first = with(&[("main", 1), ("side", 2), ("also", 2)]);
        // main moves, side is deleted (its tip still named by another ref).
        let mut second = with(&[("main", 3), ("also", 2)]);
        second.retire_tips(&first, 100);
        assert_eq!(second.former, vec![(id(1), 100)]);
        // main comes back: no longer former; another move a while later.
        let mut third = with(&[("main", 1), ("also", 4)]);
        third.former.clone_from(&second.former);
        third.retire_tips(&second, 200);
        assert_eq!(third.former, vec![(id(2), 200), (id(3), 200)]);
        // Past the time they are kept for, they are forgotten.
        let mut fourth = third.clone();
        fourth.retire_tips(&third, 200 + FORMER_TIPS_FOR);
        assert!(fourth.former.is_empty());
        // However many refs go at once, only the newest are kept.
        let many = with(
            &(0..2 * FORMER_TIPS_KEPT)
                .map(|n| ("x", n))
                .collect::<Vec<_>>(),
        );
        let many = Manifest {
            refs: (0..2 * FORMER_TIPS_KEPT)
                .map(|n| (format!("refs/tags/t{n}"), id(n + 10)))
                .collect(),
            ..many
        };
        let mut none = Manifest::default();
        none.retire_tips(&many, 300);
        assert_eq!(none.former.len(), FORMER_TIPS_KEPT);
    }

    #[test]
    fn a_damaged_manifest_is_refused_with_its_line() {
        let text = b"sluice-manifest 1\ngeneration 3\npack ../../etc 12\n";
        let e = Manifest::parse(text, HashKind::Sha1).unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let text = b"sluice-manifest 1\nmidx ../x pack-12\n";
        assert_eq!(Manifest::parse(text, HashKind::Sha1).unwrap_err().line, 2);
        let text = b"sluice-manifest 1\nref 1234 refs/heads/main\n";
        assert_eq!(Manifest::parse(text, HashKind::Sha1).unwrap_err().line, 2);
        assert!(Manifest::parse(b"something else\n", HashKind::Sha1).is_err());
    }
}
