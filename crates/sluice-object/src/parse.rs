//! Zero-copy reading of the three structured object kinds (`gitformat-commit`-style headers and
//! binary tree entries): only the fields the data path needs, borrowed from the object's bytes.

use crate::{HashKind, ObjectId, ObjectKind};

/// Why an object's content is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A tree entry is cut short or not `<octal mode> <name>\0<id>`.
    #[error("malformed tree entry at byte {0}")]
    TreeEntry(usize),
    /// A commit lacks its `tree` line, or a header line holds a bad id.
    #[error("malformed commit: {0}")]
    Commit(&'static str),
    /// A tag lacks its `object` or `type` line.
    #[error("malformed tag: {0}")]
    Tag(&'static str),
}

/// The header lines of a commit or tag: everything before the first empty line.
fn header_lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    data.split(|&b| b == b'\n')
        .take_while(|line| !line.is_empty())
}

/// What walks need from a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The root tree.
    pub tree: ObjectId,
    /// Parents, in order.
    pub parents: Vec<ObjectId>,
    /// The committer's timestamp (seconds since the epoch), 0 when unreadable as git treats it.
    pub time: i64,
}

/// Reads the tree, parents and committer time of a commit.
pub fn parse_commit(hash: HashKind, data: &[u8]) -> Result<Commit, ParseError> {
    let mut tree = None;
    let mut parents = Vec::new();
    let mut time = 0;
    for line in header_lines(data) {
        if let Some(hex) = line.strip_prefix(b"tree ") {
            tree =
                Some(ObjectId::from_hex(hash, hex).map_err(|_| ParseError::Commit("bad tree id"))?);
        } else if let Some(hex) = line.strip_prefix(b"parent ") {
            parents.push(
                ObjectId::from_hex(hash, hex).map_err(|_| ParseError::Commit("bad parent id"))?,
            );
        } else if let Some(who) = line.strip_prefix(b"committer ") {
            time = signature_time(who).unwrap_or(0);
        }
    }
    Ok(Commit {
        tree: tree.ok_or(ParseError::Commit("no tree line"))?,
        parents,
        time,
    })
}

/// The timestamp of `Name <email> 1234567890 +0100`: the number after the last `>`.
fn signature_time(who: &[u8]) -> Option<i64> {
    let after = &who[who.iter().rposition(|&b| b == b'>')? + 1..];
    let digits = after.trim_ascii_start();
    let end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

/// What walks need from an annotated tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    /// The tagged object.
    pub object: ObjectId,
    /// Its kind, as the tag states it.
    pub kind: ObjectKind,
}

/// Reads the target of an annotated tag.
pub fn parse_tag(hash: HashKind, data: &[u8]) -> Result<Tag, ParseError> {
    let mut object = None;
    let mut kind = None;
    for line in header_lines(data) {
        if let Some(hex) = line.strip_prefix(b"object ") {
            object =
                Some(ObjectId::from_hex(hash, hex).map_err(|_| ParseError::Tag("bad object id"))?);
        } else if let Some(name) = line.strip_prefix(b"type ") {
            kind = Some(ObjectKind::from_name(name).ok_or(ParseError::Tag("bad type"))?);
        }
    }
    Ok(Tag {
        object: object.ok_or(ParseError::Tag("no object line"))?,
        kind: kind.ok_or(ParseError::Tag("no type line"))?,
    })
}

/// One entry of a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeEntry<'a> {
    /// The mode as written, e.g. 0o100644, 0o40000.
    pub mode: u32,
    /// The name within the tree.
    pub name: &'a [u8],
    /// The entry's object.
    pub id: ObjectId,
}

impl TreeEntry<'_> {
    /// Whether the entry is a subtree.
    pub fn is_tree(&self) -> bool {
        self.mode == 0o40000
    }

    /// Whether the entry names a commit of another repository (a submodule), which is never
    /// part of this repository's object graph.
    pub fn is_gitlink(&self) -> bool {
        self.mode == 0o160000
    }
}

/// The entries of a tree, in stored order; yields an error once and then stops at a malformed
/// entry.
#[derive(Debug, Clone)]
pub struct TreeEntries<'a> {
    data: &'a [u8],
    at: usize,
    hash: HashKind,
}

/// Iterates over the entries of the tree `data`.
pub fn tree_entries(hash: HashKind, data: &[u8]) -> TreeEntries<'_> {
    TreeEntries { data, at: 0, hash }
}

impl<'a> Iterator for TreeEntries<'a> {
    type Item = Result<TreeEntry<'a>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.data.len() {
            return None;
        }
        let start = self.at;
        let parsed = parse_tree_entry(&self.data[start..], self.hash);
        match parsed {
            Some((entry, used)) => {
                self.at += used;
                Some(Ok(entry))
            }
            None => {
                self.at = self.data.len();
                Some(Err(ParseError::TreeEntry(start)))
            }
        }
    }
}

/// Parses the tree entry at the start of `data`; returns it with the bytes it takes, or `None`
/// when `data` does not start with a well-formed entry.
pub fn split_tree_entry(hash: HashKind, data: &[u8]) -> Option<(TreeEntry<'_>, usize)> {
    parse_tree_entry(data, hash)
}

fn parse_tree_entry(data: &[u8], hash: HashKind) -> Option<(TreeEntry<'_>, usize)> {
    let space = data.iter().position(|&b| b == b' ')?;
    let mode_text = &data[..space];
    if mode_text.is_empty()
        || mode_text.len() > 7
        || !mode_text.iter().all(|b| (b'0'..=b'7').contains(b))
    {
        return None;
    }
    let mode = mode_text
        .iter()
        .fold(0u32, |m, &d| m * 8 + u32::from(d - b'0'));
    let nul = space + 1 + data[space + 1..].iter().position(|&b| b == 0)?;
    let name = &data[space + 1..nul];
    let n = hash.len_in_bytes();
    let id = ObjectId::from_bytes(hash, data.get(nul + 1..nul + 1 + n)?).ok()?;
    Some((TreeEntry { mode, name, id }, nul + 1 + n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_fields() {
        let tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
        let parent = "ce013625030ba8dba906f756967f9e9ca394464a";
        let text = format!(
            "tree {tree}\nparent {parent}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1700000000 -0700\n\nmsg\nparent x\n"
        );
        let commit = parse_commit(HashKind::Sha1, text.as_bytes()).unwrap();
        assert_eq!(commit.tree.to_string(), tree);
        assert_eq!(commit.parents.len(), 1);
        assert_eq!(commit.time, 1_700_000_000);
        assert!(parse_commit(HashKind::Sha1, b"parent x\n").is_err());
    }

    #[test]
    fn tree_entries_stop_at_garbage() {
        let mut data = b"100644 a\0".to_vec();
        data.extend_from_slice(&[7u8; 20]);
        data.extend_from_slice(b"40000 b\0");
        data.extend_from_slice(&[9u8; 20]);
        data.extend_from_slice(b"100644 c\0short");
        let entries: Vec<_> = tree_entries(HashKind::Sha1, &data).collect();
        assert_eq!(entries.len(), 3);
        assert!(entries[1].as_ref().unwrap().is_tree());
        assert_eq!(entries[2], Err(ParseError::TreeEntry(57)));
    }
}
