//! Receiving a fetched pack into the repository, as `index-pack --stdin --fix-thin` stores it,
//! and checking that it and the repository hold everything the new tips reach; or, for a small
//! pack, writing its new objects loose as `unpack-objects` would.

use sluice_object::progress::Progress;
use sluice_object::ObjectId;
use sluice_odb::fsck::{Checker, Finding, FsckError, Severity};
use sluice_odb::pack_store::{self, StoreError};
use sluice_odb::{ConfigError, OdbError, Pack};
use sluice_pack::{IndexError, LinkCheck};
use sluice_remote::{Connection, FetchError, FetchRequest, Negotiator, RemoteRef};
use sluice_repo::receive::receive_into;
pub use sluice_repo::receive::Receiving;
use sluice_repo::{RepoError, Repository};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// Why a fetched pack could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum ReceiveError {
    /// The server failed, or sent what the protocol does not allow.
    // Not transparent: the FetchError stays in the chain of causes, where the binary
    // finds what the server said.
    #[error("{0}")]
    Fetch(#[from] FetchError),
    /// The pack is bad, not connected, or could not be written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The repository's shallow file could not be read.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// The object database failed.
    #[error(transparent)]
    Odb(#[from] OdbError),
    /// A setting has a value of the wrong type.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// fsck (`fetch.fsckObjects`, `transfer.fsckObjects`) refused an object; nothing was
    /// stored.
    #[error("fsck error in packed object: {0}")]
    Fsck(Finding),
    /// The fsck settings are bad.
    #[error(transparent)]
    FsckSettings(#[from] FsckError),
    /// The pack lacks a wanted object; the pack was removed.
    #[error("remote did not send all necessary objects ({missing} is missing)")]
    Incomplete {
        /// The first wanted object that is not there.
        missing: ObjectId,
    },
}

/// A pack received into the repository.
#[derive(Debug)]
pub struct Received {
    /// The `.pack` file (its `.idx`, `.rev` and `.keep` beside it).
    pub pack: PathBuf,
    /// index-pack's report line.
    pub report: String,
    /// Commits the server made shallow.
    pub shallow: Vec<ObjectId>,
    /// Commits the server made whole.
    pub unshallow: Vec<ObjectId>,
    /// Where the server's own history is cut (see `remote_shallow`).
    pub remote_shallow: Vec<ObjectId>,
    /// What fsck (`fetch.fsckObjects`) found that did not refuse the pack: git's index-pack
    /// prints these as warnings.
    pub fsck_warnings: Vec<Finding>,
}

impl Received {
    /// Marks the pack as the promisor remote's, as git does for a partial clone's packs: a
    /// `.promisor` file beside it listing `refs` (what the pack was fetched for; none for a
    /// fetch's or a lazy fetch's pack), `<id> <name>` a line.
    pub fn mark_promisor(&self, refs: &[RemoteRef]) -> Result<(), ReceiveError> {
        let text: String = refs
            .iter()
            .map(|r| format!("{} {}\n", r.id, r.name))
            .collect();
        Ok(sluice_odb::pack_store::write_beside(
            &self.pack, "promisor", &text,
        )?)
    }

    /// Removes the pack and everything written beside it.
    pub fn remove(&self) {
        for extension in ["pack", "idx", "rev", "keep", "promisor"] {
            let _ = std::fs::remove_file(self.pack.with_extension(extension));
        }
    }
}

/// A fetched pack's progress as git shows it: index-pack's ("Receiving objects", "Resolving
/// deltas"), or, for a pack that will be unpacked (fewer objects than `fetch.unpackLimit`), unpack-objects': "Unpacking objects"
/// with its throughput, where unpack-objects shows it (git passes it no `--progress`: on a
/// terminal only), and no deltas resolved.
pub struct PackProgress<'a> {
    indexing: &'a dyn Progress,
    /// Below how many objects a pack is unpacked, and where that is shown.
    unpacking: Option<(u64, &'a dyn Progress)>,
    /// Where the current phase goes: [`Self::INDEXING`], [`Self::UNPACKING`] or
    /// [`Self::UNSEEN`].
    now: AtomicU8,
    /// Objects of the current phase not counted yet: bytes after the last are the pack's
    /// trailer, which index-pack counts and unpack-objects does not.
    left: AtomicU64,
}

impl<'a> PackProgress<'a> {
    const INDEXING: u8 = 0;
    const UNPACKING: u8 = 1;
    const UNSEEN: u8 = 2;

    /// index-pack's progress on `shown`, whatever the pack.
    pub fn indexing(shown: &'a dyn Progress) -> Self {
        PackProgress {
            indexing: shown,
            unpacking: None,
            now: AtomicU8::new(Self::INDEXING),
            left: AtomicU64::new(u64::MAX),
        }
    }

    /// index-pack's progress on `indexing`, but unpack-objects' on `unpacking` for a pack of
    /// fewer than `limit` objects.
    pub fn unpacking_below(
        limit: u64,
        indexing: &'a dyn Progress,
        unpacking: &'a dyn Progress,
    ) -> Self {
        PackProgress {
            unpacking: Some((limit, unpacking)),
            ..PackProgress::indexing(indexing)
        }
    }

    fn current(&self) -> Option<&dyn Progress> {
        match (self.now.load(Ordering::Relaxed), self.unpacking) {
            (Self::INDEXING, _) => Some(self.indexing),
            (Self::UNPACKING, Some((_, unpacking))) => Some(unpacking),
            _ => None,
        }
    }
}

impl Progress for PackProgress<'_> {
    fn phase(&self, title: &str, total: Option<u64>) {
        let small = |(limit, _): (u64, _)| total.is_some_and(|n| n < limit);
        let unpacked = self.now.load(Ordering::Relaxed) != Self::INDEXING;
        let (now, shown_as) = match title {
            "Receiving objects" if self.unpacking.is_some_and(small) => {
                (Self::UNPACKING, "Unpacking objects")
            }
            // unpack-objects resolves its deltas as it goes, unseen.
            "Resolving deltas" if unpacked => (Self::UNSEEN, title),
            _ => (Self::INDEXING, title),
        };
        self.now.store(now, Ordering::Relaxed);
        self.left
            .store(total.unwrap_or(u64::MAX), Ordering::Relaxed);
        if let Some(progress) = self.current() {
            progress.phase(shown_as, total);
        }
    }
    fn add(&self, count: u64) {
        let _ = (self.left).fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            Some(left.saturating_sub(count))
        });
        if let Some(progress) = self.current() {
            progress.add(count);
        }
    }
    fn add_bytes(&self, bytes: u64) {
        let unpacking = self.now.load(Ordering::Relaxed) == Self::UNPACKING;
        if unpacking && self.left.load(Ordering::Relaxed) == 0 {
            return;
        }
        if let Some(progress) = self.current() {
            progress.add_bytes(bytes);
        }
    }
    fn finish(&self) {
        if let Some(progress) = self.current() {
            progress.finish();
        }
    }
    fn finish_with(&self, ending: &str) {
        if let Some(progress) = self.current() {
            progress.finish_with(ending);
        }
    }
}

/// Fetches `request` (haves from `negotiator`, band 2 to `remote_progress`) into `repo`, then
/// checks that every wanted object arrived; a pack that lacks one is removed.
pub fn fetch_into<'a, F: FnMut(&[u8]) + 'a>(
    connection: &'a mut Connection,
    repo: &Repository,
    request: &FetchRequest,
    negotiator: &mut dyn Negotiator,
    mut receiving: Receiving<'_>,
    remote_progress: F,
) -> Result<Received, ReceiveError> {
    let cancel = connection.cancel().clone();
    let fetched = connection.fetch(request, negotiator, remote_progress)?;
    let (shallow, unshallow, remote_shallow) =
        (fetched.shallow, fetched.unshallow, fetched.remote_shallow);
    // As git: every tip must be complete. The objects a filtered (promisor) pack leaves out are
    // the promisor remote's to give later, so only its tips must be there.
    if request.filter.is_none() {
        let mut cut: Vec<ObjectId> = repo.shallow_commits()?;
        cut.extend(&request.shallow);
        cut.extend(&shallow);
        // A shallow server's own cut: its commits there come without parents.
        cut.extend(&remote_shallow);
        cut.retain(|id| !unshallow.contains(id));
        receiving.connectivity = Some(LinkCheck {
            tips: request.wants.clone(),
            shallow: cut,
        });
    }
    let checker = Checker::for_transfer(repo.config(), "fetch", repo.hash())?;
    let receiving = Receiving {
        fsck: checker.as_ref().map(|c| c as _),
        cancel,
        ..receiving
    };
    let mut pack = fetched.pack;
    let stored = receive_into(&mut pack, repo, receiving).map_err(|error| {
        let refused = checker.as_ref().and_then(|checker| {
            let findings = checker.findings();
            findings.into_iter().find(|f| f.severity == Severity::Error)
        });
        match (error, refused) {
            (
                StoreError::Index(IndexError::Refused { .. } | IndexError::RefusedAtEnd { .. }),
                Some(finding),
            ) => ReceiveError::Fsck(finding),
            (error, _) => error.into(),
        }
    })?;
    drop(pack);
    let received = Received {
        report: stored.to_string(),
        pack: stored.pack,
        shallow,
        unshallow,
        remote_shallow,
        fsck_warnings: checker.map(|c| c.findings()).unwrap_or_default(),
    };
    let odb = repo.objects();
    if let Some(&missing) = request.wants.iter().find(|id| !odb.contains(id)) {
        received.remove();
        return Err(ReceiveError::Incomplete { missing });
    }
    Ok(received)
}

/// Writes a received pack of fewer than `limit` objects (the fetch's `fetch.unpackLimit`, else
/// `transfer.unpackLimit`) as loose objects and removes the pack, as git does, but for the
/// objects the repository holds outside this pack (its own, or delta bases a partial clone
/// fetched for this pack). Returns whether it did.
pub fn unpack_if_small(
    received: &Received,
    repo: &Repository,
    limit: u64,
) -> Result<bool, ReceiveError> {
    let config = repo.config();
    let count = match Pack::open(&received.pack.with_extension("idx"), repo.hash()) {
        Ok(pack) => pack.index().len(),
        // Another fetch received the same pack (the same name) at the same time and unpacked
        // it first: its objects are loose already, written before it removed the pack. (What
        // is still missing, the checks after the fetch find.)
        Err(sluice_odb::OdbError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(true);
        }
        Err(error) => return Err(error.into()),
    };
    if count as u64 >= limit {
        return Ok(false);
    }
    // What the repository had besides this pack is not written again, as git's unpack-objects
    // does not write it.
    let had = repo.objects().without_pack(&received.pack);
    pack_store::unpack_to_loose(
        &received.pack,
        had.dir(),
        repo.hash(),
        pack_store::loose_compression(config)?,
        &|id| had.contains(id),
    )?;
    received.remove();
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::{unpack_if_small, Received};

    /// A pack another fetch unpacked and removed under this one (the same pack, the same
    /// name) is taken as unpacked, not as a failed fetch.
    #[test]
    fn a_pack_another_fetch_unpacked_first_is_taken_as_unpacked() {
        let dir = tempfile::tempdir().unwrap();
        let init = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir.path())
            .status()
            .unwrap();
        assert!(init.success());
        let repo = sluice_repo::Repository::open_work_tree(dir.path()).unwrap();
        let gone = repo
            .objects()
            .pack_dir()
            .join(format!("pack-{}.pack", "1".repeat(40)));
        let received = Received {
            pack: gone,
            report: String::new(),
            shallow: Vec::new(),
            unshallow: Vec::new(),
            remote_shallow: Vec::new(),
            fsck_warnings: Vec::new(),
        };
        assert!(unpack_if_small(&received, &repo, 100).unwrap());
    }
}
