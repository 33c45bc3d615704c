//! Abbreviated object names as git prints them (`core.abbrev`): by default long enough for the
//! repository's size (half the bits of its object count, at least 7 digits, so git/git's
//! 419,000 objects get 10), and longer where another object shares the prefix.

use crate::Repository;
use sluice_object::ObjectId;

/// git's shortest default.
const MIN_AUTO: usize = 7;

/// `id` abbreviated as git would print it in `repo`.
pub fn abbreviate(repo: &Repository, id: &ObjectId) -> String {
    let hex = id.to_string();
    let wanted = match repo.config().get("core.abbrev") {
        Some("no" | "false" | "off") => return hex,
        Some(value) => match value.parse::<usize>() {
            Ok(len) => len.clamp(4, hex.len()),
            Err(_) => auto_length(repo),
        },
        None => auto_length(repo),
    };
    let shared = longest_shared_prefix(repo, id);
    hex[..wanted.max(shared + 1).min(hex.len())].to_owned()
}

/// The width of a ref report's summary column (`old..new`, `[new branch]`) as git sizes it:
/// room for two of the longest abbreviations among `ids` (the null id among them) and the
/// dots.
pub fn summary_width(repo: &Repository, ids: impl IntoIterator<Item = ObjectId>) -> usize {
    let null = repo.hash().null_id();
    let longest = (ids.into_iter().chain([null]))
        .map(|id| abbreviate(repo, &id).len())
        .max()
        .unwrap_or(MIN_AUTO);
    2 * longest + 3
}

/// git's automatic length: one more than the highest bit of the object count, halved (two
/// hex digits per two bits of a birthday bound), at least [`MIN_AUTO`].
fn auto_length(repo: &Repository) -> usize {
    let objects = repo.objects();
    let packed: usize = objects.packs().iter().map(|p| p.index().len()).sum();
    // Loose objects estimated from one fan-out directory, as git estimates them.
    let sample = std::fs::read_dir(objects.dir().join("17")).map_or(0, |d| d.count());
    let count = packed + sample * 256;
    let bits = usize::BITS as usize - count.leading_zeros() as usize;
    bits.div_ceil(2).max(MIN_AUTO)
}

/// The most hex digits another object of `repo` shares with `id` at its start.
fn longest_shared_prefix(repo: &Repository, id: &ObjectId) -> usize {
    let objects = repo.objects();
    let mut shared = 0;
    for pack in objects.packs() {
        for other in pack.index().neighbours(id).into_iter().flatten() {
            shared = shared.max(common_hex_digits(id, &other));
        }
    }
    let hex = id.to_string();
    let dir = objects.dir().join(&hex[..2]);
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let rest = name.to_string_lossy();
        if rest != hex[2..] {
            let same = rest
                .bytes()
                .zip(hex[2..].bytes())
                .take_while(|(a, b)| a == b)
                .count();
            shared = shared.max(2 + same);
        }
    }
    shared
}

fn common_hex_digits(a: &ObjectId, b: &ObjectId) -> usize {
    let mut digits = 0;
    for (x, y) in a.as_bytes().iter().zip(b.as_bytes()) {
        if x == y {
            digits += 2;
            continue;
        }
        return digits + usize::from(x >> 4 == y >> 4);
    }
    digits
}

/// The one object of `objects` (its packs, loose objects and alternates) whose id starts with
/// the lowercase hex digits `prefix`; `None` when none does or more than one does (git: "short
/// object ID is ambiguous").
pub fn expand(objects: &sluice_odb::ObjectDb, prefix: &str) -> Option<ObjectId> {
    let mut found = Vec::new();
    collect_prefixed(objects, prefix, &mut found);
    found.sort_unstable();
    found.dedup();
    match found.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// Adds to `found` the ids starting with `prefix` (two are enough to call it ambiguous).
fn collect_prefixed(objects: &sluice_odb::ObjectDb, prefix: &str, found: &mut Vec<ObjectId>) {
    let hash = objects.hash();
    let full = 2 * hash.len_in_bytes();
    let padded = format!("{prefix:0<full$}");
    let Ok(low) = ObjectId::from_hex(hash, padded.as_bytes()) else {
        return;
    };
    for pack in objects.packs() {
        let index = pack.index();
        // The first id not below the prefix padded with zeros, then those sharing it.
        let (mut lo, mut hi) = (0, index.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match index.id(mid) < low {
                true => lo = mid + 1,
                false => hi = mid,
            }
        }
        let shared = (lo..index.len())
            .map(|i| index.id(i))
            .take_while(|id| id.to_string().starts_with(prefix))
            .take(2);
        found.extend(shared);
    }
    let dir = objects.dir().join(&prefix[..2]);
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = format!("{}{}", &prefix[..2], entry.file_name().to_string_lossy());
        if name.starts_with(prefix) {
            found.extend(ObjectId::from_hex(hash, name.as_bytes()).ok());
        }
    }
    for alternate in objects.alternates() {
        collect_prefixed(alternate, prefix, found);
    }
}
