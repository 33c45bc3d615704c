//! The snapshot object of a repository with many refs: `sluice-refs 1`, then one `<id>
//! <name>` a line, sorted; immutable, named by the generation and transaction that wrote it.

use crate::manifest::ManifestError;
use sluice_object::{HashKind, ObjectId};
use std::collections::BTreeMap;
use std::fmt::Write as _;

const MAGIC: &str = "sluice-refs 1";

/// The object's text.
pub fn write(refs: &BTreeMap<String, ObjectId>) -> Vec<u8> {
    let mut out = String::with_capacity(refs.len() * 64 + 16);
    let _ = writeln!(out, "{MAGIC}");
    for (name, id) in refs {
        let _ = writeln!(out, "{id} {name}");
    }
    out.into_bytes()
}

/// Reads what [`write`] wrote.
pub fn parse(bytes: &[u8], hash: HashKind) -> Result<BTreeMap<String, ObjectId>, ManifestError> {
    let bad = |line: usize, why: &str| ManifestError {
        line,
        why: format!("ref snapshot: {why}"),
    };
    let text = std::str::from_utf8(bytes).map_err(|_| bad(0, "not UTF-8"))?;
    let mut lines = text.lines().enumerate();
    if lines.next().map(|(_, l)| l) != Some(MAGIC) {
        return Err(bad(1, "no 'sluice-refs 1' line"));
    }
    let mut refs = BTreeMap::new();
    for (i, line) in lines {
        let (hex, name) = line.split_once(' ').ok_or_else(|| bad(i + 1, "no name"))?;
        let id = ObjectId::from_hex(hash, hex.as_bytes()).map_err(|_| bad(i + 1, "bad id"))?;
        if !sluice_object::ref_name::is_valid_ref_name(name) {
            return Err(bad(i + 1, "bad ref name"));
        }
        refs.insert(name.to_owned(), id);
    }
    Ok(refs)
}
