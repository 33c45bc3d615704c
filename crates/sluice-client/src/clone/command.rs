//! `git clone` as the command runs it, around [`clone_into`]: the remote read from what was
//! given, the new repository's directories made (and removed again if the clone fails), the
//! given settings and reference repositories written before anything is fetched, and git's
//! words in git's order ("Cloning into", the refusals git makes only after it, the advice for
//! a detached `HEAD`). The command line merges its flags into a [`CloneRequest`]; what it
//! shows goes through a [`CloneHost`].

use super::layout::{check_ref_format, Layout, LayoutError};
use super::local::{local_source, LocalChoice};
use super::plan::{directory_name, CloneShape, Origin, OriginError};
use super::run::{clone_into, CloneMessages, CloneNotice, CloneOptions};
use super::{write_settings, CloneError, SettingError};
use crate::reference::{add_references, dissociate, Reference, ReferenceError};
use crate::ServerLines;
use sluice_object::cancel::Cancel;
use sluice_object::progress::{Deferred, Progress};
use sluice_object::ObjectId;
use sluice_odb::{Config, ConfigError};
use sluice_remote::remote_colors::RemoteColorError;
use sluice_remote::{
    parse_depth, server_options, ConnectOptions, Deepen, DepthError, FetchError, IpVersion, Remote,
    RemoteUrl, SettingsError,
};
use sluice_repo::date::{parse_since, DateError};
use sluice_repo::init::{initial_branch, InitOptions};
use sluice_repo::template::template_dir;
use sluice_repo::{RefError, RefTarget, RepoError, Repository};
use std::path::{Path, PathBuf};

/// Why the command stopped. Each cause stays in the chain of causes (no variant is
/// transparent), where the command line finds a refused setting or the server's words.
#[derive(Debug, thiserror::Error)]
pub enum CloneCommandError {
    /// A path that is no repository (refused before "Cloning into").
    #[error("repository '{0}' does not exist")]
    NoSuchRepository(String),
    /// A combination of options git refuses once it said "Cloning into".
    #[error("{0}")]
    Refused(String),
    /// A `--config` key git refuses (said to the host as git's error line first).
    #[error("unable to write parameters to config file")]
    BadSetting,
    /// The clone itself failed.
    #[error("{0}")]
    Clone(#[from] CloneError),
    /// The remote could not be read from what was given.
    #[error("{0}")]
    Remote(#[from] FetchError),
    /// `--depth` is no number.
    #[error("{0}")]
    Depth(#[from] DepthError),
    /// `--shallow-since` is no date.
    #[error("{0}")]
    Date(#[from] DateError),
    /// The new directories could not be made.
    #[error("{0}")]
    Layout(#[from] LayoutError),
    /// A setting has a value git refuses.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// `color.remote` is configured in a way git refuses.
    #[error("{0}")]
    Colors(#[from] RemoteColorError),
    /// How to reach the remote is configured in a way git refuses.
    #[error("{0}")]
    Connect(#[from] SettingsError),
    /// The remote's name or its refspecs are refused.
    #[error("{0}")]
    Origin(#[from] OriginError),
    /// The `--config` settings could not be written.
    #[error("{0}")]
    Setting(#[from] SettingError),
    /// A reference repository could not be borrowed from (or let go of).
    #[error("{0}")]
    Reference(#[from] ReferenceError),
    /// The new repository could not be opened.
    #[error("{0}")]
    Repo(#[from] RepoError),
    /// `HEAD` could not be read.
    #[error("{0}")]
    Ref(#[from] RefError),
}

/// A clone's command line, its flags merged.
pub struct CloneRequest<'a> {
    /// The repository to clone, as given.
    pub repository: &'a str,
    /// The new directory as given; else one named after the repository.
    pub directory: Option<&'a Path>,
    /// Where relative paths start.
    pub cwd: &'a Path,
    /// The user's and the system's configuration.
    pub config: &'a Config,
    /// Which refs the clone takes and how it names them.
    pub shape: CloneShape,
    /// `--depth`, as given.
    pub depth: Option<&'a str>,
    /// `--shallow-since`, as given.
    pub shallow_since: Option<&'a str>,
    /// `--shallow-exclude`.
    pub shallow_exclude: &'a [String],
    /// `--filter`, its spec as git writes it.
    pub filter: Option<String>,
    /// `--bundle-uri`.
    pub bundle_uri: Option<&'a str>,
    /// Whether the work tree is checked out (not with `--no-checkout`, nor bare).
    pub check_out: bool,
    /// `--[no-]reject-shallow`, if given (else `clone.rejectShallow`).
    pub reject_shallow: Option<bool>,
    /// What decides whether a clone from a path copies files.
    pub local: LocalChoice<'a>,
    /// `--reference` and `--reference-if-able`.
    pub references: Vec<Reference>,
    /// `--dissociate`.
    pub dissociate: bool,
    /// `--config` settings for the new repository (`key=value`).
    pub settings: &'a [String],
    /// `--template`.
    pub template: Option<&'a Path>,
    /// `--origin`.
    pub origin: Option<&'a str>,
    /// `--separate-git-dir`.
    pub separate_git_dir: Option<&'a Path>,
    /// `GIT_WORK_TREE`.
    pub work_tree_env: Option<&'a Path>,
    /// `--ref-format`.
    pub ref_format: Option<&'a str>,
    /// `--server-option`.
    pub server_options: &'a [String],
    /// `--upload-pack`.
    pub upload_pack: Option<&'a str>,
    /// `-4`/`-6`.
    pub ip_version: IpVersion,
    /// `-q`: only warnings are said.
    pub quiet: bool,
    /// Whether the server is asked for its progress (shown).
    pub progress: bool,
    /// A refusal the command line found that git makes only after "Cloning into".
    pub refused_late: Option<String>,
    /// Stops the transfer and the checkout.
    pub cancel: Cancel,
}

/// What the command's host does for it: its words and its progress.
pub trait CloneHost: Sync {
    /// Text for standard error, as it is.
    fn err(&self, text: &str);

    /// A progress of the host's, shown as the command line says.
    fn progress(&self) -> Box<dyn Progress>;

    /// What shows the server's progress (band 2), each packet as it arrives, coloured as
    /// `config` says; what it left open is ended when it is dropped.
    fn server_lines(&self, config: &Config) -> Result<ServerLines<'_>, RemoteColorError>;
}

/// What the command made.
pub struct CloneMade {
    /// The new repository, as it is after the clone.
    pub repo: Repository,
    /// Whether its work tree was checked out.
    pub checked_out: bool,
}

/// Runs `clone`.
pub fn run_clone(
    request: CloneRequest<'_>,
    host: &dyn CloneHost,
) -> Result<CloneMade, CloneCommandError> {
    let config = request.config;
    // A URL that cannot be read is refused after "Cloning into", as git's transport does.
    let remote = Remote::to_clone(request.cwd, config, request.repository);
    check_source(&remote, request.repository)?;
    let initial = initial_branch(config);
    let (depth, deepen) = deepen_of(&request)?;
    let bare = request.shape.bare;
    let directory = request.directory.map_or_else(
        || PathBuf::from(directory_name(request.repository, bare)),
        Path::to_path_buf,
    );
    check_ref_format(request.ref_format)?;
    let template = template_dir(request.template, config);
    let kind = InitOptions {
        initial: &initial,
        bare,
        extensions: request.filter.is_some(),
        template: template.as_deref(),
    };
    // Refused before "Cloning into", as git does.
    let (env_tree, git_dir) = (request.work_tree_env, request.separate_git_dir);
    let mut layout = Layout::make(request.cwd, &directory, git_dir, env_tree, kind)?;
    if !request.quiet {
        let into = if bare { "bare repository " } else { "" };
        host.err(&format!(
            "Cloning into {into}'{}'...\n",
            directory.display()
        ));
    }
    // A template that is no directory is none; git says so, quiet or not.
    if let Some(template) = template.filter(|t| !request.cwd.join(t).is_dir()) {
        host.err(&format!(
            "warning: templates not found in {}\n",
            template.display()
        ));
    }
    let remote = remote?;
    depth?;
    if let Some(refusal) = &request.refused_late {
        return Err(CloneCommandError::Refused(refusal.clone()));
    }
    let (local, warnings) = local_source(&remote, &request.local);
    for warning in warnings {
        host.err(&format!("warning: {warning}\n"));
    }
    write_given_settings(&request, &layout.git_dir, host)?;
    let repo = Repository::open_git_dir(layout.git_dir.clone(), layout.work_tree.clone())?;
    let made = clone_made(&request, &remote, &repo, &initial, local, deepen, host)?;
    layout.keep();
    Ok(made)
}

/// The clone into the new repository `repo`, and what is said after it.
fn clone_made(
    request: &CloneRequest<'_>,
    remote: &Remote,
    repo: &Repository,
    initial: &str,
    local: Option<super::LocalSource>,
    deepen: Deepen,
    host: &dyn CloneHost,
) -> Result<CloneMade, CloneCommandError> {
    let origin = Origin::from_config(repo.config(), request.origin)?;
    let (receiving, checkout) = (host.progress(), Deferred::default());
    let after = host.progress();
    let reject_shallow = match request.reject_shallow {
        Some(given) => given,
        None => repo
            .config()
            .get_bool("clone.rejectShallow")?
            .unwrap_or(false),
    };
    let options = CloneOptions {
        shape: request.shape.clone(),
        deepen,
        filter: request.filter.clone(),
        tags: !request.shape.no_tags,
        check_out: request.check_out,
        reject_shallow,
        connect: ConnectOptions {
            ip_version: request.ip_version,
            server_options: server_options(request.server_options, repo.config(), &origin.name),
            cancel: request.cancel.clone(),
            ..ConnectOptions::from_config(repo.config(), request.upload_pack)?
        },
        local,
        bundle_uri: crate::bundle_uri::wanted(repo.config())?,
        bundle_from: request.bundle_uri.map(str::to_owned),
        remote_progress: request.progress,
        receive_progress: &*receiving,
        early_checkout_progress: &checkout,
        checkout_progress: &*after,
    };
    let words = Words {
        host,
        quiet: request.quiet,
        server: host.server_lines(repo.config())?,
    };
    let cloned = clone_into(remote, &origin, repo, initial, &options, &words)?;
    // The server's last line, if it left one open, ended before what follows.
    drop(words);
    if request.dissociate {
        dissociate(repo)?;
    }
    if cloned.checked_out_early {
        checkout.replay(&*host.progress());
    }
    if let (true, Some(id)) = (options.check_out, cloned.head) {
        advise_if_detached(repo, &id, host)?;
    }
    Ok(CloneMade {
        repo: repo.reopened()?,
        checked_out: options.check_out,
    })
}

/// A path that is no repository, refused before "Cloning into" and in clone's words (fetch
/// says it another way), as git does; a name with a colon goes to the transport, which says
/// it its own way, and a URL that cannot be read is refused after "Cloning into".
fn check_source(remote: &Result<Remote, FetchError>, given: &str) -> Result<(), CloneCommandError> {
    if let Ok(Remote {
        url: RemoteUrl::Local(path),
        shown,
        ..
    }) = remote
    {
        if !path.exists() && !given.contains(':') {
            return Err(CloneCommandError::NoSuchRepository(shown.clone()));
        }
    }
    Ok(())
}

/// How far history is cut: a depth that is no positive number refused now; one with more
/// than a number in it by the transport, after "Cloning into" (the first returned), as git's.
fn deepen_of(
    request: &CloneRequest<'_>,
) -> Result<(Result<(), DepthError>, Deepen), CloneCommandError> {
    let depth = request.depth.map(parse_depth).transpose();
    if let Err(e @ DepthError::NotPositive(_)) = depth {
        return Err(e.into());
    }
    let deepen = Deepen {
        depth: depth.clone().unwrap_or_default(),
        since: parse_since(request.shallow_since)?,
        not: request.shallow_exclude.to_vec(),
        relative: false,
    };
    Ok((depth.map(drop), deepen))
}

/// The new repository's `--config` settings and `--reference` alternates, refused and said
/// as git.
fn write_given_settings(
    request: &CloneRequest<'_>,
    git_dir: &Path,
    host: &dyn CloneHost,
) -> Result<(), CloneCommandError> {
    match write_settings(git_dir, request.settings) {
        Err(SettingError::BadKey(problem)) => {
            host.err(&format!("error: {problem}\n"));
            return Err(CloneCommandError::BadSetting);
        }
        written => written?,
    }
    let objects = git_dir.join("objects");
    for (given, why) in add_references(request.cwd, &objects, &request.references)? {
        host.err(&format!(
            "info: Could not add alternate for '{given}': {why}\n"
        ));
    }
    Ok(())
}

/// A clone checked out on no branch (`--branch <tag>`) at `head`: git's advice, under -q too.
fn advise_if_detached(
    repo: &Repository,
    head: &ObjectId,
    host: &dyn CloneHost,
) -> Result<(), CloneCommandError> {
    let detached = !matches!(repo.refs().read("HEAD")?, Some(RefTarget::Symbolic(_)));
    if detached && sluice_checkout::report::advises_detached(repo)? {
        host.err(&sluice_checkout::report::detached_advice(&head.to_string()));
    }
    Ok(())
}

/// The clone's messages, as git words them; `-q` keeps only the warnings.
struct Words<'a> {
    host: &'a dyn CloneHost,
    quiet: bool,
    server: ServerLines<'a>,
}

impl CloneMessages for Words<'_> {
    fn tell(&self, told: CloneNotice<'_>) {
        match told {
            // Said under -q too, as git says it.
            CloneNotice::EmptyRepository => self
                .host
                .err("warning: You appear to have cloned an empty repository.\n"),
            CloneNotice::ObjectsLinked if !self.quiet => self.host.err("done.\n"),
            CloneNotice::Warning(warning) => self.host.err(&format!("warning: {warning}\n")),
            _ => {}
        }
    }

    fn remote_progress(&self, text: &[u8]) {
        (self.server)(text);
    }
}
