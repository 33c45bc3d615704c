//! The objects of a push: the pack received into a quarantine, completed with the repository's
//! bases when thin, judged by fsck when `receive.fsckObjects` (else `transfer.fsckObjects`)
//! asks, bounded by `receive.maxInputSize`, and accepted only when every link leaving it is in
//! the repository. Its objects enter the repository when the quarantine is migrated, once the
//! pre-receive hook has accepted them.

use super::Request;
use sluice_odb::fsck::{Checker, FsckOptions, Severity};
use sluice_odb::pack_store::{self, links_present, Destination, StoreError, StoreOptions};
use sluice_odb::quarantine::Quarantine;
use sluice_odb::{LooseObjects, Pack, Repository};
use sluice_pack::{IndexOptions, LinkCheck, PackIndexer};
use std::io::Read;

/// Why the objects were refused: git's unpack status for the client, and the lines for its
/// standard error.
#[derive(Debug, Clone)]
pub(super) struct UnpackFailure {
    pub(super) status: String,
    pub(super) messages: Vec<String>,
}

impl UnpackFailure {
    fn plain(error: impl std::fmt::Display) -> UnpackFailure {
        UnpackFailure {
            status: error.to_string(),
            messages: vec![format!("error: {error}")],
        }
    }
}

/// Receives and checks the pack that follows the commands, into a quarantine.
pub(super) fn receive_objects(
    repo: &Repository,
    input: &mut dyn Read,
    request: &Request,
) -> Result<Quarantine, UnpackFailure> {
    let config = repo.config();
    let quarantine = Quarantine::create(repo.objects().dir()).map_err(UnpackFailure::plain)?;
    let store = StoreOptions::from_config(config, repo.hash()).map_err(UnpackFailure::plain)?;
    let fsck_on = match config.get_bool("receive.fsckobjects") {
        Ok(Some(on)) => on,
        _ => matches!(config.get_bool("transfer.fsckobjects"), Ok(Some(true))),
    };
    let checker = match fsck_on {
        true => {
            let options = FsckOptions::from_config(config, "receive.", repo.hash())
                .map_err(UnpackFailure::plain)?;
            Some(Checker::new(repo.hash(), options))
        }
        false => None,
    };
    let tips = (request.commands.iter())
        .filter(|c| !c.new.is_null())
        .map(|c| c.new)
        .collect();
    let max_input_size = match config.get_int("receive.maxinputsize") {
        Ok(Some(n)) if n > 0 => Some(n as u64),
        _ => None,
    };
    let options = IndexOptions {
        fix_thin: true,
        stream_stays_open: true,
        max_input_size,
        links: Some(LinkCheck {
            tips,
            shallow: Vec::new(),
        }),
        ..store.index.clone()
    };
    let objects = repo.objects();
    let mut indexer = PackIndexer::new(options).lookup(objects);
    if let Some(checker) = &checker {
        indexer = indexer.check(checker);
    }
    let check = links_present(objects, StoreError::NotReceived);
    let mut counted = Counted {
        input,
        read: 0,
        header: [0; 12],
    };
    let received = pack_store::receive(
        &mut counted,
        quarantine.dir(),
        &Destination::default(),
        &indexer,
        &store,
        None,
        &check,
    );
    // git runs unpack-objects for a pack of fewer than receive.unpackLimit objects (else
    // transfer.unpackLimit, 100) and index-pack for a larger one.
    let limit = (config.get_int("receive.unpacklimit").ok().flatten())
        .or_else(|| config.get_int("transfer.unpacklimit").ok().flatten())
        .unwrap_or(100);
    let header = counted.header;
    let count = u32::from_be_bytes([header[8], header[9], header[10], header[11]]);
    let small = limit > 0 && i64::from(count) < limit;
    let stored = match received {
        Ok(stored) => stored,
        Err(error) => {
            // The status names the program git would have run.
            let tool = if small {
                "unpack-objects"
            } else {
                "index-pack"
            };
            let mut messages: Vec<String> = (checker.iter())
                .flat_map(|c| c.findings())
                .filter(|f| f.severity == Severity::Error)
                .map(|f| format!("error: {f}"))
                .collect();
            messages.push(format!("fatal: {error}"));
            return Err(UnpackFailure {
                status: format!("{tool} abnormal exit"),
                messages,
            });
        }
    };
    if small {
        explode(repo, &quarantine, &stored.pack).map_err(UnpackFailure::plain)?;
    }
    Ok(quarantine)
}

/// Writes a small pack's objects as loose objects of the quarantine, but those the repository
/// has, and removes the pack, as git's unpack-objects stores a small push.
fn explode(
    repo: &Repository,
    quarantine: &Quarantine,
    pack_path: &std::path::Path,
) -> Result<(), sluice_odb::OdbError> {
    let pack = Pack::open(&pack_path.with_extension("idx"), repo.hash())?;
    let loose = LooseObjects::new(quarantine.dir(), repo.hash());
    let level = match repo.config().get_int("core.loosecompression") {
        Ok(Some(level)) => level.clamp(0, 9) as u32,
        _ => 1,
    };
    for position in 0..pack.index().len() {
        if repo.objects().contains(&pack.index().id(position)) {
            continue;
        }
        let (kind, data) = pack.read_position(position)?;
        loose.write(kind, &data, level)?;
    }
    drop(pack);
    for extension in ["pack", "idx", "rev"] {
        let _ = std::fs::remove_file(pack_path.with_extension(extension));
    }
    Ok(())
}

/// The push's input, keeping the pack's header (its object count) as it passes.
struct Counted<'a> {
    input: &'a mut dyn Read,
    read: usize,
    header: [u8; 12],
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.input.read(buf)?;
        if self.read < 12 {
            let take = n.min(12 - self.read);
            self.header[self.read..self.read + take].copy_from_slice(&buf[..take]);
        }
        self.read += n;
        Ok(n)
    }
}
