//! Where a checkout reads objects: the repository's object database, or a pack whose deltas are
//! still being resolved (a clone's), where an object may not have arrived yet. The writer asks
//! which objects are ready, writes those, and waits for more only when nothing is left to do.

use crate::CheckoutError;
use sluice_object::{HashKind, ObjectId, ObjectKind};
use sluice_odb::{ObjectContent, ObjectDb, PackedObject};
use sluice_pack::{ArrivingPack, ObjectLookup};

/// Objects to check out from.
pub trait Objects: Sync {
    /// The repository's hash.
    fn hash(&self) -> HashKind;
    /// An object's kind and content, `None` if it is missing.
    fn read(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, CheckoutError>;
    /// An object's content, or, where the source can stream it, an object larger than
    /// `stream_above` bytes as a stream; `None` if it is missing. The content may be read into
    /// `buffer`'s allocation.
    fn read_or_stream(
        &self,
        id: &ObjectId,
        _stream_above: u64,
        _buffer: &mut Vec<u8>,
    ) -> Result<Option<ObjectContent<'_>>, CheckoutError> {
        Ok(self
            .read(id)?
            .map(|(kind, data)| ObjectContent::Whole(kind, data)))
    }
    /// Where each of `ids` is stored, found at once (faster than one by one: see
    /// [`ObjectDb::locate_packed`]); `None` for those to read by id.
    fn locate(&self, ids: &[&ObjectId]) -> Vec<Option<PackedObject<'_>>> {
        vec![None; ids.len()]
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

    fn read_or_stream(
        &self,
        id: &ObjectId,
        stream_above: u64,
        buffer: &mut Vec<u8>,
    ) -> Result<Option<ObjectContent<'_>>, CheckoutError> {
        Ok(ObjectDb::read_or_stream(self, id, stream_above, buffer)?)
    }

    fn locate(&self, ids: &[&ObjectId]) -> Vec<Option<PackedObject<'_>>> {
        self.locate_packed(ids)
    }
}

impl Objects for ArrivingPack<'_> {
    fn hash(&self) -> HashKind {
        ArrivingPack::hash(self)
    }

    fn read(&self, id: &ObjectId) -> Result<Option<(ObjectKind, Vec<u8>)>, CheckoutError> {
        ObjectLookup::read(self, id).map_err(|source| CheckoutError::Arriving { id: *id, source })
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
