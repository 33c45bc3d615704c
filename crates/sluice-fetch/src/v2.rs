//! Protocol v2's `ls-refs` and `fetch` commands, from the client's side.

use crate::{Connection, FetchError};
use sluice_object::{HashKind, ObjectId};
use sluice_wire::demux::Demux;
use sluice_wire::pktline::{write_delimiter, write_flush, write_packet, Packet, PktReader};
use std::process::ChildStdout;

/// A ref the server advertised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRef {
    /// Its full name (`refs/heads/main`, `HEAD`).
    pub name: String,
    /// What it points at.
    pub id: ObjectId,
    /// For a symbolic ref, the ref it points to.
    pub symref_target: Option<String>,
    /// For an annotated tag, the object it peels to.
    pub peeled: Option<ObjectId>,
}

/// What to ask `fetch` for.
#[derive(Debug, Clone, Default)]
pub struct FetchRequest {
    /// Objects wanted.
    pub wants: Vec<ObjectId>,
    /// Objects this side has.
    pub haves: Vec<ObjectId>,
    /// Ask for progress on band 2.
    pub progress: bool,
}

/// Whether the server's ref name is one git would accept (`git check-ref-format`'s rules that
/// matter for safety: no `..`, no component starting with `.` or ending in `.lock`, no control
/// characters or `~^:?*[\`, no empty component).
fn valid_ref_name(name: &str) -> bool {
    if name == "HEAD" {
        return true;
    }
    name.starts_with("refs/")
        && !name.contains("..")
        && !name.contains("@{")
        && !name.ends_with('/')
        && !name.ends_with('.')
        && name
            .split('/')
            .all(|part| !part.is_empty() && !part.starts_with('.') && !part.ends_with(".lock"))
        && name
            .bytes()
            .all(|b| b > 0x20 && b != 0x7f && !b"~^:?*[\\".contains(&b))
}

fn text_line(line: &[u8]) -> Result<&str, FetchError> {
    std::str::from_utf8(line)
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
        .map_err(|_| FetchError::Protocol("a line that is not UTF-8".into()))
}

fn parse_id(hash: HashKind, hex: &str) -> Result<ObjectId, FetchError> {
    ObjectId::from_hex(hash, hex.as_bytes())
        .map_err(|_| FetchError::Protocol(format!("bad object id '{hex}'")))
}

impl Connection {
    fn hash(&self) -> HashKind {
        // Only SHA-1 servers are spoken to so far; `object-format=sha256` is refused below.
        HashKind::Sha1
    }

    /// Sends `command=<name>`, the capabilities it needs, then its arguments.
    fn command(&mut self, name: &str, arguments: &[String]) -> Result<(), FetchError> {
        if self
            .capabilities
            .iter()
            .any(|c| c.starts_with("object-format=") && c != "object-format=sha1")
        {
            return Err(FetchError::Protocol(
                "the server's object format is not SHA-1".into(),
            ));
        }
        write_packet(&mut self.output, format!("command={name}\n").as_bytes())?;
        write_packet(
            &mut self.output,
            format!("agent=sluice/{}\n", env!("CARGO_PKG_VERSION")).as_bytes(),
        )?;
        write_delimiter(&mut self.output)?;
        for argument in arguments {
            write_packet(&mut self.output, format!("{argument}\n").as_bytes())?;
        }
        write_flush(&mut self.output)?;
        self.flush()
    }

    /// The refs whose names start with one of `prefixes` (all refs when empty), with symref
    /// targets and peeled tags.
    pub fn ls_refs(&mut self, prefixes: &[&str]) -> Result<Vec<RemoteRef>, FetchError> {
        let mut arguments = vec!["peel".to_owned(), "symrefs".to_owned()];
        arguments.extend(prefixes.iter().map(|p| format!("ref-prefix {p}")));
        self.command("ls-refs", &arguments)?;
        let hash = self.hash();
        let mut refs = Vec::new();
        loop {
            let line = match self.input.read()? {
                Some(Packet::Flush) => return Ok(refs),
                Some(Packet::Data(line)) => text_line(line)?.to_owned(),
                None => {
                    return Err(FetchError::Protocol(
                        "the server hung up in the middle of the ref list".into(),
                    ))
                }
                Some(_) => {
                    return Err(FetchError::Protocol(
                        "unexpected packet in the ref list".into(),
                    ))
                }
            };
            if let Some(message) = line.strip_prefix("ERR ") {
                return Err(FetchError::Remote(message.to_owned()));
            }
            let mut fields = line.split(' ');
            let (Some(hex), Some(name)) = (fields.next(), fields.next()) else {
                return Err(FetchError::Protocol(format!("bad ref line '{line}'")));
            };
            if !valid_ref_name(name) {
                return Err(FetchError::Protocol(format!(
                    "refusing ref with bad name '{name}'"
                )));
            }
            let mut remote = RemoteRef {
                name: name.to_owned(),
                id: parse_id(hash, hex)?,
                symref_target: None,
                peeled: None,
            };
            for attribute in fields {
                if let Some(target) = attribute.strip_prefix("symref-target:") {
                    if !valid_ref_name(target) {
                        return Err(FetchError::Protocol(format!(
                            "refusing symref to bad name '{target}'"
                        )));
                    }
                    remote.symref_target = Some(target.to_owned());
                } else if let Some(peeled) = attribute.strip_prefix("peeled:") {
                    remote.peeled = Some(parse_id(hash, peeled)?);
                }
            }
            refs.push(remote);
        }
    }

    /// Asks for `request`'s objects and returns the pack as a stream (band 2 goes to
    /// `progress`). Sends `done` at once: no negotiation yet, so haves are all the server
    /// learns of this side.
    pub fn fetch<F: FnMut(&[u8])>(
        &mut self,
        request: &FetchRequest,
        progress: F,
    ) -> Result<Demux<&mut ChildStdout, F>, FetchError> {
        let mut arguments = vec!["ofs-delta".to_owned()];
        if !request.haves.is_empty() {
            arguments.push("thin-pack".to_owned());
        }
        if !request.progress {
            arguments.push("no-progress".to_owned());
        }
        arguments.extend(request.wants.iter().map(|id| format!("want {id}")));
        arguments.extend(request.haves.iter().map(|id| format!("have {id}")));
        arguments.push("done".to_owned());
        self.command("fetch", &arguments)?;
        // Sections before the pack (shallow-info, wanted-refs) are skipped to their
        // delimiter; the pack section runs to the final flush.
        loop {
            match self.input.read()? {
                Some(Packet::Data(line)) => {
                    let line = text_line(line)?;
                    if let Some(message) = line.strip_prefix("ERR ") {
                        return Err(FetchError::Remote(message.to_owned()));
                    }
                    if line == "packfile" {
                        break;
                    }
                }
                Some(Packet::Delimiter) => {}
                Some(_) | None => {
                    return Err(FetchError::Protocol(
                        "the server sent no packfile section".into(),
                    ))
                }
            }
        }
        Ok(Demux::new(PktReader::new(self.input.get_mut()), progress))
    }
}

#[cfg(test)]
mod tests {
    use super::valid_ref_name;

    #[test]
    fn ref_names_git_refuses_are_refused() {
        for good in [
            "HEAD",
            "refs/heads/main",
            "refs/tags/v1.0",
            "refs/pull/1/head",
        ] {
            assert!(valid_ref_name(good), "{good}");
        }
        for bad in [
            "refs/heads/../x",
            "refs/heads/.hidden",
            "refs/heads/a.lock",
            "refs/heads/a b",
            "refs/heads//x",
            "refs/heads/x/",
            "refs/heads/x.",
            "refs/heads/a~1",
            "refs/heads/a@{1}",
            "main",
            "/etc/passwd",
        ] {
            assert!(!valid_ref_name(bad), "{bad}");
        }
    }
}
