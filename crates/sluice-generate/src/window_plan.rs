//! What the window search of a repack or pack-objects gets from the plan: every object of the
//! walk (trees and blobs only when every delta is searched anew) but the stored deltas kept as
//! they are, each sized without being read, with where it is stored (an object is not tried
//! against its own pack's, when that pack's writer tried them) and how many kept deltas hang
//! below it.

use crate::islands::Islands;
use crate::window_search::{search_all, Made, Reuse, SearchLimits, Sized};
use crate::write::{PackOptions, Planned, Sent, Source};
use crate::GenerateError;
use sluice_graph::Walked;
use sluice_object::progress::Progress;
use sluice_object::{IdMap, IdSet, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use sluice_pack::entry::{EntryHeader, EntryKind};

/// The plan as the search sees it: the walk, the plan, what is sent.
pub(crate) type Searched<'a, 'p> = (&'a Walked, &'a [Planned], &'a Sent<'p>);

/// The window search of `searched` within `limits`; the deltas found, and the objects
/// compressed whole, by target.
pub(crate) fn search_window(
    odb: &ObjectDb,
    (walked, plan, sent): Searched<'_, '_>,
    limits: &SearchLimits,
    options: &PackOptions,
    progress: &dyn Progress,
) -> Result<Vec<(ObjectId, Made)>, GenerateError> {
    use rayon::prelude::*;
    let islands = options.islands.as_deref();
    let kept = match limits.reuse {
        Reuse::Deltas => KeptDeltas::of(odb, (plan, sent), limits.depth, islands)?,
        Reuse::Objects | Reuse::Nothing => KeptDeltas::default(),
    };
    // Commits and tags too, as git, where stored deltas are kept (a roll of pushed packs, a gc
    // of many packs: few of them, each push's commit whole). Searched anew with every tree
    // and blob (`-f`), they cost more than they give: rust-lang/cargo's `repack -adf` took
    // 4.9-5.1 s instead of 4.5-4.9 s for a pack 0.4% smaller (git's is larger still).
    let every_kind = limits.reuse == Reuse::Deltas;
    let searched: Vec<_> = (walked.objects.iter())
        .filter(|o| every_kind || matches!(o.kind, ObjectKind::Tree | ObjectKind::Blob))
        .filter(|o| !kept.base.contains_key(&o.id))
        .collect();
    let reuse_whole = limits.reuse != Reuse::Nothing;
    // A delta's size is in its first bytes, which must be inflated: on every core.
    let objects = (searched.par_iter())
        .map(|object| {
            let (size, stored_whole, pack) = match plan[sent.index[&object.id] as usize].source {
                Source::Packed { pack, position, .. } => {
                    let (size, whole) = stored_size(odb, pack as usize, position as usize)?;
                    (size, whole && reuse_whole, Some(pack))
                }
                Source::Elsewhere => match odb.read(&object.id)? {
                    Some((_, data)) => (data.len() as u64, false, None),
                    None => return Err(GenerateError::MissingObject(object.id)),
                },
            };
            Ok(Sized {
                id: object.id,
                kind: object.kind,
                name_hash: object.name_hash,
                size,
                stored_whole,
                headroom: kept.headroom.get(&object.id).copied().unwrap_or(0),
                pack,
                breadth: islands.map_or(0, |islands| islands.breadth(&object.id)),
            })
        })
        .collect::<Result<Vec<_>, GenerateError>>()?;
    // As git's: an object under 50 bytes is neither tried nor a base (a delta would hardly
    // be smaller), and is not counted among the objects compressed.
    let objects: Vec<Sized> = (objects.into_iter())
        .filter(|o| o.size >= crate::delta_search::MIN_SIZE as u64)
        .collect();
    let found = search_all(
        odb,
        &objects,
        (limits, islands),
        (options.compression, &options.cancel),
        progress,
    );
    Ok(found
        .into_iter()
        .map(|(at, made)| (objects[at].id, made))
        .collect())
}

/// The size of the object stored at `position` of pack number `pack`, and whether it is
/// stored whole.
fn stored_size(odb: &ObjectDb, pack: usize, position: usize) -> Result<(u64, bool), GenerateError> {
    let pack = &odb.packs()[pack];
    let whole = matches!(pack.entry_header(position)?.kind, EntryKind::Base(_));
    Ok((pack.object_size(position)?, whole))
}

/// The stored deltas a search keeps ([`Reuse::Deltas`]): each with its base, and for every
/// object searched that such deltas are built on, the longest chain of them.
#[derive(Default)]
struct KeptDeltas {
    base: IdMap<ObjectId>,
    headroom: IdMap<u32>,
}

impl KeptDeltas {
    /// The stored deltas of `plan` whose base is sent too (and within the islands' bounds),
    /// and the chains they make; as git breaks them, every `depth + 1`-th delta of a longer
    /// chain is searched again instead, so that no chain in the new pack is deeper than `depth`.
    fn of(
        odb: &ObjectDb,
        (plan, sent): (&[Planned], &Sent<'_>),
        depth: u32,
        islands: Option<&Islands>,
    ) -> Result<Self, GenerateError> {
        let mut base = IdMap::default();
        for planned in plan {
            let allowed = |of: &ObjectId| islands.is_none_or(|i| i.allows(&planned.id, of));
            let kept = sent_base(odb, plan, planned)?.filter(|of| sent.contains(of) && allowed(of));
            if let Some(of) = kept {
                base.insert(planned.id, of);
            }
        }
        let too_deep: Vec<ObjectId> = (chains(&base).into_iter())
            .filter(|&(_, (d, _))| d % (depth + 1) == 0)
            .map(|(id, _)| id)
            .collect();
        for id in too_deep {
            base.remove(&id);
        }
        let mut headroom: IdMap<u32> = IdMap::default();
        for (d, root) in chains(&base).into_values() {
            let room = headroom.entry(root).or_default();
            *room = (*room).max(d);
        }
        Ok(KeptDeltas { base, headroom })
    }
}

/// For each delta of `base`, how far it is from the first object down its chain that is no
/// kept delta (1 for a delta of it), and that object, its root. A cycle (copies of one object
/// stored in two packs as deltas of each other, which the writer writes whole) gives its
/// members 0, and themselves as roots.
fn chains(base: &IdMap<ObjectId>) -> IdMap<(u32, ObjectId)> {
    let mut chains: IdMap<(u32, ObjectId)> = IdMap::default();
    for &start in base.keys() {
        let mut path = Vec::new();
        let mut on_path = IdSet::default();
        let mut at = start;
        let (below, root) = loop {
            if let Some(&known) = chains.get(&at) {
                break known;
            }
            let Some(&next) = base.get(&at) else {
                break (0, at);
            };
            if !on_path.insert(at) {
                path.clear();
                break (0, start);
            }
            path.push(at);
            at = next;
        };
        for (from_bottom, id) in path.into_iter().rev().enumerate() {
            chains.insert(id, (below + from_bottom as u32 + 1, root));
        }
        chains.entry(start).or_insert((0, start));
    }
    chains
}

/// The base of `planned` if it is stored as a delta. The plan lists packed objects in pack
/// order, so an ofs-delta's base, when it is sent, is found there by its offset (cheaper than
/// through the pack's reverse index).
fn sent_base(
    odb: &ObjectDb,
    plan: &[Planned],
    planned: &Planned,
) -> Result<Option<ObjectId>, GenerateError> {
    let Some((pack, offset, header)) = stored_header(odb, planned)? else {
        return Ok(None);
    };
    let key = |p: &Planned| match p.source {
        Source::Packed { pack, offset, .. } => (0, pack, offset),
        Source::Elsewhere => (1, 0, 0),
    };
    Ok(match header.kind {
        EntryKind::Base(_) => None,
        EntryKind::OfsDelta { distance } => (offset.checked_sub(distance))
            .and_then(|at| plan.binary_search_by_key(&(0, pack, at), key).ok())
            .map(|i| plan[i].id),
        EntryKind::RefDelta { base } => Some(base),
    })
}

/// What a planned object's stored entry is.
pub(crate) enum StoredEntry {
    /// It is not in a pack.
    NotPacked,
    /// A whole object.
    Whole,
    /// A delta against `base` (`None`: an offset that starts no entry), `size` bytes long.
    Delta { base: Option<ObjectId>, size: u64 },
}

pub(crate) fn stored_entry(
    odb: &ObjectDb,
    planned: &Planned,
) -> Result<StoredEntry, GenerateError> {
    let Some((pack, offset, header)) = stored_header(odb, planned)? else {
        return Ok(StoredEntry::NotPacked);
    };
    let pack = &odb.packs()[pack as usize];
    let base = match header.kind {
        EntryKind::Base(_) => return Ok(StoredEntry::Whole),
        EntryKind::OfsDelta { distance } => (offset.checked_sub(distance))
            .and_then(|at| pack.position_at(at))
            .map(|position| pack.index().id(position)),
        EntryKind::RefDelta { base } => Some(base),
    };
    Ok(StoredEntry::Delta {
        base,
        size: header.size,
    })
}

/// The pack number, offset and stored header of `planned`, if it is in a pack.
fn stored_header(
    odb: &ObjectDb,
    planned: &Planned,
) -> Result<Option<(u32, u64, EntryHeader)>, GenerateError> {
    let Source::Packed {
        pack,
        position,
        offset,
    } = planned.source
    else {
        return Ok(None);
    };
    let header = odb.packs()[pack as usize].entry_header(position as usize)?;
    Ok(Some((pack, offset, header)))
}
