//! Packs of a bounded size (`--max-pack-size`, `pack.packSizeLimit`): the pack is written whole
//! as usual, then, when it reaches the limit, cut into consecutive packs where git cuts.
//!
//! git's rule, followed entry by entry in pack order: an entry goes into the current pack when
//! it is the pack's first, or when the pack with it and its trailer stays under the limit;
//! otherwise the pack ends and the entry opens the next one. A delta goes as it is when its
//! base is in the same pack (an ofs-delta with its distance measured anew), and whole when its
//! base went into an earlier one, as git writes it. Every later pack is dated a second before
//! the one before it, as git dates them (readers look at newer packs first).
//!
//! Cutting after writing costs a second pass over the pack, only when a limit is set and
//! reached; the writer itself stays one straight pass for the common case.

use crate::repack::RepackError;
use crate::GenerateError;
use sluice_object::cancel::Cancel;
use sluice_object::{HashKind, IdMap, ObjectId, ObjectKind};
use sluice_odb::pack_store::{store_written_at, Staged, StoreOptions, Stored};
use sluice_odb::{Config, ConfigError, ObjectDb};
use sluice_pack::entry::{
    parse_entry_header, write_entry_header, write_ofs_distance, EntryKind, MAX_ENTRY_HEADER_LEN,
    PACK_HEADER_LEN,
};
use sluice_pack::inflate::deflate;
use sluice_pack::{IdxEntry, PackWriter};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

/// The smallest limit git takes; a smaller one is raised to it.
const SMALLEST_LIMIT: u64 = 1 << 20;

/// The largest pack to write, as git's pack-objects settles it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackSizeLimit {
    /// In bytes, trailer included.
    pub bytes: u64,
    /// The limit asked for was under 1 MiB and was raised to it (git warns "minimum pack size
    /// limit is 1 MiB").
    pub raised: bool,
}

impl PackSizeLimit {
    /// `given` (`--max-pack-size`, 0 for none), else `pack.packSizeLimit`; `None`: no limit.
    pub fn resolve(given: Option<u64>, config: &Config) -> Result<Option<Self>, ConfigError> {
        let bytes = match given {
            Some(bytes) => bytes,
            None => config.get_size("pack.packsizelimit")?.unwrap_or(0),
        };
        Ok((bytes != 0).then(|| PackSizeLimit {
            bytes: bytes.max(SMALLEST_LIMIT),
            raised: bytes < SMALLEST_LIMIT,
        }))
    }
}

/// A pack written whole to a temporary file, not yet in place.
pub(crate) struct WrittenPack {
    pub(crate) staged: Staged,
    pub(crate) entries: Vec<IdxEntry>,
}

/// How `store_cut` writes the packs it makes.
pub(crate) struct CutOptions<'a> {
    pub(crate) limit: u64,
    pub(crate) compression: u32,
    pub(crate) store: &'a StoreOptions,
    pub(crate) cancel: &'a Cancel,
}

/// The packs `written` becomes under `options.limit`, each named by `named` and put in place,
/// in order; and how many deltas went whole. The temporary file goes when `written` does.
pub(crate) fn store_cut(
    odb: &ObjectDb,
    mut written: WrittenPack,
    named: &dyn Fn(ObjectId) -> PathBuf,
    options: &CutOptions<'_>,
) -> Result<(Vec<Stored>, u32), RepackError> {
    written.entries.sort_unstable_by_key(|e| e.offset);
    let hash = odb.hash();
    let file = written.staged.file();
    let end = file.metadata().map_err(GenerateError::Io)?.len() - hash.len_in_bytes() as u64;
    let source = Source::read(file, hash, &written.entries, end)?;
    let dir = named(hash.null_id())
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let mut cut = Cut {
        odb,
        source: &source,
        options,
        pack_of: vec![u32::MAX; source.entries.len()],
        new_offset: vec![0; source.entries.len()],
        made_whole: 0,
    };
    let mut stored = Vec::new();
    let mut first_mtime = None;
    let mut start = 0;
    while start < source.entries.len() {
        let (planned, next) = cut.plan(start, stored.len() as u32)?;
        let whole = planned.iter().filter(|p| matches!(p.form, Form::Whole(..)));
        cut.made_whole += whole.count() as u32;
        let staged = Staged::create(&dir, "tmp_pack_")?;
        let (checksum, entries) = cut.write(&planned, &staged)?;
        // Later packs a second older each, in whole seconds from the first, as git dates them.
        match first_mtime {
            None => {
                let mtime = staged.file().metadata().and_then(|m| m.modified());
                let since_epoch = (mtime.map_err(GenerateError::Io)?)
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default();
                first_mtime = Some(UNIX_EPOCH + Duration::from_secs(since_epoch.as_secs()));
            }
            Some(first) => {
                let older = first - Duration::from_secs(stored.len() as u64);
                staged
                    .file()
                    .set_modified(older)
                    .map_err(GenerateError::Io)?;
            }
        }
        stored.push(store_written_at(
            named(checksum),
            staged,
            checksum,
            entries,
            hash,
            options.store,
        )?);
        start = next;
    }
    Ok((stored, cut.made_whole))
}

/// An entry of the whole pack.
struct SourceEntry {
    id: ObjectId,
    offset: u64,
    /// Where its data (after the header) starts and ends.
    data: (u64, u64),
    kind: EntryKind,
    size: u64,
}

/// The whole pack's entries, in pack order, and where each base is among them.
struct Source<'a> {
    file: &'a File,
    entries: Vec<SourceEntry>,
    by_id: IdMap<usize>,
}

impl<'a> Source<'a> {
    fn read(
        file: &'a File,
        hash: HashKind,
        entries: &[IdxEntry],
        end: u64,
    ) -> Result<Self, GenerateError> {
        let mut read = Vec::with_capacity(entries.len());
        let mut header = [0u8; MAX_ENTRY_HEADER_LEN];
        for (i, entry) in entries.iter().enumerate() {
            let next = entries.get(i + 1).map_or(end, |e| e.offset);
            let len = (next - entry.offset).min(MAX_ENTRY_HEADER_LEN as u64) as usize;
            file.read_exact_at(&mut header[..len], entry.offset)?;
            let parsed = parse_entry_header(&header[..len], entry.offset, hash)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            read.push(SourceEntry {
                id: entry.id,
                offset: entry.offset,
                data: (entry.offset + parsed.header_len as u64, next),
                kind: parsed.kind,
                size: parsed.size,
            });
        }
        let by_id = read.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
        Ok(Source {
            file,
            entries: read,
            by_id,
        })
    }

    /// The entry a delta's base is, if it is in the pack.
    fn base_of(&self, i: usize) -> Option<usize> {
        let entry = &self.entries[i];
        match entry.kind {
            EntryKind::Base(_) => None,
            EntryKind::OfsDelta { distance } => {
                let at = entry.offset - distance;
                self.entries.binary_search_by_key(&at, |e| e.offset).ok()
            }
            EntryKind::RefDelta { base } => self.by_id.get(&base).copied(),
        }
    }
}

/// How an entry goes into its pack.
enum Form {
    /// Its data as stored, under this header (an ofs-delta's distance measured anew).
    AsStored(EntryKind),
    /// A delta whose base went into an earlier pack, whole: its kind, size and data deflated.
    Whole(ObjectKind, u64, Vec<u8>),
}

struct Planned {
    entry: usize,
    form: Form,
}

/// The cutting under way: which pack each entry went into, and where.
struct Cut<'a> {
    odb: &'a ObjectDb,
    source: &'a Source<'a>,
    options: &'a CutOptions<'a>,
    pack_of: Vec<u32>,
    new_offset: Vec<u64>,
    made_whole: u32,
}

impl Cut<'_> {
    /// The entries of pack number `pack`, from entry `start` on, and the first entry of the
    /// next pack. The deltas made whole are held until the pack is written: in memory, at
    /// most about the limit.
    fn plan(&mut self, start: usize, pack: u32) -> Result<(Vec<Planned>, usize), RepackError> {
        let trailer = self.odb.hash().len_in_bytes() as u64;
        let mut offset = PACK_HEADER_LEN as u64;
        let mut planned: Vec<Planned> = Vec::new();
        let mut i = start;
        while i < self.source.entries.len() {
            self.options.cancel.check().map_err(GenerateError::from)?;
            let entry = &self.source.entries[i];
            let form = match self.source.base_of(i) {
                Some(base) if self.pack_of[base] == pack => {
                    kept_delta(entry.kind, offset - self.new_offset[base])
                }
                None if matches!(entry.kind, EntryKind::Base(_)) => Form::AsStored(entry.kind),
                // Its base is in an earlier pack (or, in a thin pack, none).
                _ => self.whole(entry.id)?,
            };
            let len = match &form {
                Form::AsStored(kind) => header_len(*kind, entry.size) + entry.data.1 - entry.data.0,
                Form::Whole(kind, size, data) => {
                    header_len(EntryKind::Base(*kind), *size) + data.len() as u64
                }
            };
            if !planned.is_empty() && offset + len + trailer >= self.options.limit {
                break;
            }
            self.pack_of[i] = pack;
            self.new_offset[i] = offset;
            offset += len;
            planned.push(Planned { entry: i, form });
            i += 1;
        }
        Ok((planned, i))
    }

    fn whole(&mut self, id: ObjectId) -> Result<Form, RepackError> {
        let (kind, data) = (self.odb.read(&id))
            .map_err(GenerateError::from)?
            .ok_or(GenerateError::MissingObject(id))?;
        let compressed = deflate(&data, self.options.compression);
        Ok(Form::Whole(kind, data.len() as u64, compressed))
    }

    /// Writes `planned` as one pack into `staged`; returns its checksum and index entries.
    fn write(
        &self,
        planned: &[Planned],
        staged: &Staged,
    ) -> Result<(ObjectId, Vec<IdxEntry>), GenerateError> {
        let out = std::io::BufWriter::with_capacity(1 << 20, staged.file());
        let count = planned.len() as u32;
        let mut writer = PackWriter::new(out, self.odb.hash(), count)?;
        let mut entries = Vec::with_capacity(planned.len());
        let mut data = Vec::new();
        for planned in planned {
            let entry = &self.source.entries[planned.entry];
            let written = match &planned.form {
                Form::AsStored(kind) => {
                    let (from, to) = entry.data;
                    data.resize((to - from) as usize, 0);
                    self.source.file.read_exact_at(&mut data, from)?;
                    writer.write_entry(*kind, entry.size, &data)?
                }
                Form::Whole(kind, size, compressed) => {
                    writer.write_entry(EntryKind::Base(*kind), *size, compressed)?
                }
            };
            debug_assert_eq!(written.offset, self.new_offset[planned.entry]);
            entries.push(IdxEntry {
                id: entry.id,
                crc32: written.crc32,
                offset: written.offset,
            });
        }
        let (out, checksum) = writer.finish()?;
        out.into_inner().map_err(|e| e.into_error())?;
        Ok((checksum, entries))
    }
}

/// A delta kept as a delta, its base `distance` bytes before it in the new pack.
fn kept_delta(kind: EntryKind, distance: u64) -> Form {
    match kind {
        EntryKind::OfsDelta { .. } => Form::AsStored(EntryKind::OfsDelta { distance }),
        other => Form::AsStored(other),
    }
}

/// The length of an entry's header.
fn header_len(kind: EntryKind, size: u64) -> u64 {
    let mut header = Vec::with_capacity(MAX_ENTRY_HEADER_LEN);
    write_entry_header(kind.pack_type(), size, &mut header);
    match kind {
        EntryKind::Base(_) => {}
        EntryKind::OfsDelta { distance } => write_ofs_distance(distance, &mut header),
        EntryKind::RefDelta { base } => header.extend_from_slice(base.as_bytes()),
    }
    header.len() as u64
}
