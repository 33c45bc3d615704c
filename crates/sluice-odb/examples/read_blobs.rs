//! The inflation floor of a checkout: reads every blob a `git ls-tree -r` listing on standard
//! input names, as the checkout writer does (located at once, each inflated into one reused
//! buffer), on one thread, writing nothing. `bench/checkout.py` times it beside the checkouts:
//! what a checkout's user CPU cannot go below without a faster inflater.
//!
//! Usage: read_blobs <objects directory> < <git ls-tree -r output>

use sluice_object::{HashKind, ObjectId};
use sluice_odb::{ObjectContent, ObjectDb};
use std::io::BufRead;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: read_blobs <objects directory>")?;
    let odb = ObjectDb::open(std::path::Path::new(&dir), HashKind::Sha1)?;
    let mut ids = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        // "<mode> blob <id>[ <size>]\t<path>"
        let mut fields = line.split_whitespace();
        if fields.nth(1) == Some("blob") {
            let id = fields.next().ok_or("a blob line without an id")?;
            ids.push(ObjectId::from_hex(HashKind::Sha1, id.as_bytes())?);
        }
    }
    let asked: Vec<&ObjectId> = ids.iter().collect();
    let located = odb.locate_packed(&asked);
    let (mut buffer, mut bytes) = (Vec::new(), 0u64);
    for (id, found) in ids.iter().zip(located) {
        let content = match found {
            Some(object) => object.read_or_stream(u64::MAX, &mut buffer)?,
            None => odb
                .read_or_stream(id, u64::MAX, &mut buffer)?
                .ok_or("missing blob")?,
        };
        if let ObjectContent::Whole(_, data) = content {
            bytes += data.len() as u64;
            buffer = data;
        }
    }
    eprintln!("{} blobs, {bytes} bytes", ids.len());
    Ok(())
}
