//! Where an object directory's commit-graph lives (gitformat-commit-graph): one whole file,
//! `info/commit-graph`, or a split chain, `info/commit-graphs/commit-graph-chain`, which lists
//! the checksums of its layers (`graph-<checksum>.graph` beside it), bottom first. Every
//! reader and writer of the graph names its files through here.

use std::fmt::Display;
use std::path::{Path, PathBuf};

/// The commit-graph files of one object directory.
pub(super) struct GraphFiles {
    info: PathBuf,
}

impl GraphFiles {
    /// The graph files of the object directory `objects`.
    pub(super) fn of(objects: &Path) -> GraphFiles {
        GraphFiles {
            info: objects.join("info"),
        }
    }

    /// The whole graph, `info/commit-graph`.
    pub(super) fn whole(&self) -> PathBuf {
        self.info.join("commit-graph")
    }

    /// The directory of a split chain, `info/commit-graphs`.
    pub(super) fn chain_dir(&self) -> PathBuf {
        self.info.join("commit-graphs")
    }

    /// The chain file, which lists the layers.
    pub(super) fn chain(&self) -> PathBuf {
        self.chain_dir().join("commit-graph-chain")
    }

    /// The layer of the chain with `checksum`.
    pub(super) fn layer(&self, checksum: impl Display) -> PathBuf {
        self.chain_dir().join(format!("graph-{checksum}.graph"))
    }

    /// The graph files to read, bottom first: the layers the chain lists, or (with no chain)
    /// the whole graph, which may not exist.
    pub(super) fn to_read(&self) -> Vec<PathBuf> {
        match std::fs::read_to_string(self.chain()) {
            Ok(chain) => chain.lines().map(|line| self.layer(line.trim())).collect(),
            Err(_) => vec![self.whole()],
        }
    }
}
