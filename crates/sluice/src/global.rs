//! git's global options, those before the command's name (`git --help`), taken as git takes
//! them: `-C` changes directory, each relative to the one before; the others become the
//! environment that this process's discovery and configuration read and that every program it
//! starts inherits, as git hands them to its own children. Sluice runs no pager: `-p` changes
//! nothing.

use anyhow::{anyhow, bail};
use std::ffi::OsString;
use std::path::PathBuf;

/// The global options.
#[derive(Debug, clap::Args)]
pub struct GlobalArgs {
    /// Run as if started in <path>; several are taken each relative to the one before.
    #[arg(short = 'C', value_name = "path", global = true)]
    pub directories: Vec<PathBuf>,
    /// Set a configuration value for this command and those it runs (<name>=<value>, or
    /// <name> alone for true); `clone -c` writes the new repository's configuration instead.
    #[arg(short = 'c', value_name = "name=value")]
    pub config: Vec<String>,
    /// As -c, the value taken from the environment variable <envvar>.
    #[arg(long = "config-env", value_name = "name=envvar")]
    config_env: Vec<String>,
    /// The repository's git directory (GIT_DIR).
    #[arg(long, value_name = "path")]
    git_dir: Option<OsString>,
    /// The work tree (GIT_WORK_TREE).
    #[arg(long, value_name = "path")]
    work_tree: Option<OsString>,
    /// The ref namespace (GIT_NAMESPACE).
    #[arg(long, value_name = "name")]
    namespace: Option<OsString>,
    /// Treat the repository as bare; without GIT_DIR, the current directory is it.
    #[arg(long)]
    pub bare: bool,
    /// The shallow file to use instead of `$GIT_DIR/shallow` (git passes it to the index-pack
    /// of a shallow fetch; empty: none).
    #[arg(long, value_name = "file")]
    shallow_file: Option<OsString>,
    /// Where git's programs are (GIT_EXEC_PATH); alone, print it and exit.
    #[arg(long, value_name = "path", num_args = 0..=1, require_equals = true)]
    exec_path: Option<Option<OsString>>,
    /// Do not use replacement refs (GIT_NO_REPLACE_OBJECTS).
    #[arg(long)]
    no_replace_objects: bool,
    /// Do not fetch missing objects from a promisor remote (GIT_NO_LAZY_FETCH).
    #[arg(long)]
    no_lazy_fetch: bool,
    /// Take no optional locks (GIT_OPTIONAL_LOCKS=0).
    #[arg(long)]
    no_optional_locks: bool,
    /// Give no advice (GIT_ADVICE=0).
    #[arg(long)]
    no_advice: bool,
    /// Pathspecs are literal (GIT_LITERAL_PATHSPECS).
    #[arg(long)]
    literal_pathspecs: bool,
    /// Pathspecs are globs (GIT_GLOB_PATHSPECS).
    #[arg(long)]
    glob_pathspecs: bool,
    /// Pathspecs are literal, not globs (GIT_NOGLOB_PATHSPECS).
    #[arg(long)]
    noglob_pathspecs: bool,
    /// Pathspecs ignore case (GIT_ICASE_PATHSPECS).
    #[arg(long)]
    icase_pathspecs: bool,
    /// Page the output (Sluice pages nothing).
    #[arg(short = 'p', long = "paginate", overrides_with = "no_pager")]
    #[allow(dead_code)] // Taken for git's callers; there is no pager to start.
    paginate: bool,
    /// Do not page the output: as git, the programs started are told so (GIT_PAGER=cat).
    #[arg(short = 'P', long = "no-pager", overrides_with = "paginate")]
    no_pager: bool,
}

/// The global options that take their value as the next argument: what [`command_arguments`]
/// steps over to find the command's name.
const TAKING_VALUES: [&str; 7] = [
    "-C",
    "-c",
    "--config-env",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--shallow-file",
];

/// The arguments after the command's name, as given.
pub fn command_arguments() -> Vec<String> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if TAKING_VALUES.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            break;
        }
    }
    args.collect()
}

impl GlobalArgs {
    /// `--exec-path` alone: the directory to print (`GIT_EXEC_PATH`, else Sluice's own).
    pub fn exec_path_query(&self) -> Option<PathBuf> {
        let Some(None) = self.exec_path else {
            return None;
        };
        let own = std::env::current_exe().ok()?.parent()?.to_owned();
        Some(std::env::var_os("GIT_EXEC_PATH").map_or(own, PathBuf::from))
    }

    /// Applies the options; returns the directory the command runs in.
    pub fn apply(&self) -> anyhow::Result<PathBuf> {
        let mut cwd = std::env::current_dir()?;
        for dir in self
            .directories
            .iter()
            .filter(|d| !d.as_os_str().is_empty())
        {
            let next = cwd.join(dir);
            std::env::set_current_dir(&next).map_err(|e| {
                let why = sluice_object::errno::system_words(&e);
                anyhow!("cannot change to '{}': {why}", dir.display())
            })?;
            cwd = next;
        }
        export_settings(&self.settings()?)?;
        // What the environment gives is read at once, so that a bad setting stops the command
        // before it starts, in git's words.
        if let Err(e) = sluice_odb::config::environment::parameters() {
            eprintln!("error: {e}");
            bail!("unable to parse command-line config");
        }
        let values = [
            ("GIT_DIR", &self.git_dir),
            ("GIT_WORK_TREE", &self.work_tree),
            ("GIT_NAMESPACE", &self.namespace),
        ];
        for (name, value) in values {
            if let Some(value) = value {
                std::env::set_var(name, value);
            }
        }
        if self.bare && std::env::var_os("GIT_DIR").is_none() {
            std::env::set_var("GIT_DIR", &cwd);
        }
        if let Some(Some(path)) = &self.exec_path {
            std::env::set_var("GIT_EXEC_PATH", path);
        }
        let flags = [
            (self.no_pager, "GIT_PAGER", "cat"),
            (self.no_replace_objects, "GIT_NO_REPLACE_OBJECTS", "1"),
            (self.no_lazy_fetch, "GIT_NO_LAZY_FETCH", "1"),
            (self.no_optional_locks, "GIT_OPTIONAL_LOCKS", "0"),
            (self.no_advice, "GIT_ADVICE", "0"),
            (self.literal_pathspecs, "GIT_LITERAL_PATHSPECS", "1"),
            (self.glob_pathspecs, "GIT_GLOB_PATHSPECS", "1"),
            (self.noglob_pathspecs, "GIT_NOGLOB_PATHSPECS", "1"),
            (self.icase_pathspecs, "GIT_ICASE_PATHSPECS", "1"),
        ];
        for (_, name, value) in flags.iter().filter(|(on, _, _)| *on) {
            std::env::set_var(name, value);
        }
        if let Some(file) = &self.shallow_file {
            sluice_repo::shallow::use_file(file.into());
        }
        Ok(cwd)
    }

    /// The `-c` settings, then `--config-env`'s with their variables' values. (git keeps the
    /// two kinds in the order given; a key given by both, where that matters, is rare.)
    fn settings(&self) -> anyhow::Result<Vec<String>> {
        let mut settings = self.config.clone();
        for item in &self.config_env {
            let Some((name, variable)) = item.rsplit_once('=') else {
                bail!("invalid config format: {item}");
            };
            let value = std::env::var(variable).map_err(|_| {
                anyhow!("missing environment variable '{variable}' for configuration '{name}'")
            })?;
            settings.push(format!("{name}={value}"));
        }
        Ok(settings)
    }
}

/// Hands the `-c` settings to every configuration read from here on, this process's and those
/// of the programs it starts (upload-pack, `git credential`), as git does: appended to
/// `GIT_CONFIG_PARAMETERS`, which is read after the repository's own files.
fn export_settings(items: &[String]) -> anyhow::Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let existing = std::env::var_os("GIT_CONFIG_PARAMETERS")
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Refused here, before anything runs, as git refuses a bad `-c`.
    let params = match sluice_odb::config::environment::with_parameters(&existing, items) {
        Ok(params) => params,
        Err(e) => {
            eprintln!("error: {e}");
            bail!("unable to parse command-line config");
        }
    };
    std::env::set_var("GIT_CONFIG_PARAMETERS", params);
    Ok(())
}
