//! What a bitmap numbers: one pack's objects in pack order (`pack-<checksum>.bitmap`), or a
//! multi-pack-index's in its pseudo-pack order (`multi-pack-index-<checksum>.bitmap`). Either
//! way an object has an index position (its rank among the sorted ids, which the bitmap's
//! commit entries and name-hash cache use) and a bit.

use sluice_object::ObjectId;
use sluice_odb::midx::MidxLayout;
use sluice_odb::Pack;
use std::path::{Path, PathBuf};

/// The objects a bitmap describes, and their bits.
#[derive(Debug, Clone, Copy)]
pub enum BitmapTarget<'a> {
    /// A pack, bits in pack order.
    Pack(&'a Pack),
    /// The multi-pack-index of `pack_dir`, as written, bits in its pseudo-pack order.
    Midx {
        /// The directory of the packs and the file.
        pack_dir: &'a Path,
        /// The file's objects and their bits.
        layout: &'a MidxLayout,
    },
}

impl BitmapTarget<'_> {
    /// The checksum the bitmap's header repeats: the pack's, or the multi-pack-index's.
    pub(crate) fn checksum(&self) -> ObjectId {
        match self {
            BitmapTarget::Pack(pack) => pack.index().pack_checksum(),
            BitmapTarget::Midx { layout, .. } => layout.checksum,
        }
    }

    /// How many objects.
    pub(crate) fn len(&self) -> usize {
        match self {
            BitmapTarget::Pack(pack) => pack.index().len(),
            BitmapTarget::Midx { layout, .. } => layout.ids.len(),
        }
    }

    /// The object at index position `index`.
    pub(crate) fn id_at(&self, index: usize) -> ObjectId {
        match self {
            BitmapTarget::Pack(pack) => pack.index().id(index),
            BitmapTarget::Midx { layout, .. } => layout.ids[index],
        }
    }

    /// The index position of `id`.
    pub(crate) fn index_of(&self, id: &ObjectId) -> Option<usize> {
        match self {
            BitmapTarget::Pack(pack) => pack.index().lookup(id),
            BitmapTarget::Midx { layout, .. } => layout.ids.binary_search(id).ok(),
        }
    }

    /// The bit of the object at index position `index`.
    pub(crate) fn bit_at(&self, index: usize) -> Option<usize> {
        match self {
            BitmapTarget::Pack(pack) => pack.rank_of(index),
            BitmapTarget::Midx { layout, .. } => layout.bit_of.get(index).map(|&b| b as usize),
        }
    }

    /// Where the bitmap goes.
    pub(crate) fn path(&self) -> PathBuf {
        match self {
            BitmapTarget::Pack(pack) => pack.path().with_extension("bitmap"),
            BitmapTarget::Midx { pack_dir, layout } => {
                sluice_odb::midx::bitmap_path(pack_dir, &layout.checksum)
            }
        }
    }
}
