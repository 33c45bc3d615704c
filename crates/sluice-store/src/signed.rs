//! Pre-signed bundle URLs that every node hands out alike. A signature carries the time it was
//! made, so two nodes signing the same bundle at different moments give different URLs, and a
//! clone whose requests land on different nodes would see the list change under it. Instead
//! the first node to need a generation's URLs signs them and stores the list beside the
//! repository (`signed/<generation>`, written only if absent); the others read that list.
//! One whose URLs would expire within `at_least` is signed anew and replaces the stored one,
//! conditionally on the version read, so that even then one list wins for all.
//!
//! The stored text: the signing time (seconds since the epoch), then a URL a line, in the
//! order of the keys.

use crate::bucket::WriteRefused;
use crate::stored::StoredRepo;
use crate::StoreError;
use std::time::Duration;

/// How many times a node reads again after another node's list won a race.
const ATTEMPTS: usize = 4;

/// The pre-signed GET URLs of `keys` (repository keys, as [`StoredRepo::key`] makes them) for
/// `generation`, valid for `valid` from their signing and for at least `at_least` from now:
/// the same list from every node; `None` where the store cannot sign.
pub fn shared_presigned(
    repo: &StoredRepo,
    generation: u64,
    keys: &[String],
    valid: Duration,
    at_least: Duration,
) -> Result<Option<Vec<String>>, StoreError> {
    let bucket = repo.bucket();
    let name = repo.key(&format!("signed/{generation}"));
    let now = crate::unix_now();
    let mut stored = bucket.get(&name)?;
    for attempt in 1..=ATTEMPTS {
        if let Some(list) = stored.as_ref().and_then(|s| parse(&s.bytes, keys.len())) {
            if list.0 + valid.as_secs() >= now + at_least.as_secs() {
                return Ok(Some(list.1));
            }
        }
        let mut urls = Vec::with_capacity(keys.len());
        for key in keys {
            match bucket.presigned_get(key, valid)? {
                Some(url) => urls.push(url),
                None => return Ok(None),
            }
        }
        let text = format!(
            "{now}\n{}",
            urls.iter().map(|u| format!("{u}\n")).collect::<String>()
        );
        let written = match &stored {
            None => bucket.create(&name, text.into_bytes()),
            Some(read) => bucket.replace(&name, text.into_bytes(), &read.version),
        };
        match written {
            // Another node's list won: it is the one every node gives.
            Err(WriteRefused::Conflict) if attempt < ATTEMPTS => stored = bucket.get(&name)?,
            // Ours is stored; or, racing on or with the write's fate unknown, the URLs are
            // sound, only not shared this time.
            _ => return Ok(Some(urls)),
        }
    }
    Ok(None)
}

/// A stored list: its signing time and URLs, if it has one for each of `count` keys.
fn parse(bytes: &[u8], count: usize) -> Option<(u64, Vec<String>)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    let signed_at = lines.next()?.parse().ok()?;
    let urls: Vec<String> = lines.map(str::to_owned).collect();
    (urls.len() == count).then_some((signed_at, urls))
}
