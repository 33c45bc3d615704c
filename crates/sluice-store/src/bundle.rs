//! The bundle files a store offers clients (bundle-uri): git's bundle format v2, a header of
//! the refs it brings (and, for an incremental one, the commits it needs) and a pack.

use sluice_object::ObjectId;
use std::io::Write;
use std::path::Path;

/// Writes a bundle at `dest`: the header naming `refs` and `prerequisites`, then the pack at
/// `pack` as it is (it must hold every object the refs reach beyond the prerequisites).
pub fn write_bundle<'a>(
    dest: &Path,
    refs: impl IntoIterator<Item = (&'a str, &'a ObjectId)>,
    prerequisites: &[ObjectId],
    pack: &Path,
) -> std::io::Result<u64> {
    write_bundle_with(dest, refs, prerequisites, |out| {
        std::io::copy(&mut std::fs::File::open(pack)?, out).map(|_| ())
    })
}

/// Writes a bundle at `dest` whose pack `pack` writes after the header.
pub fn write_bundle_with<'a>(
    dest: &Path,
    refs: impl IntoIterator<Item = (&'a str, &'a ObjectId)>,
    prerequisites: &[ObjectId],
    pack: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<u64> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(dest)?);
    out.write_all(b"# v2 git bundle\n")?;
    for id in prerequisites {
        writeln!(out, "-{id}")?;
    }
    for (name, id) in refs {
        writeln!(out, "{id} {name}")?;
    }
    out.write_all(b"\n")?;
    pack(&mut out)?;
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    file.metadata().map(|m| m.len())
}
