//! The objects an index keeps alive, as git's `--indexed-objects` counts them: the blob of
//! every entry (a submodule's commit is another repository's), every tree of a valid cache
//! tree, and the blobs the resolve-undo extension (`REUC`) remembers for a resolved conflict,
//! which `git checkout -m` brings back.

use crate::{Index, IndexFileError};
use sluice_object::ObjectId;

/// A gitlink's mode: the entry names a commit of a submodule, not an object here.
const GITLINK: u32 = 0o160000;

impl Index {
    /// Every object this index needs kept, in no particular order and possibly repeated.
    pub fn kept_objects(&self) -> Result<Vec<ObjectId>, IndexFileError> {
        let mut ids: Vec<ObjectId> = (self.entries.iter())
            .filter(|e| e.mode != GITLINK)
            .map(|e| e.id)
            .collect();
        let mut trees: Vec<&crate::CacheTree> = self.tree.iter().collect();
        while let Some(tree) = trees.pop() {
            ids.extend(tree.id);
            trees.extend(&tree.children);
        }
        for (signature, data) in &self.extensions {
            if signature == b"REUC" {
                resolve_undo_blobs(data, self.hash, &mut ids)?;
            }
        }
        Ok(ids)
    }
}

/// The blobs of a `REUC` extension: entries of a NUL-ended path, three NUL-ended octal modes
/// (stages 1 to 3), then one raw id for each mode that is not zero.
fn resolve_undo_blobs(
    data: &[u8],
    hash: sluice_object::HashKind,
    out: &mut Vec<ObjectId>,
) -> Result<(), IndexFileError> {
    let bad = || IndexFileError::Extension("REUC");
    let mut rest = data;
    while !rest.is_empty() {
        let mut modes = [0u32; 3];
        // The path, then the three modes.
        for field in 0..4 {
            let end = rest.iter().position(|&b| b == 0).ok_or_else(bad)?;
            if field > 0 {
                let text = std::str::from_utf8(&rest[..end]).map_err(|_| bad())?;
                modes[field - 1] = u32::from_str_radix(text, 8).map_err(|_| bad())?;
            }
            rest = &rest[end + 1..];
        }
        for mode in modes.iter().filter(|&&m| m != 0) {
            let len = hash.len_in_bytes();
            let raw = rest.get(..len).ok_or_else(bad)?;
            if *mode != GITLINK {
                out.push(ObjectId::from_bytes(hash, raw).map_err(|_| bad())?);
            }
            rest = &rest[len..];
        }
    }
    Ok(())
}
