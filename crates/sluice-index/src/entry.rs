//! One index entry.

use sluice_object::ObjectId;

/// The stat data git records to notice changes without reading files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stat {
    /// ctime seconds and nanoseconds.
    pub ctime: (u32, u32),
    /// mtime seconds and nanoseconds.
    pub mtime: (u32, u32),
    /// Device.
    pub dev: u32,
    /// Inode.
    pub ino: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Size, truncated to 32 bits as git stores it.
    pub size: u32,
}

impl Stat {
    /// The stat data of a file, as git truncates it to 32 bits.
    pub fn from_metadata(meta: &std::fs::Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt;
        Stat {
            ctime: (meta.ctime() as u32, meta.ctime_nsec() as u32),
            mtime: (meta.mtime() as u32, meta.mtime_nsec() as u32),
            dev: meta.dev() as u32,
            ino: meta.ino() as u32,
            uid: meta.uid(),
            gid: meta.gid(),
            size: meta.size() as u32,
        }
    }
}

/// Flag bits of the 16-bit flags word.
const ASSUME_VALID: u16 = 0x8000;
const EXTENDED: u16 = 0x4000;
const STAGE_MASK: u16 = 0x3000;
/// Extended flag bits (version 3+).
pub(crate) const SKIP_WORKTREE: u16 = 0x4000;
pub(crate) const INTENT_TO_ADD: u16 = 0x2000;

/// A path in the index with its object, mode and stat data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// Stat data of the file when it was last known to match.
    pub stat: Stat,
    /// The mode: 0o100644, 0o100755, 0o120000 or 0o160000.
    pub mode: u32,
    /// The blob (or commit, for a gitlink).
    pub id: ObjectId,
    /// The 16-bit flags; the name length bits are recomputed when writing.
    pub flags: u16,
    /// Extended flags (skip-worktree, intent-to-add), version 3+.
    pub extended_flags: u16,
    /// The path, relative to the work tree, with `/` separators.
    pub path: Vec<u8>,
}

impl IndexEntry {
    /// A stage-0 entry.
    pub fn new(path: Vec<u8>, mode: u32, id: ObjectId, stat: Stat) -> Self {
        IndexEntry {
            stat,
            mode,
            id,
            flags: 0,
            extended_flags: 0,
            path,
        }
    }

    /// The merge stage (0 when not in conflict).
    pub fn stage(&self) -> u16 {
        (self.flags & STAGE_MASK) >> 12
    }

    /// Whether git should assume the file unchanged.
    pub fn assume_valid(&self) -> bool {
        self.flags & ASSUME_VALID != 0
    }

    /// Whether the entry is outside a sparse checkout.
    pub fn skip_worktree(&self) -> bool {
        self.extended_flags & SKIP_WORKTREE != 0
    }

    /// Marks the entry as outside a sparse checkout (git's skip-worktree bit), or inside.
    pub fn set_skip_worktree(&mut self, outside: bool) {
        match outside {
            true => self.extended_flags |= SKIP_WORKTREE,
            false => self.extended_flags &= !SKIP_WORKTREE,
        }
    }

    /// Whether the entry only records an intent to add.
    pub fn intent_to_add(&self) -> bool {
        self.extended_flags & INTENT_TO_ADD != 0
    }

    pub(crate) fn is_extended(&self) -> bool {
        self.extended_flags != 0
    }

    pub(crate) fn flags_word(&self) -> u16 {
        let name_len = self.path.len().min(0xfff) as u16;
        let mut flags = (self.flags & (ASSUME_VALID | STAGE_MASK)) | name_len;
        if self.is_extended() {
            flags |= EXTENDED;
        }
        flags
    }

    pub(crate) fn extended_in(flags: u16) -> bool {
        flags & EXTENDED != 0
    }
}
