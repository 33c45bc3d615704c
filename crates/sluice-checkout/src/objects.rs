//! Where a checkout reads objects: the repository's object database, or a pack whose deltas are
//! still being resolved (a clone's), where an object may not have arrived yet. The writer asks
//! which objects are ready, writes those, and waits for more only when nothing is left to do.

use crate::CheckoutError;
use sluice_object::{HashKind, ObjectId, ObjectKind};
use sluice_odb::{ObjectDb, ObjectStream};
use sluice_pack::{ArrivingPack, ObjectLookup};

/// Objects to check out from.
pub trait Objects: Sync {
    /// The repository's hash.
    fn hash(&self) -> HashKind;
    /// An object's kind and content, `None` if it is missing.
    fn read(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, CheckoutError>;
    /// A large blob as a stream, where the source can stream it.
    fn open_stream(&self, _id: &ObjectId) -> Result<Option<ObjectStream<'_>>, CheckoutError> {
        Ok(None)
    }
    /// Whether `id` can be read without waiting.
    fn is_ready(&self, _id: &ObjectId) -> bool {
        true
    }
    /// Whether every object has arrived (reads never wait).
    fn all_arrived(&self) -> bool {
        true
    }
    /// Waits until more objects have arrived, or all have.
    fn wait_for_more(&self) {}
}

impl Objects for ObjectDb {
    fn hash(&self) -> HashKind {
        ObjectDb::hash(self)
    }

    fn read(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, CheckoutError> {
        Ok(ObjectDb::read(self, id)?)
    }

    fn open_stream(&self, id: &ObjectId) -> Result<Option<ObjectStream<'_>>, CheckoutError> {
        Ok(ObjectDb::open_stream(self, id)?)
    }
}

impl Objects for ArrivingPack<'_> {
    fn hash(&self) -> HashKind {
        ArrivingPack::hash(self)
    }

    fn read(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, CheckoutError> {
        ObjectLookup::read(self, id).map_err(|message| CheckoutError::Arriving { id: *id, message })
    }

    fn is_ready(&self, id: &ObjectId) -> bool {
        ArrivingPack::is_ready(self, id)
    }

    fn all_arrived(&self) -> bool {
        ArrivingPack::all_arrived(self)
    }

    fn wait_for_more(&self) {
        ArrivingPack::wait_for_more(self);
    }
}
