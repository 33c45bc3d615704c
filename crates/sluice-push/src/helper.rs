//! send-pack as git's remote helpers drive it (`--stdin`, `--stateless-rpc`,
//! `--helper-status`): the refs to push read from the helper, and each ref's fate told back
//! in the lines the helper reads (gitremote-helpers' `push` replies: `ok <ref>`,
//! `error <ref> <why>`).

use super::{PushError, PushOutcome, PushedRef, RefStatus};
use sluice_wire::pktline::{Packet, PktReader};
use std::io::Read;

/// The refs `--stdin` names: a line each, or under `--stateless-rpc` a pkt-line each up to a
/// flush (the relayed conversation follows on the same stream, so not a byte more is read).
pub fn refs_to_push(mut input: impl Read, stateless_rpc: bool) -> Result<Vec<String>, PushError> {
    if !stateless_rpc {
        let mut text = String::new();
        input.read_to_string(&mut text)?;
        let lines = text.lines().filter(|line| !line.is_empty());
        return Ok(lines.map(str::to_owned).collect());
    }
    let mut refs = Vec::new();
    let mut reader = PktReader::new(input);
    loop {
        match reader.read()? {
            Some(Packet::Data(line)) => {
                let line = String::from_utf8_lossy(line);
                refs.push(line.trim_end_matches('\n').to_owned());
            }
            Some(Packet::Flush) => return Ok(refs),
            _ => return Err(PushError::ExpectedRefs),
        }
    }
}

/// Each ref's fate for a remote helper, as git's send-pack tells it: `ok <ref>` (with what a
/// `proc-receive` hook did instead, as report-status-v2's `option` lines), `ok <ref> up to
/// date`, or `error <ref> [<why>]`, the reason C-quoted where it needs to be; and, in the
/// remote's order, `error <ref> no match` for each ref of the remote the push left alone.
pub fn helper_status(outcome: &PushOutcome) -> Vec<u8> {
    let mut out = Vec::new();
    // Pushed refs come in the remote's order, then the new ones: the refs left alone go
    // between them where the remote listed them.
    let mut pushed = outcome.refs.iter().peekable();
    for name in &outcome.advertised {
        match pushed.next_if(|r| r.dst == *name) {
            Some(r) => helper_line(r, &mut out),
            None => out.extend(format!("error {name} no match\n").into_bytes()),
        }
    }
    for r in pushed {
        helper_line(r, &mut out);
    }
    out
}

/// One pushed ref's line (or lines) for a remote helper.
fn helper_line(r: &PushedRef, out: &mut Vec<u8>) {
    let why = match &r.status {
        RefStatus::Ok => {
            let lines = sluice_wire::report_status::ref_status_lines(&r.dst, None, &r.rewrites);
            out.extend(lines.concat().into_bytes());
            return;
        }
        RefStatus::UpToDate => {
            out.extend(format!("ok {} up to date\n", r.dst).into_bytes());
            return;
        }
        RefStatus::Pending => Some("expecting report"),
        RefStatus::NonFastForward => Some("non-fast forward"),
        RefStatus::FetchFirst => Some("fetch first"),
        RefStatus::NeedsForce => Some("needs force"),
        RefStatus::Stale => Some("stale info"),
        RefStatus::RemoteUpdated => Some("remote ref updated since checkout"),
        RefStatus::AlreadyExists => Some("already exists"),
        RefStatus::AtomicFailed => Some("atomic push failed"),
        RefStatus::NoDelete => None,
        RefStatus::RemoteRejected(why) => Some(why.as_str()),
    };
    let line = match why {
        Some(why) => format!(
            "error {} {}\n",
            r.dst,
            sluice_object::c_quote::quoted_or_plain(why)
        ),
        None => format!("error {}\n", r.dst),
    };
    out.extend(line.into_bytes());
}
