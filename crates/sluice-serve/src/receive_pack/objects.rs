//! The objects of a push: the pack received into a quarantine, completed with the repository's
//! bases when thin, judged by fsck when `receive.fsckObjects` (else `transfer.fsckObjects`)
//! asks, bounded by `receive.maxInputSize`, and accepted only when every link leaving it is in
//! the repository. Its objects enter the repository when the quarantine is migrated, once the
//! pre-receive hook has accepted them.

use super::Request;
use crate::remote_progress::LiveLines;
use sluice_object::progress::{Progress, ProgressSink, TextProgress};
use sluice_odb::fsck::{Checker, Severity};
use sluice_odb::pack_store::{self, links_present, Destination, StoreError, StoreOptions, Stored};
use sluice_odb::quarantine::Quarantine;
use sluice_pack::{IndexOptions, LinkCheck, PackIndexer};
use sluice_repo::receive::UnpackError;
use sluice_repo::Repository;
use sluice_wire::sideband::{Band, Sideband};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// Receives and checks the pack that follows the commands, into a quarantine; with the
/// warnings fsck found (`receive.fsck.<id>=warn`), for the client in git's words.
/// `band`, where the client took a side band and did not ask for quiet, is where the progress
/// of the deltas' resolution goes while it runs.
pub(super) fn receive_objects(
    repo: &Repository,
    input: &mut dyn Read,
    request: &Request,
    band: Option<&mut (dyn Write + Send)>,
) -> Result<(Quarantine, Vec<String>), UnpackFailure> {
    let config = repo.config();
    let quarantine = Quarantine::create(repo.objects().dir()).map_err(UnpackFailure::plain)?;
    let store = StoreOptions::from_config(config, repo.hash()).map_err(UnpackFailure::plain)?;
    let limit = pack_store::unpack_limit(config, "receive").map_err(UnpackFailure::plain)?;
    let checker = match Checker::for_transfer(config, "receive", repo.hash()) {
        Ok(checker) => checker,
        // A skip list that cannot be read fails the unpacker git would have run.
        Err(error) => {
            let mut header = [0u8; 12];
            let _ = input.read_exact(&mut header);
            return Err(UnpackFailure {
                status: format!("{} abnormal exit", unpacker(limit, &header)),
                messages: vec![format!("fatal: {error}")],
            });
        }
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
        // A shallow client's history stops at its cut: the parents there are no links.
        links: Some(LinkCheck {
            tips,
            shallow: request.shallow.clone(),
        }),
        ..store.index.clone()
    };
    let silenced = Arc::new(AtomicBool::new(false));
    let mut counted = Counted {
        input,
        read: 0,
        header: [0; 12],
        small: (limit, Arc::clone(&silenced)),
    };
    let received = std::thread::scope(|scope| {
        // As git's receive-pack runs index-pack for a client that takes a side band and did
        // not ask for quiet: its "Resolving deltas" goes to the client as it runs. The lines
        // reach the side band through a thread of their own; an empty one ends it.
        let (lines, relayed) = std::sync::mpsc::channel::<Vec<u8>>();
        let end = lines.clone();
        let sink = band.map(|out| {
            scope.spawn(move || {
                let band = Sideband::new(out, 65515);
                for text in relayed.iter().take_while(|text| !text.is_empty()) {
                    if band.send(Band::Progress, &text).is_err() {
                        break;
                    }
                }
            });
            let titles = &["Resolving deltas"];
            Box::new(LiveLines::new(titles, lines, Arc::clone(&silenced))) as Box<dyn ProgressSink>
        });
        let progress = TextProgress::new(sink);
        let into = (&store, &quarantine);
        let received = receive(
            repo,
            &mut counted,
            into,
            options,
            &progress,
            checker.as_ref(),
        );
        let _ = end.send(Vec::new());
        received
    });
    let tool = unpacker(limit, &counted.header);
    let small = tool == "unpack-objects";
    let stored = match received {
        Ok(stored) => stored,
        Err(error) => {
            // The status names the program git would have run.
            let mut messages: Vec<String> = (checker.iter())
                .flat_map(|c| c.findings())
                .filter(|f| f.severity == Severity::Error)
                .map(|f| format!("error: {f}"))
                .collect();
            // In the words of that program.
            match small {
                true => messages.push(format!("fatal: {}", UnpackError::from(error))),
                false => messages.push(format!("fatal: {error}")),
            }
            return Err(UnpackFailure {
                status: format!("{tool} abnormal exit"),
                messages,
            });
        }
    };
    if small {
        explode(repo, &quarantine, &stored.pack).map_err(UnpackFailure::plain)?;
    }
    let said = (checker.iter())
        .flat_map(|c| c.findings())
        .filter(|f| matches!(f.severity, Severity::Warn | Severity::Info))
        .map(|f| format!("warning: {f}"))
        .collect();
    Ok((quarantine, said))
}

/// The pack read from `input` into the quarantine, indexed with `options` (the repository's
/// objects as bases for a thin pack) and checked by `checker`; `progress` shows its phases.
fn receive(
    repo: &Repository,
    input: &mut dyn Read,
    (store, quarantine): (&StoreOptions, &Quarantine),
    options: IndexOptions,
    progress: &dyn Progress,
    checker: Option<&Checker>,
) -> Result<Stored, StoreError> {
    let objects = repo.objects();
    let mut indexer = PackIndexer::new(options).lookup(objects).progress(progress);
    if let Some(checker) = checker {
        indexer = indexer.check(checker);
    }
    let check = links_present(objects, StoreError::NotReceived);
    let none = Destination::default();
    pack_store::receive(
        input,
        quarantine.dir(),
        &none,
        &indexer,
        store,
        None,
        &check,
    )
}

/// The program git runs for a pack with this header: unpack-objects for fewer than
/// `receive.unpackLimit` objects (else `transfer.unpackLimit`, 100), index-pack for more.
fn unpacker(limit: i64, header: &[u8; 12]) -> &'static str {
    let count = u32::from_be_bytes([header[8], header[9], header[10], header[11]]);
    match limit > 0 && i64::from(count) < limit {
        true => "unpack-objects",
        false => "index-pack",
    }
}

/// Why a small pack could not be stored as loose objects.
#[derive(Debug, thiserror::Error)]
enum ExplodeError {
    /// `core.looseCompression` (or `core.compression`) is not a level.
    #[error(transparent)]
    Config(#[from] sluice_odb::ConfigError),
    /// An object of the pack could not be read or written.
    #[error(transparent)]
    Objects(#[from] sluice_odb::OdbError),
}

/// Stores a small pack as loose objects of the quarantine (but those the repository has) and
/// removes it, as git's unpack-objects stores a small push.
fn explode(
    repo: &Repository,
    quarantine: &Quarantine,
    pack_path: &std::path::Path,
) -> Result<(), ExplodeError> {
    let level = pack_store::loose_compression(repo.config())?;
    let had = |id: &sluice_object::ObjectId| repo.objects().contains(id);
    pack_store::unpack_to_loose(pack_path, quarantine.dir(), repo.hash(), level, &had)?;
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
    /// `receive.unpackLimit`, and what is set once the header shows a pack under it: git's
    /// unpack-objects, which it runs for such a pack, shows no progress to a pipe.
    small: (i64, Arc<AtomicBool>),
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.input.read(buf)?;
        if self.read < 12 {
            let take = n.min(12 - self.read);
            self.header[self.read..self.read + take].copy_from_slice(&buf[..take]);
            if self.read + take == 12 {
                let (limit, small) = &self.small;
                let under = unpacker(*limit, &self.header) == "unpack-objects";
                small.store(under, Ordering::Relaxed);
            }
        }
        self.read += n;
        Ok(n)
    }
}
