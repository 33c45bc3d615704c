//! The objects of a partial clone, as fix-thin reads delta bases: the server sends deltas
//! against anything reachable from the haves, and a partial clone lacks some of that by
//! design. Those bases are fetched from the promisor remote first, all in one request, into a
//! promisor pack, as git's index-pack does.

use super::remote::{connect, fetch_into, resolve};
use super::Context;
use sluice_fetch::partial::is_promisor;
use sluice_fetch::receive::Receiving;
use sluice_fetch::ConnectOptions;
use sluice_fetch::{FetchRequest, NoHaves};
use sluice_object::{ObjectId, ObjectKind};
use sluice_odb::{ObjectDb, Repository};
use sluice_pack::{LookupError, ObjectLookup};
use std::sync::RwLock;

/// A repository's objects, with what its promisor remote sent on request.
pub(crate) struct Promised<'a> {
    context: &'a Context,
    repo: &'a Repository,
    /// The promisor remote: a remote's name, or a URL fetched from with `--filter`.
    remote: String,
    /// The object database again once a fetch added a pack to it.
    fetched: RwLock<Option<ObjectDb>>,
}

impl<'a> Promised<'a> {
    /// The objects of `repo`, if it has a promisor remote to ask for missing ones: `fetching`
    /// when it is one, else the first of them.
    pub(crate) fn of(
        context: &'a Context,
        repo: &'a Repository,
        fetching: &str,
    ) -> anyhow::Result<Option<Self>> {
        let config = repo.config();
        let candidates = std::iter::once(fetching.to_owned())
            .chain(config.get("extensions.partialclone").map(str::to_owned))
            .chain(config.subsection_names("remote"));
        for name in candidates {
            if is_promisor(config, &name)? {
                return Ok(Some(Self::from(context, repo, &name)));
            }
        }
        Ok(None)
    }

    /// The objects of `repo` with `remote` to ask for missing ones.
    pub(crate) fn from(context: &'a Context, repo: &'a Repository, remote: &str) -> Self {
        Promised {
            context,
            repo,
            remote: remote.to_owned(),
            fetched: RwLock::new(None),
        }
    }

    fn fetched(&self) -> std::sync::RwLockReadGuard<'_, Option<ObjectDb>> {
        self.fetched.read().unwrap_or_else(|e| e.into_inner())
    }

    /// One fetch of exactly `missing`, as git's lazy fetch asks: no haves, no blobs beyond
    /// those named, no progress.
    fn fetch(&self, missing: &[ObjectId]) -> anyhow::Result<()> {
        let config = self.repo.config();
        let key = |name: &str| format!("remote.{}.{name}", self.remote);
        let url = config.get(&key("url")).unwrap_or(&self.remote);
        let remote = resolve(self.context, url)?;
        let options = ConnectOptions::from_config(config, config.get(&key("uploadpack")))?;
        let mut connection = connect(&remote, &options)?;
        let request = FetchRequest {
            wants: missing.to_vec(),
            filter: Some("blob:none".to_owned()),
            ..FetchRequest::default()
        };
        let got = fetch_into(
            &mut connection,
            self.repo,
            &request,
            &mut NoHaves,
            Receiving::default(),
        )?;
        connection.finish()?;
        std::fs::write(got.pack.with_extension("promisor"), "")?;
        let odb = ObjectDb::open(self.repo.objects().dir(), self.repo.hash())?;
        *self.fetched.write().unwrap_or_else(|e| e.into_inner()) = Some(odb);
        Ok(())
    }
}

impl ObjectLookup for Promised<'_> {
    fn contains(&self, id: &ObjectId) -> bool {
        self.repo.objects().contains(id)
            || self.fetched().as_ref().is_some_and(|db| db.contains(id))
    }

    fn read(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, LookupError> {
        if let Some(found) = self.repo.objects().read(id).map_err(LookupError::new)? {
            return Ok(Some(found));
        }
        match self.fetched().as_ref() {
            Some(db) => db.read(id).map_err(LookupError::new),
            None => Ok(None),
        }
    }

    fn prefetch(&self, missing: &[ObjectId]) -> Result<(), LookupError> {
        self.fetch(missing).map_err(|e| {
            LookupError::new(format!(
                "could not fetch missing objects from promisor remote '{}': {e:#}",
                self.remote
            ))
        })
    }
}
