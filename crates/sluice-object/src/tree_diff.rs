//! The entries of a tree that differ from another version of it (the same path in the parent
//! commit), found by comparing the two sorted entry lists as bytes: long runs of identical
//! entries are skipped with one wide comparison, and only changed entries are parsed. Counting
//! objects (the walk, and a bitmap's walk down to bitmapped ancestors) looks up only those,
//! and the indexer records only the links a tree adds to the tree it was rebuilt from.

use crate::parse::{split_tree_entry, TreeEntry};
use crate::HashKind;
use std::cmp::Ordering;

/// Calls `changed` for every entry of `new` that is not in `old` with the same mode and id,
/// with the entry of the same name in `old`, if any. Gitlinks are passed over: a submodule's
/// commit is no object of this repository. Returns the offset of a malformed entry of `new` as
/// the error.
pub fn for_each_changed<E>(
    hash: HashKind,
    new: &[u8],
    old: &[u8],
    mut changed: impl FnMut(TreeEntry<'_>, Option<TreeEntry<'_>>) -> Result<(), E>,
    malformed: impl Fn(usize) -> E,
) -> Result<(), E> {
    let skipping_gitlinks =
        |entry: TreeEntry<'_>, before: Option<TreeEntry<'_>>| match entry.is_gitlink() {
            true => Ok(()),
            false => changed(entry, before),
        };
    for_each_difference(hash, new, old, skipping_gitlinks, malformed)
}

/// [`for_each_changed`] with gitlinks too (push's submodule check looks for them).
pub fn for_each_difference<E>(
    hash: HashKind,
    new: &[u8],
    old: &[u8],
    mut changed: impl FnMut(TreeEntry<'_>, Option<TreeEntry<'_>>) -> Result<(), E>,
    malformed: impl Fn(usize) -> E,
) -> Result<(), E> {
    let id_len = hash.len_in_bytes();
    let mut rest = new;
    let mut old_rest = old;
    let mut offset = 0;
    // How many leading bytes of `rest` equal `old_rest`'s: found with one wide comparison,
    // then whole entries inside it are skipped without comparing them again.
    let mut same: Option<usize> = None;
    // How many trailing bytes the trees share. Once both have as many bytes left and no more
    // than that, the rest is the same entries in both: the entries after the last change are
    // not parsed one by one (a tree is mostly its previous version with an entry or two
    // changed, often well before its end).
    let tail = common_suffix(new, old);
    while !rest.is_empty() {
        if rest.len() == old_rest.len() && rest.len() <= tail {
            break;
        }
        let equal = *same.get_or_insert_with(|| common_prefix(rest, old_rest));
        if let Some(nul) = memchr::memchr(0, rest) {
            let len = nul + 1 + id_len;
            if rest.len() >= len && len <= equal {
                rest = &rest[len..];
                old_rest = &old_rest[len..];
                offset += len;
                same = Some(equal - len);
                continue;
            }
        }
        same = None;
        let (entry, used) = split_tree_entry(hash, rest).ok_or_else(|| malformed(offset))?;
        rest = &rest[used..];
        offset += used;
        let mut counterpart = None;
        while let Some((o, o_used)) = split_tree_entry(hash, old_rest) {
            match tree_order(&o, &entry) {
                Ordering::Less => old_rest = &old_rest[o_used..],
                Ordering::Equal => {
                    counterpart = Some(o);
                    old_rest = &old_rest[o_used..];
                    break;
                }
                Ordering::Greater => break,
            }
        }
        if counterpart.is_some_and(|o| o.id == entry.id && o.mode == entry.mode) {
            continue;
        }
        changed(entry, counterpart)?;
    }
    Ok(())
}

/// git's order of tree entries: by name, a tree's name compared as if it ended with '/'.
pub fn tree_order(a: &TreeEntry<'_>, b: &TreeEntry<'_>) -> Ordering {
    let n = a.name.len().min(b.name.len());
    a.name[..n].cmp(&b.name[..n]).then_with(|| {
        let next = |e: &TreeEntry<'_>| {
            e.name
                .get(n)
                .copied()
                .unwrap_or(if e.is_tree() { b'/' } else { 0 })
        };
        next(a).cmp(&next(b))
    })
}

/// How many trailing bytes `a` and `b` share, compared eight at a time.
pub fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let mut len = 0;
    for (x, y) in a.rchunks_exact(8).zip(b.rchunks_exact(8)) {
        let diff = u64::from_be_bytes(x.try_into().unwrap_or_default())
            ^ u64::from_be_bytes(y.try_into().unwrap_or_default());
        if diff != 0 {
            return len + (diff.trailing_zeros() / 8) as usize;
        }
        len += 8;
    }
    len + a[..a.len() - len]
        .iter()
        .rev()
        .zip(b[..b.len() - len].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// How many leading bytes `a` and `b` share, compared eight at a time (to skip runs of tree
/// entries equal to another version's, and of bytes a delta copies).
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let mut len = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let diff = u64::from_le_bytes(x.try_into().unwrap_or_default())
            ^ u64::from_le_bytes(y.try_into().unwrap_or_default());
        if diff != 0 {
            return len + (diff.trailing_zeros() / 8) as usize;
        }
        len += 8;
    }
    len + a[len..]
        .iter()
        .zip(&b[len..])
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod tests {
    use super::{common_prefix, common_suffix, for_each_difference};
    use crate::parse::tree_entries;
    use crate::HashKind;

    /// A small deterministic generator (xorshift), so that no crate is needed for random trees.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self, below: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % below
        }
    }

    /// A tree of `names` (sorted, distinct, no subtrees), each with an id from `ids`.
    fn tree(entries: &[(String, u8)]) -> Vec<u8> {
        let mut data = Vec::new();
        for (name, id) in entries {
            data.extend_from_slice(b"100644 ");
            data.extend_from_slice(name.as_bytes());
            data.push(0);
            data.extend_from_slice(&[*id; 20]);
        }
        data
    }

    /// What differs, found by parsing both trees whole.
    fn naive(new: &[u8], old: &[u8]) -> Vec<(Vec<u8>, bool)> {
        let old: Vec<_> = tree_entries(HashKind::Sha1, old)
            .map(Result::unwrap)
            .collect();
        tree_entries(HashKind::Sha1, new)
            .map(Result::unwrap)
            .filter(|e| !old.iter().any(|o| o.name == e.name && o.id == e.id))
            .map(|e| (e.name.to_vec(), old.iter().any(|o| o.name == e.name)))
            .collect()
    }

    #[test]
    fn common_suffix_and_prefix_count_shared_bytes() {
        let mut rng = Rng(7);
        for _ in 0..2_000 {
            let len = rng.next(40) as usize;
            let a: Vec<u8> = (0..len).map(|_| rng.next(3) as u8).collect();
            let mut b = a.clone();
            if !b.is_empty() && rng.next(2) == 0 {
                let at = rng.next(b.len() as u64) as usize;
                b[at] ^= 1;
            }
            b.truncate(rng.next(len as u64 + 1) as usize);
            let suffix = a
                .iter()
                .rev()
                .zip(b.iter().rev())
                .take_while(|(x, y)| x == y);
            assert_eq!(common_suffix(&a, &b), suffix.count());
            let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
            assert_eq!(common_prefix(&a, &b), prefix);
        }
    }

    /// Changed, added and removed entries anywhere (the last included), ids that share bytes
    /// with names: the diff reports what parsing both trees whole finds.
    #[test]
    fn differences_are_those_of_whole_trees() {
        let mut rng = Rng(11);
        for _ in 0..2_000 {
            let count = rng.next(12) as usize;
            let mut old: Vec<(String, u8)> = (0..count)
                .map(|i| (format!("f{i:02}"), rng.next(3) as u8))
                .collect();
            let mut new = old.clone();
            for _ in 0..rng.next(3) {
                match (rng.next(3), new.len()) {
                    (0, n) if n > 0 => new[rng.next(n as u64) as usize].1 ^= 1,
                    (1, n) if n > 0 => drop(new.remove(rng.next(n as u64) as usize)),
                    _ => new.push((format!("g{}", rng.next(100)), 0)),
                }
            }
            new.sort();
            new.dedup_by(|a, b| a.0 == b.0);
            if rng.next(4) == 0 {
                old = new.clone();
            }
            let (new, old) = (tree(&new), tree(&old));
            let mut found = Vec::new();
            for_each_difference::<()>(
                HashKind::Sha1,
                &new,
                &old,
                |entry, before| {
                    found.push((entry.name.to_vec(), before.is_some()));
                    Ok(())
                },
                |_| (),
            )
            .unwrap();
            assert_eq!(found, naive(&new, &old));
        }
    }
}
