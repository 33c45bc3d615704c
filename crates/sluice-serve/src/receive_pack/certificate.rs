//! Signed pushes, the receiving end (`git-receive-pack`, "push certificates"): with
//! `receive.certNonceSeed` set, the advertisement asks for a certificate with a nonce (the
//! time, and an HMAC of the repository's path and that time keyed with the seed, so that a
//! later request of a stateless session can check a nonce it did not keep); the certificate
//! carries the commands, is stored as a blob, its signature is checked with gpg, and
//! pre-receive and post-receive learn the outcome through git's `GIT_PUSH_CERT*` variables.

use sluice_object::{HashKind, ObjectKind, TrailerHasher};
use sluice_repo::date::now;
use sluice_repo::Repository;
use std::ffi::OsString;
use std::io::Write;
use std::process::{Command, Stdio};

/// How a push certificate's nonce is made and judged.
#[derive(Debug, Clone)]
pub(super) struct Nonces {
    seed: String,
    /// What the nonce's HMAC covers beside the time: the repository's path.
    path: String,
    /// `receive.certNonceSlop`: seconds a stateless session's nonce may be off and still OK.
    slop: i64,
}

impl Nonces {
    /// `None` unless `receive.certNonceSeed` asks for certificates.
    pub(super) fn of(repo: &Repository) -> Option<Nonces> {
        let config = repo.config();
        let seed = config.get("receive.certnonceseed")?.to_owned();
        let path = repo.git_dir().to_string_lossy().into_owned();
        let slop = config
            .get_int("receive.certnonceslop")
            .ok()
            .flatten()
            .unwrap_or(0);
        Some(Nonces { seed, path, slop })
    }

    /// The nonce for `stamp` (seconds): `<stamp>-<hex HMAC-SHA1 of "<path>:<stamp>">`.
    pub(super) fn nonce(&self, stamp: i64) -> String {
        let mac = hmac_sha1(
            self.seed.as_bytes(),
            format!("{}:{stamp}", self.path).as_bytes(),
        );
        format!("{stamp}-{mac}")
    }

    /// The nonce of now.
    pub(super) fn now(&self) -> String {
        self.nonce(now())
    }

    /// git's verdict on the nonce a certificate carries (`GIT_PUSH_CERT_NONCE_STATUS`), given
    /// the one this session issued; with a slop, the seconds it was off.
    fn judge(
        &self,
        issued: &str,
        given: Option<&str>,
        stateless: bool,
    ) -> (&'static str, Option<i64>) {
        let Some(given) = given else {
            return ("MISSING", None);
        };
        if given == issued {
            return ("OK", None);
        }
        // A stateless session issued its nonce in another request: it must be one this
        // server made, from a time close enough.
        let stamp = given
            .split_once('-')
            .and_then(|(s, _)| s.parse::<i64>().ok());
        match stamp {
            Some(stamp) if stateless && self.nonce(stamp) == given => {
                let off = now() - stamp;
                match self.slop > 0 && off.abs() <= self.slop {
                    true => ("OK", Some(off)),
                    false => ("SLOP", Some(off)),
                }
            }
            _ => ("BAD", None),
        }
    }
}

/// HMAC-SHA1 (RFC 2104), in hex.
fn hmac_sha1(key: &[u8], message: &[u8]) -> String {
    const BLOCK: usize = 64;
    let mut padded = [0u8; BLOCK];
    if key.len() > BLOCK {
        let mut hasher = TrailerHasher::new(HashKind::Sha1);
        hasher.update(key);
        let digest = hasher.finalize();
        padded[..digest.as_bytes().len()].copy_from_slice(digest.as_bytes());
    } else {
        padded[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| padded.map(|k| k ^ byte);
    let mut inner = TrailerHasher::new(HashKind::Sha1);
    inner.update(&pad(0x36));
    inner.update(message);
    let inner = inner.finalize();
    let mut outer = TrailerHasher::new(HashKind::Sha1);
    outer.update(&pad(0x5c));
    outer.update(inner.as_bytes());
    outer.finalize().to_string()
}

/// A certificate as received: its text (signature included).
#[derive(Debug, Clone, Default)]
pub(super) struct Certificate {
    pub(super) text: Vec<u8>,
}

impl Certificate {
    /// Where the signature begins (the payload ends).
    fn signature_at(&self) -> usize {
        let marker = b"-----BEGIN PGP SIGNATURE-----";
        (self.text.windows(marker.len()))
            .position(|w| w == marker)
            .filter(|&at| at == 0 || self.text[at - 1] == b'\n')
            .unwrap_or(self.text.len())
    }

    /// The command lines (`<old> <new> <ref>`) the certificate carries: those after the
    /// header's blank line, up to the signature.
    pub(super) fn command_lines(&self) -> Vec<String> {
        let payload = String::from_utf8_lossy(&self.text[..self.signature_at()]).into_owned();
        match payload.split_once("\n\n") {
            Some((_, body)) => body.lines().map(str::to_owned).collect(),
            None => Vec::new(),
        }
    }

    /// The value of header `name`.
    fn header(&self, name: &str) -> Option<String> {
        let payload = String::from_utf8_lossy(&self.text[..self.signature_at()]).into_owned();
        let head = payload.split("\n\n").next().unwrap_or("");
        (head.lines()).find_map(|l| l.strip_prefix(name)?.strip_prefix(' ').map(str::to_owned))
    }

    /// git's `GIT_PUSH_CERT*` variables: the certificate stored as a blob (in `objects`, the
    /// push's quarantine when it has one), gpg's verdict on its signature, and the nonce's.
    pub(super) fn environment(
        &self,
        objects: &sluice_odb::LooseObjects,
        nonces: &Nonces,
        issued: &str,
        stateless: bool,
    ) -> Vec<(String, OsString)> {
        let mut env = Vec::new();
        if let Ok(id) = objects.write(ObjectKind::Blob, &self.text, 1) {
            env.push(("GIT_PUSH_CERT".to_owned(), id.to_string().into()));
        }
        let (status, signer, key) = verify(&self.text, self.signature_at());
        env.push(("GIT_PUSH_CERT_SIGNER".to_owned(), signer.into()));
        env.push(("GIT_PUSH_CERT_KEY".to_owned(), key.into()));
        env.push(("GIT_PUSH_CERT_STATUS".to_owned(), status.to_string().into()));
        env.push(("GIT_PUSH_CERT_NONCE".to_owned(), issued.into()));
        let given = self.header("nonce");
        let (verdict, off) = nonces.judge(issued, given.as_deref(), stateless);
        env.push(("GIT_PUSH_CERT_NONCE_STATUS".to_owned(), verdict.into()));
        if let Some(off) = off {
            env.push((
                "GIT_PUSH_CERT_NONCE_SLOP".to_owned(),
                off.to_string().into(),
            ));
        }
        env
    }
}

/// gpg's verdict on the signature of `text` (from `at`) as git letters it (`G` good, `U` good
/// from a key never trusted, `B` bad, `X` expired signature, `Y` expired key, `R` revoked key,
/// `E` not checkable, `N` none), with the signer and the key.
fn verify(text: &[u8], at: usize) -> (char, String, String) {
    let none = ('N', String::new(), String::new());
    if at >= text.len() {
        return none;
    }
    let Ok(dir) = tempdir_for_signature() else {
        return ('E', String::new(), String::new());
    };
    let signature = dir.join("signature");
    if std::fs::write(&signature, &text[at..]).is_err() {
        let _ = std::fs::remove_dir_all(&dir);
        return ('E', String::new(), String::new());
    }
    let child = Command::new("gpg")
        .args(["--status-fd=1", "--keyid-format=long", "--verify"])
        .arg(&signature)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let output = child.and_then(|mut child| {
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(&text[..at]);
        }
        child.wait_with_output()
    });
    let _ = std::fs::remove_dir_all(&dir);
    let Ok(output) = output else {
        return ('E', String::new(), String::new());
    };
    let status = String::from_utf8_lossy(&output.stdout);
    let mut verdict = ('E', String::new(), String::new());
    for line in status.lines() {
        let Some(rest) = line.strip_prefix("[GNUPG:] ") else {
            continue;
        };
        let (word, args) = rest.split_once(' ').unwrap_or((rest, ""));
        let letter = match word {
            "GOODSIG" => 'G',
            "BADSIG" => 'B',
            "EXPSIG" => 'X',
            "EXPKEYSIG" => 'Y',
            "REVKEYSIG" => 'R',
            "ERRSIG" => 'E',
            "TRUST_NEVER" if verdict.0 == 'G' => {
                verdict.0 = 'U';
                continue;
            }
            _ => continue,
        };
        let (key, signer) = args.split_once(' ').unwrap_or((args, ""));
        verdict = (letter, signer.to_owned(), key.to_owned());
    }
    verdict
}

/// A private directory for the signature file gpg reads.
fn tempdir_for_signature() -> std::io::Result<std::path::PathBuf> {
    let dir =
        std::env::temp_dir().join(format!("sluice-push-cert-{}-{}", std::process::id(), now()));
    std::fs::create_dir(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha1_matches_rfc_2202() {
        // RFC 2202, test case 2.
        assert_eq!(
            hmac_sha1(b"Jefe", b"what do ya want for nothing?"),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"
        );
    }
}
