//! `git gc`: refs packed, old reflog entries expired, everything reachable repacked into one
//! pack (what the old packs held beyond it kept loose while younger than the prune date, as
//! git's `repack -A --unpack-unreachable`), loose objects pruned past that date, and the
//! commit-graph written. `--auto` does it only when there are more loose objects than
//! `gc.auto` or more packs than `gc.autoPackLimit`.

use crate::prune::{prune, PruneError, PruneOptions};
use crate::reflog::{expire_all, ExpireOptions, ReflogError};
use sluice_generate::{
    repack_all_with, repack_geometric, CruftOptions, GeometricOptions, IslandRules, PackSizeLimit,
    RepackError, RepackOptions, Reuse, Rolled, SearchLimits,
};
use sluice_object::cancel::Cancel;
use sluice_object::progress::{Discard, Progress};
use sluice_repo::refs::PackRefsOptions;
use sluice_repo::{RefError, Repository};
use std::time::SystemTime;

/// Why gc stopped (what it did before stays done; each step leaves the repository whole).
#[derive(Debug, thiserror::Error)]
pub enum GcError {
    /// Packing refs failed.
    #[error(transparent)]
    Refs(#[from] RefError),
    /// Expiring reflogs failed.
    #[error(transparent)]
    Reflog(#[from] ReflogError),
    /// Repacking failed.
    #[error(transparent)]
    Repack(#[from] RepackError),
    /// Pruning failed.
    #[error(transparent)]
    Prune(#[from] PruneError),
    /// Writing the commit-graph failed.
    #[error(transparent)]
    CommitGraph(#[from] sluice_graph::commit_graph::CommitGraphError),
    /// A setting has a value of the wrong type.
    #[error(transparent)]
    Config(#[from] sluice_odb::ConfigError),
    /// A date in the configuration cannot be read.
    #[error(transparent)]
    Date(#[from] sluice_repo::date::DateError),
    /// `gc.repackFilter` names no filter (git's words).
    #[error("invalid filter-spec '{0}'")]
    BadFilter(String),
    /// `--prune=<date>` names no date (git's words).
    #[error("failed to parse prune expiry value {0}")]
    BadPrune(String),
    /// A reflog age setting names no date (git's words).
    #[error(transparent)]
    BadExpiry(#[from] crate::reflog::BadAge),
    /// The delta islands' configuration cannot be used.
    #[error(transparent)]
    Islands(#[from] sluice_generate::IslandError),
    /// A step of gc beside the objects failed (the command git's gc runs for it, and why).
    #[error("{1}")]
    Housekeeping(&'static str, #[source] std::io::Error),
    /// `gc.pid` could not be written.
    #[error(transparent)]
    Lock(#[from] sluice_odb::lockfile::LockError),
    /// A step failed of something its own reading found, a setting say (the command git's gc
    /// runs for the step, and the failure).
    #[error("{1}")]
    Step(&'static str, #[source] Box<GcError>),
}

impl GcError {
    /// The step of gc that failed, as git's gc names the command it ran for it ("failed to run
    /// repack"); `None` for what git's gc does itself.
    pub fn step(&self) -> Option<&'static str> {
        match self {
            GcError::Refs(_) => Some("pack-refs"),
            GcError::Reflog(_) => Some("reflog"),
            GcError::Repack(_) | GcError::Islands(_) => Some("repack"),
            GcError::Prune(_) => Some("prune"),
            GcError::Housekeeping(step, _) | GcError::Step(step, _) => Some(step),
            _ => None,
        }
    }

    /// This failure as one of the step `step`, unless it names its own.
    fn in_step(self, step: &'static str) -> GcError {
        match self.step() {
            Some(_) => self,
            None => GcError::Step(step, Box::new(self)),
        }
    }
}

/// How gc runs.
#[derive(Debug, Clone)]
pub struct GcOptions {
    /// Only when there is enough to do (`--auto`).
    pub auto: bool,
    /// Which limit `--auto` found past, when it was decided before (see
    /// [`past_auto_limits`]): past `gc.auto` but not `gc.autoPackLimit`, only the loose
    /// objects the roots reach are packed, into a new pack without a bitmap, the other packs
    /// left as they are; past `gc.autoPackLimit`, everything is, as without `--auto`, but
    /// `gc.bigPackThreshold` gives way when as many packs as the limit are that big.
    pub past: Option<PastLimit>,
    /// Unreachable objects older than this go (`--prune`, `gc.pruneExpire`, 2 weeks);
    /// `None`: none (`never`).
    pub prune_expire: Option<SystemTime>,
    /// `--no-prune`: no expiry at all, not even `never`. git then gives its repack no cruft
    /// expiration, and so the cruft packs are combined up to `gc.maxCruftSize`.
    pub no_prune: bool,
    /// The reflog ages (`gc.reflogExpire`, `gc.reflogExpireUnreachable`).
    pub reflog: ExpireOptions,
    /// The repack's delta search: `Some` limits (`--aggressive`: every delta searched anew
    /// within git's wider limits), or `None`: `pack.window`, `pack.depth` and the rest, stored
    /// deltas reused, read when the repack runs (a bad value fails the repack, after the refs
    /// and reflogs, as in git, whose repack's pack-objects reads them).
    pub window_search: Option<SearchLimits>,
    /// What no ref reaches but is younger than the prune date goes into a cruft pack
    /// (`gc.cruftPacks`, on by default as in git 2.38 and later), not loose.
    pub cruft: bool,
    /// Stops the repack and the prune between two objects.
    pub cancel: Cancel,
    /// Leave the largest pack (in bytes; not a cruft or `.keep` pack) as it is
    /// (`--keep-largest-pack`).
    pub keep_largest_pack: bool,
    /// `gc.repackFilter` (and `gc.repackFilterTo`): what the filter leaves out of the new pack
    /// goes into a pack of its own.
    pub repack_filter: Option<sluice_generate::FilterOut>,
    /// The largest new cruft pack (`--max-cruft-size`, `gc.maxCruftSize`); with nothing ever
    /// pruned, the smaller cruft packs are combined up to it and the larger ones kept.
    pub max_cruft_size: Option<u64>,
    /// Run even when `gc.pid` names a gc still running (`--force`).
    pub force: bool,
    /// Whether the refs are packed (`gc.packRefs`).
    pub pack_refs: PackRefs,
    /// Leave every pack of at least this many bytes as it is (`gc.bigPackThreshold`; not a
    /// cruft or `.keep` pack), unless `--keep-largest-pack` says to keep the largest alone.
    pub big_pack_threshold: Option<u64>,
    /// Linked worktrees gone from disk whose index is older than this lose their
    /// administrative files (`gc.worktreePruneExpire`, 3 months).
    pub worktree_expire: SystemTime,
    /// rerere's recorded resolutions last used before the first, and unresolved conflicts
    /// recorded before the second, are removed (`gc.rerereResolved`, 60 days,
    /// `gc.rerereUnresolved`, 15 days).
    pub rerere: (SystemTime, SystemTime),
}

/// `gc.packRefs`: whether gc packs the refs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackRefs {
    /// Always (true, the default).
    Yes,
    /// Never (false).
    No,
    /// Only in a repository with a work tree (`notbare`).
    NotBare,
}

impl PackRefs {
    fn from_config(config: &sluice_odb::Config) -> Result<PackRefs, GcError> {
        if config.get("gc.packrefs") == Some("notbare") {
            return Ok(PackRefs::NotBare);
        }
        Ok(match config.get_bool("gc.packrefs")? {
            Some(false) => PackRefs::No,
            _ => PackRefs::Yes,
        })
    }

    fn packs(self, repo: &Repository) -> bool {
        match self {
            PackRefs::Yes => true,
            PackRefs::No => false,
            PackRefs::NotBare => repo.work_tree().is_some(),
        }
    }
}

impl GcOptions {
    /// The options git's gc takes from `config`, with `prune` (`--prune=<date>`, `never`) in
    /// place of `gc.pruneExpire` when given. Every setting git's gc reads for itself is read
    /// here, before anything is done, and a bad one refused, whether or not it decides this
    /// run (those the steps read are read as each runs).
    pub fn from_config(
        config: &sluice_odb::Config,
        auto: bool,
        prune: Option<&str>,
    ) -> Result<GcOptions, GcError> {
        // Read where they decide (`--auto`, `--aggressive`, detaching, the delta cache git's
        // gc weighs against memory), refused here as git refuses them before it starts.
        for key in [
            "gc.aggressivewindow",
            "gc.aggressivedepth",
            "gc.auto",
            "gc.autopacklimit",
        ] {
            config.get_int(key)?;
        }
        config.get_bool("gc.autodetach")?;
        config.get_unsigned("pack.deltacachesize")?;
        // Checked whether or not `--prune` overrides it, as git reads it.
        let configured = config_expiry(config, "gc.pruneexpire")?;
        let given = prune.is_some();
        let prune = prune.map_or_else(
            || configured.unwrap_or("2.weeks.ago").to_owned(),
            str::to_owned,
        );
        let prune_expire = match prune.as_str() {
            "never" | "false" => None,
            "now" => Some(SystemTime::now()),
            date if given => Some(to_time(
                seconds(date).map_err(|_| GcError::BadPrune(date.to_owned()))?,
            )),
            date => Some(to_time(seconds(date)?)),
        };
        Ok(GcOptions {
            auto,
            past: None,
            prune_expire,
            no_prune: false,
            reflog: ExpireOptions::from_config(config, (None, None))?,
            window_search: None,
            cruft: config.get_bool("gc.cruftpacks")?.unwrap_or(true),
            max_cruft_size: config.get_unsigned("gc.maxcruftsize")?,
            force: false,
            pack_refs: PackRefs::from_config(config)?,
            big_pack_threshold: config
                .get_unsigned("gc.bigpackthreshold")?
                .filter(|n| *n > 0),
            worktree_expire: {
                let configured = config_expiry(config, "gc.worktreepruneexpire")?;
                time_of(configured.unwrap_or("3.months.ago"))?
            },
            rerere: (
                expiry_in_days(config, "gc.rerereresolved", 60)?,
                expiry_in_days(config, "gc.rerereunresolved", 15)?,
            ),
            cancel: Cancel::default(),
            keep_largest_pack: false,
            repack_filter: match config.get("gc.repackfilter") {
                Some(spec) => Some(sluice_generate::FilterOut {
                    filter: sluice_graph::ObjectFilter::parse(spec)
                        .ok_or_else(|| GcError::BadFilter(spec.to_owned()))?,
                    to: config
                        .get("gc.repackfilterto")
                        .map(std::path::PathBuf::from),
                }),
                None => None,
            },
        })
    }
}

/// `gc --aggressive`'s delta search: every delta searched anew, within
/// `gc.aggressiveWindow` (250) and `gc.aggressiveDepth` (50), the other limits as configured.
pub fn aggressive_search(config: &sluice_odb::Config) -> Result<SearchLimits, GcError> {
    let int = |key: &str, default: i64| -> Result<i64, GcError> {
        Ok(config.get_int(key)?.unwrap_or(default).max(0))
    };
    let given = sluice_generate::GivenLimits {
        window: Some(int("gc.aggressivewindow", 250)? as usize),
        depth: Some(int("gc.aggressivedepth", 50)? as u32),
        ..sluice_generate::GivenLimits::default()
    };
    Ok(SearchLimits::from_config(config, &given, Reuse::Objects)?)
}

/// The value of the expiry setting `key` (`gc.pruneExpire`, `gc.logExpiry`), refused as git
/// refuses it when it is no date in the past: `Invalid <key>: '<value>'`, with where it was
/// set.
pub fn config_expiry<'c>(
    config: &'c sluice_odb::Config,
    key: &str,
) -> Result<Option<&'c str>, sluice_odb::ConfigError> {
    let Some(value) = config.get(key) else {
        return Ok(None);
    };
    let now = to_seconds(SystemTime::now());
    match value == "now" || seconds(value).is_ok_and(|at| at < now) {
        true => Ok(Some(value)),
        false => Err(config.refuse(key, format!("Invalid {key}: '{value}'"))),
    }
}

/// A setting git reads as days or a date (`gc.rerereResolved`): `default` days ago unset.
fn expiry_in_days(
    config: &sluice_odb::Config,
    key: &str,
    default: u64,
) -> Result<SystemTime, GcError> {
    let days = |n: u64| SystemTime::now() - std::time::Duration::from_secs(n * 86_400);
    Ok(match config.get(key) {
        None => days(default),
        Some(value) => match value.parse::<u64>() {
            Ok(n) => days(n),
            Err(_) => time_of(value)?,
        },
    })
}

/// `time` in whole seconds since the epoch, as git compares file times and dates.
pub(crate) fn to_seconds(time: SystemTime) -> i64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A date as git reads `gc.*` and `--expire` values, in seconds since the epoch: `never` (and
/// `false`) is the beginning of time, so that nothing is older; `all` the end of it, so that
/// everything is.
pub fn seconds(text: &str) -> Result<i64, sluice_repo::date::DateError> {
    match text {
        "never" | "false" => Ok(0),
        "all" => Ok(i64::MAX),
        _ => Ok(sluice_repo::date::parse_since(Some(text))?.unwrap_or(0)),
    }
}

/// A date as git reads `--prune`, `--cruft-expiration` and the like ([`seconds`]), as a time.
pub fn time_of(text: &str) -> Result<SystemTime, sluice_repo::date::DateError> {
    Ok(to_time(seconds(text)?))
}

fn to_time(seconds: i64) -> SystemTime {
    // Bounded (to some 35,000 years), as a time cannot hold the end of time.
    let seconds = seconds.clamp(0, 1 << 40) as u64;
    std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds)
}

/// Whether gc ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GcOutcome {
    /// It did its work, with git's warnings on what it left out, in git's order (each
    /// without its `warning: `).
    Done {
        /// A bitmap wanted in a repository that borrows objects; a pack size limit raised to
        /// the least one, for the new pack and the cruft pack; no commit-graph, as
        /// `core.commitGraph` says.
        warnings: Vec<String>,
    },
    /// `--auto` found too little to do.
    NothingToDo,
    /// Another gc runs on the repository, as its `gc.pid` says: nothing was done.
    Running(crate::gc_lock::Running),
}

/// What gc does before it repacks: the refs packed (as `gc.packRefs` says), the reflogs
/// expired. A gc that detaches does it before it returns, as git's, and the gc in the
/// background again (it finds nothing). The settings git's first step reads of the repository
/// (`core.commitGraph`, `gc.writeCommitGraph`) are read first, and fail that step; returns
/// what they say of the commit-graph gc writes last.
pub fn before_repack(repo: &Repository, options: &GcOptions) -> Result<GraphWrite, GcError> {
    let pack_refs = options.pack_refs.packs(repo);
    let first = if pack_refs { "pack-refs" } else { "reflog" };
    let graph = GraphWrite::from_config(repo.config()).map_err(|e| e.in_step(first))?;
    if pack_refs {
        repo.refs()
            .pack(&PackRefsOptions::every_ref(), repo.objects())?;
    }
    expire_all(repo, &options.reflog)?;
    Ok(graph)
}

/// The commit-graph gc writes last: `gc.writeCommitGraph` (on by default), if `core.commitGraph`
/// (on by default) lets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphWrite {
    /// Written.
    Write,
    /// Not wanted.
    Skip,
    /// Wanted, but `core.commitGraph` is off: git warns instead
    /// ([`sluice_graph::commit_graph::DISABLED`]).
    Disabled,
}

impl GraphWrite {
    fn from_config(config: &sluice_odb::Config) -> Result<GraphWrite, GcError> {
        let enabled = sluice_graph::commit_graph::enabled(config)?;
        Ok(
            match config.get_bool("gc.writecommitgraph")?.unwrap_or(true) {
                false => GraphWrite::Skip,
                true if enabled => GraphWrite::Write,
                true => GraphWrite::Disabled,
            },
        )
    }
}

/// Runs gc on `repo`, showing the repack's and the commit-graph's phases on `progress`.
pub fn gc(
    repo: &Repository,
    options: &GcOptions,
    progress: &dyn Progress,
) -> Result<GcOutcome, GcError> {
    let past = match options.auto {
        true => match past_auto_limits(repo)? {
            None => return Ok(GcOutcome::NothingToDo),
            past => past,
        },
        false => options.past,
    };
    let incremental = past == Some(PastLimit::LooseObjects);
    // Held until the end: another gc (an automatic one after a push, a scheduled one) waits
    // for the next time.
    let _lock = match crate::gc_lock::lock_for_gc(repo.common_dir(), options.force)? {
        Ok(lock) => lock,
        Err(running) => return Ok(GcOutcome::Running(running)),
    };
    let graph = before_repack(repo, options)?;
    let repacked = match incremental {
        true => repack_loose(repo, options, progress).map(|()| (false, false)),
        false => {
            repack_everything(repo, options, past, progress).map(|dropped| (dropped, options.cruft))
        }
    };
    let (bitmap_dropped, cruft) = repacked.map_err(|e| e.in_step("repack"))?;
    if let Some(expire) = options.prune_expire {
        let prune_options = PruneOptions {
            expire: Some(expire),
            cancel: options.cancel.clone(),
            ..PruneOptions::default()
        };
        prune(repo, &prune_options)?;
    }
    let (worktrees, rerere) = (&options.worktree_expire, options.rerere);
    crate::worktree_prune::prune_worktrees(repo.common_dir(), *worktrees)
        .map_err(|source| GcError::Housekeeping("worktree prune", source))?;
    let enabled = repo.config().get_bool("rerere.enabled")?;
    crate::worktree_prune::rerere_gc(repo.common_dir(), enabled, rerere)
        .map_err(|source| GcError::Housekeeping("rerere gc", source))?;
    if graph == GraphWrite::Write {
        sluice_graph::commit_graph::write_reachable(repo, progress)?;
    }
    let mut warnings = Vec::new();
    if bitmap_dropped {
        warnings.push("disabling bitmap writing, as some objects are not being packed".to_owned());
    }
    // What git's pack-objects says, run for the new pack and (git 2.47) the cruft pack, whose
    // limit is the cruft size when there is one.
    let limit = PackSizeLimit::resolve(None, repo.config())?;
    let cruft_limit = PackSizeLimit::resolve(options.max_cruft_size, repo.config())?;
    let raised = [limit, cruft_limit.filter(|_| cruft)];
    for _ in raised.iter().flatten().filter(|limit| limit.raised) {
        warnings.push("minimum pack size limit is 1 MiB".to_owned());
    }
    if graph == GraphWrite::Disabled {
        warnings.push(sluice_graph::commit_graph::DISABLED.to_owned());
    }
    Ok(GcOutcome::Done { warnings })
}

/// gc's repack of the loose objects alone (`--auto` past `gc.auto` only).
fn repack_loose(
    repo: &Repository,
    options: &GcOptions,
    progress: &dyn Progress,
) -> Result<(), GcError> {
    let steps = (true, false);
    let islands = IslandRules::for_repack(repo.config(), None)?;
    let search = (search_limits(repo, options)?, islands.as_ref());
    sluice_generate::repack_loose(repo, steps, search, progress, &options.cancel)?;
    Ok(())
}

/// The repack's delta search: as given, else as configured (a bad value is the repack's
/// failure).
fn search_limits(repo: &Repository, options: &GcOptions) -> Result<SearchLimits, GcError> {
    match options.window_search {
        Some(limits) => Ok(limits),
        None => SearchLimits::keeping_stored_deltas(repo.config())
            .map_err(|e| GcError::Repack(e.into())),
    }
}

/// gc's repack of everything (git's `repack -d -l` with `-A` or `--cruft`); whether a bitmap
/// was wanted but dropped because the repository borrows objects.
fn repack_everything(
    repo: &Repository,
    options: &GcOptions,
    past: Option<PastLimit>,
    progress: &dyn Progress,
) -> Result<bool, GcError> {
    // As git's gc, whose repack takes `-l`.
    let (bitmap, bitmap_dropped) =
        sluice_generate::local_bitmap(sluice_generate::writes_bitmaps(repo)?, repo);
    let repack = RepackOptions {
        bitmap,
        // Kept loose until prune judges them; everything when nothing is ever pruned.
        unpack_unreachable: Some(options.prune_expire.unwrap_or(std::time::UNIX_EPOCH)),
        // As git's gc (`repack -l`): what an alternate has stays there.
        local: true,
        window_search: Some(search_limits(repo, options)?),
        write_midx: false,
        cruft: options.cruft.then_some(CruftOptions {
            expiration: options.prune_expire,
            max_size: PackSizeLimit::resolve(options.max_cruft_size, repo.config())?
                .map(|limit| limit.bytes),
            // As git's repack, given no expiration: `--no-prune` (`never` is one).
            combine_below: options.max_cruft_size.filter(|_| options.no_prune),
        }),
        keep_packs: kept_packs(repo, options, past)?,
        cancel: options.cancel.clone(),
        filter: options.repack_filter.clone(),
        // What git's gc gets from its pack-objects.
        max_pack_size: PackSizeLimit::resolve(None, repo.config())?.map(|limit| limit.bytes),
        islands: IslandRules::for_repack(repo.config(), None)?,
        ..RepackOptions::default()
    };
    repack_all_with(repo, &repack, progress)?;
    Ok(bitmap_dropped)
}

/// What maintenance did after a push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterPush {
    /// Nothing needed doing.
    Nothing,
    /// The smallest packs were rolled into one pack.
    Rolled,
    /// A full gc ran: `gc --auto`'s limits were passed, or the small packs had grown to half
    /// the largest.
    Collected,
}

/// Maintenance after an accepted push (`receive.autogc`), in bounded work per push: `gc
/// --auto` when its limits are passed; otherwise the smallest packs are rolled into one (a
/// geometric repack, factor 2; loose objects are left to `gc.auto`, as git leaves them), so
/// that packs stay few (logarithmic in the objects) while the largest pack and its bitmap stay
/// as they are, and counting keeps using that bitmap for everything but the new objects. When the small packs together reach
/// half the largest, everything is repacked with a bitmap (its old bitmaps carried over).
pub fn after_push(repo: &Repository) -> Result<AfterPush, GcError> {
    let mut options = GcOptions::from_config(repo.config(), false, None)?;
    if let Some(past) = past_auto_limits(repo)? {
        options.past = Some(past);
        gc(repo, &options, &Discard)?;
        return Ok(AfterPush::Collected);
    }
    let geometric = GeometricOptions {
        factor: 2,
        spare_largest: true,
        loose: false,
        skip_server_info: false,
    };
    let rolled = repack_geometric(repo, &geometric, &Discard, &options.cancel)?;
    Ok(match rolled {
        Rolled::Nothing => AfterPush::Nothing,
        Rolled::Into { .. } => AfterPush::Rolled,
        Rolled::WouldTakeLargest => {
            gc(repo, &options, &Discard)?;
            AfterPush::Collected
        }
    })
}

/// Which of `gc --auto`'s limits a repository is past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PastLimit {
    /// More than `gc.autoPackLimit` packs: everything is repacked.
    Packs,
    /// More than `gc.auto` loose objects only: they are packed (incrementally).
    LooseObjects,
}

impl PastLimit {
    /// The word that tells a detached gc which limit its starter found past (`none` for
    /// neither), so that neither the test nor the `pre-auto-gc` hook runs twice.
    pub fn word(past: Option<PastLimit>) -> &'static str {
        match past {
            Some(PastLimit::Packs) => "packs",
            Some(PastLimit::LooseObjects) => "loose",
            None => "none",
        }
    }

    /// What [`PastLimit::word`] said.
    pub fn from_word(word: &str) -> Option<PastLimit> {
        match word {
            "packs" => Some(PastLimit::Packs),
            "loose" => Some(PastLimit::LooseObjects),
            _ => None,
        }
    }
}

/// `gc --auto`'s test: which limit the repository is past (more than `gc.autoPackLimit` packs,
/// else more than `gc.auto` loose objects), if the `pre-auto-gc` hook, when there is one,
/// agrees (exits 0), as git asks it.
pub fn past_auto_limits(repo: &Repository) -> Result<Option<PastLimit>, GcError> {
    let Some(past) = past_limits(repo)? else {
        return Ok(None);
    };
    // What the hook prints goes where git sends it: standard error.
    let agreed = sluice_repo::hooks::run(repo, "pre-auto-gc", &[], b"").unwrap_or(true);
    Ok(agreed.then_some(past))
}

/// About more than `gc.autoPackLimit` (50) packs, else more than `gc.auto` (6,700) loose
/// objects, counted in one fan-out directory as git counts them (git looks at the packs
/// first: past both, everything is repacked).
fn past_limits(repo: &Repository) -> Result<Option<PastLimit>, GcError> {
    let config = repo.config();
    if config.get_int("gc.auto")?.unwrap_or(6700) <= 0 {
        return Ok(None);
    }
    let objects = repo.objects().dir();
    let pack_limit = config.get_int("gc.autopacklimit")?.unwrap_or(50);
    // As git counts them: a pack kept by a `.keep` file is not one gc would repack.
    let packs = sluice_generate::pack_files(&sluice_odb::pack_dir(objects))
        .map(|packs| {
            (packs.iter())
                .filter(|p| !p.with_extension("keep").exists())
                .count()
        })
        .unwrap_or(0) as i64;
    Ok(if pack_limit > 0 && packs > pack_limit {
        Some(PastLimit::Packs)
    } else if too_many_loose_objects(repo)? {
        Some(PastLimit::LooseObjects)
    } else {
        None
    })
}

/// Whether there are more than `gc.auto` (6,700) loose objects, counted in one fan-out
/// directory as git counts them. After `gc --auto`, git warns that there are "too many
/// unreachable loose objects" when there still are.
pub fn too_many_loose_objects(repo: &Repository) -> Result<bool, GcError> {
    let limit = repo.config().get_int("gc.auto")?.unwrap_or(6700);
    if limit <= 0 {
        return Ok(false);
    }
    let sample = std::fs::read_dir(repo.objects().dir().join("17"))
        .map(|entries| entries.flatten().count())
        .unwrap_or(0) as i64;
    // git: more than `limit` in all, estimated from one directory of 256, rounded up.
    Ok(sample > (limit + 255) / 256)
}

/// The packs gc leaves as they are: the largest with `--keep-largest-pack`, else those of at
/// least `gc.bigPackThreshold` bytes; under `--auto`, the largest alone when those are as many
/// as `gc.autoPackLimit`, as git's gc then takes the threshold back.
fn kept_packs(
    repo: &Repository,
    options: &GcOptions,
    past: Option<PastLimit>,
) -> Result<Vec<String>, GcError> {
    if options.keep_largest_pack {
        return Ok(largest_pack(repo).into_iter().collect());
    }
    let Some(threshold) = options.big_pack_threshold else {
        return Ok(Vec::new());
    };
    let big: Vec<String> = (base_packs(repo).into_iter())
        .filter(|(size, _)| *size >= threshold)
        .map(|(_, name)| name)
        .collect();
    let limit = repo.config().get_int("gc.autopacklimit")?.unwrap_or(50);
    let past_packs = past == Some(PastLimit::Packs);
    Ok(match past_packs && limit > 0 && big.len() as i64 >= limit {
        true => largest_pack(repo).into_iter().collect(),
        false => big,
    })
}

/// The file name of `repo`'s largest pack in bytes, cruft and `.keep` packs aside, as git's
/// `gc --keep-largest-pack` picks it.
fn largest_pack(repo: &Repository) -> Option<String> {
    let (_, largest) = base_packs(repo).into_iter().max()?;
    Some(largest)
}

/// The packs gc may leave as they are, by size in bytes and file name: neither cruft packs
/// nor `.keep` ones.
fn base_packs(repo: &Repository) -> Vec<(u64, String)> {
    let dir = repo.objects().pack_dir();
    let packs = sluice_generate::pack_files(&dir).unwrap_or_default();
    let candidates = packs.into_iter().filter(|path| {
        !path.with_extension("keep").exists()
            && !path.with_extension(sluice_odb::mtimes::EXTENSION).exists()
    });
    (candidates.filter_map(|path| {
        let size = std::fs::metadata(&path).ok()?.len();
        Some((size, path.file_name()?.to_str()?.to_owned()))
    }))
    .collect()
}
