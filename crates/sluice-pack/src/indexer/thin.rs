//! `--fix-thin`: a thin pack's ref-deltas may name bases the receiver already has. Those bases
//! are read from the repository and appended to the pack as whole objects (in the order of the
//! first delta that needs each, as git does), then the header's count and the trailer are
//! rewritten, so that the pack stands alone.

use super::input::hash_file_range;
use super::links::Links;
use super::resolve::{OfsChildren, RefChildren};
use super::scan::Scan;
use super::{Entry, IndexError, PackIndexer, Resolved, NOT_KEPT};
use crate::entry::write_entry_header;
use crate::inflate::deflate;
use sluice_object::{hash_object, ObjectId, TrailerHasher};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;

/// Appends missing bases and resolves their trees. Returns how many objects were appended.
pub(crate) fn fix_thin(
    indexer: &PackIndexer<'_>,
    scan: &mut Scan,
    pack: &File,
    (ofs, refs): (&OfsChildren, &RefChildren),
    links: Option<&Links<'_>>,
    pool: &rayon::ThreadPool,
) -> Result<usize, IndexError> {
    let Some(lookup) = indexer.lookup else {
        return Ok(0);
    };
    let hash = indexer.options.hash;
    let waiting: Vec<usize> = (0..scan.entries.len())
        .filter(|&i| scan.entries[i].is_ref_delta() && scan.resolved[i].get().is_none())
        .collect();
    if waiting.is_empty() {
        return Ok(0);
    }
    let mut absent: Vec<ObjectId> = waiting
        .iter()
        .map(|&i| scan.ref_bases[scan.entries[i].base as usize])
        .filter(|id| !lookup.contains(id))
        .collect();
    absent.sort_unstable();
    absent.dedup();
    if let Some(&first) = absent.first() {
        lookup
            .prefetch(&absent)
            .map_err(|source| IndexError::Lookup { id: first, source })?;
    }
    let io = |context| move |source| IndexError::Io { context, source };
    let mut end = scan.data_end;
    let mut appended = 0usize;
    for delta in waiting {
        if scan.resolved[delta].get().is_some() {
            continue;
        }
        let base_id = scan.ref_bases[scan.entries[delta].base as usize];
        let (kind, data) = match lookup.read(&base_id) {
            Ok(Some(found)) => found,
            Ok(None) => continue,
            Err(source) => {
                return Err(IndexError::Lookup {
                    id: base_id,
                    source,
                })
            }
        };
        let check = hash_object(hash, kind, &data).ok();
        if check != Some(base_id) {
            return Err(IndexError::Lookup {
                id: base_id,
                source: super::LookupError::new("the stored object does not match its id"),
            });
        }
        let mut bytes = Vec::new();
        write_entry_header(kind.pack_type(), data.len() as u64, &mut bytes);
        let header_len = bytes.len() as u8;
        bytes.extend_from_slice(&deflate(&data, indexer.options.compression_level));
        pack.write_all_at(&bytes, end)
            .map_err(io("appending a base to the thin pack"))?;
        let root = Resolved {
            id: base_id,
            kind,
            depth: 0,
        };
        scan.entries.push(Entry {
            offset: end,
            size: data.len() as u64,
            crc32: crc32fast::hash(&bytes),
            base: 0,
            header_len,
            pack_type: kind.pack_type(),
            kept: NOT_KEPT,
        });
        scan.resolved.push(OnceLock::from(root));
        let index = (scan.entries.len() - 1) as u32;
        end += bytes.len() as u64;
        appended += 1;

        let mut resolver = indexer.resolver(scan, pack, ofs, refs);
        // The appended base is the repository's; the deltas built on it are the pack's.
        resolver.links = links;
        pool.install(|| rayon::scope(|s| resolver.resolve_from(s, data, root, index)));
        if let Some(error) = resolver.error.into_inner() {
            return Err(error);
        }
    }
    if appended == 0 {
        return Ok(0);
    }

    // The header's object count changes, so the whole pack is hashed again for the trailer.
    let count = u32::try_from(scan.entries.len()).map_err(|_| IndexError::Io {
        context: "completing the thin pack",
        source: std::io::Error::other("more than 2^32 objects"),
    })?;
    pack.write_all_at(&count.to_be_bytes(), 8)
        .map_err(io("rewriting the pack header"))?;
    let mut hasher = TrailerHasher::new(hash);
    hash_file_range(&mut hasher, pack, 0..end)?;
    let checksum = hasher.finalize();
    pack.write_all_at(checksum.as_bytes(), end)
        .map_err(io("rewriting the pack trailer"))?;
    pack.set_len(end + hash.len_in_bytes() as u64)
        .map_err(io("rewriting the pack trailer"))?;
    scan.checksum = checksum;
    scan.data_end = end;
    Ok(appended)
}
