//! `sluice completions <shell>` and `sluice man <dir>`: shell completion scripts and man pages
//! made from the same clap definitions as `--help`, so that the three never disagree.

use crate::cli::Cli;
use clap::{Args, CommandFactory};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// `completions`' arguments.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell whose completion script is printed (bash, zsh, fish, elvish, powershell).
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// `man`'s arguments.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The directory the pages (`sluice.1`, `sluice-<command>.1`) are written into.
    #[arg(value_name = "dir")]
    dir: PathBuf,
}

/// Prints the completion script.
pub fn completions(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command();
    // Into memory first: the generator panics on a write error (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "sluice", &mut script);
    match std::io::stdout().write_all(&script) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// Writes the man pages.
pub fn man(args: ManArgs) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.dir)?;
    clap_mangen::generate_to(Cli::command(), &args.dir)?;
    Ok(ExitCode::SUCCESS)
}
