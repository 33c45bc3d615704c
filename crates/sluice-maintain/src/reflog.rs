//! `git reflog expire --all`: old reflog entries dropped, as gc drops them. An entry goes when
//! it is older than `expire` (`gc.reflogExpire`, 90 days), or older than `expire_unreachable`
//! (`gc.reflogExpireUnreachable`, 30 days) and its old or new commit is not reachable from the
//! ref (for `HEAD`'s reflog: from any ref). `gc.<pattern>.reflogExpire[Unreachable]` decide
//! for the refs their pattern matches, and a stash's reflog (its older stashes) never expires
//! unless a setting or the command line says so, as in git. An id that is not a commit never counts as
//! unreachable; one that is missing does.

use sluice_object::parse::{parse_commit, parse_tag};
use sluice_object::{HashKind, IdSet, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use sluice_repo::{RefError, Repository};
use std::path::{Path, PathBuf};

/// Why reflogs could not be expired (those already rewritten stay rewritten; each is replaced
/// whole, through its lock).
#[derive(Debug, thiserror::Error)]
pub enum ReflogError {
    /// The refs could not be read.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// A reflog could not be read.
    #[error("cannot read '{}'", path.display())]
    Read {
        /// The reflog.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A reflog could not be written.
    #[error(transparent)]
    Write(#[from] sluice_odb::LockError),
}

/// The two ages, as seconds since the epoch: entries older go (`0`: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ages {
    /// Every entry older than this.
    pub expire: i64,
    /// Entries older than this whose commits the ref no longer reaches.
    pub expire_unreachable: i64,
}

/// How old the entries of each reflog may grow, as git's `reflog expire` decides it.
#[derive(Debug, Clone)]
pub struct ExpireOptions {
    /// For a reflog nothing else decides: `gc.reflogExpire` (90 days) and
    /// `gc.reflogExpireUnreachable` (30 days), or what the command line gave.
    pub ages: Ages,
    /// Which of the two the command line gave (`--expire`, `--expire-unreachable`): those hold
    /// for every reflog.
    pub given: (bool, bool),
    /// `gc.<pattern>.reflogExpire` and `gc.<pattern>.reflogExpireUnreachable`, in the order
    /// the patterns first appear: the first whose pattern matches a ref decides both of its
    /// ages (one it does not set: never, as git).
    pub patterns: Vec<(String, Ages)>,
}

/// A reflog age that names no date.
#[derive(Debug, thiserror::Error)]
pub enum BadAge {
    /// A setting's, in gc's words; `reflog expire` says `refused` instead (git's "bad config
    /// variable …", its reason said first).
    #[error("failed to parse '{key}' value '{value}'")]
    Setting {
        /// The setting, as git names it (lowercase).
        key: String,
        /// Its value.
        value: String,
        /// The refusal `reflog expire` says (boxed: every error that may carry this one stays
        /// small).
        refused: Box<sluice_odb::ConfigError>,
    },
    /// The command line's.
    #[error("invalid timestamp '{value}' given to '--{option}'")]
    Option {
        /// The option, without its dashes.
        option: &'static str,
        /// Its value.
        value: String,
    },
}

impl ExpireOptions {
    /// The ages `config` sets, `expire` and `expire_unreachable` (the command line's) first.
    pub fn from_config(
        config: &sluice_odb::Config,
        (expire, expire_unreachable): (Option<&str>, Option<&str>),
    ) -> Result<ExpireOptions, BadAge> {
        let age = |key: &str, value: &str| {
            let why = format!("'{value}' for '{key}' is not a valid timestamp");
            crate::gc::seconds(value).map_err(|_| BadAge::Setting {
                key: key.to_owned(),
                value: value.to_owned(),
                refused: Box::new(config.refuse(key, why)),
            })
        };
        let setting =
            |(option, key): (&'static str, &str), given: Option<&str>, default: &str| match given {
                Some(value) => crate::gc::seconds(value).map_err(|_| BadAge::Option {
                    option,
                    value: value.to_owned(),
                }),
                None => age(key, config.get(key).unwrap_or(default)),
            };
        let ages = Ages {
            expire: setting(("expire", "gc.reflogexpire"), expire, "90.days.ago")?,
            expire_unreachable: setting(
                ("expire-unreachable", "gc.reflogexpireunreachable"),
                expire_unreachable,
                "30.days.ago",
            )?,
        };
        let mut patterns = Vec::new();
        for pattern in config.subsection_names("gc") {
            let key = |name: &str| format!("gc.{pattern}.{name}");
            let (total, unreachable) = (key("reflogexpire"), key("reflogexpireunreachable"));
            let (total_value, unreachable_value) = (config.get(&total), config.get(&unreachable));
            if total_value.is_none() && unreachable_value.is_none() {
                continue;
            }
            let pattern_ages = Ages {
                expire: total_value.map_or(Ok(0), |v| age(&total, v))?,
                expire_unreachable: unreachable_value.map_or(Ok(0), |v| age(&unreachable, v))?,
            };
            patterns.push((pattern, pattern_ages));
        }
        Ok(ExpireOptions {
            ages,
            given: (expire.is_some(), expire_unreachable.is_some()),
            patterns,
        })
    }

    /// The ages for the reflog of `name` (`HEAD` or a full ref name): the command line's, else
    /// the first pattern's that matches it, else for `refs/stash` none (git never expires a
    /// stash unless told to), else the defaults.
    fn ages_of(&self, name: &str) -> Ages {
        let matching = |(pattern, _): &&(String, Ages)| {
            sluice_index::wildmatch::wildmatch_anywhere(pattern.as_bytes(), name.as_bytes())
        };
        let never = Ages {
            expire: 0,
            expire_unreachable: 0,
        };
        let configured = match self.patterns.iter().find(matching) {
            Some((_, ages)) => *ages,
            None if name == "refs/stash" => never,
            None => self.ages,
        };
        Ages {
            expire: match self.given.0 {
                true => self.ages.expire,
                false => configured.expire,
            },
            expire_unreachable: match self.given.1 {
                true => self.ages.expire_unreachable,
                false => configured.expire_unreachable,
            },
        }
    }
}

/// Expires every reflog of the repository, in every worktree (`HEAD`'s and every ref's), as
/// git's `--all` does.
pub fn expire_all(repo: &Repository, options: &ExpireOptions) -> Result<(), ReflogError> {
    let all_tips: Vec<ObjectId> = repo.refs().list()?.into_iter().map(|(_, id)| id).collect();
    let odb = repo.objects();
    for worktree in repo.worktrees()? {
        for reflog in worktree.reflogs()? {
            // HEAD's entries must be reachable from some ref, a ref's from that ref.
            let tip = match reflog.name.as_str() {
                "HEAD" => all_tips.clone(),
                name => (worktree.refs().resolve(name).ok())
                    .and_then(|(_, id)| id)
                    .into_iter()
                    .collect(),
            };
            let ages = options.ages_of(&reflog.name);
            expire_one(odb, repo.hash(), &reflog.path, &tip, &ages)?;
        }
    }
    Ok(())
}

/// Rewrites the reflog at `path` without its expired entries; `tips` are what its commits must
/// be reachable from to stay past `expire_unreachable`.
fn expire_one(
    odb: &ObjectDb,
    hash: HashKind,
    path: &Path,
    tips: &[ObjectId],
    options: &Ages,
) -> Result<(), ReflogError> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(ReflogError::Read {
                path: path.to_owned(),
                source,
            })
        }
    };
    let mut kept = Vec::with_capacity(text.len());
    let mut changed = false;
    let mut reach = Reach {
        odb,
        tips,
        set: None,
    };
    for line in text.split_inclusive(|&b| b == b'\n') {
        match expired(hash, line, &mut reach, options) {
            true => changed = true,
            false => kept.extend_from_slice(line),
        }
    }
    if changed {
        sluice_odb::write_locked(path, &kept, false)?;
    }
    Ok(())
}

/// Whether one reflog line goes. A line that cannot be read stays (git keeps what it cannot
/// judge).
fn expired(hash: HashKind, line: &[u8], reach: &mut Reach<'_>, options: &Ages) -> bool {
    let Some(entry) = sluice_repo::refs::reflog::parse_entry(line, hash) else {
        return false;
    };
    let (old, new) = (entry.old, entry.new);
    let Some(time) = entry.time else {
        return false;
    };
    if time < options.expire {
        return true;
    }
    time < options.expire_unreachable && (reach.unreachable(&old) || reach.unreachable(&new))
}

/// The commits `tips` reach, found once when an entry first asks.
struct Reach<'a> {
    odb: &'a ObjectDb,
    tips: &'a [ObjectId],
    set: Option<IdSet>,
}

impl Reach<'_> {
    /// Whether `id` is a commit the tips do not reach (missing counts; the null id and other
    /// kinds do not).
    fn unreachable(&mut self, id: &ObjectId) -> bool {
        if id.is_null() {
            return false;
        }
        match self.odb.read(id) {
            Ok(Some((ObjectKind::Commit, _))) => {}
            Ok(Some(_)) => return false,
            _ => return true,
        }
        let (odb, tips) = (self.odb, self.tips);
        !self
            .set
            .get_or_insert_with(|| commits_reached(odb, tips))
            .contains(id)
    }
}

/// Every commit the tips reach (tags peeled), by their parents.
fn commits_reached(odb: &ObjectDb, tips: &[ObjectId]) -> IdSet {
    let mut seen = IdSet::default();
    let mut pending: Vec<ObjectId> = tips.to_vec();
    while let Some(id) = pending.pop() {
        match odb.read(&id) {
            Ok(Some((ObjectKind::Commit, data))) => {
                if !seen.insert(id) {
                    continue;
                }
                if let Ok(commit) = parse_commit(odb.hash(), &data) {
                    pending.extend(commit.parents.iter().filter(|p| !seen.contains(*p)));
                }
            }
            Ok(Some((ObjectKind::Tag, data))) => {
                if let Ok(tag) = parse_tag(odb.hash(), &data) {
                    pending.push(tag.object);
                }
            }
            _ => {}
        }
    }
    seen
}
