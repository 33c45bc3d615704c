//! `push --signed`: the push certificate (`gitprotocol-pack`, "push-cert"), the request's
//! commands in a text the pusher signs with gpg, sent in place of the plain commands when the
//! server asked for one with a nonce.

use super::{PushError, PushedRef, RefStatus};
use sluice_repo::Repository;
use sluice_wire::pktline::write_line;
use sluice_wire::pktline::write_packet;
use std::io::Write;
use std::process::{Command, Stdio};

/// Whether a push is signed (`--signed`, `push.gpgSign`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SignedPush {
    /// Not signed.
    #[default]
    No,
    /// Signed; a server that does not ask for certificates refuses the push.
    Yes,
    /// Signed when the server asks for a certificate.
    IfAsked,
}

impl SignedPush {
    /// From `--signed=<value>` or `push.gpgSign`, as git reads them.
    pub fn parse(value: &str) -> Result<Self, super::PushError> {
        Ok(match value.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" | "" => SignedPush::Yes,
            "false" | "no" | "off" | "0" => SignedPush::No,
            "if-asked" => SignedPush::IfAsked,
            _ => {
                return Err(super::PushError::BadSetting(format!(
                    "bad signed argument: {value}"
                )))
            }
        })
    }
}

/// Who signs, and with what.
pub(crate) struct Signer {
    /// `user.signingKey`, else the committer's `Name <email>`: the certificate's pusher and
    /// the key gpg is asked for.
    key: String,
    /// When, as git stamps it: `<seconds> <zone>`.
    stamp: String,
    /// `gpg.openpgp.program`, `gpg.program`, else `gpg`.
    program: String,
}

impl Signer {
    pub(crate) fn from_config(repo: &Repository) -> Signer {
        let config = repo.config();
        let key = (config.get("user.signingkey"))
            .map_or_else(|| sluice_repo::refs::committer(config), str::to_owned);
        let program = (config.get("gpg.openpgp.program"))
            .or_else(|| config.get("gpg.program"))
            .unwrap_or("gpg")
            .to_owned();
        Signer {
            key,
            stamp: format!("{} +0000", sluice_repo::date::now()),
            program,
        }
    }
}

/// The signed certificate for the pending refs, framed as the request sends it:
/// `push-cert\0<capabilities>`, the certificate and its signature a line a packet, then
/// `push-cert-end`. `None` when no ref is pending.
pub(crate) fn signed_request(
    signer: &Signer,
    url: &str,
    nonce: &str,
    push_options: &[String],
    refs: &[PushedRef],
    null: sluice_object::ObjectId,
    caps: &str,
) -> Result<Option<Vec<u8>>, PushError> {
    let mut text = format!(
        "certificate version 0.1\npusher {} {}\n",
        signer.key, signer.stamp
    );
    let pushee = sluice_remote::anonymized(url);
    if !pushee.is_empty() {
        text.push_str(&format!("pushee {pushee}\n"));
    }
    text.push_str(&format!("nonce {nonce}\n"));
    for option in push_options {
        text.push_str(&format!("push-option {option}\n"));
    }
    text.push('\n');
    let pending: Vec<&PushedRef> = (refs.iter())
        .filter(|r| r.status == RefStatus::Pending)
        .collect();
    if pending.is_empty() {
        return Ok(None);
    }
    for r in pending {
        let (old, new) = (r.old.unwrap_or(null), r.new.unwrap_or(null));
        text.push_str(&format!("{old} {new} {}\n", r.dst));
    }
    let signature = sign(signer, text.as_bytes())?;
    let mut framed = Vec::new();
    write_line(&mut framed, &format!("push-cert\0{caps}"));
    let signed = [text.as_bytes(), &signature].concat();
    for line in signed.split_inclusive(|&b| b == b'\n') {
        write_packet(&mut framed, line)?;
    }
    write_line(&mut framed, "push-cert-end");
    Ok(Some(framed))
}

/// A detached, armored signature of `payload` (`gpg --status-fd=2 -bsau <key>`, as git runs
/// it), refused unless gpg says it made one.
fn sign(signer: &Signer, payload: &[u8]) -> Result<Vec<u8>, PushError> {
    let failed = || PushError::SigningFailed(String::new());
    let mut child = Command::new(&signer.program)
        .args(["--status-fd=2", "-bsau", &signer.key])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|_| failed())?;
    let mut stdin = child.stdin.take().ok_or_else(failed)?;
    // Written from a thread: gpg may answer before it has read everything.
    let payload = payload.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&payload));
    let output = child.wait_with_output().map_err(|_| failed())?;
    let written = writer.join().map_err(|_| failed())?;
    let status = String::from_utf8_lossy(&output.stderr);
    let created = status
        .lines()
        .any(|l| l.starts_with("[GNUPG:] SIG_CREATED "));
    if written.is_err() || !output.status.success() || !created || output.stdout.is_empty() {
        return Err(PushError::SigningFailed(status.into_owned()));
    }
    Ok(output.stdout)
}
