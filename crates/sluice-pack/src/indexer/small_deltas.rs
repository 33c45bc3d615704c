//! The small deltas pass 1 keeps inflated (see `scan::KEEP_AT_MOST`), in blocks of
//! [`BLOCK`] bytes rather than one growing buffer: doubling a buffer of megabytes copies it and
//! briefly holds it twice, and joining the two halves of a pack scanned in parallel copied it
//! again; that copy was index-pack's peak of memory.

/// Bytes per block (a delta never spans two).
const BLOCK: usize = 1 << 20;

/// Kept deltas, addressed by one offset across the blocks.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// (offset of the block's first byte, its bytes).
    blocks: Vec<(usize, Vec<u8>)>,
    len: usize,
}

impl Kept {
    /// Bytes addressed so far (the offset the next delta gets, unless it starts a block).
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Makes room for a delta of `size` bytes in one block; returns its offset.
    pub(crate) fn start(&mut self, size: usize) -> usize {
        let fits = self
            .blocks
            .last()
            .is_some_and(|(_, block)| block.capacity() - block.len() >= size);
        if !fits {
            self.blocks
                .push((self.len, Vec::with_capacity(BLOCK.max(size))));
        }
        self.len
    }

    /// Appends bytes of the delta started last.
    pub(crate) fn extend(&mut self, data: &[u8]) {
        let (_, block) = self.blocks.last_mut().expect("a delta was started");
        block.extend_from_slice(data);
        self.len += data.len();
    }

    /// The `size` bytes at `at`.
    pub(crate) fn get(&self, at: usize, size: usize) -> Option<&[u8]> {
        let i = self.blocks.partition_point(|(start, _)| *start <= at);
        let (start, block) = self.blocks.get(i.checked_sub(1)?)?;
        block.get(at - start..at - start + size)
    }

    /// Appends `other`'s blocks after this one's (a later part of the pack); returns how far
    /// its offsets moved.
    pub(crate) fn append(&mut self, other: Kept) -> usize {
        let shift = self.len;
        self.blocks
            .extend((other.blocks.into_iter()).map(|(start, block)| (start + shift, block)));
        self.len += other.len;
        shift
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_are_found_across_blocks_and_parts() {
        let mut first = Kept::default();
        let mut offsets = Vec::new();
        for i in 0..20_000u32 {
            let data = [(i % 251) as u8; 100];
            offsets.push(first.start(100));
            first.extend(&data);
        }
        let mut second = Kept::default();
        let at = second.start(3);
        second.extend(b"abc");
        let shift = first.append(second);
        for (i, &at) in offsets.iter().enumerate() {
            assert_eq!(first.get(at, 100), Some(&[(i % 251) as u8; 100][..]));
        }
        assert_eq!(first.get(at + shift, 3), Some(&b"abc"[..]));
        assert_eq!(first.get(first.len(), 1), None);
    }
}
