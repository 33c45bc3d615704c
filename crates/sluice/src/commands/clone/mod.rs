//! `sluice clone`: a new repository from another, as `git clone` makes it: the pack with its
//! indexes, the remote's branches as `refs/remotes/origin/*` (or as they are, bare or mirror)
//! and its tags in `packed-refs`, `origin`'s configuration, reflogs, the shallow file or the
//! promisor settings of a partial clone, and the default branch checked out. Any URL git takes;
//! from a plain path, as git does, the source's object files are linked instead of fetched
//! (see `local_clone`). A failure (or a signal) removes what the clone created.

use super::remote::RemoteLines;
use super::{any_path, either, Context};
use crate::progress::TerminalProgress;
use anyhow::bail;
use clap::Args;
use sluice_client::clone::{
    check_ref_format, clone_into, local_source, write_settings, CloneMessages, CloneNotice,
    CloneOptions, CloneShape, Layout, LocalChoice, Origin, SettingError,
};
use sluice_client::partial::filter_spec;
use sluice_client::reference::{add_references, dissociate, Need, Reference};
use sluice_object::progress::Deferred;
use sluice_remote::{
    parse_depth, server_options, ConnectOptions, Deepen, DepthError, FetchError, IpVersion, Remote,
    RemoteUrl,
};
use sluice_repo::date::parse_since;
use sluice_repo::init::{initial_branch, InitOptions};
use sluice_repo::template::template_dir;
use sluice_repo::{RefTarget, Repository};
use sluice_submodule::clone::settings;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `git clone`'s arguments (those this version supports).
#[derive(Debug, Args)]
pub struct CloneArgs {
    /// Make a bare repository.
    #[arg(long)]
    bare: bool,
    /// Before fetching, bring in the bundle at this URL or path (its branches as
    /// refs/bundles/*), instead of the bundles the server advertises.
    #[arg(long, value_name = "uri")]
    bundle_uri: Option<String>,
    /// Make a bare mirror: every ref of the remote, as it is named there.
    #[arg(long)]
    mirror: bool,
    /// Do not check out HEAD.
    #[arg(short = 'n', long)]
    no_checkout: bool,
    /// Check out this branch (or tag) instead of the remote's HEAD.
    #[arg(short = 'b', long, value_name = "name")]
    branch: Option<String>,
    /// Clone only one branch: HEAD's or `--branch`'s.
    #[arg(long, overrides_with = "no_single_branch")]
    single_branch: bool,
    /// Clone every branch, even with `--depth`.
    #[arg(long, overrides_with = "single_branch")]
    no_single_branch: bool,
    /// Do not clone tags, and do not follow them in later fetches.
    #[arg(long)]
    no_tags: bool,
    /// A shallow clone of this many commits.
    #[arg(long, value_name = "depth")]
    depth: Option<String>,
    /// A shallow clone of the commits after this date.
    #[arg(long, value_name = "time")]
    shallow_since: Option<String>,
    /// A shallow clone that excludes what this remote ref reaches.
    #[arg(long, value_name = "revision")]
    shallow_exclude: Vec<String>,
    /// Fail if the source repository is shallow (by default `clone.rejectShallow`).
    #[arg(long, overrides_with = "no_reject_shallow")]
    reject_shallow: bool,
    /// Clone a shallow source repository too, whatever `clone.rejectShallow` says.
    #[arg(long, overrides_with = "reject_shallow")]
    no_reject_shallow: bool,
    /// A partial clone: leave out what the filter excludes (`blob:none`, `blob:limit=<n>`).
    #[arg(long, value_name = "filter-spec")]
    filter: Option<String>,
    /// No messages, no progress (the last of `-q` and `-v` counts).
    #[arg(short, long, overrides_with = "verbose")]
    quiet: bool,
    /// Be verbose (what Sluice says is the same; taken for git's command lines).
    #[arg(short, long, overrides_with = "quiet")]
    verbose: bool,
    /// Progress even when stderr is not a terminal.
    #[arg(long)]
    progress: bool,
    /// The command that runs upload-pack on the other side.
    #[arg(short = 'u', long, value_name = "command")]
    upload_pack: Option<String>,
    /// From a path, link the source's object files instead of fetching (the default for
    /// paths); a link that fails is an error rather than a copy.
    #[arg(short = 'l', long, overrides_with = "no_local")]
    local: bool,
    /// From a path, fetch through upload-pack as from a URL.
    #[arg(long, overrides_with = "local")]
    no_local: bool,
    /// From a path, copy the source's object files instead of linking them.
    #[arg(long)]
    no_hardlinks: bool,
    /// From a path, borrow the source's objects through an alternate instead of copying them.
    #[arg(short = 's', long)]
    shared: bool,
    /// Borrow objects from this local repository (objects/info/alternates). Repeatable.
    #[arg(long, value_name = "repository")]
    reference: Vec<String>,
    /// As `--reference`, but a repository that cannot be borrowed from is only reported.
    #[arg(long, value_name = "repository")]
    reference_if_able: Vec<String>,
    /// Stop borrowing once cloned: copy in every object taken from the alternates.
    #[arg(long)]
    dissociate: bool,
    /// Set a configuration value in the new repository, before the fetch and the checkout
    /// (`<key>=<value>`; a key alone is true). Repeatable.
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    config: Vec<String>,
    /// Copy this template directory into the new repository (else `GIT_TEMPLATE_DIR`, else
    /// `init.templateDir`); an empty name copies none.
    #[arg(long, value_name = "template-directory", value_parser = any_path())]
    template: Option<PathBuf>,
    /// Name the remote <name> instead of `origin` (or `clone.defaultRemoteName`).
    #[arg(short = 'o', long, value_name = "name")]
    origin: Option<String>,
    /// Put the repository at <git-dir>, and in the work tree a `.git` file naming it.
    #[arg(long, value_name = "git-dir")]
    separate_git_dir: Option<PathBuf>,
    /// How refs are stored: files (reftable is refused: Sluice does not read it).
    #[arg(long, value_name = "format")]
    ref_format: Option<String>,
    /// Send this option to the server (protocol v2), in ls-refs and fetch.
    #[arg(long, value_name = "option")]
    server_option: Vec<String>,
    /// After the checkout, clone the submodules too, and theirs (git's `submodule update
    /// --init --recursive`); the pathspec, `.` by default, becomes `submodule.active`.
    #[arg(long, value_name = "pathspec", num_args = 0..=1, require_equals = true,
          default_missing_value = ".", action = clap::ArgAction::Append)]
    recurse_submodules: Vec<String>,
    /// The submodules' clones take one commit each.
    #[arg(long, overrides_with = "no_shallow_submodules")]
    shallow_submodules: bool,
    #[arg(long, hide = true, overrides_with = "shallow_submodules")]
    no_shallow_submodules: bool,
    /// The submodules' clones take `--filter` too.
    #[arg(long)]
    also_filter_submodules: bool,
    /// Check each submodule out at its remote's branch (`submodule.<name>.branch`, else the
    /// remote's HEAD) rather than at the commit the superproject records.
    #[arg(long, overrides_with = "no_remote_submodules")]
    remote_submodules: bool,
    #[arg(long, hide = true, overrides_with = "remote_submodules")]
    no_remote_submodules: bool,
    /// How many submodules to clone at once (`submodule.fetchJobs` by default, 1; 0: one per
    /// core).
    #[arg(short = 'j', long, value_name = "n")]
    jobs: Option<u32>,
    /// Use IPv4 addresses only.
    #[arg(short = '4', long, overrides_with = "ipv6")]
    ipv4: bool,
    /// Use IPv6 addresses only.
    #[arg(short = '6', long, overrides_with = "ipv4")]
    ipv6: bool,
    /// The repository to clone: a path or any URL git takes.
    #[arg(value_name = "repository")]
    repository: String,
    /// The new directory (by default named after the repository; `directory` is `-C`'s).
    #[arg(value_name = "directory")]
    into: Option<PathBuf>,
}

impl CloneArgs {
    fn bare(&self) -> bool {
        self.bare || self.mirror
    }

    /// `--reference` repositories, then `--reference-if-able` ones.
    fn references(&self) -> Vec<Reference> {
        let required = self.reference.iter().map(|given| Reference {
            given: given.clone(),
            need: Need::Required,
        });
        let optional = self.reference_if_able.iter().map(|given| Reference {
            given: given.clone(),
            need: Need::IfAble,
        });
        required.chain(optional).collect()
    }

    /// `--depth` and the other shallow options imply `--single-branch` unless told otherwise.
    fn single_branch(&self) -> bool {
        let shallow = self.depth.is_some()
            || self.shallow_since.is_some()
            || !self.shallow_exclude.is_empty();
        !self.mirror && (self.single_branch || (shallow && !self.no_single_branch))
    }

    /// What decides whether a clone from a path copies files, and which given options that
    /// leaves without effect.
    fn local_choice(&self) -> LocalChoice<'_> {
        let given = [
            (self.depth.is_some(), "--depth"),
            (self.shallow_since.is_some(), "--shallow-since"),
            (!self.shallow_exclude.is_empty(), "--shallow-exclude"),
            (self.filter.is_some(), "--filter"),
        ];
        let unusable = given.iter().filter(|(on, _)| *on).map(|(_, o)| *o);
        LocalChoice {
            given: &self.repository,
            no_local: self.no_local,
            local: self.local,
            shared: self.shared,
            no_hardlinks: self.no_hardlinks,
            unusable: unusable.collect(),
        }
    }

    /// `--reject-shallow`, or else `clone.rejectShallow`.
    fn reject_shallow(&self, config: &sluice_odb::Config) -> anyhow::Result<bool> {
        match either(self.reject_shallow, self.no_reject_shallow) {
            Some(given) => Ok(given),
            None => Ok(config.get_bool("clone.rejectShallow")?.unwrap_or(false)),
        }
    }

    /// The choices that decide which refs the clone takes.
    fn shape(&self) -> CloneShape {
        CloneShape {
            branch: self.branch.clone(),
            bare: self.bare(),
            mirror: self.mirror,
            single_branch: self.single_branch(),
            no_tags: self.no_tags,
        }
    }
}

/// Runs clone.
pub fn run(mut args: CloneArgs, context: &Context) -> anyhow::Result<ExitCode> {
    if let Some(spec) = &args.filter {
        args.filter = Some(filter_spec(spec)?);
    }
    // Before anything else, as git refuses it.
    let shallow = args.depth.is_some() || args.shallow_since.is_some();
    if args.bundle_uri.is_some() && (shallow || !args.shallow_exclude.is_empty()) {
        bail!("options '--bundle-uri' and '--depth/--shallow-since/--shallow-exclude' cannot be used together");
    }
    let user_config = context.config(None)?;
    let references = (
        !args.reference.is_empty(),
        !args.reference_if_able.is_empty(),
    );
    let active = settings(&args.recurse_submodules, references, &user_config)?;
    let recursing = !active.is_empty();
    let both_references = references.0 && references.1;
    args.config.extend(active);
    // `--also-filter-submodules`, else `clone.filterSubmodules`.
    let filter_submodules = args.also_filter_submodules
        || user_config.get_bool("clone.filtersubmodules")? == Some(true);
    // A URL that cannot be read is refused after "Cloning into", as git's transport does.
    let remote = Remote::to_clone(&context.cwd, &user_config, &args.repository);
    check_source(&remote, &args.repository)?;
    let initial = initial_branch(&user_config);
    let (depth, deepen) = deepen_of(&args)?;
    let bare = args.bare();
    let directory = args.into.clone().unwrap_or_else(|| {
        PathBuf::from(sluice_client::clone::directory_name(&args.repository, bare))
    });
    check_ref_format(args.ref_format.as_deref())?;
    let work_tree_env = std::env::var_os("GIT_WORK_TREE").map(PathBuf::from);
    let extensions = args.filter.is_some();
    let template = template_dir(args.template.as_deref(), &user_config);
    let kind = InitOptions {
        initial: &initial,
        bare,
        extensions,
        template: template.as_deref(),
    };
    // Refused before "Cloning into", as git does.
    let (env_tree, git_dir) = (work_tree_env.as_deref(), args.separate_git_dir.as_deref());
    let mut layout = Layout::make(&context.cwd, &directory, git_dir, env_tree, kind)?;
    if !args.quiet {
        let into = if bare { "bare repository " } else { "" };
        eprintln!("Cloning into {into}'{}'...", directory.display());
    }
    // A template that is no directory is none; git says so, quiet or not.
    if let Some(template) = template
        .as_deref()
        .filter(|t| !context.cwd.join(t).is_dir())
    {
        eprintln!("warning: templates not found in {}", template.display());
    }
    let remote = remote?;
    depth?;
    refuse_after_cloning_into(&args, recursing && both_references)?;
    let (local, warnings) = local_source(&remote, &args.local_choice());
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    let git_dir = layout.git_dir.clone();
    write_given_settings(&args, &git_dir, &context.cwd)?;
    let repo = Repository::open_git_dir(git_dir.clone(), layout.work_tree.clone())?;
    let origin = Origin::from_config(repo.config(), args.origin.as_deref())?;
    let show_progress = crate::progress::enabled(!args.quiet, args.progress);
    let (receiving, checkout) = (TerminalProgress::new(show_progress), Deferred::default());
    let after = TerminalProgress::new(show_progress);
    let options = CloneOptions {
        shape: args.shape(),
        deepen,
        filter: args.filter.clone(),
        tags: !args.no_tags,
        check_out: !bare && !args.no_checkout,
        reject_shallow: args.reject_shallow(repo.config())?,
        connect: ConnectOptions {
            ip_version: IpVersion::from_flags(args.ipv4, args.ipv6),
            server_options: server_options(&args.server_option, repo.config(), &origin.name),
            ..context.connect_options(repo.config(), args.upload_pack.as_deref())?
        },
        local,
        bundle_uri: sluice_client::bundle_uri::wanted(repo.config())?,
        bundle_from: args.bundle_uri.clone(),
        remote_progress: show_progress,
        receive_progress: &receiving,
        early_checkout_progress: &checkout,
        checkout_progress: &after,
    };
    let messages = CloneStderr::new(args.quiet, repo.config())?;
    let cloned = clone_into(&remote, &origin, &repo, &initial, &options, &messages)?;
    if args.dissociate {
        dissociate(&repo)?;
    }
    if cloned.checked_out_early {
        checkout.replay(&TerminalProgress::new(show_progress));
    }
    if let (true, Some(id)) = (options.check_out, cloned.head) {
        advise_if_detached(&repo, &id)?;
    }
    layout.keep();
    if !args.recurse_submodules.is_empty() && options.check_out {
        return clone_submodules(&args, &repo.reopened()?, filter_submodules);
    }
    Ok(ExitCode::SUCCESS)
}

/// A path that is no repository, refused before "Cloning into" and in clone's words (fetch
/// says it another way), as git does; a name with a colon goes to the transport, which says
/// it its own way, and a URL that cannot be read is refused after "Cloning into".
fn check_source(remote: &Result<Remote, FetchError>, given: &str) -> anyhow::Result<()> {
    if let Ok(Remote {
        url: RemoteUrl::Local(path),
        shown,
        ..
    }) = remote
    {
        if !path.exists() && !given.contains(':') {
            bail!("repository '{shown}' does not exist");
        }
    }
    Ok(())
}

/// How far history is cut: a depth that is no positive number refused now; one with more
/// than a number in it by the transport, after "Cloning into" (the first returned), as git's.
fn deepen_of(args: &CloneArgs) -> anyhow::Result<(Result<(), DepthError>, Deepen)> {
    let depth = args.depth.as_deref().map(parse_depth).transpose();
    if let Err(e @ DepthError::NotPositive(_)) = depth {
        bail!(e);
    }
    let deepen = Deepen {
        depth: depth.clone().unwrap_or_default(),
        since: parse_since(args.shallow_since.as_deref())?,
        not: args.shallow_exclude.clone(),
        relative: false,
    };
    Ok((depth.map(drop), deepen))
}

/// The combinations git refuses once it said "Cloning into".
fn refuse_after_cloning_into(args: &CloneArgs, recursing_both: bool) -> anyhow::Result<()> {
    if recursing_both {
        bail!("clone --recursive is not compatible with both --reference and --reference-if-able");
    }
    if args.also_filter_submodules && args.filter.is_none() {
        bail!("the option '--also-filter-submodules' requires '--filter'");
    }
    if args.also_filter_submodules && args.recurse_submodules.is_empty() {
        bail!("the option '--also-filter-submodules' requires '--recurse-submodules'");
    }
    Ok(())
}

/// The new repository's `-c` settings and `--reference` alternates, refused and said as git.
fn write_given_settings(args: &CloneArgs, git_dir: &Path, cwd: &Path) -> anyhow::Result<()> {
    match write_settings(git_dir, &args.config) {
        Err(SettingError::BadKey(problem)) => {
            eprintln!("error: {problem}");
            bail!("unable to write parameters to config file");
        }
        written => written?,
    }
    let objects = git_dir.join("objects");
    for (given, why) in add_references(cwd, &objects, &args.references())? {
        eprintln!("info: Could not add alternate for '{given}': {why}");
    }
    Ok(())
}

/// A clone checked out on no branch (`--branch <tag>`) at `head`: git's advice, under -q too.
fn advise_if_detached(repo: &Repository, head: &sluice_object::ObjectId) -> anyhow::Result<()> {
    let detached = !matches!(repo.refs().read("HEAD")?, Some(RefTarget::Symbolic(_)));
    if detached && sluice_checkout::report::advises_detached(repo)? {
        eprint!(
            "{}",
            sluice_checkout::report::detached_advice(&head.to_string())
        );
    }
    Ok(())
}

/// `--recurse-submodules`: the submodules cloned and checked out as git's `submodule update
/// --init` does them; 1 when one failed.
fn clone_submodules(
    args: &CloneArgs,
    repo: &Repository,
    filter_submodules: bool,
) -> anyhow::Result<ExitCode> {
    let recursion = sluice_submodule::clone::Options {
        quiet: args.quiet,
        progress: args.progress,
        shallow: args.shallow_submodules,
        filter: args.filter.clone().filter(|_| filter_submodules),
        single_branch: args.single_branch,
        remote: args.remote_submodules,
        jobs: args.jobs,
    };
    match sluice_submodule::clone::update(&super::Terminal, repo, &recursion, "")? {
        true => Ok(ExitCode::SUCCESS),
        false => Ok(ExitCode::from(1)),
    }
}

/// The clone's messages on stderr, as git words them; `-q` keeps only the warnings.
struct CloneStderr {
    quiet: bool,
    remote: RemoteLines,
}

impl CloneStderr {
    fn new(quiet: bool, config: &sluice_odb::Config) -> anyhow::Result<CloneStderr> {
        Ok(CloneStderr {
            quiet,
            remote: RemoteLines::new(config)?,
        })
    }
}

impl CloneMessages for CloneStderr {
    fn tell(&self, told: CloneNotice<'_>) {
        match told {
            // Said under -q too, as git says it.
            CloneNotice::EmptyRepository => {
                eprintln!("warning: You appear to have cloned an empty repository.")
            }
            CloneNotice::ObjectsLinked if !self.quiet => eprintln!("done."),
            CloneNotice::Warning(warning) => eprintln!("warning: {warning}"),
            _ => {}
        }
    }

    fn remote_progress(&self, text: &[u8]) {
        self.remote.show(text);
    }
}
