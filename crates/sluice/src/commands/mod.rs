//! One module per command, each with its clap arguments and a `run`.

pub mod checkout;
pub mod checkout_index;
pub mod clone;
mod date;
pub mod fetch;
pub mod fetch_pack;
pub mod index_pack;
mod output;
mod refspec;
mod remote;
mod revision;
pub mod serve;
pub mod upload_pack;
pub mod verify_pack;

use crate::cli::{Cli, Command};
use sluice_odb::{Config, RepoError, Repository};
use std::path::PathBuf;
use std::process::ExitCode;

/// What every command may need: where it runs and the `-c` overrides.
pub struct Context {
    pub cwd: PathBuf,
    pub overrides: Vec<String>,
}

impl Context {
    /// The repository around the working directory, if there is one.
    pub fn repository(&self) -> anyhow::Result<Option<Repository>> {
        match Repository::discover(&self.cwd) {
            Ok(repo) => Ok(Some(self.with_overrides(repo)?)),
            Err(RepoError::NotFound(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The repository whose git directory is `git_dir`, with the `-c` overrides.
    pub fn open_git_dir(
        &self,
        git_dir: PathBuf,
        work_tree: Option<PathBuf>,
    ) -> anyhow::Result<Repository> {
        self.with_overrides(Repository::open_git_dir(git_dir, work_tree)?)
    }

    fn with_overrides(&self, mut repo: Repository) -> anyhow::Result<Repository> {
        for item in &self.overrides {
            repo.config_mut().set_parameter(item)?;
        }
        Ok(repo)
    }

    /// The configuration of `repo`, or the user's and system's when outside a repository.
    pub fn config(&self, repo: Option<&Repository>) -> anyhow::Result<Config> {
        if let Some(repo) = repo {
            return Ok(repo.config().clone());
        }
        let mut config = Config::load(None)?;
        for item in &self.overrides {
            config.set_parameter(item)?;
        }
        Ok(config)
    }
}

/// Runs the command line's command.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let cwd = match &cli.directory {
        Some(dir) => std::path::absolute(dir)?,
        None => std::env::current_dir()?,
    };
    if let Some(dir) = &cli.directory {
        std::env::set_current_dir(dir)
            .map_err(|e| anyhow::anyhow!("cannot change to '{}': {e}", dir.display()))?;
    }
    let context = Context {
        cwd,
        overrides: cli.config,
    };
    match cli.command {
        Command::IndexPack(args) => index_pack::run(args, &context),
        Command::VerifyPack(args) => verify_pack::run(args, &context),
        Command::Checkout(args) => checkout::run(args, &context),
        Command::CheckoutIndex(args) => checkout_index::run(args, &context),
        Command::UploadPack(args) => upload_pack::run(args, &context),
        Command::FetchPack(args) => fetch_pack::run(args, &context),
        Command::Fetch(args) => fetch::run(args, &context),
        Command::Clone(args) => clone::run(args, &context),
        Command::Serve(args) => serve::run(args, &context),
    }
}
