//! `sluice completions <shell>` and `sluice man <dir>`: shell completion scripts and man pages
//! made from the same clap definitions as `--help`, so that the three never disagree.

use crate::cli::Cli;
use clap::CommandFactory;
use std::io::Write;
use std::process::ExitCode;

/// Prints the completion script of `shell`.
pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    // Into memory first: the generator panics on a write error (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "sluice", &mut script);
    match std::io::stdout().write_all(&script) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// Writes the man pages into `dir`.
pub fn man(dir: &std::path::Path) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(dir)?;
    clap_mangen::generate_to(Cli::command(), dir)?;
    Ok(ExitCode::SUCCESS)
}
