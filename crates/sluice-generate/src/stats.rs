//! git's "Total" line: what went into a pack, counted as git's pack-objects counts it.

/// What went into a pack, for git's "Total" line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PackStats {
    /// Entries written.
    pub total: u32,
    /// Entries written as deltas.
    pub deltas: u32,
    /// Entries copied as stored.
    pub reused: u32,
    /// Of those, deltas.
    pub reused_deltas: u32,
    /// Entries sent as part of a stored pack copied whole.
    pub pack_reused: u32,
}

impl std::ops::AddAssign for PackStats {
    fn add_assign(&mut self, other: PackStats) {
        self.total += other.total;
        self.deltas += other.deltas;
        self.reused += other.reused;
        self.reused_deltas += other.reused_deltas;
        self.pack_reused += other.pack_reused;
    }
}

/// git's "Total" line, as pack-objects ends it (without the newline); git 2.47's, which says
/// how many packs were copied from (a pack is copied whole, right after the header, from one
/// pack at most here).
impl std::fmt::Display for PackStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Total {} (delta {}), reused {} (delta {}), pack-reused {} (from {})",
            self.total,
            self.deltas,
            self.reused,
            self.reused_deltas,
            self.pack_reused,
            u32::from(self.pack_reused > 0)
        )
    }
}
