//! A lease on a stored repository's maintenance: one object, `<name>.git/lease`, written only
//! if absent (or, once expired, only if unchanged since read), so that one node at a time
//! repacks, writes bundles or sweeps. A holder that dies leaves it to expire.

use crate::bucket::WriteRefused;
use crate::stored::{transaction_id, StoredRepo};
use crate::StoreError;
use std::time::Duration;

/// A lease held.
#[derive(Debug)]
pub struct Lease {
    repo: StoredRepo,
    holder: String,
}

impl Lease {
    /// Takes the lease of `repo` for `ttl`, or says who holds it until when.
    pub fn acquire(repo: &StoredRepo, ttl: Duration) -> Result<Lease, StoreError> {
        let holder = transaction_id();
        let key = repo.key("lease");
        let text = format!(
            "holder {holder}\nexpires {}\n",
            crate::unix_now() + ttl.as_secs()
        );
        let taken = match repo.bucket().create(&key, text.clone().into_bytes()) {
            Ok(_) => true,
            Err(WriteRefused::Unknown(e)) => return Err(e),
            Err(WriteRefused::Conflict) => {
                let Some(current) = repo.bucket().get(&key)? else {
                    // Released in between: the next attempt will find it free.
                    return Err(StoreError::Leased(repo.folder().to_owned(), 0));
                };
                let expires = String::from_utf8_lossy(&current.bytes)
                    .lines()
                    .find_map(|l| l.strip_prefix("expires ")?.parse::<u64>().ok())
                    .unwrap_or(0);
                if expires > crate::unix_now() {
                    return Err(StoreError::Leased(repo.folder().to_owned(), expires));
                }
                let replaced = repo
                    .bucket()
                    .replace(&key, text.into_bytes(), &current.version);
                replaced.is_ok()
            }
        };
        match taken {
            true => Ok(Lease {
                repo: repo.clone(),
                holder,
            }),
            false => Err(StoreError::Leased(repo.folder().to_owned(), 0)),
        }
    }

    /// Gives the lease back (if it is still this holder's).
    pub fn release(self) -> Result<(), StoreError> {
        let key = self.repo.key("lease");
        match self.repo.bucket().get(&key)? {
            Some(current) if String::from_utf8_lossy(&current.bytes).contains(&self.holder) => {
                self.repo.bucket().delete(&key)
            }
            _ => Ok(()),
        }
    }
}
