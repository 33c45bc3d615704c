//! The four kinds of git object.

use std::fmt;

/// The kind of a git object, numbered as in pack entry headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// A commit.
    Commit = 1,
    /// A tree.
    Tree = 2,
    /// A blob.
    Blob = 3,
    /// An annotated tag.
    Tag = 4,
}

impl ObjectKind {
    /// The name git uses in headers and listings.
    pub const fn as_str(self) -> &'static str {
        match self {
            ObjectKind::Commit => "commit",
            ObjectKind::Tree => "tree",
            ObjectKind::Blob => "blob",
            ObjectKind::Tag => "tag",
        }
    }

    /// Parses a kind name as written in object headers.
    pub fn from_name(name: &[u8]) -> Option<Self> {
        match name {
            b"commit" => Some(ObjectKind::Commit),
            b"tree" => Some(ObjectKind::Tree),
            b"blob" => Some(ObjectKind::Blob),
            b"tag" => Some(ObjectKind::Tag),
            _ => None,
        }
    }

    /// The kind for a pack type number (1 to 4); delta types are not object kinds.
    pub fn from_pack_type(number: u8) -> Option<Self> {
        match number {
            1 => Some(ObjectKind::Commit),
            2 => Some(ObjectKind::Tree),
            3 => Some(ObjectKind::Blob),
            4 => Some(ObjectKind::Tag),
            _ => None,
        }
    }

    /// The pack type number of this kind.
    pub const fn pack_type(self) -> u8 {
        self as u8
    }
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}
