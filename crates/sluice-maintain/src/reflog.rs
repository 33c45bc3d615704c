//! `git reflog expire` (`--all`, or the refs named): old reflog entries dropped, as gc drops
//! them; with git's `--dry-run`, `--rewrite` and `--updateref`, each entry's verdict returned
//! for `--verbose`. An entry goes when
//! it is older than `expire` (`gc.reflogExpire`, 90 days), or older than `expire_unreachable`
//! (`gc.reflogExpireUnreachable`, 30 days) and its old or new commit is not reachable from the
//! ref (for `HEAD`'s reflog: from any ref). `gc.<pattern>.reflogExpire[Unreachable]` decide
//! for the refs their pattern matches, and a stash's reflog (its older stashes) never expires
//! unless a setting or the command line says so, as in git. An id that is not a commit never counts as
//! unreachable; one that is missing does.

use sluice_object::parse::{parse_commit, parse_tag};
use sluice_object::{HashKind, IdSet, ObjectId, ObjectKind};
use sluice_odb::ObjectDb;
use sluice_repo::refs::Refs;
use sluice_repo::{RefError, RefTarget, Repository};
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

/// What `reflog expire` does beyond the ages: git's flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpireFlags {
    /// `--dry-run`: every entry is judged, nothing is written.
    pub dry_run: bool,
    /// `--rewrite`: each kept entry's old id becomes the new id of the entry kept before it
    /// (the null id for the first), as git judges and writes it.
    pub rewrite: bool,
    /// `--updateref`: the ref is set to the new id of its last kept entry (unless it is
    /// symbolic, or none is kept).
    pub update_ref: bool,
}

/// One reflog entry judged: whether it stays, and its message (`--verbose` says `keep
/// <message>` or `prune <message>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// It stays.
    pub kept: bool,
    /// What was done, as the entry says it.
    pub message: String,
}

/// What `reflog expire <refs>…` did: each entry judged, in order, and the names that point
/// nowhere (git: `<name> points nowhere!`, and a failure).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expired {
    /// Every entry of the reflogs expired, reflog by reflog.
    pub judged: Vec<Judged>,
    /// The names given with no reflog found.
    pub nowhere: Vec<String>,
}

/// Expires every reflog of the repository, in every worktree (`HEAD`'s and every ref's), as
/// git's `--all` does.
pub fn expire_all(repo: &Repository, options: &ExpireOptions) -> Result<(), ReflogError> {
    expire_all_with(repo, options, ExpireFlags::default()).map(|_| ())
}

/// [`expire_all`] as `flags` say; every entry judged, in order.
pub fn expire_all_with(
    repo: &Repository,
    options: &ExpireOptions,
    flags: ExpireFlags,
) -> Result<Vec<Judged>, ReflogError> {
    let all_tips: Vec<ObjectId> = repo.refs().list()?.into_iter().map(|(_, id)| id).collect();
    let mut judged = Vec::new();
    for worktree in repo.worktrees()? {
        // In git 2.47's order: `HEAD`'s, then the refs' by name.
        let mut reflogs = worktree.reflogs()?;
        reflogs.sort_by(|a, b| (a.name != "HEAD", &a.name).cmp(&(b.name != "HEAD", &b.name)));
        for reflog in reflogs {
            let refs = worktree.refs();
            judged.extend(expire_ref(
                repo,
                refs,
                &reflog,
                (options, flags),
                &all_tips,
            )?);
        }
    }
    Ok(judged)
}

/// `reflog expire <refs>…`: the reflogs of the refs named, each found as git's `dwim_log`
/// finds it (`main` is `refs/heads/main`, a symbolic ref's is its target's when it has none).
pub fn expire_named(
    repo: &Repository,
    names: &[String],
    options: &ExpireOptions,
    flags: ExpireFlags,
) -> Result<Expired, ReflogError> {
    let all_tips: Vec<ObjectId> = repo.refs().list()?.into_iter().map(|(_, id)| id).collect();
    let (refs, mut expired) = (repo.refs(), Expired::default());
    for given in names {
        let Some(name) = reflog_of(&refs, given) else {
            expired.nowhere.push(given.clone());
            continue;
        };
        let reflog = sluice_repo::worktrees::Reflog {
            path: refs.log_path(&name),
            name,
        };
        let judged = expire_ref(repo, &refs, &reflog, (options, flags), &all_tips)?;
        expired.judged.extend(judged);
    }
    Ok(expired)
}

/// The reflog `given` names, by git's rules for short names: the first ref that resolves and
/// has a reflog (or whose target has one).
fn reflog_of(refs: &Refs, given: &str) -> Option<String> {
    let rules = ["", "refs/", "refs/tags/", "refs/heads/", "refs/remotes/"];
    let candidates = (rules.iter().map(|rule| format!("{rule}{given}")))
        .chain(std::iter::once(format!("refs/remotes/{given}/HEAD")));
    for name in candidates {
        let Ok((target, Some(_))) = refs.resolve(&name) else {
            continue;
        };
        if refs.has_log(&name) {
            return Some(name);
        }
        if target != name && refs.has_log(&target) {
            return Some(target);
        }
    }
    None
}

/// Expires one ref's reflog: `HEAD`'s entries must be reachable from some ref (`all_tips`), a
/// ref's from that ref; with `--updateref`, the ref then set to its last kept entry.
fn expire_ref(
    repo: &Repository,
    refs: &Refs,
    reflog: &sluice_repo::worktrees::Reflog,
    (options, flags): (&ExpireOptions, ExpireFlags),
    all_tips: &[ObjectId],
) -> Result<Vec<Judged>, ReflogError> {
    let tip = match reflog.name.as_str() {
        "HEAD" => all_tips.to_vec(),
        name => (refs.resolve(name).ok())
            .and_then(|(_, id)| id)
            .into_iter()
            .collect(),
    };
    let ages = options.ages_of(&reflog.name);
    let (judged, last_kept) = expire_one(
        repo.objects(),
        repo.hash(),
        &reflog.path,
        &tip,
        (&ages, flags),
    )?;
    let symbolic = matches!(refs.read(&reflog.name), Ok(Some(RefTarget::Symbolic(_))));
    if let (true, false, false, Some(last)) = (flags.update_ref, flags.dry_run, symbolic, last_kept)
    {
        refs.write(&reflog.name, &RefTarget::Id(last))?;
    }
    Ok(judged)
}

/// Rewrites the reflog at `path` without its expired entries; `tips` are what its commits must
/// be reachable from to stay past `expire_unreachable`. Returns every entry judged and the new
/// id of the last kept (none when none is, or it is the null id).
fn expire_one(
    odb: &ObjectDb,
    hash: HashKind,
    path: &Path,
    tips: &[ObjectId],
    (options, flags): (&Ages, ExpireFlags),
) -> Result<(Vec<Judged>, Option<ObjectId>), ReflogError> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), None)),
        Err(source) => {
            return Err(ReflogError::Read {
                path: path.to_owned(),
                source,
            })
        }
    };
    let mut kept = Vec::with_capacity(text.len());
    let mut judged = Vec::new();
    let mut changed = false;
    let mut reach = Reach {
        odb,
        tips,
        set: None,
    };
    // As git's: with --rewrite, each entry is judged and written from the last kept one.
    let mut last_kept = hash.null_id();
    for line in text.split_inclusive(|&b| b == b'\n') {
        let Some(entry) = sluice_repo::refs::reflog::parse_entry(line, hash) else {
            // A line that cannot be read stays (git keeps what it cannot judge).
            kept.extend_from_slice(line);
            continue;
        };
        let old = match flags.rewrite {
            true => last_kept,
            false => entry.old,
        };
        let goes = expired((old, entry.new, entry.time), &mut reach, options);
        judged.push(Judged {
            kept: !goes,
            message: entry.message.to_owned(),
        });
        if goes {
            changed = true;
            continue;
        }
        if old != entry.old {
            changed = true;
            kept.extend_from_slice(old.to_string().as_bytes());
            kept.extend_from_slice(&line[2 * hash.len_in_bytes()..]);
        } else {
            kept.extend_from_slice(line);
        }
        last_kept = entry.new;
    }
    if changed && !flags.dry_run {
        sluice_odb::write_locked(path, &kept, false)?;
    }
    Ok((judged, Some(last_kept).filter(|id| !id.is_null())))
}

/// Whether one entry (its old and new ids and time) goes; one without a readable time stays.
fn expired(
    (old, new, time): (ObjectId, ObjectId, Option<i64>),
    reach: &mut Reach<'_>,
    options: &Ages,
) -> bool {
    let Some(time) = time else {
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
