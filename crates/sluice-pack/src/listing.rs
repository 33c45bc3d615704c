//! git's listing of a verified pack (`verify-pack -v`, `index-pack --verify-stat`): one line
//! per object in pack order, `<id> <type> <size> <size-in-pack> <offset> [<depth> <base>]`,
//! then the histogram of delta chain lengths.

use crate::IndexedPack;
use std::fmt::Write as _;
use std::io::Write;

/// What a listing shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// Every object, then the histogram.
    Objects,
    /// Only the histogram.
    Histogram,
}

impl IndexedPack {
    /// Writes this pack's listing to `out`, as git writes it.
    pub fn write_listing(&self, listing: Listing, out: &mut dyn Write) -> std::io::Result<()> {
        let mut line = String::new();
        for i in (0..self.len()).filter(|_| listing == Listing::Objects) {
            let object = self.object(i);
            line.clear();
            let _ = write!(
                line,
                "{} {:<6} {} {} {}",
                object.id, object.kind, object.size, object.packed_size, object.offset
            );
            if let Some(delta) = object.delta {
                let _ = write!(line, " {} {}", delta.depth, delta.base);
            }
            writeln!(out, "{line}")?;
        }
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let (whole, chains) = self.delta_chains();
        writeln!(out, "non delta: {whole} object{}", plural(whole))?;
        for (i, &count) in chains.iter().enumerate().filter(|(_, &n)| n > 0) {
            writeln!(
                out,
                "chain length = {}: {count} object{}",
                i + 1,
                plural(count)
            )?;
        }
        Ok(())
    }
}
