//! Small packs stored as loose objects, as git's unpack-objects stores a fetch or a push of
//! fewer than `<side>.unpackLimit` objects (else `transfer.unpackLimit`, 100).

use crate::config::{Config, ConfigError};
use crate::{LooseObjects, OdbError, Pack};
use sluice_object::{HashKind, ObjectId};
use std::path::Path;

/// The unpack limit of `side` (`fetch` or `receive`): `<side>.unpackLimit`, else
/// `transfer.unpackLimit`, else 100. A pack of fewer objects is stored loose.
pub fn unpack_limit(config: &Config, side: &str) -> Result<i64, ConfigError> {
    match config.get_int(&format!("{side}.unpacklimit"))? {
        Some(limit) => Ok(limit),
        None => Ok(config.get_int("transfer.unpacklimit")?.unwrap_or(100)),
    }
}

/// The zlib level of loose objects (and of what `--fix-thin` appends to a pack), as git reads
/// it: `core.looseCompression`, else `core.compression`, else 1, the fastest; -1 (or a value
/// outside 0-9) is zlib's default, 6.
pub fn loose_compression(config: &Config) -> Result<u32, ConfigError> {
    let level = (config.get_int("core.loosecompression")?)
        .or(config.get_int("core.compression")?)
        .unwrap_or(1);
    Ok(u32::try_from(level)
        .ok()
        .filter(|level| *level <= 9)
        .unwrap_or(6))
}

/// Writes the objects of the pack at `pack_path` as loose objects of the object directory
/// `objects` at zlib `level`, but those `had` says are there already, as unpack-objects does
/// not write them again. The pack itself is left to the caller.
pub fn unpack_to_loose(
    pack_path: &Path,
    objects: &Path,
    hash: HashKind,
    level: u32,
    had: &dyn Fn(&ObjectId) -> bool,
) -> Result<(), OdbError> {
    let pack = Pack::open(&pack_path.with_extension("idx"), hash)?;
    let loose = LooseObjects::new(objects, hash);
    for position in 0..pack.index().len() {
        if had(&pack.index().id(position)) {
            continue;
        }
        let (kind, data) = pack.read_position(position)?;
        loose.write(kind, &data, level)?;
    }
    crate::written::note_written();
    Ok(())
}
