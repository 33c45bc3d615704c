//! Which objects a partial clone leaves out (`--filter`), as git parses and writes the spec.

use sluice_object::ObjectKind;

/// Which objects a partial clone leaves out (`--filter`, `gitrevisions`' object filters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ObjectFilter {
    /// Everything.
    #[default]
    None,
    /// `blob:none`: no blobs.
    BlobNone,
    /// `blob:limit=<n>`: blobs of at most n bytes.
    BlobLimit(u64),
    /// `tree:<depth>`: no trees or blobs at depth `depth` or more below a commit's root tree
    /// (the root tree is at depth 0).
    TreeDepth(u64),
    /// `object:type=<type>`: only objects of that type (and the wanted objects themselves).
    ObjectType(ObjectKind),
}

impl ObjectFilter {
    /// Parses a filter spec as `git rev-list --filter` takes it.
    pub fn parse(spec: &str) -> Option<ObjectFilter> {
        if spec == "blob:none" {
            return Some(ObjectFilter::BlobNone);
        }
        if let Some(limit) = spec.strip_prefix("blob:limit=") {
            return sluice_odb::config::parse_int(limit)
                .and_then(|n| u64::try_from(n).ok())
                .map(ObjectFilter::BlobLimit);
        }
        if let Some(depth) = spec.strip_prefix("tree:") {
            return depth.parse().ok().map(ObjectFilter::TreeDepth);
        }
        if let Some(kind) = spec.strip_prefix("object:type=") {
            return ObjectKind::from_name(kind.as_bytes()).map(ObjectFilter::ObjectType);
        }
        None
    }
}

/// The spec as git writes it back (in `remote.<name>.partialclonefilter`, on the wire): the
/// size in bytes, so `blob:limit=1k` is `blob:limit=1024`. No filter is the empty string.
impl std::fmt::Display for ObjectFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ObjectFilter::None => Ok(()),
            ObjectFilter::BlobNone => f.write_str("blob:none"),
            ObjectFilter::BlobLimit(limit) => write!(f, "blob:limit={limit}"),
            ObjectFilter::TreeDepth(depth) => write!(f, "tree:{depth}"),
            ObjectFilter::ObjectType(kind) => write!(f, "object:type={kind}"),
        }
    }
}
