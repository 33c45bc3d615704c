//! `sluice pack-objects [options] (--stdout | <base-name>)`: git's plumbing for scripts, on the
//! engine that serves fetches and writes repacks. Standard input lists object ids (each with
//! the path it was found at), or with `--revs` revisions (`<rev>`, `^<rev>`, `--not`).

use super::Context;
use crate::progress::TerminalProgress;
use anyhow::bail;
use clap::Args;
use sluice_generate::pack_objects::{
    pack_objects, write_cruft_at, Filters, MissingAction, PackObjectsJob, PackObjectsMessages,
    PackOutput, RootKinds, Selection, StoredOutput, Unreachable,
};
use sluice_generate::packfile_uris::PackfileUris;
use sluice_generate::{IslandRules, PackOptions, PackSizeLimit};
use sluice_pack::idx::IdxWriteOptions;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// `git pack-objects`' arguments.
#[derive(Debug, Args)]
pub struct PackObjectsArgs {
    /// Write the pack to standard output.
    #[arg(long)]
    stdout: bool,
    /// Read revisions, not object ids, from standard input.
    #[arg(long)]
    revs: bool,
    /// Every ref (and HEAD), as if listed: implies --revs.
    #[arg(long)]
    all: bool,
    /// Every object a reflog entry names, as if listed: implies --revs.
    #[arg(long)]
    reflog: bool,
    /// Every object an index holds (blobs, cache-tree trees), as if listed: implies --revs.
    #[arg(long)]
    indexed_objects: bool,
    /// Deltas may name bases left out of the pack (with --stdout and --revs).
    #[arg(long)]
    thin: bool,
    /// Deltas may name their base by offset.
    #[arg(long)]
    delta_base_offset: bool,
    /// Search every delta anew.
    #[arg(long)]
    no_reuse_delta: bool,
    /// Search every delta anew and compress every object anew.
    #[arg(long)]
    no_reuse_object: bool,
    #[command(flatten)]
    search: super::repack::SearchArgs,
    /// Only objects not in a pack yet (with --stdin-packs: the loose objects too).
    #[arg(long)]
    unpacked: bool,
    /// As --unpacked.
    #[arg(long)]
    incremental: bool,
    /// Add the annotated tags whose object goes in the pack.
    #[arg(long)]
    include_tag: bool,
    /// Standard input names packs (`pack-….pack`, `^` before those left out): their objects.
    #[arg(long)]
    stdin_packs: bool,
    /// Objects of the other packs the new one leaves out are kept loose (those of packs newer
    /// than <date>, else all), for git's `repack -A`.
    #[arg(long, value_name = "date", num_args = 0..=1, require_equals = true)]
    unpack_unreachable: Option<Option<String>>,
    /// Add the objects of the repository's packs that nothing asked for reaches (but those of
    /// kept packs), for git's `repack -a -d -k`: implies --revs.
    #[arg(long)]
    keep_unreachable: bool,
    /// Add every loose object too, reached or not: implies --revs.
    #[arg(long)]
    pack_loose_unreachable: bool,
    /// Standard input names the packs that stay and, after `-`, those about to go: a cruft
    /// pack of what only the latter and loose objects hold, dated in its `.mtimes`.
    #[arg(long)]
    cruft: bool,
    /// With --cruft: leave out what is older than this (`never`: nothing).
    #[arg(long, value_name = "date", requires = "cruft")]
    cruft_expiration: Option<String>,
    /// The largest pack to write, with k, m or g (0: no limit; else `pack.packSizeLimit`):
    /// more packs are written as needed.
    #[arg(long, value_name = "n")]
    max_pack_size: Option<String>,
    /// Leave out objects only an alternate has.
    #[arg(long)]
    local: bool,
    /// Leave out objects of packs with a .keep file.
    #[arg(long)]
    honor_pack_keep: bool,
    /// Leave out the objects of this pack (its file name, `pack-….pack`).
    #[arg(long, value_name = "pack-name")]
    keep_pack: Vec<String>,
    /// Accepted for compatibility: Sluice has no grafts to hide parents.
    #[arg(long)]
    keep_true_parents: bool,
    /// Write a reachability bitmap beside the pack (with --all).
    #[arg(long, overrides_with = "write_bitmap_index_quiet")]
    write_bitmap_index: bool,
    /// Write a bitmap if one can be written, without a warning if not (git's repack passes
    /// it when bitmaps are only the default).
    #[arg(long, hide = true, overrides_with = "write_bitmap_index")]
    write_bitmap_index_quiet: bool,
    /// Write no pack when there is nothing to pack.
    #[arg(long)]
    non_empty: bool,
    /// With --revs: leave out what the filter excludes (`blob:none`, `blob:limit=<n>`,
    /// `tree:<depth>`, `object:type=<type>`), as for a partial clone.
    #[arg(long, value_name = "filter-spec", overrides_with = "no_filter")]
    filter: Option<String>,
    /// Undo an earlier --filter.
    #[arg(long, overrides_with = "filter")]
    no_filter: bool,
    /// Leave out the objects of promisor packs and the missing objects a promisor remote has
    /// (with revisions, as git's repack asks in a partial clone).
    #[arg(long)]
    exclude_promisor_objects: bool,
    /// What a missing object does: `error`, `allow-any` (left out), `allow-promisor` (left out
    /// when a promisor remote has it).
    #[arg(long, value_name = "action")]
    missing: Option<String>,
    /// The `.idx` version to write (2, git's default, or 1; `<version>,<offset>`: offsets past
    /// it in version 2's 64-bit table), as git takes it.
    #[arg(long, value_name = "version[,offset]")]
    index_version: Option<String>,
    /// The zlib level of what is compressed anew (`pack.compression`).
    #[arg(long, value_name = "n")]
    compression: Option<u32>,
    /// Show progress, the writing phase's too, even with --stdout or no terminal.
    #[arg(long)]
    all_progress: bool,
    /// Where progress is shown, show the writing phase's too (git's send-pack passes it).
    #[arg(long)]
    all_progress_implied: bool,
    /// Taken as git passes it (how objects are counted; the pack holds the same objects).
    #[arg(long, overrides_with = "no_sparse")]
    sparse: bool,
    /// Taken as git passes it.
    #[arg(long, overrides_with = "sparse")]
    no_sparse: bool,
    /// Count with a reachability bitmap where there is one (as Sluice does anyway).
    #[arg(long, overrides_with = "no_use_bitmap_index")]
    use_bitmap_index: bool,
    /// Taken as git's send-pack passes it (`push.useBitmaps=false`): how objects are counted,
    /// not which; the pack holds the same objects.
    #[arg(long, overrides_with = "use_bitmap_index")]
    no_use_bitmap_index: bool,
    /// Taken as git's send-pack passes it for a shallow client (deltas are chosen the same).
    #[arg(long)]
    shallow: bool,
    /// Make no delta across the bounds of the delta islands (`pack.island`), and write the
    /// core island (`pack.islandCore`) first; with `--revs` only, as git.
    #[arg(long, overrides_with = "no_delta_islands")]
    delta_islands: bool,
    #[arg(long, hide = true, overrides_with = "delta_islands")]
    no_delta_islands: bool,
    /// Leave out the blobs `uploadpack.blobPackfileUri` offers at a URL of this scheme, and
    /// name their packs and URLs before the pack (as git's upload-pack asks for a client that
    /// downloads them).
    #[arg(long, value_name = "protocol")]
    uri_protocol: Vec<String>,
    /// Say nothing.
    #[arg(short, long)]
    quiet: bool,
    /// Show progress even when standard error is no terminal.
    #[arg(long)]
    progress: bool,
    /// The pack is written as `<base-name>-<checksum>.pack` (with .idx and .rev).
    #[arg(value_name = "base-name", required_unless_present = "stdout")]
    base_name: Option<PathBuf>,
}

/// Runs pack-objects.
pub fn run(args: PackObjectsArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let offered = PackfileUris::from_config(repo.config(), repo.hash())?;
    if args.stdout && args.base_name.is_some() {
        bail!("--stdout cannot be used with a base name");
    }
    let given_limit = match super::size_option("max-pack-size", args.max_pack_size.as_deref()) {
        Ok(bytes) => bytes,
        Err(code) => return Ok(code),
    };
    // The configured limit is for packs written to files; a bad one is refused either way.
    let limit = PackSizeLimit::resolve(given_limit.filter(|_| !args.stdout), repo.config())?;
    if args.stdout && given_limit.is_some_and(|bytes| bytes != 0) {
        bail!("--max-pack-size cannot be used to build a pack for transfer");
    }
    let limit = limit.filter(|_| !args.stdout);
    if limit.is_some_and(|limit| limit.raised) {
        eprintln!("warning: minimum pack size limit is 1 MiB");
    }
    let revs = walks_revisions(&args)?;
    // Before anything is walked: a bad expression stops it in git's words.
    let island_rules = match args.delta_islands && revs {
        true => Some(IslandRules::from_config(repo.config())?),
        false => None,
    };
    let (object_filter, missing) = filter_and_missing(&args)?;
    let index = index_options(&args)?;
    let limit = limit.map(|limit| limit.bytes);
    let input = std::io::stdin().lock();
    if let (true, Some(base)) = (args.cruft, &args.base_name) {
        return write_cruft(&args, &repo, (input, base, limit), context);
    }
    let roots = RootKinds {
        refs: args.all,
        reflogs: args.reflog,
        indexed: args.indexed_objects,
    };
    let unreachable = Unreachable {
        packed: args.keep_unreachable,
        loose: args.pack_loose_unreachable,
    };
    let selection = match args.stdin_packs {
        true => Selection::read_packs(input)?,
        false => Selection::read(&repo, input, revs, roots)?,
    };
    let shallow = repo.shallow_set()?;
    let filters = Filters {
        unpacked: args.unpacked || args.incremental,
        local: args.local,
        honor_pack_keep: args.honor_pack_keep,
        keep_packs: &args.keep_pack,
        object_filter,
        exclude_promisor: args.exclude_promisor_objects,
        missing,
        shallow: &shallow,
        cancel: context.cancel.clone(),
    };
    let compression = match args.compression {
        Some(level) if level <= 9 => level,
        Some(level) => bail!("bad pack compression level {level}"),
        None => PackOptions::compression_of(repo.config())?,
    };
    let shown = crate::progress::enabled(!args.quiet, args.progress || args.all_progress);
    // As git's: the writing phase of a pack sent to stdout is shown only when asked for.
    let show_writing = !args.stdout || args.all_progress || args.all_progress_implied;
    let progress = TerminalProgress::new(shown);
    // As git's: in a partial clone, what the revisions reach (or the input lists) and the
    // repository lacks comes from the promisor remote first, unless `--missing` or
    // `--exclude-promisor-objects` say what to do without it.
    if missing == MissingAction::Error && !args.exclude_promisor_objects {
        sluice_client::promised::fetch_to_pack(&repo, &selection, &filters)?;
    }
    let reuse = super::repack::reuse_of(args.no_reuse_delta, args.no_reuse_object);
    let window_search = Some(args.search.limits(repo.config(), reuse)?);
    let options = PackOptions {
        thin: args.thin && matches!(selection, Selection::Revs { .. }),
        ofs_delta: args.delta_base_offset,
        compression,
        show_writing,
        window_search,
        cancel: context.cancel.clone(),
        islands: None,
        allow_pack_reuse: PackOptions::allow_pack_reuse_of(repo.config())?,
        // The window search's limits carry the threads.
        threads: 0,
    };
    let job = PackObjectsJob {
        selection,
        filters,
        unreachable,
        include_tag: args.include_tag,
        islands: island_rules,
        uris: (offered, &args.uri_protocol),
        options,
    };
    let said = PackObjectsStderr { shown };
    let packed = if args.stdout {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        let packed = pack_objects(&repo, job, PackOutput::Stream(&mut out), (&progress, &said))?;
        out.into_inner().map_err(|e| e.into_error())?.flush()?;
        packed
    } else {
        let loosen_after = match &args.unpack_unreachable {
            None => None,
            Some(None) => Some(std::time::UNIX_EPOCH),
            Some(Some(when)) => Some(sluice_maintain::gc::time_of(when)?),
        };
        let wanted = args.write_bitmap_index || args.write_bitmap_index_quiet;
        let stored = StoredOutput {
            base: args
                .base_name
                .as_deref()
                .expect("required without --stdout"),
            index,
            limit,
            non_empty: args.non_empty,
            loosen_after,
            bitmap: (wanted && args.all).then_some(!args.write_bitmap_index_quiet),
        };
        let packed = pack_objects(&repo, job, PackOutput::Stored(stored), (&progress, &said))?;
        for stored in &packed.stored {
            println!("{}", stored.checksum);
        }
        packed
    };
    if let (true, Some(stats)) = (shown, packed.stats) {
        eprintln!("{stats}");
    }
    Ok(ExitCode::SUCCESS)
}

/// pack-objects' words as it goes, as git's: URI lines on the pack's stream, warnings and
/// the islands on standard error.
struct PackObjectsStderr {
    shown: bool,
}

impl PackObjectsMessages for PackObjectsStderr {
    fn uri(&self, line: &str) {
        println!("{line}");
    }

    fn unexaminable(&self, path: &std::path::Path) {
        eprintln!(
            "warning: loose object at {} could not be examined",
            path.display()
        );
    }

    fn islands(&self, marked: sluice_generate::Marked) {
        say_marked(marked, self.shown);
    }

    fn no_bitmap(&self, why: &str) {
        eprintln!("warning: disabling bitmap writing, {why}");
    }
}

/// git's words on the islands marked: a warning per ref matched by a rule of too many capture
/// groups; on progress, how many islands there are.
pub(super) fn say_marked(marked: sluice_generate::Marked, shown: bool) {
    for _ in 0..marked.over_captured {
        eprintln!(
            "warning: island regex from config has too many capture groups (max={})",
            sluice_generate::MAX_CAPTURES
        );
    }
    if shown {
        eprintln!("Marked {} islands, done.", marked.islands);
    }
}

/// `--filter` (unless `--no-filter`) and `--missing`, refused in git's words when bad.
fn filter_and_missing(
    args: &PackObjectsArgs,
) -> anyhow::Result<(sluice_graph::ObjectFilter, MissingAction)> {
    let object_filter = match args.filter.as_deref().filter(|_| !args.no_filter) {
        None => sluice_graph::ObjectFilter::None,
        Some(spec) => match sluice_graph::ObjectFilter::parse(spec) {
            Some(filter) => filter,
            None => bail!("invalid filter-spec '{spec}'"),
        },
    };
    let missing = match args.missing.as_deref() {
        None => MissingAction::Error,
        Some(name) => match MissingAction::parse(name) {
            Some(action) => action,
            None => bail!("invalid value for '--missing': '{name}'"),
        },
    };
    Ok((object_filter, missing))
}

/// `--index-version=<version>[,<offset>]`, as index-pack takes it; unset, the configuration
/// decides.
fn index_options(args: &PackObjectsArgs) -> anyhow::Result<Option<IdxWriteOptions>> {
    let Some(value) = args.index_version.as_deref() else {
        return Ok(None);
    };
    let (version, offset) = IdxWriteOptions::parse_version(value)?;
    let default = IdxWriteOptions::default();
    Ok(Some(IdxWriteOptions {
        version,
        off32_limit: offset.unwrap_or(default.off32_limit),
        ..default
    }))
}

/// `--cruft`: the packs named on `input` decide, the cruft packs written at `base` (under
/// `limit` bytes each), their names said.
fn write_cruft(
    args: &PackObjectsArgs,
    repo: &sluice_repo::Repository,
    (input, base, limit): (impl std::io::BufRead, &std::path::Path, Option<u64>),
    context: &Context,
) -> anyhow::Result<ExitCode> {
    let expiration = match args.cruft_expiration.as_deref() {
        None | Some("never") => None,
        Some(when) => Some(sluice_maintain::gc::time_of(when)?),
    };
    let options = PackOptions {
        compression: PackOptions::compression_of(repo.config())?,
        cancel: context.cancel.clone(),
        ..PackOptions::default()
    };
    let odb = repo.objects().with_alternate_packs();
    let (packs, _) = write_cruft_at(repo, &odb, input, expiration, (&options, base, limit))?;
    for stored in packs {
        println!("{}", stored.checksum);
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether standard input lists revisions: `--revs`, or an option that implies it as in git
/// (`--thin`, the roots, `--unpacked`, what adds or loosens unreachable objects); the
/// combinations git refuses are refused in its words, in its order.
fn walks_revisions(args: &PackObjectsArgs) -> anyhow::Result<bool> {
    let revs = args.revs
        || args.thin
        || args.all
        || args.reflog
        || args.indexed_objects
        || (args.unpacked && !args.stdin_packs)
        || args.exclude_promisor_objects
        || args.unpack_unreachable.is_some()
        || args.keep_unreachable
        || args.pack_loose_unreachable;
    if args.thin && !args.stdout {
        bail!("--thin cannot be used to build an indexable pack");
    }
    if args.keep_unreachable && args.unpack_unreachable.is_some() {
        bail!("options '--keep-unreachable' and '--unpack-unreachable' cannot be used together");
    }
    if args.stdin_packs && args.filter.is_some() && !args.no_filter {
        bail!("cannot use --filter with --stdin-packs");
    }
    if args.stdin_packs && revs {
        bail!("cannot use internal rev list with --stdin-packs");
    }
    if args.cruft && revs {
        bail!("cannot use internal rev list with --cruft");
    }
    if args.cruft && args.stdin_packs {
        bail!("cannot use --stdin-packs with --cruft");
    }
    Ok(revs)
}
