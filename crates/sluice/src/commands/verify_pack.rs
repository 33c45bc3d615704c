//! `sluice verify-pack`: checks packs against their indexes completely (every object inflated,
//! every delta resolved, every id and CRC compared), and with `-v` lists them as git does.

use super::Context;
use sluice_odb::pack_store::{pack_and_index, verify};
use sluice_pack::{IndexOptions, Listing, PackIndexer};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `verify-pack`.
#[derive(Debug, clap::Args)]
pub struct VerifyPackArgs {
    /// List every object, then a histogram of delta chain lengths.
    #[arg(short = 'v', long)]
    pub verbose: bool,
    /// Print only the histogram.
    #[arg(short = 's', long)]
    pub stat_only: bool,
    /// The packs' index files (or pack files).
    #[arg(value_name = "pack.idx", required = true)]
    pub packs: Vec<PathBuf>,
}

/// Runs `verify-pack`: exit 0 when every pack is good, 1 otherwise, as git.
pub fn run(args: VerifyPackArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let config = context.config(None)?;
    // git's verify-pack runs index-pack, whose death on a bad setting fails it with 1.
    let threads = match sluice_odb::pack_store::pack_threads(&config) {
        Ok(threads) => threads,
        Err(e) => {
            eprintln!("fatal: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let indexer = PackIndexer::new(IndexOptions {
        threads,
        ..IndexOptions::default()
    });
    let mut failed = false;
    let mut stdout = std::io::stdout().lock();
    for path in &args.packs {
        let (pack_path, idx_path) = pack_and_index(path);
        match verify(&pack_path, Some(&idx_path), &indexer) {
            Ok(pack) => {
                if args.verbose || args.stat_only {
                    let listing = match args.stat_only {
                        true => Listing::Histogram,
                        false => Listing::Objects,
                    };
                    pack.write_listing(listing, &mut stdout)?;
                    if !args.stat_only {
                        writeln!(stdout, "{}: ok", pack_path.display())?;
                    }
                }
            }
            Err(error) => {
                failed = true;
                stdout.flush()?;
                // git's verify-pack passes on what its index-pack died of.
                eprintln!("fatal: {}", crate::describe(&error));
                if args.verbose || args.stat_only {
                    writeln!(stdout, "{}: bad", pack_path.display())?;
                }
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
