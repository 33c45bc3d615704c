//! Writing the planned entries in order: each stored entry copied as it is when the receiver
//! can take it (a delta whose base is written already, or one the client has in a thin pack),
//! a delta waiting for a base that comes later held back until it is written, and the rest
//! written from what the delta search made or rebuilt whole.

use crate::checksum_memo::ChecksumMemo;
use crate::stats::PackStats;
use crate::verbatim;
use crate::window_search::Reuse;
use crate::write::{PackOptions, PackReuse, Planned, Sent, Source};
use crate::GenerateError;
use sluice_graph::KnownObjects;
use sluice_object::progress::Progress;
use sluice_object::{ObjectId, ObjectKind};
use sluice_odb::{ObjectDb, Pack, RawEntry};
use sluice_pack::entry::EntryKind;
use sluice_pack::inflate::deflate;
use sluice_pack::writer::WrittenEntry;
use sluice_pack::PackWriter;
use std::collections::HashMap;
use std::io::Write;

pub(crate) enum Placed {
    Written,
    WaitsFor(u32),
}

/// A delta's base, seen from the pack being written.
enum BaseState {
    /// Written: the delta can name it so.
    Ready(EntryKind),
    /// Sent, but later: the delta waits for plan entry `.0`.
    Unwritten(u32),
    /// Not in this pack.
    NotSent,
}

pub(crate) struct Job<'a, W: Write> {
    odb: &'a ObjectDb,
    plan: Vec<Planned>,
    sent: Sent<'a>,
    known: &'a KnownObjects,
    options: &'a PackOptions,
    writer: PackWriter<W>,
    stats: PackStats,
    /// Whether a stored pack copied whole is checked entry by entry first.
    copy_check: CopyCheck,
    /// Every entry so far went out as planned: as it is stored, as the search made it, or (a
    /// loose object) compressed whole; nothing was rebuilt because a stored copy turned out
    /// damaged or unusable.
    as_stored: bool,
}

/// Whether the entries of a stored pack copied whole are checked against its index's CRC32s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CopyCheck {
    /// Checked, and their CRC32s kept: a pack being stored (repack, pack-objects) records
    /// them in its index, and must not take in damage.
    Checked,
    /// Copied as they are, as a whole stored pack is sent to a client (and as git's upload-pack
    /// reuses a pack verbatim): the receiver hashes every object it indexes.
    Trusted,
}

/// A finished pack: the output, what went in, its checksum and the plan with every entry's
/// offset and CRC32.
pub(crate) type Finished<W> = (W, PackStats, ObjectId, Vec<Planned>);

impl<'a, W: Write> Job<'a, W> {
    pub(crate) fn new(
        odb: &'a ObjectDb,
        plan: Vec<Planned>,
        sent: Sent<'a>,
        known: &'a KnownObjects,
        options: &'a PackOptions,
        writer: PackWriter<W>,
        copy_check: CopyCheck,
    ) -> Self {
        Job {
            copy_check,
            odb,
            plan,
            sent,
            known,
            options,
            writer,
            stats: PackStats::default(),
            as_stored: true,
        }
    }

    /// Writes `copied` (a stored pack whose every entry goes, and how many that is) in one
    /// piece, then every entry of the plan in order, a delta held back until its base is
    /// written; returns the copied entries' CRC32s in pack order when they were checked.
    pub(crate) fn write_all(
        &mut self,
        copied: Option<(&Pack, u32)>,
        reuse: PackReuse,
        writing: &dyn Progress,
    ) -> Result<Vec<u32>, GenerateError> {
        let crcs = match copied {
            Some((pack, count)) => {
                let crcs = self.copy_verbatim(pack, count, reuse)?;
                writing.add(count.into());
                crcs
            }
            None => Vec::new(),
        };
        // Deltas held back until their base (the key) is written.
        let mut waiting: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut ready = Vec::new();
        for i in 0..self.plan.len() as u32 {
            self.options.cancel.check()?;
            ready.push(i);
            while let Some(i) = ready.pop() {
                match self.place(i)? {
                    Placed::Written => {
                        writing.add(1);
                        if let Some(children) = waiting.remove(&i) {
                            ready.extend(children);
                        }
                    }
                    Placed::WaitsFor(base) => waiting.entry(base).or_default().push(i),
                }
            }
        }
        // Whatever still waits is in a cycle of deltas (duplicates across packs): send it whole.
        let mut left: Vec<u32> = waiting.into_values().flatten().collect();
        left.sort_unstable();
        for i in left {
            self.write_whole(i)?;
            writing.add(1);
        }
        Ok(crcs)
    }

    /// Writes the trailer.
    pub(crate) fn finish(self) -> Result<Finished<W>, GenerateError> {
        let (out, checksum) = self.writer.finish()?;
        Ok((out, self.stats, checksum, self.plan))
    }

    /// Writes the trailer of a pack whose checksum `memo` may know under `key` (`recalled`:
    /// it did, and nothing was hashed). A pack copied as stored has its checksum remembered;
    /// one that had to rebuild an entry is not the pack the memo describes: with a recalled
    /// checksum it is refused before its trailer goes out.
    pub(crate) fn finish_remembered(
        self,
        memo: &dyn ChecksumMemo,
        key: ObjectId,
        recalled: bool,
    ) -> Result<Finished<W>, GenerateError> {
        if recalled && !self.as_stored {
            memo.forget(&key);
            return Err(GenerateError::StoredPacksChanged);
        }
        let as_stored = self.as_stored;
        let finished = self.finish()?;
        if as_stored && !recalled {
            memo.remember(key, finished.2);
        }
        Ok(finished)
    }

    /// Copies every entry of `pack` (`count` of them) in one piece, right after the header,
    /// where they keep their offsets; with [`CopyCheck::Checked`] each is checked against the
    /// index's CRC32 first, and its CRC32 returned (in pack order); counted as `reuse` says.
    fn copy_verbatim(
        &mut self,
        pack: &Pack,
        count: u32,
        reuse: PackReuse,
    ) -> Result<Vec<u32>, GenerateError> {
        let crcs = match self.copy_check {
            CopyCheck::Checked => verbatim::checked_crcs(pack)?,
            CopyCheck::Trusted => Vec::new(),
        };
        self.writer
            .write_verbatim(verbatim::entries(pack)?, count)?;
        self.stats += verbatim::copied_stats(pack, count, reuse)?;
        Ok(crcs)
    }

    /// Writes object `i`, reusing its stored entry when it can, or says which base it waits for.
    fn place(&mut self, i: u32) -> Result<Placed, GenerateError> {
        if let Some(base) = self.plan[i as usize].delta.as_ref().map(|d| d.base) {
            return self.place_new_delta(i, base);
        }
        let Source::Packed { pack, position, .. } = self.plan[i as usize].source else {
            self.write_whole(i)?;
            return Ok(Placed::Written);
        };
        let pack = &self.odb.packs()[pack as usize];
        let raw = pack.raw_entry(position as usize)?;
        if !crc_matches(&raw) {
            // Never pass on corruption: rebuilding the object checks it end to end.
            self.write_whole(i)?;
            return Ok(Placed::Written);
        }
        let base = match raw.header.kind {
            // Compressed anew by the search (no reuse of objects).
            EntryKind::Base(_) if self.plan[i as usize].whole.is_some() => {
                self.write_whole(i)?;
                return Ok(Placed::Written);
            }
            EntryKind::Base(kind) => {
                self.write_raw(i, EntryKind::Base(kind), &raw)?;
                return Ok(Placed::Written);
            }
            // A search that reuses no stored delta, or searched this one, found it no delta:
            // it goes whole.
            _ if self.plan[i as usize].whole.is_some()
                || (self.options.window_search).is_some_and(|l| l.reuse != Reuse::Deltas) =>
            {
                self.write_whole(i)?;
                return Ok(Placed::Written);
            }
            EntryKind::OfsDelta { distance } => {
                let base_position = pack.position_at(raw.offset - distance).ok_or_else(|| {
                    GenerateError::NoBaseEntry {
                        pack: pack.path().to_owned(),
                        offset: raw.offset,
                    }
                })?;
                pack.index().id(base_position)
            }
            EntryKind::RefDelta { base } => base,
        };
        // A stored delta across the islands' bounds goes whole (the search found it none
        // within them, or could not try it).
        let id = self.plan[i as usize].id;
        if (self.options.islands)
            .as_ref()
            .is_some_and(|islands| !islands.allows(&id, &base))
        {
            self.write_whole(i)?;
            return Ok(Placed::Written);
        }
        let kind = match self.delta_against(base) {
            BaseState::Ready(kind) => kind,
            BaseState::Unwritten(b) => return Ok(Placed::WaitsFor(b)),
            BaseState::NotSent if self.options.thin && self.known.contains(self.odb, &base) => {
                EntryKind::RefDelta { base }
            }
            BaseState::NotSent => {
                self.write_whole(i)?;
                return Ok(Placed::Written);
            }
        };
        self.write_raw(i, kind, &raw)?;
        self.stats.deltas += 1;
        self.stats.reused_deltas += 1;
        Ok(Placed::Written)
    }

    /// Where a delta against `base` stands in the pack being written.
    fn delta_against(&self, base: ObjectId) -> BaseState {
        let Some(&b) = self.sent.index.get(&base) else {
            // In the pack copied whole, at the offset it has there.
            let copied = (self.sent.copied)
                .and_then(|pack| Some(pack.index().offset(pack.index().lookup(&base)?)));
            return match copied {
                Some(at) if self.options.ofs_delta => BaseState::Ready(EntryKind::OfsDelta {
                    distance: self.writer.offset() - at,
                }),
                Some(_) => BaseState::Ready(EntryKind::RefDelta { base }),
                None => BaseState::NotSent,
            };
        };
        match self.plan[b as usize].written {
            Some(at) if self.options.ofs_delta => BaseState::Ready(EntryKind::OfsDelta {
                distance: self.writer.offset() - at,
            }),
            Some(_) => BaseState::Ready(EntryKind::RefDelta { base }),
            None => BaseState::Unwritten(b),
        }
    }

    /// Writes the delta the search made for `i` against `base`, once the base is written.
    fn place_new_delta(&mut self, i: u32, base: ObjectId) -> Result<Placed, GenerateError> {
        let kind = match self.delta_against(base) {
            BaseState::Ready(kind) => kind,
            BaseState::Unwritten(b) => return Ok(Placed::WaitsFor(b)),
            // The search only picks bases it sends or the client has.
            BaseState::NotSent => EntryKind::RefDelta { base },
        };
        let Some(delta) = self.plan[i as usize].delta.take() else {
            return Ok(Placed::Written);
        };
        let at = self
            .writer
            .write_entry(kind, delta.size, &delta.compressed)?;
        self.record(i, at);
        self.stats.total += 1;
        self.stats.deltas += 1;
        Ok(Placed::Written)
    }

    fn write_raw(
        &mut self,
        i: u32,
        kind: EntryKind,
        raw: &RawEntry<'_>,
    ) -> Result<(), GenerateError> {
        let at = self
            .writer
            .write_entry(kind, raw.header.size, raw.compressed())?;
        self.record(i, at);
        self.stats.total += 1;
        self.stats.reused += 1;
        Ok(())
    }

    fn record(&mut self, i: u32, at: WrittenEntry) {
        let planned = &mut self.plan[i as usize];
        planned.written = Some(at.offset);
        planned.crc32 = at.crc32;
    }

    fn write_whole(&mut self, i: u32) -> Result<(), GenerateError> {
        let id = self.plan[i as usize].id;
        if let Some(whole) = self.plan[i as usize].whole.take() {
            let (kind, size, compressed) = *whole;
            let at = self
                .writer
                .write_entry(EntryKind::Base(kind), size, &compressed)?;
            self.record(i, at);
            self.stats.total += 1;
            return Ok(());
        }
        // A loose object is compressed as planned (the same bytes for the same content and
        // level); a stored entry rebuilt is a change of plan.
        if matches!(self.plan[i as usize].source, Source::Packed { .. }) {
            self.as_stored = false;
        }
        let (kind, data): (ObjectKind, Vec<u8>) = self
            .odb
            .read(&id)?
            .ok_or(GenerateError::MissingObject(id))?;
        let compressed = deflate(&data, self.options.compression);
        let at = self
            .writer
            .write_entry(EntryKind::Base(kind), data.len() as u64, &compressed)?;
        self.record(i, at);
        self.stats.total += 1;
        Ok(())
    }
}

pub(crate) fn crc_matches(raw: &RawEntry<'_>) -> bool {
    raw.crc32
        .is_none_or(|crc| crc32fast::hash(raw.bytes) == crc)
}
