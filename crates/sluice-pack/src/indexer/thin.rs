//! `--fix-thin`: a thin pack's ref-deltas may name bases the receiver already has. Those bases
//! are read from the repository and appended to the pack as whole objects (in the order of the
//! first delta that needs each, as git does), then the header's count and the trailer are
//! rewritten, so that the pack stands alone.

use super::input::hash_file_range;
use super::links::Links;
use super::resolve::{OfsChildren, RefChildren};
use super::scan::Scan;
use super::{Entry, IndexError, PackIndexer, Resolved, ResolvedSlot};
use crate::entry::write_entry_header;
use crate::inflate::deflate;
use rayon::prelude::*;
use sluice_object::ObjectKind;
use sluice_object::{hash_object, ObjectId, TrailerHasher};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Bases read and compressed ahead of their turn, at most this many bytes of content at once.
const PREPARE_BYTES: usize = 4 << 20;
/// ... and at most this many bases.
const PREPARE_COUNT: usize = 128;

/// A base from the repository, verified and compressed as a pack entry, ready to append.
struct Prepared {
    kind: ObjectKind,
    data: Vec<u8>,
    /// The entry's header and zlib stream.
    entry: Vec<u8>,
}

/// A base looked up ahead: `None` when the repository lacks it.
type Ready = (ObjectId, Option<Prepared>);

/// The length of a pack entry header: the bytes up to the first without its high bit.
fn entry_header_len(entry: &[u8]) -> usize {
    entry
        .iter()
        .position(|b| b & 0x80 == 0)
        .map_or(0, |i| i + 1)
}

/// The bases of the next waiting deltas (`waiting`, from the current turn on) not prepared
/// yet, in order of first need, as many as one round of preparation takes.
fn next_bases(
    scan: &Scan,
    waiting: &[usize],
    prepared: &HashMap<ObjectId, Option<Prepared>>,
) -> Vec<ObjectId> {
    let mut next = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for &delta in waiting {
        if next.len() == PREPARE_COUNT {
            break;
        }
        if scan.resolved[delta].is_set() {
            continue;
        }
        let id = scan.ref_bases[scan.entries[delta].base as usize];
        if !prepared.contains_key(&id) && seen.insert(id) {
            next.push(id);
        }
    }
    next
}

/// Reads, verifies and compresses `ids` on every core (compressing the bases was most of a
/// thin fetch's time on one thread). Stops taking more once [`PREPARE_BYTES`] are read; a base
/// the repository lacks comes back as `None`. Whether each is appended is still decided in
/// turn: one resolved by then is not.
fn prepare(
    indexer: &PackIndexer<'_>,
    lookup: &dyn super::ObjectLookup,
    ids: &[ObjectId],
) -> Result<Vec<Ready>, IndexError> {
    let hash = indexer.options.hash;
    let taken = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Option<Ready>> = ids
        .par_iter()
        .enumerate()
        .map(|(i, &id)| {
            // The first base is always prepared, so that each round makes progress.
            if i > 0 && taken.load(std::sync::atomic::Ordering::Relaxed) > PREPARE_BYTES {
                return Ok(None);
            }
            let (kind, data) = match lookup.read(&id) {
                Ok(Some(found)) => found,
                Ok(None) => return Ok(Some((id, None))),
                Err(source) => return Err(IndexError::Lookup { id, source }),
            };
            taken.fetch_add(data.len(), std::sync::atomic::Ordering::Relaxed);
            if hash_object(hash, kind, &data).ok() != Some(id) {
                return Err(IndexError::Lookup {
                    id,
                    source: super::LookupError::new("the stored object does not match its id"),
                });
            }
            let mut entry = Vec::new();
            write_entry_header(kind.pack_type(), data.len() as u64, &mut entry);
            entry.extend_from_slice(&deflate(&data, indexer.options.compression_level));
            Ok(Some((id, Some(Prepared { kind, data, entry }))))
        })
        .collect::<Result<_, _>>()?;
    Ok(results.into_iter().flatten().collect())
}

/// Appends prepared bases in turn and resolves the deltas built on them.
struct Appender<'i, 'a> {
    indexer: &'i PackIndexer<'a>,
    pack: &'i File,
    ofs: &'i OfsChildren,
    refs: &'i RefChildren,
    links: Option<&'i Links<'i>>,
    /// Where the next base goes.
    end: u64,
    appended: usize,
    /// Bases prepared ahead; `None` for one the repository lacks.
    prepared: HashMap<ObjectId, Option<Prepared>>,
}

impl Appender<'_, '_> {
    /// Takes the turns of `deltas` (waiting ref-deltas, in order): each still unresolved when
    /// its turn comes has its base appended (when the repository has it) and resolved.
    fn take_turns(&mut self, scan: &mut Scan, deltas: &[usize]) -> Result<(), IndexError> {
        let io = |context| move |source| IndexError::Io { context, source };
        for &delta in deltas {
            if scan.resolved[delta].is_set() {
                continue;
            }
            let base_id = scan.ref_bases[scan.entries[delta].base as usize];
            // Not in the repository either: the delta stays unresolved.
            let Some(Some(Prepared { kind, data, entry })) = self.prepared.remove(&base_id) else {
                self.prepared.insert(base_id, None);
                continue;
            };
            self.pack
                .write_all_at(&entry, self.end)
                .map_err(io("appending a base to the thin pack"))?;
            let root = Resolved {
                id: base_id,
                kind,
                depth: 0,
            };
            let size = data.len() as u64;
            let header_len = entry_header_len(&entry);
            let mut appended = Entry::new(self.end, size, header_len, kind.pack_type()).ok_or(
                IndexError::EntryTooLarge {
                    offset: self.end,
                    size,
                },
            )?;
            appended.crc32 = crc32fast::hash(&entry);
            scan.entries.push(appended);
            scan.resolved.push(ResolvedSlot::filled(root));
            let index = (scan.entries.len() - 1) as u32;
            self.end += entry.len() as u64;
            self.appended += 1;

            let mut resolver = self.indexer.resolver(scan, self.pack, self.ofs, self.refs);
            // The appended base is the repository's; the deltas built on it are the pack's.
            resolver.links = self.links;
            rayon::scope(|s| resolver.resolve_from(s, data, root, index));
            if let Some(error) = resolver.error.into_inner() {
                return Err(error);
            }
        }
        Ok(())
    }
}

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
        .filter(|&i| scan.entries[i].is_ref_delta() && !scan.resolved[i].is_set())
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
    let mut appender = Appender {
        indexer,
        pack,
        ofs,
        refs,
        links,
        end: scan.data_end,
        appended: 0,
        prepared: HashMap::new(),
    };
    // In rounds: while the bases of one round are appended and their deltas resolved, the
    // next round's bases are read and compressed on the other cores.
    let first = next_bases(scan, &waiting, &appender.prepared);
    let mut ahead = pool.install(|| prepare(indexer, lookup, &first))?;
    let mut turn = 0;
    while turn < waiting.len() {
        appender.prepared.extend(ahead.drain(..));
        let stop = (turn..waiting.len())
            .find(|&t| {
                let delta = waiting[t];
                !scan.resolved[delta].is_set()
                    && !(appender.prepared)
                        .contains_key(&scan.ref_bases[scan.entries[delta].base as usize])
            })
            .unwrap_or(waiting.len());
        let next = next_bases(scan, &waiting[stop..], &appender.prepared);
        let (ready, taken) = pool.install(|| {
            rayon::join(
                || prepare(indexer, lookup, &next),
                || appender.take_turns(scan, &waiting[turn..stop]),
            )
        });
        taken?;
        ahead = ready?;
        turn = stop;
    }
    let Appender { end, appended, .. } = appender;
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
