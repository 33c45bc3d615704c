//! The size of each round of haves, as git's client chooses it: the client decides, the
//! negotiator only supplies the commits.

const INITIAL_ROUND: usize = 16;
/// A link that keeps state grows its rounds by this much once they reach it.
const PIPE_ROUND_STEP: usize = 32;
/// A stateless link doubles its rounds up to this, then grows them by a tenth.
const LARGEST_ROUND: usize = 16384;
/// Haves sent with no new acknowledgement, after a first one, before giving up.
const MAX_IN_VAIN: usize = 256;

/// How many haves each round of a negotiation offers and when to stop offering them, as git's
/// client decides, for protocol v0 and v2 alike.
#[derive(Debug)]
pub(crate) struct Rounds {
    size: usize,
    in_vain: usize,
    stateless: bool,
}

impl Rounds {
    /// Rounds over a link that keeps state between them (a pipe) or not (smart HTTP, and
    /// every v2 fetch).
    pub(crate) fn new(stateless: bool) -> Self {
        Rounds {
            size: INITIAL_ROUND,
            in_vain: 0,
            stateless,
        }
    }

    /// How many haves the next round offers.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Whether to say `done` now, though haves remain: once the server has acknowledged one,
    /// `MAX_IN_VAIN` haves in a row found nothing more in common.
    pub(crate) fn in_vain(&self, acknowledged: bool) -> bool {
        acknowledged && self.in_vain >= MAX_IN_VAIN
    }

    /// A round of `haves` was answered, `new_common` of them acknowledged for the first time;
    /// the next round is larger.
    pub(crate) fn answered(&mut self, haves: usize, new_common: usize) {
        self.in_vain = if new_common > 0 {
            0
        } else {
            self.in_vain + haves
        };
        self.size = match (self.stateless, self.size) {
            (true, size) if size < LARGEST_ROUND => size * 2,
            (true, size) => size * 11 / 10,
            (false, size) if size < PIPE_ROUND_STEP => size * 2,
            (false, size) => size + PIPE_ROUND_STEP,
        };
    }
}
