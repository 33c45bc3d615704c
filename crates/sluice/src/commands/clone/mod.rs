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
    run_clone, CloneCommandError, CloneError, CloneHost, CloneRequest, CloneShape, LocalChoice,
};
use sluice_client::partial::filter_spec;
use sluice_client::reference::{Need, Reference};
use sluice_client::ServerLines;
use sluice_object::progress::Progress;
use sluice_odb::Config;
use sluice_remote::remote_colors::RemoteColorError;
use sluice_remote::IpVersion;
use sluice_repo::Repository;
use std::path::PathBuf;
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
    /// A sparse checkout of the files at the top only (git's cone mode; `git sparse-checkout
    /// set` widens it).
    #[arg(long)]
    sparse: bool,
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

    /// The choices that decide which refs the clone takes.
    fn shape(&self) -> CloneShape {
        CloneShape {
            branch: self.branch.clone(),
            bare: self.bare(),
            mirror: self.mirror,
            single_branch: self.single_branch(),
            no_tags: self.no_tags,
            sparse: self.sparse,
        }
    }
}

/// Runs clone.
pub fn run(args: CloneArgs, context: &Context) -> anyhow::Result<ExitCode> {
    let filter = args.filter.as_deref().map(filter_spec).transpose()?;
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
    let mut settings = args.config.clone();
    let active =
        sluice_submodule::clone::settings(&args.recurse_submodules, references, &user_config)?;
    let recursing = !active.is_empty();
    settings.extend(active);
    // `--also-filter-submodules`, else `clone.filterSubmodules`.
    let filter_submodules = args.also_filter_submodules
        || user_config.get_bool("clone.filtersubmodules")? == Some(true);
    let work_tree_env = std::env::var_os("GIT_WORK_TREE").map(PathBuf::from);
    let show_progress = crate::progress::enabled(!args.quiet, args.progress);
    let request = CloneRequest {
        repository: &args.repository,
        directory: args.into.as_deref(),
        cwd: &context.cwd,
        config: &user_config,
        shape: args.shape(),
        depth: args.depth.as_deref(),
        shallow_since: args.shallow_since.as_deref(),
        shallow_exclude: &args.shallow_exclude,
        filter: filter.clone(),
        bundle_uri: args.bundle_uri.as_deref(),
        check_out: !args.bare() && !args.no_checkout,
        reject_shallow: either(args.reject_shallow, args.no_reject_shallow),
        local: args.local_choice(),
        references: args.references(),
        dissociate: args.dissociate,
        settings: &settings,
        template: args.template.as_deref(),
        origin: args.origin.as_deref(),
        separate_git_dir: args.separate_git_dir.as_deref(),
        work_tree_env: work_tree_env.as_deref(),
        ref_format: args.ref_format.as_deref(),
        server_options: &args.server_option,
        upload_pack: args.upload_pack.as_deref(),
        ip_version: IpVersion::from_flags(args.ipv4, args.ipv6),
        quiet: args.quiet,
        progress: show_progress,
        refused_late: refused_late(&args, recursing && references.0 && references.1),
        cancel: context.cancel.clone(),
    };
    let made = match run_clone(request, &CloneStderr { show_progress }) {
        Ok(made) => made,
        // As git's clone, whose `sparse-checkout` fails in a bare repository: two lines, 1.
        Err(CloneCommandError::Clone(e @ CloneError::SparseWithoutWorkTree)) => {
            eprintln!("fatal: {e}\nerror: failed to initialize sparse-checkout");
            return Ok(ExitCode::from(1));
        }
        Err(e) => return Err(e.into()),
    };
    if !args.recurse_submodules.is_empty() && made.checked_out {
        let filter = filter.filter(|_| filter_submodules);
        return clone_submodules(&args, &made.repo, filter);
    }
    Ok(ExitCode::SUCCESS)
}

/// The combinations git refuses once it said "Cloning into", in git's words.
fn refused_late(args: &CloneArgs, recursing_both: bool) -> Option<String> {
    let refused = [
        (
            recursing_both,
            "clone --recursive is not compatible with both --reference and --reference-if-able",
        ),
        (
            args.also_filter_submodules && args.filter.is_none(),
            "the option '--also-filter-submodules' requires '--filter'",
        ),
        (
            args.also_filter_submodules && args.recurse_submodules.is_empty(),
            "the option '--also-filter-submodules' requires '--recurse-submodules'",
        ),
    ];
    let (_, words) = refused.iter().find(|(given, _)| *given)?;
    Some((*words).to_owned())
}

/// `--recurse-submodules`: the submodules cloned and checked out as git's `submodule update
/// --init` does them; 1 when one failed.
fn clone_submodules(
    args: &CloneArgs,
    repo: &Repository,
    filter: Option<String>,
) -> anyhow::Result<ExitCode> {
    let recursion = sluice_submodule::clone::Options {
        quiet: args.quiet,
        progress: args.progress,
        shallow: args.shallow_submodules,
        filter,
        single_branch: args.single_branch,
        remote: args.remote_submodules,
        jobs: args.jobs,
    };
    match sluice_submodule::clone::update(&super::Terminal, repo, &recursion, "")? {
        true => Ok(ExitCode::SUCCESS),
        false => Ok(ExitCode::from(1)),
    }
}

/// The clone's words and progress on stderr.
struct CloneStderr {
    show_progress: bool,
}

impl CloneHost for CloneStderr {
    fn err(&self, text: &str) {
        eprint!("{text}");
    }

    fn progress(&self) -> Box<dyn Progress> {
        Box::new(TerminalProgress::new(self.show_progress))
    }

    fn server_lines(&self, config: &Config) -> Result<ServerLines<'_>, RemoteColorError> {
        let lines = RemoteLines::new(config)?;
        Ok(Box::new(move |text| lines.show(text)))
    }
}
