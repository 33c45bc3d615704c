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
    while !rest.is_empty() {
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
