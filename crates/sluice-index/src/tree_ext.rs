//! The `TREE` extension: for each directory, how many index entries it covers, its
//! subdirectories, and the id of the tree object they form (or -1 when unknown).

use crate::IndexFileError;
use sluice_object::{HashKind, ObjectId};

/// A cache tree node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheTree {
    /// The directory's name (empty for the root).
    pub name: Vec<u8>,
    /// Index entries under this directory, or -1 when the node is invalid.
    pub entry_count: i64,
    /// The tree object's id, when valid.
    pub id: Option<ObjectId>,
    /// Subdirectories, in the order git writes them (sorted by name).
    pub children: Vec<CacheTree>,
}

impl CacheTree {
    /// Parses the extension's data.
    pub fn parse(data: &[u8], hash: HashKind) -> Result<CacheTree, IndexFileError> {
        let mut at = 0;
        let tree = Self::parse_node(data, &mut at, hash, 0)?;
        if at != data.len() {
            return Err(IndexFileError::CacheTree);
        }
        Ok(tree)
    }

    fn parse_node(
        data: &[u8],
        at: &mut usize,
        hash: HashKind,
        depth: usize,
    ) -> Result<CacheTree, IndexFileError> {
        // Paths nest at most a few thousand levels; deeper is a hostile file.
        if depth > 4096 {
            return Err(IndexFileError::CacheTree);
        }
        let rest = data.get(*at..).ok_or(IndexFileError::CacheTree)?;
        let nul = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or(IndexFileError::CacheTree)?;
        let name = rest[..nul].to_vec();
        let rest = &rest[nul + 1..];
        let newline = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or(IndexFileError::CacheTree)?;
        let line = std::str::from_utf8(&rest[..newline]).map_err(|_| IndexFileError::CacheTree)?;
        let (count, subtrees) = line.split_once(' ').ok_or(IndexFileError::CacheTree)?;
        let entry_count: i64 = count.parse().map_err(|_| IndexFileError::CacheTree)?;
        let subtrees: usize = subtrees.parse().map_err(|_| IndexFileError::CacheTree)?;
        *at += nul + 1 + newline + 1;
        let id = if entry_count >= 0 {
            let n = hash.len_in_bytes();
            let bytes = data.get(*at..*at + n).ok_or(IndexFileError::CacheTree)?;
            *at += n;
            Some(ObjectId::from_bytes(hash, bytes).expect("length"))
        } else {
            None
        };
        let mut children = Vec::with_capacity(subtrees.min(1024));
        for _ in 0..subtrees {
            children.push(Self::parse_node(data, at, hash, depth + 1)?);
        }
        Ok(CacheTree {
            name,
            entry_count,
            id,
            children,
        })
    }

    /// Marks the directories holding `path` invalid (this node and the children on the way),
    /// as git does when an entry below them no longer matches the tree recorded.
    pub fn invalidate(&mut self, path: &[u8]) {
        self.entry_count = -1;
        self.id = None;
        if let Some(slash) = path.iter().position(|&b| b == b'/') {
            let (dir, rest) = (&path[..slash], &path[slash + 1..]);
            if let Some(child) = self.children.iter_mut().find(|c| c.name == dir) {
                child.invalidate(rest);
            }
        }
    }

    /// Appends the extension's data.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.name);
        out.push(0);
        out.extend_from_slice(format!("{} {}\n", self.entry_count, self.children.len()).as_bytes());
        if let (true, Some(id)) = (self.entry_count >= 0, self.id) {
            out.extend_from_slice(id.as_bytes());
        }
        for child in &self.children {
            child.write(out);
        }
    }
}
