//! `git receive-pack` (protocol v0, `gitprotocol-pack`): takes a push. The refs are advertised,
//! the client's commands read, the pack received into a quarantine (completed with the
//! repository's bases when thin) and checked for connectivity: every link leaving it must be
//! in the repository. Only then do its objects enter the repository and the refs move, each
//! only from the value the client saw (a ref transaction), all of them or none with `atomic`;
//! the client is told per ref, as git's report-status says it.
//!
//! `receive.*` policies are judged per command before any ref moves (`policy`);
//! `updateInstead` moves a non-bare repository's work tree with its branch (`deploy`).
//!
//! Hooks run as git runs them (`hooks`), with push options, the reference-transaction hook
//! around each ref transaction; the refs `receive.procReceiveRefs` names are the
//! `proc-receive` hook's to update (`proc_receive`), and report-status-v2 tells the client
//! what it did instead. What they say reaches the client as it comes, with
//! `receive.keepAlive` packets while they are silent (`messenger`).

mod accept;
mod aliased;
mod certificate;
mod deploy;
mod hooks;
mod messenger;
mod objects;
mod policy;
mod proc_receive;
mod shallow;
mod update;

use accept::accept;
use messenger::Messenger;
use objects::receive_objects;

use sluice_object::{HashKind, ObjectId};
use sluice_repo::refs::namespace::Namespace;
use sluice_repo::Repository;
use sluice_wire::pktline::{write_flush, write_packet, Packet, PktReader};
use sluice_wire::report_status::write_ref_status;
use sluice_wire::sideband::{Band, Sideband};
use std::io::{Read, Write};

/// How a receive-pack session runs.
#[derive(Debug, Clone, Default)]
pub struct ReceivePackOptions {
    /// One request and its response (smart HTTP): no advertisement first.
    pub stateless_rpc: bool,
    /// Only advertise the refs.
    pub advertise_refs: bool,
    /// Who pushes, when an HTTP front end runs the push.
    pub pusher: Option<Pusher>,
    /// A server's memory: after a push that moved a ref (and its maintenance), what a full
    /// clone now reaches and the checksum of the pack it gets are computed into it, in the
    /// background.
    pub memory: Option<std::sync::Arc<crate::ServerMemory>>,
    /// Where the refs are committed before they move here: a store's manifest, for a push
    /// received into a node's private copy of one generation.
    pub gate: Option<std::sync::Arc<dyn sluice_repo::storage::RefGate>>,
}

/// Who pushes over HTTP. As git http-backend, the reflog entries of their push name them
/// (`<user> <<user>@http.<address>>`, `anonymous` for a user who did not authenticate)
/// unless `GIT_COMMITTER_NAME`/`_EMAIL` are set, and hooks see them as CGI's `REMOTE_USER` and
/// `REMOTE_ADDR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pusher {
    /// The user the front end authenticated, if any.
    pub user: Option<String>,
    /// The client's IP address.
    pub address: String,
}

impl Pusher {
    /// The name and email of the reflog entries.
    fn identity(&self) -> (String, String) {
        let name = self.user.as_deref().unwrap_or("anonymous");
        (name.to_owned(), format!("{name}@http.{}", self.address))
    }

    /// The environment hooks get: CGI's names, and the committer identity git http-backend
    /// sets when none is.
    fn environment(&self) -> Vec<(String, std::ffi::OsString)> {
        let mut env = vec![("REMOTE_ADDR".to_owned(), self.address.clone().into())];
        if let Some(user) = &self.user {
            env.push(("REMOTE_USER".to_owned(), user.into()));
        }
        let (name, email) = self.identity();
        for (var, value) in [("GIT_COMMITTER_NAME", name), ("GIT_COMMITTER_EMAIL", email)] {
            if std::env::var_os(var).is_none() {
                env.push((var.to_owned(), value.into()));
            }
        }
        env
    }
}

/// Why a push session failed as a whole (a refused ref is reported to the client instead).
#[derive(Debug, thiserror::Error)]
pub enum ReceiveError {
    /// Reading or writing the connection failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The request's framing is broken.
    #[error(transparent)]
    PktLine(#[from] sluice_wire::pktline::PktLineError),
    /// The client went away before its commands' flush (git's words).
    #[error("the remote end hung up unexpectedly")]
    HungUp,
    /// A command line is not `<old> <new> <ref>`.
    #[error("protocol error: expected old/new/ref, got '{0}'")]
    BadCommand(String),
    /// A push certificate and plain commands in one request (git's words).
    #[error("protocol error: got both push certificate and unsigned commands")]
    CertificateAndCommands,
    /// The commands and push options together exceed what any real push sends.
    #[error("protocol error: more than {MAX_REQUEST_BYTES} bytes of commands")]
    TooManyCommands,
    /// Reading refs failed.
    #[error(transparent)]
    Refs(#[from] sluice_repo::RefError),
    /// The repository's configuration is unreadable.
    #[error(transparent)]
    Config(#[from] sluice_odb::ConfigError),
    /// The fsck settings (`receive.fsck.<msg-id>`, `receive.fsck.skipList`) are bad.
    #[error(transparent)]
    Fsck(#[from] sluice_odb::fsck::FsckError),
    /// The quarantined objects could not be opened to judge the commands.
    #[error(transparent)]
    Odb(#[from] sluice_odb::OdbError),
}

/// The most bytes of commands and push options read before the pack (about 200,000 ref
/// updates): a request is bounded before anything is allocated for it.
const MAX_REQUEST_BYTES: usize = 32 << 20;

/// One command of a push.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Command {
    old: ObjectId,
    new: ObjectId,
    name: String,
}

/// What the client asked for.
#[derive(Debug, Clone, Default)]
struct Request {
    commands: Vec<Command>,
    report_status: bool,
    /// report-status-v2: `option` lines after an `ok` tell what a proc-receive hook did.
    report_v2: bool,
    side_band: bool,
    /// The client asked for no progress (`quiet`).
    quiet: bool,
    atomic: bool,
    /// The client sends push options after the commands.
    push_options_follow: bool,
    push_options: Vec<String>,
    /// The push certificate the commands came in (`--signed`).
    certificate: Option<certificate::Certificate>,
    /// A shallow client's cut (`shallow <id>` before the commands).
    shallow: Vec<ObjectId>,
}

/// Serves one push on `input`/`output`. Returns what hooks and refusals said when the client
/// took no side band to carry it (git's receive-pack writes it to its standard error).
pub fn receive_pack(
    repo: &Repository,
    input: impl Read,
    mut output: impl Write + Send,
    options: &ReceivePackOptions,
) -> Result<Vec<String>, ReceiveError> {
    // Bad fsck settings are refused before anything is advertised, as git refuses them; a
    // skip list is read only with the pack (and its failure is the unpacker's).
    use sluice_odb::fsck::{Checker, FsckError};
    match Checker::for_transfer(repo.config(), "receive", repo.hash()) {
        Err(FsckError::SkipList { .. } | FsckError::SkipListLine { .. }) | Ok(_) => {}
        Err(settings) => return Err(settings.into()),
    }
    // With receive.certNonceSeed, certificates are asked for with a nonce of now.
    let nonces = certificate::Nonces::of(repo);
    let issued = nonces.as_ref().map(certificate::Nonces::now);
    if !options.stateless_rpc || options.advertise_refs {
        advertise(
            repo,
            &mut output,
            &crate::upload_pack::agent(),
            issued.as_deref(),
        )?;
        output.flush()?;
        if options.advertise_refs {
            return Ok(Vec::new());
        }
    }
    let mut reader = PktReader::new(input);
    let Some(request) = read_request(&mut reader, repo.hash())? else {
        return Ok(Vec::new());
    };
    let unpacked = match request.commands.iter().any(|c| !c.new.is_null()) {
        true => {
            let shown = request.side_band && !request.quiet;
            let band = shown.then_some(&mut output as &mut (dyn Write + Send));
            receive_objects(repo, reader.get_mut(), &request, band).map(|(q, w)| (Some(q), w))
        }
        false => Ok((None, Vec::new())),
    };
    let keepalive = repo.config().get_int("receive.keepalive")?;
    let band = request.side_band.then_some(&mut output as &mut dyn Write);
    let messenger = Messenger::new(band, keepalive);
    let (unpacked, results, reports) = match unpacked {
        Ok((quarantine, warnings)) => {
            warnings.into_iter().for_each(|w| messenger.say(w));
            let nonce = nonces.as_ref().zip(issued.as_deref());
            let (results, reports) =
                accept(repo, &request, quarantine, options, &messenger, nonce)?;
            (Ok(()), results, reports)
        }
        Err(failure) => {
            failure.messages.into_iter().for_each(|m| messenger.say(m));
            let refused = vec![Some("unpacker error".to_owned()); request.commands.len()];
            (Err(failure.status), refused, Vec::new())
        }
    };
    let messages = messenger.into_lines();
    if request.report_status {
        let mut report = Vec::new();
        let unpack = match &unpacked {
            Ok(_) => "unpack ok\n".to_owned(),
            Err(status) => format!("unpack {status}\n"),
        };
        write_packet(&mut report, unpack.as_bytes())?;
        for (i, (command, result)) in request.commands.iter().zip(&results).enumerate() {
            let done = match request.report_v2 {
                true => reports.get(i).map_or(&[][..], Vec::as_slice),
                false => &[],
            };
            write_ref_status(&mut report, &command.name, result.as_deref(), done)?;
        }
        write_flush(&mut report)?;
        if request.side_band {
            Sideband::new(&mut output, 65515).send(Band::Data, &report)?;
            write_flush(&mut output)?;
        } else {
            output.write_all(&report)?;
        }
    }
    output.flush()?;
    if results.iter().any(Option::is_none) {
        match (&options.gate, &options.memory) {
            (None, memory) => {
                auto_gc(repo);
                if let Some(memory) = memory {
                    crate::clone_warmup::after_push(repo.git_dir(), memory);
                }
            }
            // A store's push landed through a private copy that goes with this request: the
            // node maintains the store itself, and pinning the new generation (which
            // materialises it) for the warm-up is kept off the client's path.
            (Some(gate), Some(memory)) => {
                let (gate, memory) = (std::sync::Arc::clone(gate), std::sync::Arc::clone(memory));
                std::thread::spawn(move || {
                    if let Some(dir) = gate.serving_dir() {
                        crate::clone_warmup::after_push(&dir, &memory);
                    }
                });
            }
            (Some(_), None) => {}
        }
    }
    Ok(messages)
}

/// `receive.autogc` (on by default): after a push that moved a ref, once the client has its
/// report, maintenance as git's receive-pack runs `gc --auto` then: a full gc past `gc.auto`
/// loose objects or `gc.autoPackLimit` packs, and below them a geometric roll of the small
/// packs (loose objects stay loose, as git leaves them), so that counting stays on the big
/// pack's bitmap
/// ([`sluice_maintain::after_push`]). A failure is not the push's.
fn auto_gc(repo: &Repository) {
    if repo.config().get_bool("receive.autogc").ok().flatten() == Some(false) {
        return;
    }
    let _ = sluice_maintain::after_push(repo);
}

/// The refs with the capabilities, as git's receive-pack advertises them (`atomic` unless
/// `receive.advertiseAtomic` is false, `push-options` when `receive.advertisePushOptions`),
/// leaving out the refs `receive.hideRefs`/`transfer.hideRefs` hide.
fn advertise(
    repo: &Repository,
    out: &mut dyn Write,
    agent: &str,
    nonce: Option<&str>,
) -> Result<(), ReceiveError> {
    let config = repo.config();
    let mut caps = String::from("report-status report-status-v2 delete-refs side-band-64k quiet");
    if config.get_bool("receive.advertiseatomic")?.unwrap_or(true) {
        caps.push_str(" atomic");
    }
    caps.push_str(" ofs-delta");
    if config
        .get_bool("receive.advertisepushoptions")?
        .unwrap_or(false)
    {
        caps.push_str(" push-options");
    }
    if let Some(nonce) = nonce {
        caps.push_str(&format!(" push-cert={nonce}"));
    }
    let format = match repo.hash() {
        HashKind::Sha1 => "sha1",
    };
    caps.push_str(&format!(" object-format={format} agent={agent}"));
    let mut refs = advertised_refs(repo)?;
    refs.extend(alternate_haves(repo, &refs));
    if refs.is_empty() {
        let null = repo.hash().null_id();
        write_packet(
            out,
            format!("{null} capabilities^{{}}\0{caps}\n").as_bytes(),
        )?;
    }
    for (i, (name, id)) in refs.iter().enumerate() {
        let line = match i {
            0 => format!("{id} {name}\0{caps}\n"),
            _ => format!("{id} {name}\n"),
        };
        write_packet(out, line.as_bytes())?;
    }
    write_flush(out)?;
    Ok(())
}

/// The refs a push may move, in name order, less those `receive.hideRefs` hides; in a
/// namespace (`GIT_NAMESPACE`), those under it with the prefix taken off, the others' ids shown
/// once each as `.have` (the client need not send what they reach), as git's receive-pack.
fn advertised_refs(repo: &Repository) -> Result<Vec<(String, ObjectId)>, ReceiveError> {
    let hide = crate::advertise::hide_patterns(repo.config(), "receive");
    let namespace = Namespace::from_env();
    let mut all = repo.refs().list()?;
    // Symbolic refs too, at their targets' values, as git's receive-pack lists them.
    for (name, _) in repo.refs().list_symbolic() {
        if let Ok((_, Some(id))) = repo.refs().resolve(&name) {
            all.push((name, id));
        }
    }
    all.sort();
    let mut seen = std::collections::HashSet::new();
    let mut refs = Vec::new();
    for (full, id) in all {
        let name = match &namespace {
            Some(namespace) => namespace.strip(&full).map(str::to_owned),
            None => Some(full.clone()),
        };
        if crate::advertise::hidden_by(&hide, name.as_deref().unwrap_or(&full)) {
            continue;
        }
        match name {
            Some(name) => {
                seen.insert(id);
                refs.push((name, id));
            }
            None if seen.insert(id) => refs.push((".have".to_owned(), id)),
            None => {}
        }
    }
    Ok(refs)
}

/// The tips of the repositories whose objects this one borrows (`objects/info/alternates`),
/// as `.have` lines: the client then leaves out what they reach, as git's receive-pack lets it
/// (a fork pushed to for the first time receives only what is new). Ids already advertised
/// are not repeated.
fn alternate_haves(
    repo: &Repository,
    advertised: &[(String, ObjectId)],
) -> Vec<(String, ObjectId)> {
    let mut seen: std::collections::HashSet<ObjectId> =
        advertised.iter().map(|(_, id)| *id).collect();
    let mut haves = Vec::new();
    for alternate in repo.objects().alternates() {
        // The repository around an object directory named `objects`.
        let dir = alternate.dir();
        let Some(git_dir) = dir.parent().filter(|_| dir.ends_with("objects")) else {
            continue;
        };
        let refs = sluice_repo::Refs::new(git_dir, git_dir, repo.hash());
        let mut ids: Vec<ObjectId> = refs
            .list()
            .unwrap_or_default()
            .into_iter()
            .map(|(_, id)| id)
            .collect();
        ids.sort();
        for id in ids {
            if seen.insert(id) {
                haves.push((".have".to_owned(), id));
            }
        }
    }
    haves
}

/// The commands up to the flush, with the first one's capabilities; `None` when the client
/// sends none (it had nothing to push).
fn read_request<R: Read>(
    reader: &mut PktReader<R>,
    hash: HashKind,
) -> Result<Option<Request>, ReceiveError> {
    let mut request = Request::default();
    let mut read = 0;
    let mut count = |bytes: usize| {
        read += bytes;
        match read > MAX_REQUEST_BYTES {
            true => Err(ReceiveError::TooManyCommands),
            false => Ok(()),
        }
    };
    loop {
        let line = match reader.read()? {
            None => return Err(ReceiveError::HungUp),
            Some(Packet::Flush) => break,
            Some(Packet::Data(data)) => data.to_vec(),
            Some(_) => continue,
        };
        count(line.len())?;
        let (command, caps) = match line.iter().position(|&b| b == 0) {
            Some(nul) => (&line[..nul], Some(&line[nul + 1..])),
            None => (&line[..], None),
        };
        if let Some(caps) = caps {
            for cap in String::from_utf8_lossy(caps).split(' ') {
                match cap.trim_end() {
                    "report-status" => request.report_status = true,
                    "report-status-v2" => {
                        request.report_status = true;
                        request.report_v2 = true;
                    }
                    "side-band-64k" => request.side_band = true,
                    "quiet" => request.quiet = true,
                    "atomic" => request.atomic = true,
                    "push-options" => request.push_options_follow = true,
                    _ => {}
                }
            }
        }
        if let Some(hex) = command.strip_prefix(b"shallow ") {
            let hex = String::from_utf8_lossy(hex);
            let id = ObjectId::from_hex(hash, hex.trim_end().as_bytes());
            let bad = || ReceiveError::BadCommand(format!("shallow {hex}"));
            request.shallow.push(id.map_err(|_| bad())?);
            continue;
        }
        if command == b"push-cert" {
            request.certificate = Some(read_certificate(reader, &mut count)?);
            continue;
        }
        let text = String::from_utf8_lossy(command);
        request.commands.push(parse_command(&text, hash)?);
    }
    if let Some(certificate) = &request.certificate {
        // As git: the commands are the certificate's, and only those.
        if !request.commands.is_empty() {
            return Err(ReceiveError::CertificateAndCommands);
        }
        for line in certificate.command_lines() {
            request.commands.push(parse_command(&line, hash)?);
        }
    }
    if request.push_options_follow {
        while let Some(Packet::Data(option)) = reader.read()? {
            count(option.len())?;
            let option = String::from_utf8_lossy(option);
            request
                .push_options
                .push(option.trim_end_matches('\n').to_owned());
        }
    }
    Ok((!request.commands.is_empty()).then_some(request))
}

/// `<old> <new> <ref>`.
fn parse_command(text: &str, hash: HashKind) -> Result<Command, ReceiveError> {
    let text = text.trim_end_matches('\n');
    let bad = || ReceiveError::BadCommand(text.to_owned());
    let mut parts = text.splitn(3, ' ');
    let mut id = || {
        let hex = parts.next().ok_or_else(bad)?;
        ObjectId::from_hex(hash, hex.as_bytes()).map_err(|_| bad())
    };
    let (old, new) = (id()?, id()?);
    let name = parts.next().ok_or_else(bad)?.to_owned();
    Ok(Command { old, new, name })
}

/// The lines of a push certificate, as sent, up to `push-cert-end`.
fn read_certificate<R: Read>(
    reader: &mut PktReader<R>,
    count: &mut impl FnMut(usize) -> Result<(), ReceiveError>,
) -> Result<certificate::Certificate, ReceiveError> {
    let mut text = Vec::new();
    loop {
        match reader.read()? {
            Some(Packet::Data(data)) if data == b"push-cert-end\n" => break,
            Some(Packet::Data(data)) => {
                count(data.len())?;
                text.extend_from_slice(data);
            }
            _ => return Err(ReceiveError::HungUp),
        }
    }
    Ok(certificate::Certificate { text })
}
