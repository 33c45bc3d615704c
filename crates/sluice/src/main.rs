//! The `sluice` command: one subcommand per git command it replaces, with git's flags, messages
//! and exit codes (128 for fatal errors, 129 for usage errors).

// Argument docs are clap's help text, written with git's `<placeholder>` convention.
#![allow(rustdoc::invalid_html_tags)]

mod cleanup;
mod cli;
mod commands;
mod progress;

use std::process::ExitCode;

fn main() -> ExitCode {
    cleanup::install_signal_handlers();
    let cli = match cli::parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) => {
            // A closed pipe (`sluice … | head`) is not an error worth reporting.
            if let Some(io) = error.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::from(141);
                }
            }
            eprintln!("fatal: {error:#}");
            ExitCode::from(128)
        }
    }
}
