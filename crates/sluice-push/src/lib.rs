//! `git push`: pairs refspecs with local and remote refs, judges each update as git does
//! (fast-forward, `fetch first`, tags, leases), sends the commands and one pack made by the pack
//! engine that serves fetches (thin against what the server advertised), and returns the
//! server's verdict per ref as data for the command line to print. Remote-tracking refs of a
//! named remote follow what was pushed, and `--set-upstream` records the upstreams.
//! What push shares with fetch (the negotiation of `push.negotiate`, a partial clone's
//! missing objects) is `sluice-client`'s.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod certificate;
pub mod helper;
mod hook;
mod lease;
mod negotiate;
mod plan;
mod report;
mod send;
mod settings;
mod spec;
mod status;
mod submodules;
mod tracking;

pub use certificate::SignedPush;
pub use lease::Lease;
pub use plan::{PushChoice, PushPlan};
pub use report::{Hint, PushReport, ReportLine};
pub use settings::{GivenSettings, PushDefault, Settings};
pub use spec::PushRefspec;
pub use submodules::RecurseSubmodules;

use lease::LeaseCheck;
use sluice_object::progress::Progress;
use sluice_object::ObjectId;
use sluice_remote::Service;
use sluice_remote::{ConnectOptions, Connection, FetchError, RemoteRef};
use sluice_repo::Repository;

/// Why a push could not be made (refused refs are reported in [`PushOutcome`] instead).
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// Reaching or talking to the server failed.
    // Not transparent: the FetchError stays in the chain of causes, where the binary
    // finds what the server said.
    #[error("{0}")]
    Fetch(#[from] FetchError),
    /// An option's or setting's value git would not take (`--signed`, `push.gpgSign`,
    /// `--recurse-submodules`, `push.recurseSubmodules`), in git's words.
    #[error("{0}")]
    BadSetting(String),
    /// A refspec git would not take.
    #[error("invalid refspec '{0}'")]
    InvalidRefspec(String),
    /// A source that names nothing here.
    #[error("src refspec {0} does not match any")]
    NoSource(String),
    /// A deletion of a short name the remote does not have.
    #[error("unable to delete '{0}': remote ref does not exist")]
    NoRemoteRef(String),
    /// A short destination whose kind cannot be guessed.
    #[error("The destination you provided is not a full refname (i.e.,\nstarting with \"refs/\"). We tried to guess what you meant by:\n\n- Looking for a ref that matches '{0}' on the remote side.\n- Checking if the <src> being pushed ('{0}')\n  is a ref in \"refs/{{heads,tags}}/\". If so we add a corresponding\n  refs/{{heads,tags}}/ prefix on the remote side.\n\nNeither worked, so we gave up. You must fully qualify the ref.")]
    NotAFullRefname(String),
    /// A source given alone that is a symbolic ref to something other than a branch (git's
    /// `push origin origin`, whose `refs/remotes/origin/HEAD` names a remote-tracking ref).
    #[error("{0} cannot be resolved to branch")]
    NotABranch(String),
    /// A `--force-with-lease` value that names no object.
    #[error("cannot parse expected object name '{0}'")]
    BadLeaseValue(String),
    /// No remote given and none configured.
    #[error("No configured push destination.\nEither specify the URL from the command-line or configure a remote repository using\n\n    git remote add <name> <url>\n\nand then push using the remote name\n\n    git push <name>\n")]
    NoDestination,
    /// `--delete` with no ref to delete.
    #[error("--delete doesn't make sense without any refs")]
    DeleteWithoutRefs,
    /// Two options of `--delete`, `--tags`, `--all`/`--branches` and `--mirror` (git 2.47's
    /// words, the first two given).
    #[error("options '{0}' and '{1}' cannot be used together")]
    Incompatible(&'static str, &'static str),
    /// `--all` or `--mirror` with refspecs.
    #[error("{0} can't be combined with refspecs")]
    CombinedWithRefspecs(&'static str),
    /// `push.default=nothing` and no refspec.
    #[error("You didn't specify any refspecs to push, and push.default is \"nothing\".")]
    PushDefaultNothing,
    /// The default push needs a branch checked out.
    #[error("You are not currently on a branch.\nTo push the history leading to the current (detached HEAD)\nstate now, use\n\n    git push <remote> HEAD:<name-of-remote-branch>\n")]
    Detached,
    /// `simple`/`upstream` with no upstream configured (and no `push.autoSetupRemote`).
    #[error("The current branch {branch} has no upstream branch.\nTo push the current branch and set the remote as upstream, use\n\n    git push --set-upstream {remote} {branch}\n\nTo have this happen automatically for branches without a tracking\nupstream, see 'push.autoSetupRemote' in 'git help config'.\n")]
    NoUpstream {
        /// The branch checked out.
        branch: String,
        /// Where the push goes.
        remote: String,
    },
    /// `simple` where the upstream has another name.
    #[error("The upstream branch of your current branch does not match\nthe name of your current branch.  To push to the upstream branch\non the remote, use\n\n    git push {remote} HEAD:{upstream}\n\nTo push to the branch of the same name on the remote, use\n\n    git push {remote} HEAD\n{advice}")]
    UpstreamNameDiffers {
        /// Where the push goes.
        remote: String,
        /// The upstream branch's short name.
        upstream: String,
        /// git's advice, for those who have not set `push.default` and whose
        /// `branch.autoSetupMerge` is not `simple`.
        advice: String,
    },
    /// `upstream` to a remote that is not the branch's.
    #[error("You are pushing to remote '{remote}', which is not the upstream of\nyour current branch '{branch}', without telling me what to push\nto update which remote branch.")]
    NotTheUpstreamRemote {
        /// Where the push goes.
        remote: String,
        /// The branch checked out.
        branch: String,
    },
    /// `simple`/`upstream` with several `branch.<name>.merge`.
    #[error("The current branch {0} has multiple upstream branches, refusing to push.")]
    SeveralUpstreams(String),
    /// `--atomic` to a server without it.
    #[error("the receiving end does not support --atomic push")]
    AtomicUnsupported,
    /// The `pre-push` hook said no.
    #[error("the pre-push hook declined the push")]
    PrePushDeclined,
    /// `--push-option` to a server without it.
    #[error("the receiving end does not support push options")]
    PushOptionsUnsupported,
    /// The server's report could not be read.
    #[error("the remote's report could not be read: {0}")]
    Report(#[source] std::io::Error),
    /// `send-pack --stateless-rpc --stdin`: the refs to push were not pkt-lines ending in a
    /// flush.
    #[error("protocol error: expected the refs to push, then a flush")]
    ExpectedRefs,
    /// The server's report is not report-status.
    #[error("protocol error: bad report from the remote")]
    BadReport,
    /// The repository's shallow file could not be read.
    #[error(transparent)]
    Repo(#[from] sluice_repo::RepoError),
    /// A line of the server's report is no status.
    #[error(transparent)]
    BadStatus(#[from] sluice_wire::report_status::ReportError),
    /// The framing of the server's answer is broken.
    #[error(transparent)]
    PktLine(#[from] sluice_wire::pktline::PktLineError),
    /// Writing the request failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// `--signed` to a server that does not ask for push certificates.
    #[error("the receiving end does not support --signed push")]
    SignedUnsupported,
    /// gpg did not sign the push certificate; what it said.
    #[error("failed to sign the push certificate")]
    SigningFailed(String),
    /// Submodule commits the push needs are on no remote (`--recurse-submodules=check`).
    #[error("The following submodule paths contain changes that can\nnot be found on any remote:\n{}\nPlease try\n\n\tgit push --recurse-submodules=on-demand\n\nor cd to the path and use\n\n\tgit push\n\nto push them to a remote.\n\n", .0.iter().map(|p| format!("  {p}\n")).collect::<String>())]
    UnpushedSubmodules(Vec<String>),
    /// `--recurse-submodules=on-demand`: a submodule's push failed.
    #[error("Unable to push submodule '{0}'")]
    SubmodulePushFailed(String),
    /// Refs could not be read or written.
    #[error(transparent)]
    Refs(#[from] sluice_repo::RefError),
    /// A setting could not be read or written.
    // Not transparent: the refused setting stays in the chain of causes, where the binary
    // finds git's error lines for it.
    #[error("{0}")]
    Config(#[from] sluice_odb::ConfigError),
    /// The object database could not be opened.
    #[error(transparent)]
    Odb(#[from] sluice_odb::OdbError),
    /// The objects to send could not be counted.
    #[error(transparent)]
    Walk(#[from] sluice_graph::WalkError),
    /// A partial clone's promisor remote did not give what the push must send.
    #[error(transparent)]
    Promised(#[from] sluice_client::promised::PromisedWalkError),
}

/// What becomes of one ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefStatus {
    /// Not yet decided (to be sent).
    Pending,
    /// The server took it.
    Ok,
    /// The remote has it already.
    UpToDate,
    /// Refused here: it would not fast-forward.
    NonFastForward,
    /// Refused here: the remote has a value this repository lacks.
    FetchFirst,
    /// Refused here: a tag the remote has.
    AlreadyExists,
    /// Refused here: not commits, so only `--force` moves it.
    NeedsForce,
    /// Refused here: the remote is not where the lease expects.
    Stale,
    /// Refused here (`--force-if-includes`): the remote-tracking ref's value was never part
    /// of the local ref's history, so the force would drop work never seen here.
    RemoteUpdated,
    /// Refused here: the server takes no deletions.
    NoDelete,
    /// Refused by the server, for this reason.
    RemoteRejected(String),
    /// Not sent: `--atomic` and another ref was refused.
    AtomicFailed,
}

impl RefStatus {
    /// Whether this is a refusal.
    pub fn refused(&self) -> bool {
        !matches!(
            self,
            RefStatus::Pending | RefStatus::Ok | RefStatus::UpToDate
        )
    }

    /// git's number for a refusal before sending, in its "atomic push failed" message.
    pub fn git_code(&self) -> u8 {
        match self {
            RefStatus::NonFastForward => 2,
            RefStatus::AlreadyExists => 3,
            RefStatus::NoDelete => 4,
            RefStatus::FetchFirst => 5,
            RefStatus::NeedsForce => 6,
            RefStatus::Stale => 7,
            RefStatus::RemoteUpdated => 9,
            _ => 0,
        }
    }
}

/// One ref of the push.
#[derive(Debug, Clone)]
pub struct PushedRef {
    /// What was pushed, as the report names it (`None`: a deletion).
    pub src: Option<String>,
    /// The remote ref's full name.
    pub dst: String,
    /// Its value on the remote before (`None`: it had none).
    pub old: Option<ObjectId>,
    /// The value pushed (`None`: deleted).
    pub new: Option<ObjectId>,
    /// What became of it.
    pub status: RefStatus,
    /// The update loses history (and was forced).
    pub forced: bool,
    /// What the server did instead of the update asked for (a `proc-receive` hook's refs,
    /// told by report-status-v2), each its own line of the report.
    pub rewrites: Vec<sluice_wire::report_status::Rewrite>,
}

/// The ref whose refusal failed an atomic push before anything was sent, and its status.
pub(crate) type AtomicFailure = (String, RefStatus);

/// What a push did.
#[derive(Debug)]
pub struct PushOutcome {
    /// Each ref, in git's order: those the remote has as it listed them, then the new ones.
    pub refs: Vec<PushedRef>,
    /// The refs the remote listed, in its order (git's send-pack names each one the push
    /// left alone to a remote helper: `error <ref> no match`).
    pub advertised: Vec<String>,
    /// The server refused the pack: `unpack <reason>`.
    pub unpack_error: Option<String>,
    /// Upstreams recorded by `--set-upstream`.
    pub upstreams: Vec<UpstreamSet>,
    /// `--signed=if-asked` to a server that asked for no certificate: sent unsigned.
    pub sent_unsigned: bool,
    /// The remote-tracking refs brought up to date (git names them under `-v`).
    pub tracking: Vec<String>,
    /// The report of `refs`, as git words it.
    pub report: PushReport,
}

/// An upstream `--set-upstream` recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamSet {
    /// The local branch, by its short name.
    pub branch: String,
    /// The remote (its name, or the URL as given).
    pub remote: String,
    /// The remote's ref the branch now tracks.
    pub merge: String,
    /// Whether `pull` rebases onto it (`branch.autoSetupRebase`): git says "by rebasing".
    pub rebasing: bool,
}

/// How the push runs.
pub struct PushOptions<'a> {
    /// `--force`.
    pub force: bool,
    /// `--atomic`.
    pub atomic: bool,
    /// `--dry-run`: judge, send nothing.
    pub dry_run: bool,
    /// Deltas against what the server has (`--thin`, the default).
    pub thin: bool,
    /// `--force-with-lease`.
    pub leases: Vec<Lease>,
    /// `--force-if-includes` (`push.useForceIfIncludes`): a lease taken from a
    /// remote-tracking ref holds only if that value is in the local ref's history.
    pub force_if_includes: bool,
    /// `--push-option`.
    pub push_options: Vec<String>,
    /// `--follow-tags` (or `push.followTags`).
    pub follow_tags: bool,
    /// `--prune`.
    pub prune: bool,
    /// `--set-upstream`.
    pub set_upstream: bool,
    /// `push.negotiate`: negotiate over upload-pack before sending.
    pub negotiate: bool,
    /// Run the `pre-push` hook (not under `--no-verify`).
    pub verify: bool,
    /// `--signed` (`push.gpgSign`).
    pub signed: SignedPush,
    /// `--recurse-submodules` (`push.recurseSubmodules`).
    pub recurse_submodules: RecurseSubmodules,
    /// Pushes the submodule checked out at a path of the work tree, for `on-demand` and
    /// `only`; false when that push failed.
    pub push_submodule: Option<&'a (dyn Fn(&str) -> bool + 'a)>,
    /// How to reach the server (its service is set here).
    pub connect: ConnectOptions,
    /// The server's progress is shown.
    pub remote_progress: bool,
    /// Progress of counting and writing the pack.
    pub progress: &'a dyn Progress,
}

impl<'a> PushOptions<'a> {
    /// A push that asks for nothing beyond reaching the server (as `send-pack` without flags):
    /// a thin pack, no force, no lease, no hook, no signature, no submodules, quiet.
    pub fn new(connect: ConnectOptions, progress: &'a dyn Progress) -> Self {
        PushOptions {
            force: false,
            atomic: false,
            dry_run: false,
            thin: true,
            leases: Vec::new(),
            force_if_includes: false,
            push_options: Vec::new(),
            follow_tags: false,
            prune: false,
            set_upstream: false,
            negotiate: false,
            verify: false,
            signed: SignedPush::No,
            recurse_submodules: RecurseSubmodules::No,
            push_submodule: None,
            connect,
            remote_progress: false,
            progress,
        }
    }
}

/// What the server says while it works.
pub trait PushMessages: Sync {
    /// Bytes of band 2: the server's progress and the messages of its hooks.
    fn remote_progress(&self, bytes: &[u8]);

    /// `push.negotiate` failed for this reason; the push goes on without it.
    fn negotiation_failed(&self, error: &sluice_client::fetch::RunError);

    /// The pack went out, with what it held (git's pack-objects ends the push's progress
    /// with its Total line).
    fn pack_sent(&self, stats: &sluice_generate::PackStats);

    /// An error the push survives, in git's words: the server's report broke the protocol,
    /// or an atomic push failed before anything was sent.
    fn error(&self, message: &str);
}

/// Pairs the refspecs with the refs on both sides and judges each update; under `--atomic`
/// one refusal fails all; the `pre-push` hook may stop the push.
fn judge_refs(
    repo: &Repository,
    plan: &PushPlan,
    options: &PushOptions<'_>,
    connection: &sluice_remote::Connection,
) -> Result<(Vec<PushedRef>, Option<AtomicFailure>), PushError> {
    let advertised: Vec<RemoteRef> = connection.advertised().to_vec();
    let additions = (plan.prune || options.prune, options.follow_tags);
    let mut paired = spec::pair_all(repo, &plan.specs, &advertised, additions)?;
    let deletes = connection.has_capability("delete-refs");
    // git's order: the refs the remote has, as it listed them, then the new ones.
    let listed = |dst: &str| advertised.iter().position(|r| r.name == dst);
    paired.sort_by_key(|p| listed(&p.dst).unwrap_or(usize::MAX));
    let leases = LeaseCheck {
        repo,
        leases: &options.leases,
        remote: plan.remote_name.as_deref(),
        if_includes: options.force_if_includes,
    };
    let paired = (paired.into_iter())
        .map(|p| {
            let leased = leases.of(&p);
            (p, leased)
        })
        .collect();
    let mut refs = status::judge(repo, paired, &advertised, options.force, deletes);
    let atomic_failure = match options.atomic {
        true => status::fail_atomically(&mut refs),
        false => None,
    };
    if options.verify {
        let url = &plan.url;
        hook::pre_push(repo, &plan.named, url, &refs)?;
    }
    Ok((refs, atomic_failure))
}

/// What the push asks of the server that it does not offer, checked as git checks it once the
/// refs are matched, whatever is to be sent (a dry run and an up-to-date push too): `--signed`
/// without push certificates, `--atomic`, `--push-option`. `Ok(true)`: `--signed=if-asked`
/// goes unsigned, which git warns of.
fn capable(connection: &Connection, options: &PushOptions<'_>) -> Result<bool, PushError> {
    let has = |c: &str| connection.has_capability(c);
    let certified = has("push-cert") || connection.capability_value("push-cert").is_some();
    if options.signed == SignedPush::Yes && !certified {
        return Err(PushError::SignedUnsupported);
    }
    if options.atomic && !has("atomic") {
        return Err(PushError::AtomicUnsupported);
    }
    if !options.push_options.is_empty() && !has("push-options") {
        return Err(PushError::PushOptionsUnsupported);
    }
    Ok(options.signed == SignedPush::IfAsked && !certified)
}

/// Pushes from `repo` as `plan` and `options` say.
pub fn push(
    repo: &Repository,
    plan: &PushPlan,
    options: &PushOptions<'_>,
    messages: &dyn PushMessages,
) -> Result<PushOutcome, PushError> {
    let connect = ConnectOptions {
        service: Service::ReceivePack,
        ..options.connect.clone()
    };
    let mut connection = plan.remote.connect(&connect)?;
    let advertised = (connection.advertised().iter())
        .map(|r| r.name.clone())
        .collect();
    let judged = judge_refs(repo, plan, options, &connection);
    let (mut refs, atomic_failure) = match judged {
        Ok(judged) => judged,
        // As git: the server is told the push is off (a flush) rather than left hanging.
        Err(e) => {
            let _ = connection.finish();
            return Err(e);
        }
    };
    // As git, submodules are seen to once the refs are matched, before anything is sent.
    let remote_name = plan.remote_name.as_deref();
    match submodules::before_push(repo, remote_name, options, &refs) {
        Ok(true) => {}
        // `only`: the submodules were pushed; the superproject's refs stay as they are, and
        // the session ends as one with nothing to send.
        Ok(false) => refs.clear(),
        Err(e) => {
            let _ = connection.finish();
            return Err(e);
        }
    }
    let sent_unsigned = match capable(&connection, options) {
        Ok(unsigned) => unsigned,
        Err(e) => {
            let _ = connection.finish();
            return Err(e);
        }
    };
    let pending = refs.iter().any(|r| r.status == RefStatus::Pending);
    let mut unpack_error = None;
    // A dry run signs nothing.
    let nonce = connection.capability_value("push-cert").map(str::to_owned);
    let certificate = match (options.signed, nonce) {
        (SignedPush::No, _) | (_, None) => None,
        (_, Some(_)) if options.dry_run => None,
        (_, Some(nonce)) => Some(send::Certificate {
            signer: certificate::Signer::from_config(repo),
            nonce,
            url: plan.url.clone(),
        }),
    };
    if pending && !options.dry_run {
        let commons = match options.negotiate {
            true => negotiate::commons(repo, plan, &options.connect, &refs, messages),
            false => Vec::new(),
        };
        let request = send::Request {
            commons: &commons,
            certificate,
            atomic: options.atomic,
            push_options: &options.push_options,
            thin: options.thin,
            remote_progress: options.remote_progress,
            progress: options.progress,
            cancel: &options.connect.cancel,
        };
        unpack_error = send::send(repo, &mut connection, &mut refs, &request, messages)?;
        connection.finish_push()?;
    } else {
        if options.dry_run {
            for r in refs.iter_mut().filter(|r| r.status == RefStatus::Pending) {
                r.status = RefStatus::Ok;
            }
        }
        match &atomic_failure {
            // As git: said at once, and the server left without a word (git's receive-pack
            // then says the remote end hung up, and fails).
            Some((name, status)) => {
                let code = status.git_code();
                messages.error(&format!(
                    "atomic push failed for ref {name}. status: {code}"
                ));
                let _ = connection.abandon();
            }
            // Nothing to send: a flush ends the session.
            None => connection.finish()?,
        }
    }
    let (mut upstreams, mut tracked) = (Vec::new(), Vec::new());
    if !options.dry_run {
        if let Some(name) = &plan.remote_name {
            tracked = tracking::update(repo, name, &refs)?;
        }
        if options.set_upstream || plan.set_upstream {
            upstreams = tracking::set_upstreams(repo, &plan.named, &refs)?;
        }
    }
    Ok(PushOutcome {
        report: PushReport::of(repo, &refs),
        refs,
        advertised,
        unpack_error,
        upstreams,
        tracking: tracked,
        sent_unsigned,
    })
}
