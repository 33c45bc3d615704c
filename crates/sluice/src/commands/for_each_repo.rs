//! `sluice for-each-repo --config=<key> [--keep-going] [--] <arguments>…`: runs a command in
//! every repository a multi-valued setting names (`maintenance.repo`, for the scheduler that
//! `maintenance start` set up), as git's for-each-repo does.

use super::Context;
use anyhow::bail;
use clap::Args;
use std::process::ExitCode;

/// `git for-each-repo`'s arguments.
#[derive(Debug, Args)]
pub struct ForEachRepoArgs {
    /// The setting whose values are the repositories' paths.
    #[arg(long, value_name = "config")]
    config: Option<String>,
    /// Go on after a command fails (and exit 1 at the end).
    #[arg(long)]
    keep_going: bool,
    /// The Sluice command and its arguments, run in each repository as `sluice -C <path> …`.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "arguments"
    )]
    arguments: Vec<String>,
}

/// Runs the command in each repository, in the order the values are set.
pub fn run(args: ForEachRepoArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let Some(key) = args.config.as_deref() else {
        bail!("missing --config=<config>");
    };
    // A key git cannot read is refused as git's option parser refuses it.
    if let Err(e) = sluice_odb::config::ConfigKey::parse(key) {
        eprintln!("error: {e}\nfatal: got bad config --config={key}\n");
        eprintln!("usage: sluice for-each-repo --config=<config> [--] <arguments>");
        return Ok(ExitCode::from(129));
    }
    let repo = context.repository()?;
    let config = context.config(repo.as_ref())?;
    let program = std::env::current_exe()?;
    let mut failed = false;
    for path in config.get_all(key) {
        let status = std::process::Command::new(&program)
            .arg("-C")
            .arg(path)
            .args(&args.arguments)
            .current_dir(&context.cwd)
            .status()?;
        if !status.success() {
            let code = status.code().map_or(1, |c| c.clamp(1, 255) as u8);
            if !args.keep_going {
                return Ok(ExitCode::from(code));
            }
            failed = true;
        }
    }
    Ok(ExitCode::from(u8::from(failed)))
}
