//! The `sluice` command: one subcommand per git command it replaces, with git's flags, messages
//! and exit codes (128 for fatal errors, 129 for usage errors).

// Argument docs are clap's help text, written with git's `<placeholder>` convention.
#![allow(rustdoc::invalid_html_tags)]

/// std's `eprintln!`, but each message goes to standard error in one write, as git writes its
/// messages: std writes each piece of the format apart, and a process sharing our standard
/// error (a local receive-pack, a hook) could put its own line inside one of ours ("fatal:
/// fatal: the remote end hung up unexpectedly"). Declared before the modules, so that it is
/// the `eprintln!` they use.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        $crate::write_stderr(format!("{}\n", format_args!($($arg)*)))
    };
}

/// std's `eprint!`, in one write (see `eprintln!`).
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::write_stderr(format!($($arg)*))
    };
}

mod allocator;
mod cleanup;
mod cli;
mod commands;
mod global;
mod log;
mod progress;
mod terminal;

use cli::Command;
use sluice_odb::ConfigError;
use sluice_remote::FetchError;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match cli::parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    // `SLUICE_SHA1=portable`: hash as a CPU without SHA-1 instructions does, so that a
    // benchmark on a machine with them can give both figures.
    if std::env::var_os("SLUICE_SHA1").is_some_and(|kernel| kernel == "portable") {
        sluice_object::use_portable_sha1();
    }
    if cli.command.as_ref().is_some_and(Command::receives_packs) {
        allocator::keep_thresholds_fixed();
    }
    let cancel = sluice_object::cancel::Cancel::new();
    cleanup::install_signal_handlers(cancel.clone());
    match commands::run(cli, cancel) {
        Ok(code) => code,
        // Stopped by a signal: what it wrote is gone, and git says nothing either.
        Err(_) if cleanup::signalled().is_some() => cleanup::after_signal(),
        Err(error) => {
            // A closed pipe (`sluice … | head`) is not an error worth reporting.
            let io = error.downcast_ref::<std::io::Error>();
            if io.is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) {
                return ExitCode::from(141);
            }
            // What the server said with its refusal comes first, as git shows it.
            let said = error.chain().find_map(FetchError::server_message_in);
            for line in said.into_iter().flat_map(str::lines) {
                eprintln!("remote: {line}");
            }
            // A refused setting: git's error line on the value before the fatal one.
            let config = error.chain().find_map(|e| e.downcast_ref::<ConfigError>());
            for why in config
                .and_then(ConfigError::said_first)
                .iter()
                .flat_map(|why| why.lines())
            {
                eprintln!("error: {why}");
            }
            eprintln!("fatal: {}", describe(error.as_ref()));
            ExitCode::from(128)
        }
    }
}

/// The error with its causes on one line, separated by colons, as git prints a fatal error.
/// The module error types already end their message with their cause's (`{source}`), so a
/// cause is added only when the text so far does not end with it; printing the chain
/// unconditionally said "corrupt zlib stream: …" twice.
pub(crate) fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let causes = std::iter::successors(error.source(), |cause| cause.source());
    for cause in causes {
        // A system error is said in git's words (strerror's, without Rust's "(os error N)"),
        // unless the text says it already, in either.
        let said = cause.to_string();
        let words = match cause.downcast_ref::<std::io::Error>() {
            Some(io) => sluice_object::errno::system_words(io),
            None => said.clone(),
        };
        if !text.ends_with(&said) && !text.ends_with(&words) {
            text.push_str(": ");
            text.push_str(&words);
        }
    }
    text
}

/// Writes `text` to standard error whole; a failure to report is not reported.
fn write_stderr(text: String) {
    use std::io::Write as _;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
