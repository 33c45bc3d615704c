//! Where a store is: `s3://<bucket>[/<prefix>]`, or `memory://` (a store in this process,
//! for tests and trials). Credentials, region and endpoint come from the environment, as the
//! AWS tools read them (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//! `AWS_REGION`, `AWS_ALLOW_HTTP`).

use crate::StoreError;

/// A parsed store URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreUrl {
    /// Which kind of store.
    pub backend: Backend,
    /// The prefix under which the repositories are, without slashes around it.
    pub prefix: String,
}

/// The kinds of store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// S3 or a store that speaks its protocol.
    S3 {
        /// The bucket's name.
        bucket: String,
    },
    /// A store in this process's memory.
    Memory,
}

impl std::str::FromStr for StoreUrl {
    type Err = StoreError;

    fn from_str(url: &str) -> Result<StoreUrl, StoreError> {
        let bad = |why: &str| StoreError::BadUrl {
            url: url.to_owned(),
            why: why.to_owned(),
        };
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme"))?;
        let (host, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if prefix.split('/').any(|part| part == ".." || part == ".") {
            return Err(bad("'.' and '..' are not prefixes"));
        }
        let prefix = prefix.trim_matches('/').to_owned();
        match scheme {
            "s3" if host.is_empty() => Err(bad("no bucket")),
            "s3" => Ok(StoreUrl {
                backend: Backend::S3 {
                    bucket: host.to_owned(),
                },
                prefix,
            }),
            "memory" => Ok(StoreUrl {
                backend: Backend::Memory,
                prefix,
            }),
            _ => Err(bad("the schemes are s3:// and memory://")),
        }
    }
}

impl StoreUrl {
    /// Splits a repository's URL (`s3://<bucket>/<prefix>/<name>.git`) into the store's URL
    /// and the repository's name, its last component.
    pub fn of_repository(url: &str) -> Result<(StoreUrl, String), StoreError> {
        let mut store: StoreUrl = url.parse()?;
        let (prefix, name) = match store.prefix.rsplit_once('/') {
            Some((prefix, name)) => (prefix.to_owned(), name.to_owned()),
            None => (String::new(), store.prefix.clone()),
        };
        if name.is_empty() {
            return Err(StoreError::BadUrl {
                url: url.to_owned(),
                why: "no repository named".to_owned(),
            });
        }
        store.prefix = prefix;
        Ok((store, name))
    }
}

/// An S3 client for `bucket`, configured from the environment. Without credentials, requests
/// go unsigned (a store that allows anonymous access, as a test's SeaweedFS).
pub(crate) fn s3_from_env(bucket: &str) -> Result<object_store::aws::AmazonS3, StoreError> {
    use object_store::aws::AmazonS3Builder;
    let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
    if std::env::var_os("AWS_REGION").is_none() && std::env::var_os("AWS_DEFAULT_REGION").is_none()
    {
        builder = builder.with_region("us-east-1");
    }
    if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
        builder = builder.with_skip_signature(true);
    }
    builder.build().map_err(|e| StoreError::Configure {
        bucket: bucket.to_owned(),
        source: e,
    })
}
