//! The wire side of a push (`gitprotocol-pack`, "Pushing Data To a Server"): the commands with
//! the capabilities asked for, the push options, the pack (made by the one pack engine, thin
//! against what the server has), then the server's report, read from band 1 while band 2 goes
//! to the user.

use super::{PushError, PushMessages, PushedRef, RefStatus};
use sluice_generate::{write_pack, PackOptions};
use sluice_graph::WalkRequest;
use sluice_object::cancel::Cancel;
use sluice_object::progress::Progress;
use sluice_object::ObjectId;
use sluice_remote::Connection;
use sluice_repo::Repository;
use sluice_wire::demux::Demux;
use sluice_wire::pktline::write_line;
use sluice_wire::pktline::{write_flush, Packet, PktReader};
use sluice_wire::report_status;
use std::io::Read;

/// A push certificate to send in place of the commands (`--signed`).
pub(crate) struct Certificate {
    pub(crate) signer: super::certificate::Signer,
    /// What the server asked to be signed with (`push-cert=<nonce>`).
    pub(crate) nonce: String,
    /// Where the push goes, as the certificate's `pushee` names it.
    pub(crate) url: String,
}

/// What the request asks of the server beside the commands.
pub(crate) struct Request<'a> {
    pub(crate) certificate: Option<Certificate>,
    /// Commits `push.negotiate` found the server has, beside those it advertised.
    pub(crate) commons: &'a [ObjectId],
    pub(crate) atomic: bool,
    pub(crate) push_options: &'a [String],
    pub(crate) thin: bool,
    /// Show the server's progress (else `quiet`).
    pub(crate) remote_progress: bool,
    pub(crate) progress: &'a dyn Progress,
    /// Stops counting and writing the pack between two objects.
    pub(crate) cancel: &'a Cancel,
}

/// Sends the commands for the refs still pending, and the pack they need; reads the server's
/// report into their statuses. Returns the server's complaint about the pack, if it made one
/// (`unpack <reason>`).
pub(crate) fn send(
    repo: &Repository,
    connection: &mut Connection,
    refs: &mut [PushedRef],
    request: &Request<'_>,
    messages: &dyn PushMessages,
) -> Result<Option<String>, PushError> {
    // What the server does not offer was refused before ([`super::push`]).
    let has = |c: &str| connection.has_capability(c);
    let mut caps = Vec::new();
    // v2 where the server has it, as git asks: it tells what a proc-receive hook did.
    let report_v2 = has("report-status-v2");
    let report = has("report-status") && !report_v2;
    let side_band = has("side-band-64k");
    for (wanted, cap) in [
        (report_v2, "report-status-v2"),
        (report, "report-status"),
        (side_band, "side-band-64k"),
        (!request.remote_progress && has("quiet"), "quiet"),
        (request.atomic, "atomic"),
        (!request.push_options.is_empty(), "push-options"),
    ] {
        if wanted {
            caps.push(cap.to_owned());
        }
    }
    // As git: the hash is named to a server that names its own, and so is the agent.
    if has("object-format") {
        caps.push(format!("object-format={}", repo.hash().name()));
    }
    if has("agent") {
        caps.push(format!(
            "agent={}",
            sluice_wire::agent::user_agent(concat!("git/sluice-", env!("CARGO_PKG_VERSION")))
        ));
    }
    let null = repo.hash().null_id();
    // A shallow repository names its cut first, as git's send-pack does: the server judges
    // what the pushed history needs of it, and the pack stops there.
    let shallow = repo.shallow_commits()?;
    let mut head = Vec::new();
    for id in &shallow {
        write_line(&mut head, &format!("shallow {id}"));
    }
    if let Some(cert) = &request.certificate {
        let signed = super::certificate::signed_request(
            &cert.signer,
            &cert.url,
            &cert.nonce,
            request.push_options,
            refs,
            null,
            &caps.join(" "),
        )?;
        head.extend(signed.unwrap_or_default());
    }
    let pending = refs.iter().filter(|r| r.status == RefStatus::Pending);
    for (i, r) in pending
        .enumerate()
        .filter(|_| request.certificate.is_none())
    {
        let (old, new) = (r.old.unwrap_or(null), r.new.unwrap_or(null));
        match i {
            0 => write_line(
                &mut head,
                &format!("{old} {new} {}\0{}", r.dst, caps.join(" ")),
            ),
            _ => write_line(&mut head, &format!("{old} {new} {}", r.dst)),
        }
    }
    write_flush(&mut head)?;
    if !request.push_options.is_empty() {
        for option in request.push_options {
            write_line(&mut head, option);
        }
        write_flush(&mut head)?;
    }
    let wants: Vec<ObjectId> = (refs.iter())
        .filter(|r| r.status == RefStatus::Pending)
        .filter_map(|r| r.new)
        .collect();
    // The packs of alternates too, so that their stored deltas are copied as they are (a
    // clone made with --shared or --reference keeps its history there).
    let borrowed = repo.objects().with_alternate_packs();
    let odb = &borrowed;
    let mut haves: Vec<ObjectId> = (connection.advertised().iter())
        .map(|r| r.id)
        .chain(connection.advertised_haves().iter().copied())
        .chain(request.commons.iter().copied())
        .filter(|id| odb.contains(id))
        .collect();
    haves.sort_unstable();
    haves.dedup();
    let options = PackOptions {
        thin: request.thin,
        ofs_delta: has("ofs-delta"),
        compression: PackOptions::compression_of(repo.config())?,
        // git push shows it too (send-pack asks pack-objects for all its progress).
        show_writing: true,
        window_search: None,
        cancel: request.cancel.clone(),
        islands: None,
        allow_pack_reuse: PackOptions::allow_pack_reuse_of(repo.config())?,
        threads: sluice_odb::pack_store::pack_threads(repo.config())?,
    };
    let walked = match wants.is_empty() {
        // Only deletions: no pack is sent.
        true => None,
        false => {
            let cut: sluice_object::IdSet = shallow.iter().copied().collect();
            let walk = WalkRequest {
                shallow: &cut,
                ..WalkRequest::reachable(&wants, &haves, request.cancel.clone())
            };
            Some(sluice_client::promised::walk_fetching_missing(
                repo,
                walk,
                request.progress,
            )?)
        }
    };
    // What a partial clone's promisor remote just sent is in the repository's next view.
    let borrowed = repo.objects().with_alternate_packs();
    let odb = &borrowed;
    let mut sent = None;
    let mut produce = |out: &mut dyn std::io::Write| -> std::io::Result<()> {
        out.write_all(&head)?;
        if let Some(walked) = &walked {
            let (_, stats) = write_pack(odb, walked, &options, out, request.progress)
                .map_err(std::io::Error::other)?;
            sent = Some(stats);
        }
        Ok(())
    };
    connection.send_streamed(&mut produce)?;
    if let Some(stats) = &sent {
        messages.pack_sent(stats);
    }
    if !report && !report_v2 {
        for r in refs.iter_mut().filter(|r| r.status == RefStatus::Pending) {
            r.status = RefStatus::Ok;
        }
        return Ok(None);
    }
    read_report(connection, refs, side_band, repo.hash(), messages)
}

/// The server's report (`sluice_wire::report_status`), into the refs' statuses and what was
/// done instead of them.
fn read_report(
    connection: &mut Connection,
    refs: &mut [PushedRef],
    side_band: bool,
    hash: sluice_object::HashKind,
    messages: &dyn PushMessages,
) -> Result<Option<String>, PushError> {
    let lines = if side_band {
        let input = connection.take_input();
        let mut text = Vec::new();
        let mut demux = Demux::new(input, |bytes: &[u8]| messages.remote_progress(bytes));
        demux.read_to_end(&mut text).map_err(PushError::Report)?;
        report_lines(&mut PktReader::new(&text[..]))?
    } else {
        report_lines(connection.input())?
    };
    let report = report_status::parse(&lines, hash).map_err(PushError::BadStatus)?;
    for complaint in &report.complaints {
        messages.error(complaint);
    }
    for status in report.refs {
        let Some(r) =
            (refs.iter_mut()).find(|r| r.dst == status.name && r.status == RefStatus::Pending)
        else {
            continue;
        };
        r.status = match status.refused {
            None => RefStatus::Ok,
            Some(why) => RefStatus::RemoteRejected(why),
        };
        r.rewrites = status.rewrites;
    }
    let unpack = report.unpack_error;
    for r in refs.iter_mut().filter(|r| r.status == RefStatus::Pending) {
        // A command the server did not answer: git's words.
        r.status = RefStatus::RemoteRejected("no report from remote".to_owned());
    }
    Ok(unpack)
}

/// The report's lines, up to its flush.
fn report_lines<R: Read>(report: &mut PktReader<R>) -> Result<Vec<String>, PushError> {
    let mut lines = Vec::new();
    loop {
        match report.read()? {
            Some(Packet::Data(line)) => lines.push(
                String::from_utf8_lossy(line)
                    .trim_end_matches('\n')
                    .to_owned(),
            ),
            Some(Packet::Flush) => return Ok(lines),
            _ => return Err(PushError::BadReport),
        }
    }
}
