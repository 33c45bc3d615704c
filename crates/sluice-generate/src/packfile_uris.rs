//! Packfile URIs, as git's upload-pack offers them to a client that asks (protocol v2's
//! `packfile-uris`): a server names blobs in `uploadpack.blobPackfileUri` (`<object-hash>
//! <pack-hash> <uri>`), each in a pack of its own at a URL; pack-objects, told which URL
//! schemes the client takes (`--uri-protocol`), leaves those blobs out of the pack it writes
//! and says `<pack-hash> <uri>` for each before it, so that the client downloads them.

use sluice_graph::Walked;
use sluice_object::{HashKind, ObjectId};
use sluice_odb::{Config, ObjectDb};
use std::collections::HashMap;

/// The configuration key, as git spells it in its messages.
const KEY: &str = "uploadpack.blobpackfileuri";

/// Why `uploadpack.blobPackfileUri` cannot be used, in git's words.
#[derive(Debug, thiserror::Error)]
pub enum PackfileUriError {
    /// A value is not `<object-hash> <pack-hash> <uri>`.
    #[error("value of {KEY} must be of the form '<object-hash> <pack-hash> <uri>' (got '{0}')")]
    Malformed(String),
    /// An object is named by two values.
    #[error("object already configured in another {KEY} (got '{0}')")]
    Twice(String),
}

/// The blobs a server offers at URLs: for each, the hash of the pack holding it and its URL.
#[derive(Debug, Default)]
pub struct PackfileUris {
    offered: HashMap<ObjectId, (String, String)>,
}

impl PackfileUris {
    /// Every `uploadpack.blobPackfileUri` of `config`, checked as git checks them (whenever
    /// pack-objects runs, whether or not a client asked).
    pub fn from_config(config: &Config, hash: HashKind) -> Result<Self, PackfileUriError> {
        let mut offered = HashMap::new();
        for value in config.get_all(KEY) {
            let malformed = || PackfileUriError::Malformed(value.to_owned());
            let mut fields = value.splitn(3, ' ');
            let (Some(object), Some(pack), Some(uri)) =
                (fields.next(), fields.next(), fields.next())
            else {
                return Err(malformed());
            };
            let object = ObjectId::from_hex(hash, object.as_bytes()).map_err(|_| malformed())?;
            // A pack's hash has the form of an object id, and is checked as one.
            ObjectId::from_hex(hash, pack.as_bytes()).map_err(|_| malformed())?;
            let place = (pack.to_owned(), uri.to_owned());
            if offered.insert(object, place).is_some() {
                return Err(PackfileUriError::Twice(value.to_owned()));
            }
        }
        Ok(PackfileUris { offered })
    }

    /// Leaves out of `walked` the offered blobs whose URL has one of `protocols` as its scheme
    /// and that no pack holds (git looks in the packs first, and sends what it finds there);
    /// returns the line pack-objects writes for each, `<pack-hash> <uri>`, in id order.
    pub fn leave_out(
        &self,
        odb: &ObjectDb,
        walked: &mut Walked,
        protocols: &[String],
    ) -> Vec<String> {
        if protocols.is_empty() || self.offered.is_empty() {
            return Vec::new();
        }
        let taken = |uri: &str| {
            let scheme = uri.split_once(':').map(|(scheme, _)| scheme);
            scheme.is_some_and(|scheme| protocols.iter().any(|p| p == scheme))
        };
        let mut left_out = Vec::new();
        walked.objects.retain(|object| {
            let Some((pack, uri)) = self.offered.get(&object.id) else {
                return true;
            };
            let offered = taken(uri) && odb.locate(&object.id).is_none();
            if offered {
                left_out.push((object.id, format!("{pack} {uri}")));
            }
            !offered
        });
        if !left_out.is_empty() {
            // The positions a bitmap gave no longer line up with the objects.
            walked.located = None;
        }
        left_out.sort();
        left_out.into_iter().map(|(_, line)| line).collect()
    }
}
