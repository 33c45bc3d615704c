//! git's chunk-based file layout (gitformat-chunk), shared by the commit-graph and the
//! multi-pack-index: a header of the file's own, a table of contents of 12-byte rows (a chunk
//! id and the offset where it starts, then a row of id 0 giving where the last one ends), the
//! chunks, and a checksum of everything before it.

use sluice_object::{HashKind, ObjectId, TrailerHasher};

/// A chunk: its id and its bytes.
pub type Chunk = ([u8; 4], Vec<u8>);

/// The file made of `header` and `chunks`, in that order, with its table and checksum.
pub fn write_chunked(header: &[u8], chunks: &[Chunk], hash: HashKind) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        header.len() + (chunks.len() + 1) * 12 + chunks.iter().map(|c| c.1.len()).sum::<usize>(),
    );
    out.extend_from_slice(header);
    let mut offset = (header.len() + (chunks.len() + 1) * 12) as u64;
    for (id, bytes) in chunks {
        out.extend_from_slice(id);
        out.extend_from_slice(&offset.to_be_bytes());
        offset += bytes.len() as u64;
    }
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&offset.to_be_bytes());
    for (_, bytes) in chunks {
        out.extend_from_slice(bytes);
    }
    let mut checksum = TrailerHasher::new(hash);
    checksum.update(&out);
    out.extend_from_slice(checksum.finalize().as_bytes());
    out
}

/// The table of contents of a chunked file whose header is `header_len` bytes and names
/// `count` chunks: each chunk's id, start and length. `None` when a row points outside the
/// file (before its trailing checksum) or the offsets go backwards.
pub fn read_table(
    bytes: &[u8],
    header_len: usize,
    count: usize,
    hash: HashKind,
) -> Option<Vec<([u8; 4], usize, usize)>> {
    let end = bytes.len().checked_sub(hash.len_in_bytes())?;
    let mut rows = Vec::with_capacity(count + 1);
    for i in 0..=count {
        let at = header_len + 12 * i;
        let row = bytes.get(at..at + 12)?;
        let offset = usize::try_from(u64::from_be_bytes(row[4..].try_into().ok()?)).ok()?;
        if offset > end {
            return None;
        }
        rows.push((<[u8; 4]>::try_from(&row[..4]).ok()?, offset));
    }
    let mut table = Vec::with_capacity(count);
    for pair in rows.windows(2) {
        let ((id, start), (_, next)) = (pair[0], pair[1]);
        table.push((id, start, next.checked_sub(start)?));
    }
    Some(table)
}

/// Where chunk `id` is in `table` (start, length).
pub fn find(table: &[([u8; 4], usize, usize)], id: [u8; 4]) -> Option<(usize, usize)> {
    let (_, start, len) = table.iter().find(|(c, _, _)| *c == id)?;
    Some((*start, *len))
}

/// The 256-entry fanout table of sorted `ids`: for each first byte, how many ids start with
/// it or a smaller one.
pub fn fanout(ids: &[ObjectId]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 * 4);
    let mut count = 0usize;
    for byte in 0..=255u8 {
        count += ids[count..]
            .iter()
            .take_while(|id| id.as_bytes()[0] == byte)
            .count();
        out.extend_from_slice(&(count as u32).to_be_bytes());
    }
    out
}

/// Whether the trailing checksum of `bytes` is the hash of what precedes it.
pub fn checksum_matches(bytes: &[u8], hash: HashKind) -> bool {
    let Some(end) = bytes.len().checked_sub(hash.len_in_bytes()) else {
        return false;
    };
    let mut checksum = TrailerHasher::new(hash);
    checksum.update(&bytes[..end]);
    checksum.finalize().as_bytes() == &bytes[end..]
}
