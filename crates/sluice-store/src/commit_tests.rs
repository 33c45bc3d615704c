//! The manifest's commit against faults: a store whose reply to a write is lost after the
//! write landed, one where another writer wins between the read and the write, and one that
//! fails outright. In-memory store (object_store's), wrapped to inject each fault.

use crate::manifest::Manifest;
use crate::{Bucket, StoreError, StoredRepo};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// What the next conditional write of the manifest meets.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    /// Nothing.
    None,
    /// The write lands; its reply is lost (a timeout).
    LostReply,
    /// Another writer's manifest lands first.
    Overtaken,
    /// The store fails without writing (a 500).
    Fails,
    /// The write is refused as a conflict (S3's 409 ConditionalRequestConflict) without
    /// another writer having won.
    Conflict409,
    /// The write lands after a delay.
    Latency,
    /// No answer before the client gives up, and nothing written.
    Timeout,
}

#[derive(Debug)]
struct Faulty {
    inner: InMemory,
    fault: std::sync::Mutex<Fault>,
    /// How many more writes meet the fault.
    times: AtomicU32,
}

impl std::fmt::Display for Faulty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Faulty({})", self.inner)
    }
}

fn failure() -> object_store::Error {
    object_store::Error::Generic {
        store: "faulty",
        source: "injected".into(),
    }
}

#[async_trait::async_trait]
impl ObjectStore for Faulty {
    async fn put_opts(
        &self,
        key: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        let conditional = !matches!(opts.mode, object_store::PutMode::Overwrite);
        let fault = *self.fault.lock().unwrap();
        let armed = conditional && self.times.load(Ordering::SeqCst) > 0;
        if !armed || fault == Fault::None {
            return self.inner.put_opts(key, payload, opts).await;
        }
        self.times.fetch_sub(1, Ordering::SeqCst);
        match fault {
            Fault::LostReply => {
                self.inner.put_opts(key, payload, opts).await?;
                Err(failure())
            }
            Fault::Overtaken => {
                let current = self.inner.get(key).await?.bytes().await?;
                let mut other = Manifest::parse(&current, sluice_object::HashKind::Sha1).unwrap();
                other.generation += 1;
                other.transaction = "someone-else".to_owned();
                self.inner.put(key, PutPayload::from(other.write())).await?;
                self.inner.put_opts(key, payload, opts).await
            }
            Fault::Conflict409 => Err(object_store::Error::AlreadyExists {
                path: key.to_string(),
                source: "409 ConditionalRequestConflict".into(),
            }),
            Fault::Latency => {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                self.inner.put_opts(key, payload, opts).await
            }
            Fault::Timeout => {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                Err(object_store::Error::Generic {
                    store: "faulty",
                    source: "operation timed out".into(),
                })
            }
            Fault::Fails | Fault::None => Err(failure()),
        }
    }

    async fn put_multipart_opts(
        &self,
        key: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(key, opts).await
    }

    async fn get_opts(&self, key: &Path, options: GetOptions) -> Result<GetResult> {
        self.inner.get_opts(key, options).await
    }

    async fn delete(&self, key: &Path) -> Result<()> {
        self.inner.delete(key).await
    }

    fn list(
        &self,
        prefix: Option<&Path>,
    ) -> futures_util::stream::BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.copy(from, to).await
    }

    async fn copy_if_not_exists(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.copy_if_not_exists(from, to).await
    }
}

/// A repository with one ref in a faulty store, and the store to arm.
fn repository() -> (StoredRepo, Arc<Faulty>) {
    let store = Arc::new(Faulty {
        inner: InMemory::new(),
        fault: std::sync::Mutex::new(Fault::None),
        times: AtomicU32::new(0),
    });
    let bucket = Bucket::with_store(Arc::clone(&store) as Arc<dyn ObjectStore>, "prefix").unwrap();
    let repo = StoredRepo::new(&bucket, "project").unwrap();
    repo.create(Manifest {
        head: "refs/heads/main".to_owned(),
        ..Manifest::default()
    })
    .unwrap();
    (repo, store)
}

fn arm(store: &Faulty, fault: Fault, times: u32) {
    *store.fault.lock().unwrap() = fault;
    store.times.store(times, Ordering::SeqCst);
}

/// Adds the ref `name` (to the id of all `n`s).
fn add_ref(repo: &StoredRepo, name: &str, n: u8) -> std::result::Result<Manifest, StoreError> {
    let id = sluice_object::ObjectId::from_bytes(sluice_object::HashKind::Sha1, &[n; 20]).unwrap();
    let committed = repo.commit(|current| {
        let mut next = current.clone();
        next.refs.insert(name.to_owned(), id);
        Ok::<_, ()>(next)
    })?;
    Ok(committed.unwrap())
}

#[test]
fn a_write_whose_reply_was_lost_is_found_and_not_repeated() {
    let (repo, store) = repository();
    arm(&store, Fault::LostReply, 1);
    let written = add_ref(&repo, "refs/heads/main", 1).unwrap();
    let now = repo.read().unwrap().unwrap().manifest;
    assert_eq!(now, written);
    assert_eq!(now.generation, 2, "written once, not twice");
}

#[test]
fn a_writer_overtaken_reads_again_and_keeps_the_others_change() {
    let (repo, store) = repository();
    add_ref(&repo, "refs/heads/other", 2).unwrap();
    arm(&store, Fault::Overtaken, 2);
    let written = add_ref(&repo, "refs/heads/main", 1).unwrap();
    // Two writers got in first: generations 3 and 4 were theirs.
    assert_eq!(written.generation, 5);
    assert!(written.refs.contains_key("refs/heads/other"));
    assert!(written.refs.contains_key("refs/heads/main"));
}

#[test]
fn a_change_that_cannot_apply_writes_nothing() {
    let (repo, _) = repository();
    let refused = repo.commit(|_| Err::<Manifest, _>("moved")).unwrap();
    assert_eq!(refused, Err("moved"));
    assert_eq!(repo.read().unwrap().unwrap().manifest.generation, 1);
}

#[test]
fn a_store_that_fails_fails_the_commit_and_changes_nothing() {
    let (repo, store) = repository();
    arm(&store, Fault::Fails, u32::MAX);
    let e = add_ref(&repo, "refs/heads/main", 1).unwrap_err();
    assert!(e.to_string().contains("injected"), "{e}");
    assert_eq!(repo.read().unwrap().unwrap().manifest.generation, 1);
}

#[test]
fn a_name_that_could_leave_the_prefix_is_refused() {
    let bucket = Bucket::with_store(Arc::new(InMemory::new()), "").unwrap();
    for bad in ["", "..", "a/../b", ".hidden", "a//b", "a\\b"] {
        assert!(StoredRepo::new(&bucket, bad).is_err(), "{bad}");
    }
    assert_eq!(
        StoredRepo::new(&bucket, "group/p").unwrap().folder(),
        "group/p.git"
    );
}

#[test]
fn many_refs_live_in_a_snapshot_and_the_manifest_holds_what_changed() {
    let (repo, _) = repository();
    let id = |n: u32| {
        let mut bytes = [0u8; 20];
        bytes[..4].copy_from_slice(&n.to_be_bytes());
        bytes[19] = 1;
        sluice_object::ObjectId::from_bytes(sluice_object::HashKind::Sha1, &bytes).unwrap()
    };
    let many = 3000;
    let written = repo
        .commit(|current| {
            let mut next = current.clone();
            for n in 0..many {
                next.refs.insert(format!("refs/heads/b{n}"), id(n));
            }
            Ok::<_, ()>(next)
        })
        .unwrap()
        .unwrap();
    let snapshot = written.snapshot.clone().expect("a snapshot");
    assert_eq!(snapshot.refs.len(), many as usize);
    // One ref moved and one deleted: the manifest carries two lines of refs.
    let moved = repo
        .commit(|current| {
            let mut next = current.clone();
            next.refs.insert("refs/heads/b7".to_owned(), id(99_999));
            next.refs.remove("refs/heads/b8");
            Ok::<_, ()>(next)
        })
        .unwrap()
        .unwrap();
    let text = String::from_utf8(moved.write()).unwrap();
    assert_eq!(
        text.lines().filter(|l| l.starts_with("ref ")).count(),
        2,
        "{text}"
    );
    assert_eq!(
        moved.snapshot.as_ref().map(|s| &s.name),
        Some(&snapshot.name)
    );
    let read = repo.read().unwrap().unwrap().manifest;
    assert_eq!(read.refs, moved.refs);
    assert_eq!(read.refs.len(), many as usize - 1);
    assert_eq!(read.refs["refs/heads/b7"], id(99_999));
    assert!(!read.refs.contains_key("refs/heads/b8"));
}

#[test]
fn conflicts_without_a_winner_slow_writes_and_timeouts_are_retried_to_one_write() {
    for fault in [Fault::Conflict409, Fault::Latency, Fault::Timeout] {
        let (repo, store) = repository();
        arm(&store, fault, 2);
        let written = add_ref(&repo, "refs/heads/main", 1).unwrap();
        let now = repo.read().unwrap().unwrap().manifest;
        assert_eq!(now, written, "{fault:?}");
        // However many attempts the faults cost, exactly one write landed.
        assert_eq!(now.generation, 2, "{fault:?}");
        let counts = repo.bucket().counts();
        let (conflicts, retries) = (&counts.conflicts, &counts.retries);
        let expected = match fault {
            // Two refused, the third lands: two retries, each after a conflict.
            Fault::Conflict409 => (2, 2),
            // Slow, but each write lands: nothing tried again.
            Fault::Latency => (0, 0),
            // Two lost without a write: two retries, no conflict.
            _ => (0, 2),
        };
        let seen = (
            conflicts.load(Ordering::SeqCst),
            retries.load(Ordering::SeqCst),
        );
        assert_eq!(seen, expected, "{fault:?}");
    }
}
