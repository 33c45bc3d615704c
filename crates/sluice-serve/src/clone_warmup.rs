//! After a push to `sluice serve`: what a full clone's tips now reach and the checksum of the
//! pack it gets, computed in the background into the server's memory. A full clone after a
//! push is the big pack copied whole plus what the pushes brought, and its one costly step is the SHA-1 of every byte
//! (318 MB for git/git, twice the rest of the clone): with the checksum remembered, the first
//! clone after the push is copied without hashing, as every later one is. Bounded: nothing is
//! done for repositories whose packs pass [`WARM_LIMIT`], one warm-up at a time per
//! repository, and a push during one asks for one more afterwards; nothing where counting has
//! no bitmap to start from.

use crate::advertise::{hidden_by, hide_patterns};
use crate::{ServeError, ServerMemory};
use sluice_generate::{write_pack_remembered, PackOptions};
use sluice_graph::{walk_objects, ObjectFilter, WalkRequest};
use sluice_object::progress::Discard;
use sluice_object::IdSet;
use sluice_repo::Repository;
use std::path::Path;
use std::sync::Arc;

/// The most pack bytes a warm-up hashes (about half a second of SHA-1 on one core).
pub const WARM_LIMIT: u64 = 1 << 30;

/// Starts (or asks again for) the warm-up of the repository at `git_dir`.
pub(crate) fn after_push(git_dir: &Path, memory: &Arc<ServerMemory>) {
    let dir = git_dir.to_owned();
    {
        let mut warming = memory.warming.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(again) = warming.get_mut(&dir) {
            *again = true;
            return;
        }
        warming.insert(dir.clone(), false);
    }
    let memory = Arc::clone(memory);
    std::thread::spawn(move || loop {
        // A failure only means the first clone hashes its pack itself.
        let _ = warm(&dir, &memory);
        let mut warming = memory.warming.lock().unwrap_or_else(|e| e.into_inner());
        match warming.get_mut(&dir) {
            Some(again) if *again => *again = false,
            _ => {
                warming.remove(&dir);
                return;
            }
        }
    });
}

/// Writes, into nothing, the pack a full clone of `dir` gets (every branch and tag, and
/// `HEAD`, as `git clone` asks), so that its checksum lands in `memo`.
fn warm(dir: &Path, memory: &ServerMemory) -> Result<(), ServeError> {
    let repo = Repository::open_served(dir, false)?;
    let odb = repo.objects();
    let bytes: u64 = odb.packs().iter().map(|p| p.len()).sum();
    // A shallow repository's clones stop at its boundary: not the walk made here. Without a
    // bitmap the warm-up would walk the whole history (3.5 s of CPU for git/git, after a
    // push of it into an empty repository) to save the next clone a fraction of that.
    if bytes > WARM_LIMIT
        || !repo.shallow_commits()?.is_empty()
        || !sluice_graph::bitmap::counts_with_bitmap(odb)
    {
        return Ok(());
    }
    let hide = hide_patterns(repo.config(), "uploadpack");
    let mut wants: Vec<_> = (repo.refs().list()?.into_iter())
        .filter(|(name, _)| name.starts_with("refs/heads/") || name.starts_with("refs/tags/"))
        .filter(|(name, _)| !hidden_by(&hide, name))
        .map(|(_, id)| id)
        .collect();
    wants.extend(repo.refs().resolve("HEAD").ok().and_then(|(_, id)| id));
    wants.sort_unstable();
    wants.dedup();
    let request = WalkRequest {
        wants: &wants,
        haves: &[],
        shallow: &IdSet::default(),
        filter: ObjectFilter::None,
        reach_memo: Some(&memory.reaches),
        cores: sluice_graph::WalkCores::One,
        // A request runs to its end: a client that leaves fails the next write.
        missing: Default::default(),
        cancel: Default::default(),
    };
    let walked = walk_objects(odb, &request, &Discard)?;
    let options = PackOptions {
        thin: true,
        ofs_delta: true,
        compression: PackOptions::compression_of(repo.config())?,
        show_writing: false,
        window_search: None,
        cancel: Default::default(),
        islands: None,
        allow_pack_reuse: PackOptions::allow_pack_reuse_of(repo.config())?,
        // A pack served says nothing of its search.
        threads: 0,
    };
    let memo = &*memory.checksums;
    write_pack_remembered(odb, &walked, &options, memo, std::io::sink(), &Discard)?;
    Ok(())
}
