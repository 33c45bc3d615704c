//! `sluice unpack-objects [-n] [-q] [-r] [--strict[=<opts>]] [--pack_header=<v>,<n>]
//! [--max-input-size=<n>] < <pack>`: a pack on standard input written as loose objects, as
//! git's fetch and receive-pack run it for packs under `fetch.unpackLimit` and
//! `receive.unpackLimit`.

use super::Context;
use sluice_client::receive::PackProgress;
use sluice_odb::fsck::{Checker, FsckOptions};
use sluice_pack::LinkCheck;
use sluice_repo::receive::{unpack_into, Receiving};
use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

/// `git unpack-objects`'s arguments.
#[derive(Debug, clap::Args)]
pub struct UnpackObjectsArgs {
    /// Write nothing; only read and check the pack.
    #[arg(short = 'n')]
    dry_run: bool,
    /// Show no progress (shown on a terminal only, as git's).
    #[arg(short = 'q')]
    quiet: bool,
    /// Taken as git takes it; a damaged pack is refused whole.
    #[arg(short = 'r')]
    #[allow(dead_code)] // Taken as git's callers may pass it.
    recover: bool,
    /// Check every object as fsck does, and that what they name is here; <msg-id>=<severity>
    /// items, comma-separated.
    #[arg(long, value_name = "opts", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    strict: Option<String>,
    /// The pack's first 12 bytes, already read by the caller (<version>,<count>).
    #[arg(long = "pack_header", value_name = "version,count")]
    pack_header: Option<String>,
    /// Refuse packs larger than this many bytes.
    #[arg(long, value_name = "n")]
    max_input_size: Option<u64>,
}

/// Runs unpack-objects; what fsck found is printed, as git prints it.
pub fn run(args: UnpackObjectsArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let repo = context.require_repository()?;
    let checker = (args.strict.as_deref())
        .map(|list| -> anyhow::Result<Checker> {
            let mut fsck = FsckOptions::default();
            fsck.parse_list(list, repo.hash(), Path::new("."))?;
            Ok(Checker::new(repo.hash(), fsck))
        })
        .transpose()?;
    let connectivity = match args.strict {
        Some(_) => Some(LinkCheck {
            shallow: repo.shallow_commits()?,
            ..LinkCheck::default()
        }),
        None => None,
    };
    // unpack-objects' own progress, "Unpacking objects" with its throughput, on a terminal.
    let shown =
        crate::progress::TerminalProgress::new(crate::progress::enabled(!args.quiet, false));
    let discard = sluice_object::progress::Discard;
    let progress = PackProgress::unpacking_below(u64::MAX, &discard, &shown);
    let receiving = Receiving {
        progress: &progress,
        fsck: checker.as_ref().map(|c| c as _),
        connectivity,
        cancel: context.cancel.clone(),
        max_input_size: args.max_input_size,
        ..Receiving::default()
    };
    let header = (args.pack_header.as_deref())
        .map(sluice_pack::entry::pack_header_option)
        .transpose()?;
    let header = header.as_ref().map_or(&[][..], |h| &h[..]);
    let mut input = header.chain(std::io::stdin().lock());
    let unpacked = unpack_into(&mut input, &repo, receiving, args.dry_run);
    for finding in checker.iter().flat_map(Checker::findings) {
        eprintln!("{}: {finding}", finding.level());
    }
    unpacked?;
    Ok(ExitCode::SUCCESS)
}
