//! Trees: entries that parse, names a checkout could be tricked by, modes, and git's order.

use super::blobs::Special;
use super::names::{self, DOTGIT, GITATTRIBUTES, GITIGNORE, GITMODULES, MAILMAP};
use super::{Message, Report};
use sluice_object::parse::split_tree_entry;
use sluice_object::HashKind;
use std::collections::HashSet;

const SYMLINK: u32 = 0o120000;
const DIRECTORY: u32 = 0o40000;

/// What git's `fsck_tree` notes over all entries, reported once each at the end, in its order.
#[derive(Default)]
struct Seen {
    null_id: bool,
    full_path: bool,
    dot: bool,
    dotdot: bool,
    dotgit: bool,
    zero_padded: bool,
    bad_mode: bool,
    duplicate: bool,
    unsorted: bool,
}

/// git's `fsck_tree`.
pub(super) fn check_tree(hash: HashKind, data: &[u8], report: &mut Report<'_>) {
    let mut seen = Seen::default();
    let mut names: HashSet<&[u8]> = HashSet::new();
    let mut previous: Option<(&[u8], u32)> = None;
    let mut at = 0;
    while at < data.len() {
        let Some((entry, used)) = split_tree_entry(hash, &data[at..]) else {
            return report.add(Message::BadTree, "cannot be parsed as a tree");
        };
        // git's tree reader refuses an empty name outright.
        if entry.name.is_empty() {
            return report.add(Message::BadTree, "cannot be parsed as a tree");
        }
        seen.zero_padded |= data[at] == b'0';
        at += used;
        let name = entry.name;
        seen.null_id |= entry.id.is_null();
        seen.full_path |= name.contains(&b'/');
        seen.dot |= name == b".";
        seen.dotdot |= name == b"..";
        seen.dotgit |= names::is(&DOTGIT, name);
        special_file(name, entry.mode, entry.id, report);
        seen.bad_mode |= !matches!(
            entry.mode,
            0o100755 | 0o100644 | SYMLINK | DIRECTORY | 0o160000
        );
        // A blob and a tree of one name sort apart ("a" < "a.c" < "a/"), so duplicates are
        // looked for among all names, not only neighbours.
        seen.duplicate |= !names.insert(name);
        if let Some(before) = previous {
            seen.unsorted |= !in_order(before, (name, entry.mode));
        }
        previous = Some((name, entry.mode));
    }
    let found = [
        (
            seen.null_id,
            Message::NullSha1,
            "contains entries pointing to null sha1",
        ),
        (
            seen.full_path,
            Message::FullPathname,
            "contains full pathnames",
        ),
        (seen.dot, Message::HasDot, "contains '.'"),
        (seen.dotdot, Message::HasDotdot, "contains '..'"),
        (seen.dotgit, Message::HasDotgit, "contains '.git'"),
        (
            seen.zero_padded,
            Message::ZeroPaddedFilemode,
            "contains zero-padded file modes",
        ),
        (
            seen.bad_mode,
            Message::BadFilemode,
            "contains bad file modes",
        ),
        (
            seen.duplicate,
            Message::DuplicateEntries,
            "contains duplicate file entries",
        ),
        (seen.unsorted, Message::TreeNotSorted, "not properly sorted"),
    ];
    for (_, message, text) in found.into_iter().filter(|(on, _, _)| *on) {
        report.add(message, text);
    }
}

/// `.gitmodules` and `.gitattributes` must be blobs that are judged in turn; none of the files
/// git reads from the work tree may be a symbolic link.
fn special_file(name: &[u8], mode: u32, id: sluice_object::ObjectId, report: &mut Report<'_>) {
    let symlink = mode == SYMLINK;
    if names::is(&GITMODULES, name) {
        match symlink {
            true => report.add(Message::GitmodulesSymlink, ".gitmodules is a symbolic link"),
            false => report.want(id, Special::Gitmodules),
        }
    }
    if names::is(&GITATTRIBUTES, name) {
        match symlink {
            true => report.add(Message::GitattributesSymlink, ".gitattributes is a symlink"),
            false => report.want(id, Special::Gitattributes),
        }
    }
    if symlink && names::is(&GITIGNORE, name) {
        report.add(Message::GitignoreSymlink, ".gitignore is a symlink");
    }
    if symlink && names::is(&MAILMAP, name) {
        report.add(Message::MailmapSymlink, ".mailmap is a symlink");
    }
}

/// git's tree order: names compared bytewise, a tree's name as if it ended in `/`; equal names
/// are out of order (duplicates are reported apart).
fn in_order((a, a_mode): (&[u8], u32), (b, b_mode): (&[u8], u32)) -> bool {
    let len = a.len().min(b.len());
    match a[..len].cmp(&b[..len]) {
        std::cmp::Ordering::Less => return true,
        std::cmp::Ordering::Greater => return false,
        std::cmp::Ordering::Equal => {}
    }
    let next = |name: &[u8], mode: u32| match name.get(len) {
        Some(&c) => c,
        None if mode == DIRECTORY => b'/',
        None => 0,
    };
    if a.len() == b.len() {
        // Duplicates: reported as such, not as disorder.
        return true;
    }
    next(a, a_mode) < next(b, b_mode)
}
