//! `sluice repack -a -d [-b]`: everything the roots reach (refs, reflogs, indexes) in one new pack, the old packs and
//! loose copies removed once it is in place, and its reachability bitmap; `sluice repack
//! --geometric=<factor> -d`: the smallest packs and the loose objects rolled into one.

use super::Context;
use crate::progress::TerminalProgress;
use anyhow::{anyhow, bail};
use clap::Args;
use sluice_generate::{
    repack_all_with, repack_geometric_with_midx, repack_loose, BitmapChoice, CruftOptions,
    GeometricOptions, GivenLimits, IslandRules, PackSizeLimit, RepackBitmap, RepackOptions, Reuse,
    SearchLimits,
};
use std::process::ExitCode;

/// `git repack`'s arguments (the `-a -d` form).
#[derive(Debug, Args)]
pub struct RepackArgs {
    /// Pack everything reachable into one pack.
    #[arg(short = 'a')]
    all: bool,
    /// As -a, but with -d the objects of the old packs that no ref reaches are kept as loose
    /// objects (dated as their pack) instead of going with the pack.
    #[arg(short = 'A')]
    all_loosen: bool,
    /// Leave out the objects an alternate has.
    #[arg(short = 'l', long, overrides_with = "no_local")]
    local: bool,
    #[arg(long, hide = true, overrides_with = "local")]
    no_local: bool,
    /// Do not refresh the dumb-HTTP files (`info/refs`, `objects/info/packs`) afterwards, as
    /// `repack.updateServerInfo=false`.
    #[arg(short = 'n')]
    no_update_server_info: bool,
    /// Make no delta across the bounds of the delta islands (`pack.island`), and write the
    /// core island (`pack.islandCore`) first; `repack.useDeltaIslands` when not given.
    #[arg(short = 'i', long, overrides_with = "no_delta_islands")]
    delta_islands: bool,
    #[arg(long, hide = true, overrides_with = "delta_islands")]
    no_delta_islands: bool,
    /// With -A: only those of packs written after this date.
    #[arg(long, value_name = "when")]
    unpack_unreachable: Option<String>,
    /// Then remove the packs and loose objects it replaces.
    #[arg(short = 'd')]
    delete: bool,
    /// Write a reachability bitmap (by default in bare repositories, `repack.writeBitmaps`).
    #[arg(short = 'b', long = "write-bitmap-index", overrides_with = "no_bitmap")]
    bitmap: bool,
    #[arg(long = "no-write-bitmap-index", hide = true)]
    no_bitmap: bool,
    /// Roll the smallest packs and the loose objects into one, so that each pack holds at
    /// least this many times the objects of the next smaller one.
    #[arg(short = 'g', long, value_name = "factor", conflicts_with_all = ["all", "all_loosen"])]
    geometric: Option<u64>,
    /// Search every delta anew rather than reuse those stored (git's --no-reuse-delta).
    #[arg(short = 'f')]
    no_reuse_delta: bool,
    /// As -f, and compress every object anew too (git's --no-reuse-object).
    #[arg(short = 'F')]
    no_reuse_object: bool,
    #[command(flatten)]
    search: SearchArgs,
    /// As -a; with -d what no ref reaches goes into a cruft pack, each object dated in its
    /// `.mtimes`, instead of being dropped.
    #[arg(long)]
    cruft: bool,
    /// With -a -d: what no ref reaches stays, in the new pack.
    #[arg(short = 'k', long)]
    keep_unreachable: bool,
    /// Leave this pack (its file name, `pack-….pack`) as it is, as if it had a .keep file.
    #[arg(long, value_name = "pack-name")]
    keep_pack: Vec<String>,
    /// Repack the objects of .keep packs too (the default when writing a bitmap).
    #[arg(long, overrides_with = "no_pack_kept_objects")]
    pack_kept_objects: bool,
    #[arg(long, hide = true)]
    no_pack_kept_objects: bool,
    /// With --cruft: leave out unreachable objects older than this.
    #[arg(long, value_name = "date", requires = "cruft")]
    cruft_expiration: Option<String>,
    /// Write a multi-pack-index of the packs left; with -b, its multi-pack bitmap too (beside
    /// the new pack's own, which git reads second).
    #[arg(short = 'm', long, overrides_with = "no_write_midx")]
    write_midx: bool,
    #[arg(long, hide = true, overrides_with = "write_midx")]
    no_write_midx: bool,
    /// Leave what the filter excludes (`blob:none`, …) out of the new pack: it goes into a
    /// pack of its own.
    #[arg(long, value_name = "filter-spec")]
    filter: Option<String>,
    /// With --filter: write that pack as `<base>-<checksum>.pack` (for an object directory the
    /// repository borrows from), not beside the new one.
    #[arg(long, value_name = "base")]
    filter_to: Option<std::path::PathBuf>,
    /// The largest new pack, with k, m or g (else `pack.packSizeLimit`): more packs are
    /// written as needed, without a bitmap.
    #[arg(long, value_name = "n")]
    max_pack_size: Option<String>,
    /// With --cruft: the largest new cruft pack, with k, m or g (else --max-pack-size); without
    /// --cruft-expiration, the smaller cruft packs are combined up to it, the larger kept.
    #[arg(long, value_name = "n")]
    max_cruft_size: Option<String>,
    /// Say nothing.
    #[arg(short, long, overrides_with = "no_quiet")]
    quiet: bool,
    #[arg(long, hide = true, overrides_with = "quiet")]
    no_quiet: bool,
}

/// The delta search's limits, as `repack` and `pack-objects` take them.
#[derive(Debug, Args)]
pub(super) struct SearchArgs {
    /// Objects in the delta search's window (pack.window, 10).
    #[arg(long, value_name = "n")]
    window: Option<usize>,
    /// The longest delta chain (pack.depth, 50).
    #[arg(long, value_name = "n")]
    depth: Option<u32>,
    /// Bytes a window may hold, with k, m or g (pack.windowMemory; 0: no limit).
    #[arg(long, value_name = "n")]
    window_memory: Option<String>,
    /// Threads of the delta search (pack.threads; 0: one per core).
    #[arg(long, value_name = "n")]
    threads: Option<usize>,
}

impl SearchArgs {
    /// The limits from the arguments given, else the config, else git's defaults, keeping
    /// what `reuse` says of the stored packs.
    pub(super) fn limits(
        &self,
        config: &sluice_odb::Config,
        reuse: Reuse,
    ) -> anyhow::Result<SearchLimits> {
        let window_memory = match &self.window_memory {
            Some(text) => Some(
                sluice_odb::config::parse_int(text)
                    .and_then(|m| u64::try_from(m).ok())
                    .ok_or_else(|| anyhow!("invalid --window-memory '{text}'"))?,
            ),
            None => None,
        };
        let given = GivenLimits {
            window: self.window,
            depth: self.depth,
            window_memory,
            threads: self.threads,
        };
        // As git's pack-objects, quiet or not.
        if let Some(depth) = SearchLimits::too_deep(config, &given)? {
            let most = sluice_generate::MAX_DEPTH;
            eprintln!("warning: delta chain depth {depth} is too deep, forcing {most}");
        }
        Ok(SearchLimits::from_config(config, &given, reuse)?)
    }
}

/// What of the stored packs a repack keeps as it is: `-f`, `-F` (pack-objects'
/// `--no-reuse-delta`, `--no-reuse-object`), else git's default.
pub(super) fn reuse_of(no_reuse_delta: bool, no_reuse_object: bool) -> Reuse {
    match (no_reuse_delta, no_reuse_object) {
        (_, true) => Reuse::Nothing,
        (true, false) => Reuse::Objects,
        (false, false) => Reuse::Deltas,
    }
}

/// git's refusal of two of `-A` (or `--unpack-unreachable`), `-k` and `--cruft` together, the
/// first pair in git's order.
fn refuse_together(args: &RepackArgs) -> anyhow::Result<()> {
    let loosen = args.all_loosen || args.unpack_unreachable.is_some();
    let given = [
        (loosen, "-A"),
        (args.keep_unreachable, "-k/--keep-unreachable"),
        (args.cruft, "--cruft"),
    ];
    let mut named = given.iter().filter(|(on, _)| *on).map(|(_, name)| name);
    match (named.next(), named.next()) {
        (Some(first), Some(second)) => {
            bail!("options '{first}' and '{second}' cannot be used together")
        }
        _ => Ok(()),
    }
}

/// Runs repack.
pub fn run(args: RepackArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    refuse_together(&args)?;
    let progress = TerminalProgress::new(crate::progress::enabled(!args.quiet, false));
    let everything = args.all || args.all_loosen || args.cruft;
    let given = super::either(args.bitmap, args.no_bitmap);
    let whole = everything || args.write_midx;
    let RepackBitmap { choice, dropped } =
        BitmapChoice::for_repack(&repo, given, whole, args.local)?;
    let bitmap = choice;
    if dropped {
        eprintln!("warning: disabling bitmap writing, as some objects are not being packed");
    }
    if let Some(factor) = args.geometric {
        if !args.delete {
            bail!("sluice repack: --geometric is supported with -d only");
        }
        if factor < 2 {
            bail!("invalid geometric factor '{factor}': it must be at least 2");
        }
        // A bitmap would need every object in the new pack: git skips it too.
        let options = GeometricOptions {
            factor,
            spare_largest: false,
            loose: true,
            skip_server_info: args.no_update_server_info,
        };
        let asked = bitmap == BitmapChoice::Asked;
        let (midx, bitmap, cancel) = (args.write_midx, asked, &context.cancel);
        repack_geometric_with_midx(&repo, &options, midx, bitmap, &progress, cancel)?;
        return Ok(ExitCode::SUCCESS);
    }
    let islands_given = super::either(args.delta_islands, args.no_delta_islands);
    let islands = IslandRules::for_repack(repo.config(), islands_given)?;
    if !everything {
        // git's plain repack: the loose objects the roots reach into a new pack.
        let steps = (args.delete, args.no_update_server_info);
        let reuse = reuse_of(args.no_reuse_delta, args.no_reuse_object);
        let limits = args.search.limits(repo.config(), reuse)?;
        let search = (limits, islands.as_ref());
        let packed = repack_loose(&repo, steps, search, &progress, &context.cancel)?;
        if packed.is_none() && !args.quiet {
            println!("Nothing new to pack.");
        }
        return Ok(ExitCode::SUCCESS);
    }
    if !args.delete && (args.cruft || args.filter.is_some()) {
        bail!("sluice repack: --cruft and --filter are supported with -d only");
    }
    let unpack_unreachable = match (args.all_loosen, args.unpack_unreachable.as_deref()) {
        (false, _) => None,
        // Every unreachable object, whatever the age of its pack.
        (true, None) => Some(std::time::UNIX_EPOCH),
        (true, Some(when)) => Some(sluice_maintain::gc::time_of(when)?),
    };
    let reuse = reuse_of(args.no_reuse_delta, args.no_reuse_object);
    let window_search = Some(args.search.limits(repo.config(), reuse)?);
    let filter = match (args.filter.as_deref(), &args.filter_to) {
        (Some(spec), to) => Some(filter_out(
            spec,
            to.as_ref().map(|to| context.cwd.join(to)),
        )?),
        (None, Some(_)) => bail!("option '--filter-to' can only be used along with '--filter'"),
        (None, None) => None,
    };
    let given_limit = match super::size_option("max-pack-size", args.max_pack_size.as_deref()) {
        Ok(bytes) => bytes,
        Err(code) => return Ok(code),
    };
    let max_cruft_size = match super::size_option("max-cruft-size", args.max_cruft_size.as_deref())
    {
        Ok(bytes) => bytes.or(given_limit),
        Err(code) => return Ok(code),
    };
    let max_pack_size = PackSizeLimit::resolve(given_limit, repo.config())?;
    let cruft_size = PackSizeLimit::resolve(max_cruft_size, repo.config())?;
    // What git 2.47's pack-objects says, run for the new pack and for the cruft pack.
    let raised = [max_pack_size, cruft_size.filter(|_| args.cruft)];
    for _ in raised.iter().flatten().filter(|limit| limit.raised) {
        eprintln!("warning: minimum pack size limit is 1 MiB");
    }
    let options = RepackOptions {
        bitmap,
        max_pack_size: max_pack_size.map(|limit| limit.bytes),
        unpack_unreachable,
        local: args.local,
        window_search,
        write_midx: args.write_midx,
        cruft: match args.cruft {
            true => Some(CruftOptions {
                expiration: (args.cruft_expiration.as_deref())
                    .map(sluice_maintain::gc::time_of)
                    .transpose()?,
                max_size: cruft_size.map(|limit| limit.bytes),
                // git 2.47: the cruft packs combined up to the size, without an expiration.
                combine_below: max_cruft_size.filter(|_| args.cruft_expiration.is_none()),
            }),
            false => None,
        },
        keep_packs: args.keep_pack.clone(),
        pack_kept_objects: super::either(args.pack_kept_objects, args.no_pack_kept_objects),
        keep_unreachable: args.keep_unreachable,
        keep_old: !args.delete,
        cancel: context.cancel.clone(),
        skip_server_info: args.no_update_server_info,
        filter,
        islands,
    };
    let repacked = repack_all_with(&repo, &options, &progress)?;
    if let Some(marked) = repacked.islands {
        super::pack_objects::say_marked(marked, crate::progress::enabled(!args.quiet, false));
    }
    // Said when the bitmap was asked for, not when it is only a bare repository's default.
    if repacked.bitmap_dropped && bitmap == BitmapChoice::Asked {
        eprintln!("warning: disabling bitmap writing, packs are split due to pack.packSizeLimit");
    }
    if repacked.nothing_new && !args.quiet {
        println!("Nothing new to pack.");
    }
    Ok(ExitCode::SUCCESS)
}

/// `--filter=<spec>` (and `--filter-to`, as `gc.repackFilter` and `gc.repackFilterTo` give
/// them too), in git's words when the spec is not one.
pub(super) fn filter_out(
    spec: &str,
    to: Option<std::path::PathBuf>,
) -> anyhow::Result<sluice_generate::FilterOut> {
    match sluice_graph::ObjectFilter::parse(spec) {
        Some(filter) => Ok(sluice_generate::FilterOut { filter, to }),
        None => bail!("invalid filter-spec '{spec}'"),
    }
}
